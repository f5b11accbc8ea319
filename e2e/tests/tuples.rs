//! Tuple Funcs through the autoscheduler: a pipeline with a Tuple
//! reduction (`argmax`), a Tuple update reading both of its values and a
//! Tuple output gets a schedule, deterministically, that lowers in checked
//! mode, compiles and computes every value exactly as the reference does.

use compiler::exec::buffer::Buffer;
use compiler::ir::value::Scalar;
use compiler::lang::ops::cast;
use compiler::lang::reductions::argmax;
use compiler::{Expr, Func, ImageParam, LowerOptions, Pipeline, PipelineDef, RDom, ScalarType, Target, Type, Var};
use search::{autoschedule, Analytical, BeamOptions, Machine};
use std::collections::BTreeMap;
use std::time::Duration;

fn tuple_pipeline() -> PipelineDef {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::U16, 2);
    input.set_estimate(0, 0, 300).set_estimate(1, 0, 200);
    let blur = Func::new("blur");
    blur.define(&[&x, &y], (input.at([x.expr(), y.expr()]) + input.at([x.expr(), &y + 1])) / 2);
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(5))]);
    let best = argmax(blur.at([&x + r.x().expr(), y.expr()]));
    let run = Func::new("run");
    run.define_tuple(&[&x, &y], [Expr::i32(0), Expr::float(0.0, Type::f32())]);
    let [count, total] = [0, 1].map(|k| run.value_at([x.expr(), y.expr()], k));
    let px = cast(Type::f32(), blur.at([x.expr(), &y + r.x().expr()]));
    run.update_tuple([x.expr(), y.expr()], [count.clone() + best[0].clone(), total * 0.5f32 + px + cast(Type::f32(), count)]);
    let out = Func::new("out");
    let [count, total] = [0, 1].map(|k| run.value_at([x.expr(), y.expr()], k));
    out.define_tuple(&[&x, &y], [total, count + cast(Type::i32(), best[1].clone())]);
    out.set_estimate(0, 0, 256).set_estimate(1, 0, 160);
    Pipeline::new(&[&out]).expect("the pipeline checks")
}

#[test]
fn a_tuple_pipeline_gets_a_schedule_that_computes_every_value() {
    let p = tuple_pipeline();
    let target = Target::host();
    let options = BeamOptions { beam: 8, passes: 2, budget: Duration::from_secs(60), ..BeamOptions::default() };
    let schedule = |threads| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut model = Analytical::new(Machine::typical(target.threads));
        pool.install(|| autoschedule(&p, &target, &mut model, &options, 0).expect("a schedule").answer().expect("not abandoned").schedule)
    };
    let s = schedule(1);
    assert_eq!(s.to_string(), schedule(2).to_string(), "deterministic at any thread count");
    eprintln!("{s}");
    let lowered = compiler::lower_with(&p, &s, &LowerOptions::checked()).unwrap_or_else(|e| panic!("{e}\n{s}"));
    let compiled = codegen::compile(&lowered).unwrap();
    let mut b = Buffer::new("input", ScalarType::U16, &[(0, 300), (0, 200)]).unwrap();
    b.fill(|c| Scalar::UInt(((c[0] * 7919 + c[1] * 104729) % 4096) as u64));
    let inputs = BTreeMap::from([("input".to_string(), b)]);
    let region = vec![(0, 256), (0, 160)];
    let got = compiled.run(&inputs, &BTreeMap::new(), &[("out", region.clone())]).unwrap();
    let want = compiler::exec::reference::realize_values(&p, &inputs, &BTreeMap::new(), "out", &region).unwrap();
    for w in &want {
        let g = &got[&*w.name];
        for c in w.coordinates() {
            assert!(w.get(&c).unwrap().bit_eq(g.get(&c).unwrap()), "{} differs at {c:?}\n{s}", w.name);
        }
    }
}
