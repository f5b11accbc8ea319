//! The intrinsics at their edges, on all three executors: `reinterpret`
//! between every pair of types of one width, the fast math functions
//! (the same bits everywhere), bit counts of
//! every integer type, float classes and rounding of NaN, infinities,
//! zeros and halves, `absd`, `saturating_cast` between every pair of
//! integer types and from floats, `lerp` of every supported value and
//! weight type, and `mux` in and out of range. The reference evaluator must
//! give what a direct model of Halide's semantics gives, and the
//! interpreter and the JIT, scalar and vectorized, what the reference gives.

use compiler::exec::buffer::Buffer;
use compiler::ir::types::{ScalarType, Type};
use compiler::ir::value::Scalar;
use compiler::lang::fast_math::{fast_exp, fast_inverse, fast_inverse_sqrt, fast_log, fast_pow};
use compiler::lang::intrinsics::{absd, lerp, mux, saturating_cast};
use compiler::lang::ops::{
    ceil, count_leading_zeros, count_trailing_zeros, floor, is_finite, is_inf, is_nan, popcount, reinterpret, round, trunc,
};
use compiler::{Expr, Func, ImageParam, Pipeline, Var};
use std::collections::BTreeMap;

#[path = "support/executors_agree.rs"]
mod executors_agree;
use executors_agree::{assert_executors_agree, wrap};

const INT_TYPES: [ScalarType; 8] =
    [ScalarType::U8, ScalarType::I8, ScalarType::U16, ScalarType::I16, ScalarType::U32, ScalarType::I32, ScalarType::U64, ScalarType::I64];
const FLOAT_TYPES: [ScalarType; 2] = [ScalarType::F32, ScalarType::F64];

fn int(v: i128, t: ScalarType) -> Scalar {
    if t.is_signed_int() {
        Scalar::Int(v as i64)
    } else {
        Scalar::UInt(v as u64)
    }
}

/// Values of `t`: zero, small, the extremes and their neighbours, patterns.
fn int_values(t: ScalarType) -> Vec<i128> {
    let (min, max) = (t.int_min(), t.int_max());
    [0, 1, -1, 2, 3, -7, 100, -100, 127, 128, min, max, min + 1, max - 1, 0x5A5A_5A5A_5A5A_5A5A, 0x0F0F, -0x1234_5678, 1 << 20]
        .into_iter()
        .map(|v| wrap(v, t))
        .collect()
}

/// Float values of `t`: zeros, halves, extremes, NaN, infinities.
fn float_values(t: ScalarType) -> Vec<f64> {
    let (max, tiny) =
        if t == ScalarType::F32 { (f32::MAX as f64, f32::MIN_POSITIVE as f64 / 4.0) } else { (f64::MAX, f64::MIN_POSITIVE / 4.0) };
    vec![
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.5,
        2.5,
        -2.5,
        0.49999997,
        1.0e10,
        -3.75,
        4_194_304.5,
        max,
        -max,
        tiny,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ]
    .into_iter()
    .map(|v| if t == ScalarType::F32 { v as f32 as f64 } else { v })
    .collect()
}

/// `out(x) = build(a0(x), a1(x), ...)` over the columns `inputs` (each a
/// type and its values), checked against `model` on the reference, and
/// the interpreter and the JIT, scalar and vectorized by 8, against the
/// reference.
fn check(what: &str, inputs: &[(ScalarType, Vec<Scalar>)], build: impl Fn(&[Expr]) -> Expr, model: impl Fn(usize) -> Scalar) {
    let reference = agree(what, inputs, build);
    for i in 0..inputs[0].1.len() {
        let args: Vec<Scalar> = inputs.iter().map(|(_, vs)| vs[i]).collect();
        let (got, want) = (reference.get(&[i as i64]).unwrap(), model(i));
        assert!(got.bit_eq(want), "reference: {what} of {args:?}: {got:?}, want {want:?}");
    }
}

/// `out(x) = build(a0(x), a1(x), ...)` over the columns `inputs`: the
/// interpreter and the JIT, scalar and vectorized by 8, give what the
/// reference gives, which is returned.
fn agree(what: &str, inputs: &[(ScalarType, Vec<Scalar>)], build: impl Fn(&[Expr]) -> Expr) -> Buffer {
    let n = inputs[0].1.len();
    let x = Var::new("x");
    let params: Vec<ImageParam> = inputs.iter().enumerate().map(|(i, (t, _))| ImageParam::new(&format!("a{i}"), *t, 1)).collect();
    let args: Vec<Expr> = params.iter().map(|p| p.at([x.expr()])).collect();
    let out = Func::new("out");
    out.define(&[&x], build(&args));
    let p = Pipeline::new(&[&out]).unwrap_or_else(|e| panic!("{what}: {e}"));
    let buffers: BTreeMap<String, Buffer> = inputs
        .iter()
        .enumerate()
        .map(|(i, (t, vs))| {
            let name = format!("a{i}");
            let mut b = Buffer::new(&name, *t, &[(0, n as i64)]).unwrap();
            b.fill(|c| vs[c[0] as usize]);
            (name, b)
        })
        .collect();
    let region = vec![(0, n as i64)];
    let reference = compiler::exec::reference::realize(&p, &buffers, &BTreeMap::new(), "out", &region).unwrap();
    assert_executors_agree(&p, &buffers, &region, &reference, what);
    reference
}

/// Every combination of one value of each list, as three columns.
fn product<A: Copy, B: Copy, C: Copy>(a: &[A], b: &[B], c: &[C]) -> (Vec<A>, Vec<B>, Vec<C>) {
    let mut out = (vec![], vec![], vec![]);
    for &x in a {
        for &y in b {
            for &z in c {
                out.0.push(x);
                out.1.push(y);
                out.2.push(z);
            }
        }
    }
    out
}

fn ints(t: ScalarType, vs: &[i128]) -> (ScalarType, Vec<Scalar>) {
    (t, vs.iter().map(|&v| int(v, t)).collect())
}

fn floats(t: ScalarType, vs: &[f64]) -> (ScalarType, Vec<Scalar>) {
    (t, vs.iter().map(|&v| Scalar::Float(v)).collect())
}

/// The bits of a value of type `t` (floats as their own width).
fn bits_of(v: Scalar, t: ScalarType) -> u64 {
    match (t, v) {
        (ScalarType::F32, Scalar::Float(f)) => (f as f32).to_bits().into(),
        (ScalarType::F64, Scalar::Float(f)) => f.to_bits(),
        (t, v) => (v.as_i128() as u128 & (u128::MAX >> (128 - t.bits()))) as u64,
    }
}

/// The value of type `t` holding `bits`.
fn of_bits(bits: u64, t: ScalarType) -> Scalar {
    match t {
        ScalarType::F32 => Scalar::Float(f32::from_bits(bits as u32).into()),
        ScalarType::F64 => Scalar::Float(f64::from_bits(bits)),
        t => int(wrap(bits.into(), t), t),
    }
}

#[test]
fn reinterpret_between_every_pair_of_one_width() {
    let groups: [&[ScalarType]; 4] = [
        &[ScalarType::U8, ScalarType::I8],
        &[ScalarType::U16, ScalarType::I16],
        &[ScalarType::U32, ScalarType::I32, ScalarType::F32],
        &[ScalarType::U64, ScalarType::I64, ScalarType::F64],
    ];
    for group in groups {
        for &from in group {
            let col = if from.is_float() { floats(from, &float_values(from)) } else { ints(from, &int_values(from)) };
            let vs = col.1.clone();
            for &to in group.iter().filter(|&&to| to != from) {
                let what = format!("reinterpret {from} -> {to}");
                check(
                    &what,
                    std::slice::from_ref(&col),
                    |a| reinterpret(Type::scalar(to), a[0].clone()),
                    |i| of_bits(bits_of(vs[i], from), to),
                );
                // There and back gives the value's own bits (NaN payloads included).
                check(
                    &format!("{what} -> {from}"),
                    std::slice::from_ref(&col),
                    |a| reinterpret(Type::scalar(from), reinterpret(Type::scalar(to), a[0].clone())),
                    |i| vs[i],
                );
            }
        }
    }
}

#[test]
fn fast_math_is_the_same_on_every_executor() {
    let mut vs = float_values(ScalarType::F32);
    vs.extend((-400..400).map(|i| (i as f64 * 0.37).powi(3) as f32 as f64));
    vs.extend([f32::MIN_POSITIVE as f64, 1e-45, 88.5, -87.5, 1.0, 2.0f64.sqrt() as f32 as f64]);
    let (a, b): (Vec<f64>, Vec<f64>) = vs.iter().flat_map(|&a| vs.iter().step_by(7).map(move |&b| (a, b))).unzip();
    let cols = [floats(ScalarType::F32, &a), floats(ScalarType::F32, &b)];
    let unary: [(&str, FastFn); 4] = [
        ("fast_exp", |e| fast_exp(e)),
        ("fast_log", |e| fast_log(e)),
        ("fast_inverse", |e| fast_inverse(e)),
        ("fast_inverse_sqrt", |e| fast_inverse_sqrt(e)),
    ];
    for (name, f) in unary {
        agree(name, &cols[..1], |e| f(e[0].clone()).unwrap());
    }
    // f32 `exp` is the same function, expanded by lowering (vectorized,
    // not the C library lane by lane) and computed by the evaluators.
    let fast = agree("fast_exp again", &cols[..1], |e| fast_exp(e[0].clone()).unwrap());
    check("exp", &cols[..1], |e| compiler::lang::ops::exp(e[0].clone()), |i| fast.get(&[i as i64]).unwrap());
    agree("fast_pow", &cols, |e| fast_pow(e[0].clone(), e[1].clone()).unwrap());
    // So are f32 `log` and `pow` (`compiler::ir::log`), on every value
    // pair: subnormals, zeros of both signs, infinities, NaN, negative
    // bases with integer and other exponents.
    agree("log", &cols[..1], |e| compiler::lang::ops::log(e[0].clone()));
    agree("pow", &cols, |e| compiler::lang::ops::pow(e[0].clone(), e[1].clone()));
    // Nested: each binds its argument to a let of the same name.
    agree("nested fast math", &cols, |e| {
        let inner = fast_log(fast_exp(e[0].clone()).unwrap() + fast_inverse(e[1].clone()).unwrap()).unwrap();
        fast_pow(fast_exp(inner.clone()).unwrap(), fast_log(inner).unwrap()).unwrap()
    });
}

type FastFn = fn(Expr) -> Result<Expr, compiler::error::LangError>;

#[test]
fn bit_counts_of_every_integer_type() {
    for t in INT_TYPES {
        let vs = int_values(t);
        let bits = |v: i128| (v as u128) & (u128::MAX >> (128 - t.bits()));
        let col = [ints(t, &vs)];
        check(&format!("popcount {t}"), &col, |a| popcount(a[0].clone()), |i| int(bits(vs[i]).count_ones().into(), t));
        check(
            &format!("count_leading_zeros {t}"),
            &col,
            |a| count_leading_zeros(a[0].clone()),
            |i| int((bits(vs[i]).leading_zeros() - (128 - t.bits())).into(), t),
        );
        check(
            &format!("count_trailing_zeros {t}"),
            &col,
            |a| count_trailing_zeros(a[0].clone()),
            |i| int(bits(vs[i]).trailing_zeros().min(t.bits()).into(), t),
        );
    }
}

/// A one-argument float intrinsic: its name, the language's function and
/// the model (a function of the value giving an `M`).
type Case<M> = (&'static str, fn(Expr) -> Expr, fn(f64) -> M);

#[test]
fn float_classes_and_rounding() {
    for t in FLOAT_TYPES {
        let vs = float_values(t);
        let col = [floats(t, &vs)];
        let classes: [Case<bool>; 3] =
            [("is_nan", is_nan, f64::is_nan), ("is_inf", is_inf, f64::is_infinite), ("is_finite", is_finite, f64::is_finite)];
        for (name, build, model) in classes {
            check(&format!("{name} {t}"), &col, |a| build(a[0].clone()), |i| Scalar::from_bool(model(vs[i])));
        }
        let roundings: [Case<f64>; 4] =
            [("trunc", trunc, f64::trunc), ("floor", floor, f64::floor), ("ceil", ceil, f64::ceil), ("round", round, f64::round_ties_even)];
        for (name, build, model) in roundings {
            check(&format!("{name} {t}"), &col, |a| build(a[0].clone()), |i| Scalar::Float(model(vs[i])));
        }
    }
}

#[test]
fn absd_is_exact_and_unsigned() {
    for t in INT_TYPES {
        let vs = int_values(t);
        let pairs: Vec<(i128, i128)> = vs.iter().flat_map(|&a| vs.iter().map(move |&b| (a, b))).collect();
        let u = ScalarType::from_name(&format!("u{}", t.bits())).unwrap();
        let (a, b): (Vec<i128>, Vec<i128>) = pairs.iter().copied().unzip();
        check(&format!("absd {t}"), &[ints(t, &a), ints(t, &b)], |e| absd(e[0].clone(), e[1].clone()), |i| int((a[i] - b[i]).abs(), u));
    }
    let vs = float_values(ScalarType::F32);
    let (a, b): (Vec<f64>, Vec<f64>) = vs.iter().flat_map(|&a| vs.iter().map(move |&b| (a, b))).unzip();
    check(
        "absd f32",
        &[floats(ScalarType::F32, &a), floats(ScalarType::F32, &b)],
        |e| absd(e[0].clone(), e[1].clone()),
        |i| Scalar::Float((a[i] as f32 - b[i] as f32).abs() as f64),
    );
}

#[test]
fn saturating_casts_clamp_to_the_target() {
    for from in INT_TYPES {
        let vs = int_values(from);
        for to in INT_TYPES {
            check(
                &format!("saturating_cast {from} -> {to}"),
                &[ints(from, &vs)],
                |e| saturating_cast(Type::scalar(to), e[0].clone()),
                |i| int(vs[i].clamp(to.int_min(), to.int_max()), to),
            );
        }
    }
    for from in FLOAT_TYPES {
        let vs = float_values(from);
        for to in INT_TYPES {
            let model = |v: f64| if v.is_nan() { 0 } else { (v.trunc().clamp(-1e30, 1e30) as i128).clamp(to.int_min(), to.int_max()) };
            check(
                &format!("saturating_cast {from} -> {to}"),
                &[floats(from, &vs)],
                |e| saturating_cast(Type::scalar(to), e[0].clone()),
                |i| int(model(vs[i]), to),
            );
        }
    }
    let vs: Vec<f64> = float_values(ScalarType::F64).into_iter().chain([1e39, -1e39, 3.5e38]).collect();
    check(
        "saturating_cast f64 -> f32",
        &[floats(ScalarType::F64, &vs)],
        |e| saturating_cast(Type::f32(), e[0].clone()),
        |i| Scalar::Float(if vs[i].is_nan() { f64::NAN } else { vs[i].clamp(-(f32::MAX as f64), f32::MAX as f64) as f32 as f64 }),
    );
}

/// Halide's integer lerp: round to nearest (halves up) of `(zero * (M - w)
/// + one * w) / M` in the unsigned image of the values (`M` the unsigned
/// maximum of their width, `w` the weight scaled to it).
fn int_lerp(t: ScalarType, zero: i128, one: i128, w: u128) -> i128 {
    let m = (1u128 << t.bits()) - 1;
    let bias = t.int_min();
    let (z, o) = ((zero - bias) as u128, (one - bias) as u128);
    let p = z * (m - w) + o * w;
    ((2 * p + m) / (2 * m)) as i128 + bias
}

/// A weight of `wbits` bits scaled to `bits` bits, exactly.
fn scaled(w: u128, wbits: u32, bits: u32) -> u128 {
    w * ((1u128 << bits) - 1) / ((1u128 << wbits) - 1)
}

#[test]
fn integer_lerp_of_every_width_and_weight_type() {
    let lerp_types = [ScalarType::U8, ScalarType::I8, ScalarType::U16, ScalarType::I16, ScalarType::U32, ScalarType::I32];
    for t in lerp_types {
        let vs = int_values(t);
        for wt in [ScalarType::U8, ScalarType::U16, ScalarType::U32, ScalarType::U64] {
            let ws: Vec<i128> =
                [0, 1, 2, 127, 128, 1000, 0x1234_5678, wt.int_max() - 1, wt.int_max()].into_iter().map(|w| wrap(w, wt)).collect();
            let (a, b, w) = product(&vs, &vs, &ws);
            check(
                &format!("lerp {t} by {wt}"),
                &[ints(t, &a), ints(t, &b), ints(wt, &w)],
                |e| lerp(e[0].clone(), e[1].clone(), e[2].clone()).unwrap(),
                |i| int(int_lerp(t, a[i], b[i], scaled(w[i] as u128, wt.bits(), t.bits())), t),
            );
        }
        let ws = [0.0f32, 1.0, 0.5, 0.25, 0.75, 0.1, 0.999, 1.0e-7];
        let (a, b, w) = product(&vs, &vs, &ws);
        let m = (1u128 << t.bits()) - 1;
        // The weight scaled as lower_lerp does: `M * w` in the weight's
        // type (in f64 for 32-bit values), truncated.
        let scale = |w: f32| if t.bits() == 32 { (m as f64 * w as f64) as u128 } else { (m as f32 * w) as u128 };
        check(
            &format!("lerp {t} by f32"),
            &[ints(t, &a), ints(t, &b), floats(ScalarType::F32, &w.iter().map(|&w| w as f64).collect::<Vec<_>>())],
            |e| lerp(e[0].clone(), e[1].clone(), e[2].clone()).unwrap(),
            |i| int(int_lerp(t, a[i], b[i], scale(w[i])), t),
        );
    }
}

#[test]
fn float_lerp_and_bool_lerp() {
    let vs = float_values(ScalarType::F32);
    let ws = [0.0f32, 1.0, 0.5, 0.25, 0.3];
    let (a, b, w) = product(&vs, &vs, &ws);
    check(
        "lerp f32 by f32",
        &[
            floats(ScalarType::F32, &a),
            floats(ScalarType::F32, &b),
            floats(ScalarType::F32, &w.iter().map(|&w| w as f64).collect::<Vec<_>>()),
        ],
        |e| lerp(e[0].clone(), e[1].clone(), e[2].clone()).unwrap(),
        |i| {
            let (z, o, w) = (a[i] as f32, b[i] as f32, w[i]);
            Scalar::Float((z * (1.0 - w) + o * w) as f64)
        },
    );
    let ws: Vec<i128> = vec![0, 1, 127, 128, 200, 255, 64, 3];
    check(
        "lerp f32 by u8",
        &[floats(ScalarType::F32, &[2.0; 8]), floats(ScalarType::F32, &[4.0; 8]), ints(ScalarType::U8, &ws)],
        |e| lerp(e[0].clone(), e[1].clone(), e[2].clone()).unwrap(),
        |i| {
            let w = ws[i] as f32 / 255.0;
            Scalar::Float((2.0f32 * (1.0 - w) + 4.0f32 * w) as f64)
        },
    );
    // `one` above half the weight's range (127 for u8), else `zero`.
    let (zero, one, w) = product(&[0, 1], &[0, 1], &[0, 127, 128, 255]);
    check(
        "lerp bool by u8",
        &[ints(ScalarType::Bool, &zero), ints(ScalarType::Bool, &one), ints(ScalarType::U8, &w)],
        |e| lerp(e[0].clone(), e[1].clone(), e[2].clone()).unwrap(),
        |i| Scalar::from_bool(if w[i] > 127 { one[i] == 1 } else { zero[i] == 1 }),
    );
}

#[test]
fn lerp_and_mux_refuse_what_halide_refuses() {
    let a = ImageParam::new("a", ScalarType::I64, 1);
    let w = ImageParam::new("w", ScalarType::I32, 1);
    let x = Var::new("x");
    let err = lerp(a.at([x.expr()]), a.at([x.expr()]), Expr::float(0.5, Type::f32())).unwrap_err();
    assert!(err.to_string().contains("64-bit"), "{err}");
    let b = ImageParam::new("b", ScalarType::U8, 1);
    let err = lerp(b.at([x.expr()]), b.at([x.expr()]), w.at([x.expr()])).unwrap_err();
    assert!(err.to_string().contains("weight") && err.to_string().contains("i32"), "{err}");
    let err = lerp(b.at([x.expr()]), b.at([x.expr()]), Expr::float(1.5, Type::f32())).unwrap_err();
    assert!(err.to_string().contains("outside [0, 1]"), "{err}");
    assert!(mux(x.expr(), &[]).unwrap_err().to_string().contains("at least one value"));
    let err = mux(x.expr(), &[Expr::i32(1), Expr::float(2.0, Type::f32())]).unwrap_err();
    assert!(err.to_string().contains("one type"), "{err}");
}

#[test]
fn mux_picks_the_last_value_out_of_range() {
    let ids: Vec<i128> = vec![-5, -1, 0, 1, 2, 3, 4, i32::MAX.into(), i32::MIN.into()];
    let choices: [i64; 4] = [10, 20, 30, 40];
    check(
        "mux",
        &[ints(ScalarType::I32, &ids), ints(ScalarType::I16, &[7; 9])],
        |e| mux(e[0].clone(), &choices.map(|c| e[1].clone() * c as i32)).unwrap(),
        |i| {
            let k = usize::try_from(ids[i]).ok().filter(|&k| k < choices.len()).unwrap_or(choices.len() - 1);
            Scalar::Int(7 * choices[k])
        },
    );
}

#[test]
fn bit_counts_of_floats_are_language_errors() {
    let a = ImageParam::new("a", ScalarType::F32, 1);
    let x = Var::new("x");
    let out = Func::new("out");
    out.define(&[&x], popcount(a.at([x.expr()])));
    let err = Pipeline::new(&[&out]).map(|_| ()).unwrap_err();
    assert!(err.to_string().contains("popcount") && err.to_string().contains("integers"), "{err}");
}
