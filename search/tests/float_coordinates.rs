//! A read whose coordinate is computed in floats, as resampling writes it
//! (`f(x) = input(i32(f32(x) * 1.5f))`): the compiler lowers and runs it,
//! so the autoscheduler must analyse, price and schedule it too (it was
//! refused: "cannot evaluate the bound ... unsupported node").

use compiler::lang::ops::cast;
use compiler::{Func, ImageParam, Pipeline, PipelineDef, ScalarType, Target, Type, Var};
use search::{autoschedule, Analytical, BeamOptions, Machine, Searched};
use std::time::Duration;

/// `f(x, y) = input(i32(f32(x) * 1.5f), y) + 1`, then `g` reads `f` at
/// `i32(f32(x) * 0.75f)`: a downsampling and an upsampling by float
/// factors.
fn resampling() -> PipelineDef {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::U16, 2);
    let f = Func::new("f");
    f.define(&[&x, &y], input.at([cast(Type::i32(), cast(Type::f32(), x.expr()) * 1.5f32), y.expr()]) + 1);
    let g = Func::new("g");
    g.define(&[&x, &y], f.at([cast(Type::i32(), cast(Type::f32(), x.expr()) * 0.75f32), y.expr()]) * 2);
    g.set_estimate(0, 0, 1024).set_estimate(1, 0, 768);
    input.set_estimate(0, 0, 1200).set_estimate(1, 0, 768);
    Pipeline::new(&[&g]).expect("a pipeline")
}

#[test]
fn coordinates_computed_in_floats_are_analysed_and_scheduled() {
    let p = resampling();
    let target = Target { vector_bytes: 32, threads: 4 };
    let dag = featurizer::Dag::new(&p, &target).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(dag.stages.len(), 2);
    let mut model = Analytical::new(Machine::typical(target.threads));
    let options = BeamOptions { budget: Duration::from_millis(500), ..BeamOptions::default() };
    let answer = match autoschedule(&p, &target, &mut model, &options, 1) {
        Ok(Searched::Answered(a)) => a,
        Ok(Searched::Abandoned) => panic!("abandoned without an abandon flag"),
        Err(e) => panic!("{e}"),
    };
    assert!(answer.predicted_seconds.is_finite() && answer.predicted_seconds > 0.0);
    compiler::lower(&p, &answer.schedule).unwrap_or_else(|e| panic!("{e}\n{}", answer.schedule));
}
