//! The differential check shared by the interpreter and JIT suites: a
//! catalog pipeline under its default schedule, the all-root schedule and
//! random legal schedules must compute exactly what the reference evaluator
//! computes: bit-exact, floats included, since no schedule here reorders
//! float arithmetic (reduction loops keep their order), or within a stated
//! tolerance for the fast float mode. Lowering runs in checked mode: an
//! access outside its storage is an assertion failure.

use super::Case;
use compiler::exec::buffer::Buffer;
use compiler::ir::value::Scalar;
use compiler::lower::{lower_with, LowerOptions, Lowered};
use compiler::schedule::random::{random_schedule, RandomScheduleOptions};
use compiler::schedule::{FuncSchedule, LoopLevel, Schedule};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The naive schedule: every Func computed at root, serial, scalar.
pub fn all_root(case: &Case) -> Schedule {
    let mut s = Schedule::new();
    for f in &case.pipeline.funcs {
        s.funcs.insert(f.name.clone(), FuncSchedule { compute: LoopLevel::Root, ..Default::default() });
    }
    s
}

/// A deterministic seed per test name.
pub fn seed_of(name: &str) -> u64 {
    name.bytes().map(u64::from).sum()
}

/// Runs `count` schedules of `case` through `execute` (which returns the
/// output or an error message) and checks each output point against the
/// reference evaluator bit for bit. Returns how many schedules agreed.
pub fn check_schedules(case: &Case, count: usize, execute: impl Fn(&Lowered) -> Result<Buffer, String>) -> usize {
    check_schedules_with(case, count, Scalar::bit_eq, execute)
}

/// As [`check_schedules`], with `agree(reference, output)` deciding whether
/// an output point is right.
pub fn check_schedules_with(
    case: &Case,
    count: usize,
    agree: impl Fn(Scalar, Scalar) -> bool,
    execute: impl Fn(&Lowered) -> Result<Buffer, String>,
) -> usize {
    let expected = compiler::exec::reference::realize(&case.pipeline, &case.inputs, &case.params, &case.output, &case.region)
        .unwrap_or_else(|e| panic!("{}: reference evaluation failed: {e}", case.name));
    let mut rng = ChaCha8Rng::seed_from_u64(seed_of(case.name));
    let options = RandomScheduleOptions::default();
    let mut checked = 0;
    for k in 0..count {
        let schedule = match k {
            0 => Schedule::new(),
            1 => all_root(case),
            _ => random_schedule(&case.pipeline, &mut rng, &options),
        };
        let lowered = lower_with(&case.pipeline, &schedule, &LowerOptions::checked())
            .unwrap_or_else(|e| panic!("{} schedule #{k} failed to lower: {e}\n{schedule}", case.name));
        let got =
            execute(&lowered).unwrap_or_else(|e| panic!("{} schedule #{k} failed to run: {e}\n{schedule}\n{}", case.name, lowered.stmt));
        for c in expected.coordinates() {
            let (want, have) = (expected.get(&c).unwrap(), got.get(&c).unwrap());
            assert!(
                agree(want, have),
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
