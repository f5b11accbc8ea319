//! Randomized differential testing: every catalog pipeline under many random
//! legal schedules (splits, reorders, fusion, compute and store levels,
//! vectorization, unrolling, parallel loops, sliding windows and folded
//! storage) must compute exactly what the reference evaluator computes:
//! bit-exact, floats included, since no schedule here reorders float
//! arithmetic (reduction loops keep their order).

mod common;

use compiler::lower::lower;
use compiler::random_schedule::{random_schedule, RandomScheduleOptions};
use compiler::realize::realize;
use compiler::schedule::{LoopLevel, Schedule};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Schedules per pipeline; with the 15 catalog pipelines this is 2,100 cases.
const SCHEDULES_PER_PIPELINE: usize = 140;

/// The naive schedule: every Func computed at root, serial, scalar.
fn all_root(case: &common::Case) -> Schedule {
    let mut s = Schedule::new();
    for f in &case.pipeline.funcs {
        s.funcs.insert(f.name.clone(), compiler::schedule::FuncSchedule { compute: LoopLevel::Root, ..Default::default() });
    }
    s
}

fn check_case(case: common::Case, seed: u64) -> usize {
    let expected = compiler::reference::realize(&case.pipeline, &case.inputs, &case.params, &case.output, &case.region)
        .unwrap_or_else(|e| panic!("{}: reference evaluation failed: {e}", case.name));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let options = RandomScheduleOptions::default();
    let mut checked = 0;
    for k in 0..SCHEDULES_PER_PIPELINE {
        let schedule = match k {
            0 => Schedule::new(),
            1 => all_root(&case),
            _ => random_schedule(&case.pipeline, &mut rng, &options),
        };
        let lowered = lower(&case.pipeline, &schedule)
            .unwrap_or_else(|e| panic!("{} schedule #{k} failed to lower: {e}\n{schedule}", case.name));
        let outputs = realize(&lowered, &case.inputs, &case.params, &[(&case.output, case.region.clone())])
            .unwrap_or_else(|e| panic!("{} schedule #{k} failed to run: {e}\n{schedule}\n{}", case.name, lowered.stmt));
        let got = &outputs[&case.output];
        for c in expected.coordinates() {
            let (want, have) = (expected.get(&c).unwrap(), got.get(&c).unwrap());
            assert!(
                want.bit_eq(have),
                "{} schedule #{k}: at {c:?} expected {want:?}, got {have:?}\nschedule:\n{schedule}\nlowered:\n{}",
                case.name,
                lowered.stmt
            );
        }
        checked += 1;
    }
    eprintln!("{}: {checked} schedules agree with the reference", case.name);
    checked
}

macro_rules! differential {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            let seed = stringify!($name).bytes().map(u64::from).sum();
            assert_eq!(check_case(common::$name(), seed), SCHEDULES_PER_PIPELINE);
        }
    )*};
}

differential!(
    blur,
    stencil_chain,
    down_up_sample,
    row_sum,
    histogram,
    scan,
    diamond_dag,
    float_math,
    int_wrap,
    boundary,
    matmul,
    conv1d_update,
    arg_max,
    triangle,
    params_and_lut,
);

#[test]
fn the_suite_runs_at_least_two_thousand_cases() {
    assert!(common::all_cases().len() * SCHEDULES_PER_PIPELINE >= 2000);
}
