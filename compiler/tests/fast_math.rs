//! The accuracy of the fast math functions, and of f32 `log` and `pow`
//! (computed by our own steps, `compiler::ir::log`), measured on the
//! reference evaluator against the standard library's f64 functions over
//! sweeps of the ranges their documentation states, and their special
//! values. The figures the documentation gives are printed by
//! `cargo test --release -p compiler --test fast_math -- --nocapture`.

use compiler::error::LangError;
use compiler::exec::buffer::Buffer;
use compiler::ir::value::Scalar;
use compiler::lang::fast_math::{fast_exp, fast_inverse, fast_inverse_sqrt, fast_log, fast_pow};
use compiler::lang::ops::{cast, log, pow};
use compiler::{Expr, Func, ImageParam, Pipeline, ScalarType, Type, Var};
use std::collections::BTreeMap;

/// `build(a(x), b(x))` on the reference evaluator, for the columns `a` and
/// `b` of f32 values.
fn evaluate(a: &[f32], b: &[f32], build: impl Fn(Expr, Expr) -> Result<Expr, LangError>) -> Vec<f64> {
    let x = Var::new("x");
    let (pa, pb) = (ImageParam::new("a", ScalarType::F32, 1), ImageParam::new("b", ScalarType::F32, 1));
    let out = Func::new("out");
    out.define(&[&x], build(pa.at([x.expr()]), pb.at([x.expr()])).unwrap());
    let p = Pipeline::new(&[&out]).unwrap();
    let n = a.len() as i64;
    let column = |name: &str, vs: &[f32]| {
        let mut buffer = Buffer::new(name, ScalarType::F32, &[(0, n)]).unwrap();
        buffer.fill(|c| Scalar::Float(vs[c[0] as usize].into()));
        (name.to_string(), buffer)
    };
    let inputs: BTreeMap<String, Buffer> = [column("a", a), column("b", b)].into_iter().collect();
    let result = compiler::exec::reference::realize(&p, &inputs, &BTreeMap::new(), "out", &[(0, n)]).unwrap();
    (0..n).map(|i| result.get(&[i]).unwrap().as_f64()).collect()
}

/// `n` values from `lo` to `hi` spaced evenly in their logarithm (both
/// positive).
fn geometric(lo: f64, hi: f64, n: usize) -> Vec<f32> {
    (0..n).map(|i| (lo.ln() + (hi.ln() - lo.ln()) * i as f64 / (n - 1) as f64).exp() as f32).filter(|v| v.is_normal()).collect()
}

fn linear(lo: f64, hi: f64, n: usize) -> Vec<f32> {
    (0..n).map(|i| (lo + (hi - lo) * i as f64 / (n - 1) as f64) as f32).collect()
}

/// The largest relative error of `got` against `want` of the inputs, with
/// the input where it occurs (printed).
fn max_relative_error(what: &str, inputs: &[(f32, f32)], got: &[f64], want: impl Fn(f64, f64) -> f64) -> f64 {
    let mut worst = (0.0, (0.0, 0.0));
    for (&(a, b), &g) in inputs.iter().zip(got) {
        let w = want(a.into(), b.into());
        let e = if w == 0.0 { g.abs() } else { ((g - w) / w).abs() };
        assert!(!e.is_nan(), "{what}({a}, {b}) = {g}, want {w}");
        if e > worst.0 {
            worst = (e, (a, b));
        }
    }
    println!("{what}: max relative error {:.3e} over {} inputs (worst at {:?})", worst.0, inputs.len(), worst.1);
    worst.0
}

fn unary(what: &str, xs: &[f32], f: fn(Expr) -> Result<Expr, LangError>, want: fn(f64) -> f64) -> f64 {
    let got = evaluate(xs, xs, |a, _| f(a));
    let inputs: Vec<(f32, f32)> = xs.iter().map(|&x| (x, 0.0)).collect();
    max_relative_error(what, &inputs, &got, |a, _| want(a))
}

#[test]
fn fast_exp_within_2e7_on_its_range() {
    let mut xs = linear(-87.0, 88.0, 200_001);
    xs.extend(linear(-1.0, 1.0, 20_001));
    assert!(unary("fast_exp on [-87, 88]", &xs, fast_exp, f64::exp) < 2e-7);
}

#[test]
fn fast_log_within_1_5e6_on_normal_positive_floats() {
    let mut xs = geometric(f32::MIN_POSITIVE as f64, f32::MAX as f64, 200_001);
    xs.extend(linear(0.5, 2.0, 100_001));
    assert!(unary("fast_log on [2^-126, f32::MAX]", &xs, fast_log, f64::ln) < 1.5e-6);
}

#[test]
fn fast_pow_within_5e6_on_its_range() {
    let (bases, exponents) = (geometric(1.0 / 64.0, 64.0, 401), linear(-4.0, 4.0, 401));
    let inputs: Vec<(f32, f32)> = bases.iter().flat_map(|&a| exponents.iter().map(move |&b| (a, b))).collect();
    let (a, b): (Vec<f32>, Vec<f32>) = inputs.iter().copied().unzip();
    let got = evaluate(&a, &b, fast_pow);
    assert!(max_relative_error("fast_pow on [1/64, 64] x [-4, 4]", &inputs, &got, f64::powf) < 5e-6);
}

#[test]
fn fast_inverse_within_7e6_on_its_range() {
    let positive = geometric(2f64.powi(-125), 2f64.powi(125), 200_001);
    let xs: Vec<f32> = positive.iter().flat_map(|&x| [x, -x]).collect();
    assert!(unary("fast_inverse on ±[2^-125, 2^125]", &xs, fast_inverse, |x| 1.0 / x) < 7e-6);
}

#[test]
fn fast_inverse_sqrt_within_5e6_on_normal_positive_floats() {
    let xs = geometric(f32::MIN_POSITIVE as f64, f32::MAX as f64, 400_001);
    assert!(unary("fast_inverse_sqrt on [2^-126, f32::MAX]", &xs, fast_inverse_sqrt, |x| 1.0 / x.sqrt()) < 5e-6);
}

#[test]
fn log_within_1e7_on_every_positive_float() {
    let mut xs = geometric(f32::MIN_POSITIVE as f64, f32::MAX as f64, 200_001);
    xs.extend(linear(0.5, 2.0, 100_001));
    xs.extend((1..1 << 23).step_by(997).map(f32::from_bits));
    assert!(unary("log on (0, f32::MAX]", &xs, |x| Ok(log(x)), f64::ln) < 1e-7);
}

#[test]
fn pow_within_2e6_on_its_range() {
    let (bases, exponents) = (geometric(1.0 / 64.0, 64.0, 401), linear(-4.0, 4.0, 401));
    let mut inputs: Vec<(f32, f32)> = bases.iter().flat_map(|&a| exponents.iter().map(move |&b| (a, b))).collect();
    // Negative bases with integer exponents.
    inputs.extend(linear(-64.0, -1.0 / 64.0, 1001).into_iter().flat_map(|a| (-4..=4).map(move |b| (a, b as f32))));
    let (a, b): (Vec<f32>, Vec<f32>) = inputs.iter().copied().unzip();
    let got = evaluate(&a, &b, |x, y| Ok(pow(x, y)));
    assert!(max_relative_error("pow on ±[1/64, 64] x [-4, 4]", &inputs, &got, f64::powf) < 2e-6);
}

/// A fast math function of one or two arguments.
type Binary = fn(Expr, Expr) -> Result<Expr, LangError>;

/// A function's name, the function, and arguments with the result wanted.
type Special = (&'static str, Binary, Vec<(f32, f32, f32)>);

/// The results at special values, compared bit for bit (NaN with any NaN).
#[test]
fn special_values() {
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    let cases: [Special; 7] = [
        (
            "log",
            |a, _| Ok(log(a)),
            vec![
                (1.0, 0.0, 0.0),
                (0.0, 0.0, -inf),
                (-0.0, 0.0, -inf),
                (inf, 0.0, inf),
                (-1.0, 0.0, nan),
                (nan, 0.0, nan),
                (-inf, 0.0, nan),
            ],
        ),
        (
            "pow",
            |a, b| Ok(pow(a, b)),
            vec![
                (0.0, 2.0, 0.0),
                (0.0, -1.0, inf),
                (5.0, 0.0, 1.0),
                (nan, 0.0, 1.0),
                (1.0, nan, 1.0),
                (-1.0, inf, 1.0),
                (-1.0, -inf, 1.0),
                (-2.0, 0.5, nan),
                (2.0, inf, inf),
                (0.5, inf, 0.0),
                (2.0, -inf, 0.0),
                (inf, -1.0, 0.0),
                (inf, 2.0, inf),
                (-inf, 3.0, -inf),
                (-inf, 2.0, inf),
                (nan, 1.0, nan),
                (2.0, nan, nan),
                (4.0, 0.5, 2.0),
                (-2.0, 3.0, -8.0),
                (-2.0, 2.0, 4.0),
            ],
        ),
        (
            "fast_exp",
            |a, _| fast_exp(a),
            vec![(0.0, 0.0, 1.0), (-inf, 0.0, 0.0), (inf, 0.0, inf), (-100.0, 0.0, 0.0), (100.0, 0.0, inf), (nan, 0.0, nan)],
        ),
        (
            "fast_log",
            |a, _| fast_log(a),
            vec![(1.0, 0.0, 0.0), (0.0, 0.0, -inf), (-0.0, 0.0, -inf), (inf, 0.0, inf), (-1.0, 0.0, nan), (nan, 0.0, nan)],
        ),
        (
            "fast_pow",
            fast_pow,
            vec![(0.0, 2.0, 0.0), (0.0, -1.0, inf), (5.0, 0.0, 1.0), (1.0, nan, 1.0), (-2.0, 0.5, nan), (2.0, 10.0, 1024.0)],
        ),
        (
            "fast_inverse",
            |a, _| fast_inverse(a),
            vec![(0.0, 0.0, inf), (-0.0, 0.0, -inf), (inf, 0.0, 0.0), (-inf, 0.0, -0.0), (nan, 0.0, nan)],
        ),
        (
            "fast_inverse_sqrt",
            |a, _| fast_inverse_sqrt(a),
            vec![(0.0, 0.0, inf), (-0.0, 0.0, -inf), (inf, 0.0, 0.0), (-4.0, 0.0, nan), (nan, 0.0, nan)],
        ),
    ];
    for (name, build, values) in cases {
        let (a, b): (Vec<f32>, Vec<f32>) = values.iter().map(|&(a, b, _)| (a, b)).unzip();
        let got = evaluate(&a, &b, build);
        for (&(a, b, want), &g) in values.iter().zip(&got) {
            let g = g as f32;
            // fast_pow(2, 10) and pow's finite powers are approximate: within their errors.
            let approximate = (name == "fast_pow" && want == 1024.0) || (name == "pow" && want.is_finite() && want.abs() > 1.0);
            let close = if approximate { (g / want - 1.0).abs() < 1e-5 } else { g.to_bits() == want.to_bits() };
            assert!(close || (g.is_nan() && want.is_nan()), "{name}({a}, {b}) = {g}, want {want}");
        }
    }
}

/// Each expression equals itself structurally (no NaN constant inside,
/// which would compare unequal and break the wire format's round trip).
#[test]
fn expressions_equal_themselves() {
    let x = Expr::float(2.0, Type::f32()) * Expr::float(0.5, Type::f32());
    let unary: [fn(Expr) -> Result<Expr, LangError>; 4] = [fast_exp, fast_log, fast_inverse, fast_inverse_sqrt];
    for f in unary {
        let e = f(x.clone()).unwrap();
        assert_eq!(e, f(x.clone()).unwrap());
    }
    assert_eq!(fast_pow(x.clone(), x.clone()).unwrap(), fast_pow(x.clone(), x).unwrap());
}

#[test]
fn integers_are_converted_and_f64_is_refused() {
    let got = evaluate(&[0.0], &[0.0], |_, _| fast_exp(Expr::i32(2)));
    assert!((got[0] / 2f64.exp() - 1.0).abs() < 3e-7);
    let err = fast_log(cast(Type::f64(), Expr::i32(2))).unwrap_err();
    assert!(matches!(err, LangError::Intrinsic { name: "fast_log", .. }), "{err}");
    assert!(err.to_string().contains("f64"), "{err}");
}
