//! Bounds from values: an index computed from a Func's value is bounded by
//! the values the Func's definition can take (a clamp, a small integer
//! type, a Func bounded through another, a bound given by a param), so such
//! pipelines lower under schedules that realize the Func, and the
//! interpreter and the JIT compute what the reference computes; a Func
//! whose values are not bounded is still the clear error.

use codegen::compile;
use compiler::error::{LowerError, UserError};
use compiler::exec::buffer::Buffer;
use compiler::ir::value::Scalar;
use compiler::lang::ops::{cast, clamp};
use compiler::lang::pipeline::PipelineDef;
use compiler::lower::{lower, lower_with, LowerOptions};
use compiler::schedule::Schedule;
use compiler::{Expr, Func, ImageParam, Param, Pipeline, ScalarType, Type, Var};
use std::collections::BTreeMap;

const N: i64 = 40;

fn input(name: &str, ty: ScalarType, region: (i64, i64), value: impl Fn(i64) -> i64) -> (String, Buffer) {
    let mut b = Buffer::new(name, ty, &[region]).unwrap();
    b.fill(|c| if ty.is_signed_int() { Scalar::Int(value(c[0])) } else { Scalar::UInt(value(c[0]) as u64) });
    (name.to_string(), b)
}

/// `out` over `[0, N)` under each schedule (lowered in checked mode) on the
/// interpreter and the JIT, against the reference.
fn agrees(p: &PipelineDef, inputs: &BTreeMap<String, Buffer>, params: &BTreeMap<String, Scalar>, schedules: &[Schedule]) {
    let region = vec![(0, N)];
    let reference = compiler::exec::reference::realize(p, inputs, params, "out", &region).unwrap();
    for s in schedules {
        let lowered = lower_with(p, s, &LowerOptions::checked()).unwrap_or_else(|e| panic!("{e}\n{s}"));
        let regions = [("out", region.clone())];
        let interpreted = compiler::exec::realize::realize(&lowered, inputs, params, &regions).unwrap();
        assert_eq!(interpreted["out"], reference, "interpreter\n{s}");
        let jit = compile(&lowered).unwrap().run(inputs, params, &regions).unwrap();
        assert_eq!(jit["out"], reference, "JIT\n{s}");
    }
}

/// Every Func in `funcs` computed at the root, `out` vectorized or not;
/// then the first (used by `out` only) inside `out`'s loop.
fn schedules(funcs: &[&str]) -> Vec<Schedule> {
    let mut root = Schedule::new();
    for f in funcs {
        root.func(f).compute_root();
    }
    let mut vectorized = root.clone();
    vectorized.func("out").vectorize_by("x", 8);
    let mut inner = Schedule::new();
    inner.func(funcs[0]).compute_at("out", "x");
    for f in &funcs[1..] {
        inner.func(f).compute_root();
    }
    vec![root, vectorized, inner]
}

/// Halide's example: `g(x) = clamp(h(x), 0, 9); out(x) = f(g(x))`, with `f`
/// a Func (its region is `[0, 9]`) and an input table read at `g(x)` (the
/// table holds exactly `[0, 9]`), and `g2 = 2 g + 1` bounded through `g`.
#[test]
fn a_clamped_func_bounds_the_index_it_computes() {
    let x = Var::new("x");
    let values = ImageParam::new("values", ScalarType::I32, 1);
    let table = ImageParam::new("table", ScalarType::I16, 1);
    let (h, g, g2, f, out) = (Func::new("h"), Func::new("g"), Func::new("g2"), Func::new("f"), Func::new("out"));
    h.define(&[&x], values.at([x.expr()]) * 7 - 20);
    g.define(&[&x], clamp(h.at([x.expr()]), 0, 9));
    g2.define(&[&x], g.at([x.expr()]) * 2 + 1);
    f.define(&[&x], x.expr() * x.expr() + 3);
    out.define(&[&x], f.at([g.at([x.expr()])]) + cast(Type::i32(), table.at([g.at([x.expr()])])) + f.at([g2.at([x.expr()])]));
    let p = Pipeline::new(&[&out]).unwrap();
    let inputs: BTreeMap<String, Buffer> =
        [input("values", ScalarType::I32, (0, N), |i| (i * 37) % 11 - 3), input("table", ScalarType::I16, (0, 10), |i| 100 - i * i)].into();
    agrees(&p, &inputs, &BTreeMap::new(), &schedules(&["g2", "g", "f"]));
    // The table is read over what g can take, [0, 9]; f is stored over
    // what g and g2 can take, [0, 19].
    let lowered = lower(&p, &schedules(&["g2", "g", "f"])[0]).unwrap();
    let table = lowered.footprints.iter().find(|f| &*f.buffer == "table").unwrap();
    assert_eq!(table.region, [(Expr::i32(0), Expr::i32(9))]);
    assert!(lowered.stmt.to_string().contains("allocate f: i32[20]"), "{}", lowered.stmt);
}

/// A `u8` Func bounds an index by its type, a param bounds a clamp, and
/// casts keep the bounds.
#[test]
fn small_types_and_param_bounds_bound_the_index() {
    let x = Var::new("x");
    let values = ImageParam::new("values", ScalarType::I32, 1);
    let n = Param::new("n", Type::i32());
    let (small, capped, lut, out) = (Func::new("small"), Func::new("capped"), Func::new("lut"), Func::new("out"));
    small.define(&[&x], cast(Type::u8(), values.at([x.expr()])));
    capped.define(&[&x], clamp(values.at([x.expr()]), -3, n.expr()));
    lut.define(&[&x], x.expr() * 3 - 1);
    out.define(&[&x], lut.at([cast(Type::i32(), small.at([x.expr()]))]) + lut.at([capped.at([x.expr()])]));
    let p = Pipeline::new(&[&out]).unwrap();
    let inputs: BTreeMap<String, Buffer> = [input("values", ScalarType::I32, (0, N), |i| (i * 53) % 300 - 20)].into();
    let params: BTreeMap<String, Scalar> = [("n".to_string(), Scalar::Int(17))].into();
    agrees(&p, &inputs, &params, &schedules(&["small", "capped", "lut"]));
}

#[test]
fn a_func_without_bounded_values_is_still_named() {
    let x = Var::new("x");
    let values = ImageParam::new("values", ScalarType::I32, 1);
    let (g, f, out) = (Func::new("g"), Func::new("f"), Func::new("out"));
    g.define(&[&x], values.at([x.expr()]) * 2);
    f.define(&[&x], x.expr() + 1);
    out.define(&[&x], f.at([g.at([x.expr()])]));
    let p = Pipeline::new(&[&out]).unwrap();
    let err = lower(&p, &schedules(&["g", "f"])[0]).unwrap_err();
    assert!(
        matches!(&err, LowerError::User(UserError::UnboundedRead { func, consumer, dim, index }) if func == "f" && consumer == "out" && dim == "x" && index.contains("g(")),
        "{err:?}"
    );
}
