//! A read whose coordinate is computed in floats, as resampling writes it
//! (`f(x) = input(i32(f32(x) * 1.5f))`): the compiler lowers and runs it,
//! so the autoscheduler must analyse, price and schedule it too (it was
//! refused: "cannot evaluate the bound ... unsupported node").

use compiler::Target;
use search::{autoschedule, Analytical, BeamOptions, Machine, Searched};
use std::time::Duration;

#[test]
fn coordinates_computed_in_floats_are_analysed_and_scheduled() {
    let p = compiler::examples::resampling(1024, 768);
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
