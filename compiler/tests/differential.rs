//! Randomized differential testing on the IR interpreter: every catalog
//! pipeline under many random legal schedules (splits, reorders, fusion,
//! compute and store levels, vectorization, unrolling, parallel loops,
//! sliding windows and folded storage) must compute exactly what the
//! reference evaluator computes (see `common::differential`).

#[macro_use]
mod common;

use common::differential::check_schedules;
use compiler::exec::realize::realize;

/// Schedules per pipeline; with the 15 catalog pipelines this is 2,100 cases.
const SCHEDULES_PER_PIPELINE: usize = 140;

fn interpret(case: &common::Case) -> usize {
    check_schedules(case, SCHEDULES_PER_PIPELINE, |lowered| {
        let mut outputs =
            realize(lowered, &case.inputs, &case.params, &[(&case.output, case.region.clone())]).map_err(|e| e.to_string())?;
        Ok(outputs.remove(&case.output).expect("the output is realized"))
    })
}

macro_rules! differential {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            assert_eq!(interpret(&common::$name()), SCHEDULES_PER_PIPELINE);
        }
    )*};
}

for_each_case!(differential);

#[test]
fn the_suite_runs_at_least_two_thousand_cases() {
    assert!(common::all_cases().len() * SCHEDULES_PER_PIPELINE >= 2000);
}
