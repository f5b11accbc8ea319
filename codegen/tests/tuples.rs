//! Tuple Funcs on all three executors: the reference evaluator, the IR
//! interpreter and the JIT compute the same values for a Tuple output
//! (one buffer per value) under several schedules, a Tuple update reads
//! every old value before it writes any, and `argmax` returns the first
//! best position and its value.

use codegen::compile;
use compiler::exec::buffer::Buffer;
use compiler::exec::realize::realize as interpret;
use compiler::exec::reference::realize_values;
use compiler::ir::value::Scalar;
use compiler::lang::ops::cast;
use compiler::lang::pipeline::PipelineDef;
use compiler::lang::reductions::argmax;
use compiler::lower::lower;
use compiler::schedule::Schedule;
use compiler::{Expr, Func, ImageParam, Pipeline, RDom, ScalarType, Type, Var};
use std::collections::BTreeMap;

/// Runs `output` of `p` over `region` on the reference, the interpreter
/// and the JIT under each schedule, and checks they agree buffer by
/// buffer; returns the reference's buffers.
fn agree(p: &PipelineDef, inputs: &BTreeMap<String, Buffer>, output: &str, region: &[(i64, i64)], schedules: &[Schedule]) -> Vec<Buffer> {
    let want = realize_values(p, inputs, &BTreeMap::new(), output, region).unwrap();
    let regions = [(output, region.to_vec())];
    for (k, s) in schedules.iter().enumerate() {
        let lowered = lower(p, s).unwrap_or_else(|e| panic!("schedule {k}: {e}\n{s}"));
        let by_interpreter = interpret(&lowered, inputs, &BTreeMap::new(), &regions).unwrap();
        let by_jit = compile(&lowered).unwrap().run(inputs, &BTreeMap::new(), &regions).unwrap();
        for got in [by_interpreter, by_jit] {
            assert_eq!(got.len(), want.len(), "one buffer per value");
            for w in &want {
                assert_eq!(got.get(&w.name), Some(w), "schedule {k}, buffer {}:\n{s}\n{}", w.name, lowered.stmt);
            }
        }
    }
    want
}

fn ints(b: &Buffer) -> Vec<i64> {
    b.coordinates().map(|c| b.get(&c).unwrap().as_i128() as i64).collect()
}

/// `f(x) = (x, 10 x)`, then `f(x) = (f(x)[1], f(x)[0])`: a swap, which
/// only holds if both values are read before either is written.
#[test]
fn a_tuple_update_reads_every_old_value_first() {
    let x = Var::new("x");
    let f = Func::new("f");
    f.define_tuple(&[&x], [x.expr(), x.expr() * 10]);
    let [a, b] = [0, 1].map(|k| f.value_at([x.expr()], k));
    f.update_tuple([x.expr()], [b, a]);
    let p = Pipeline::new(&[&f]).unwrap();
    let mut vectorized = Schedule::new();
    vectorized.func("f").vectorize_by("x", 8);
    let got = agree(&p, &BTreeMap::new(), "f", &[(-5, 21)], &[Schedule::new(), vectorized]);
    assert_eq!([&*got[0].name, &*got[1].name], ["f.0", "f.1"]);
    assert_eq!(ints(&got[0]), (-5..16).map(|x| 10 * x).collect::<Vec<_>>());
    assert_eq!(ints(&got[1]), (-5..16).collect::<Vec<_>>());
}

/// A Tuple output of two types with a reduction, under the default
/// schedule, vectorized and parallel tiles, and computed inside a
/// consumer's tiles as an intermediate.
#[test]
fn tuple_outputs_and_intermediates_agree_on_every_executor() {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::U8, 2);
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(3))]);
    let stats = Func::new("stats");
    stats.define_tuple(&[&x, &y], [Expr::i32(0), Expr::float(0.0, Type::f32())]);
    let [n, mean] = [0, 1].map(|k| stats.value_at([x.expr(), y.expr()], k));
    let px = input.at([&x + r.x().expr(), y.expr()]);
    stats.update_tuple([x.expr(), y.expr()], [n.clone() + cast(Type::i32(), px.clone()), mean + cast(Type::f32(), px) * 0.25f32]);
    let out = Func::new("out");
    let [n, mean] = [0, 1].map(|k| stats.value_at([x.expr(), &y + 1], k));
    out.define_tuple(&[&x, &y], [mean, n - cast(Type::i32(), input.at([x.expr(), y.expr()]))]);
    let p = Pipeline::new(&[&out]).unwrap();
    let mut b = Buffer::new("input", ScalarType::U8, &[(0, 48), (0, 24)]).unwrap();
    b.fill(|c| Scalar::UInt(((c[0] * 37 + c[1] * 11) % 256) as u64));
    let inputs = BTreeMap::from([("input".to_string(), b)]);
    let mut tiled = Schedule::new();
    tiled.func("out").tile("x", "y", "xo", "yo", "xi", "yi", 8, 4).vectorize("xi").parallel("yo");
    tiled.func("stats").compute_at("out", "xo").vectorize_by("x", 4);
    let mut root = Schedule::new();
    root.func("stats").compute_root().parallel("y");
    root.func("out").vectorize_by("x", 16);
    let got = agree(&p, &inputs, "out", &[(0, 40), (0, 20)], &[Schedule::new(), tiled, root]);
    assert_eq!(got[0].ty, ScalarType::F32);
    assert_eq!(got[1].ty, ScalarType::I32);
}

/// `argmax` is a Tuple reduction: the first position of the largest value,
/// and that value.
#[test]
fn argmax_returns_the_first_best_position_and_its_value() {
    let x = Var::new("x");
    let input = ImageParam::new("input", ScalarType::I32, 1);
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(6))]);
    let best = argmax(input.at([&x + r.x().expr()]));
    let out = Func::new("out");
    out.define_tuple(&[&x], best);
    let p = Pipeline::new(&[&out]).unwrap();
    let values = [3, 9, 1, 9, 4, 9, 2, 0, 8, 8, 1, 7];
    let mut b = Buffer::new("input", ScalarType::I32, &[(0, values.len() as i64)]).unwrap();
    b.fill(|c| Scalar::Int(values[c[0] as usize]));
    let inputs = BTreeMap::from([("input".to_string(), b)]);
    let got = agree(&p, &inputs, "out", &[(0, 6)], &[Schedule::new()]);
    let (mut positions, mut maxima) = (vec![], vec![]);
    for x in 0..6 {
        let window = &values[x..x + 6];
        let m = *window.iter().max().unwrap();
        positions.push(window.iter().position(|&v| v == m).unwrap() as i64);
        maxima.push(m);
    }
    assert_eq!(ints(&got[0]), positions);
    assert_eq!(ints(&got[1]), maxima);
}
