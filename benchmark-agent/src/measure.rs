//! Timing one schedule in the isolated runner, and classifying what came
//! of it in the store's terms.

use crate::{AgentError, Workload};
use codegen::runner::{Outcome, RunRequest, Runner};
use codegen::timing::Sampling;
use compiler::Schedule;
use data::{FailureClass, Runtime};

/// How many times each schedule runs: a warm-up, then the best of at least
/// three and at most twenty runs, stopping after 150 ms (Adams records the
/// best time too).
pub fn training_sampling() -> Sampling {
    Sampling { warmup: 1, min_samples: 3, max_samples: 20, budget: std::time::Duration::from_millis(150) }
}

/// Lowers, compiles and times `schedule` on `workload` in the runner's
/// child; returns the compile time (where compiling got that far) and the
/// outcome.
pub fn measure(runner: &mut Runner, workload: &Workload, schedule: &Schedule, sampling: &Sampling) -> (Option<f64>, data::Outcome) {
    let request = RunRequest {
        pipeline: workload.pipeline.clone(),
        schedule: schedule.clone(),
        inputs: workload.inputs.clone(),
        params: vec![],
        output: workload.output.clone(),
        sampling: *sampling,
        check_accesses: false,
        verify: false,
        fault: None,
    };
    classify(runner.run(&request))
}

/// The store's view of a runner outcome.
fn classify(outcome: Outcome) -> (Option<f64>, data::Outcome) {
    let failed = |class| (None, data::Outcome::Failed(class));
    match outcome {
        Outcome::Measured { compile_ms, min_ms, median_ms, samples } => (
            Some(compile_ms / 1e3),
            data::Outcome::Measured(Runtime { min_s: min_ms / 1e3, median_s: median_ms / 1e3, samples: samples as u32 }),
        ),
        Outcome::Illegal { .. } | Outcome::CompileError { .. } => failed(FailureClass::CompileError),
        Outcome::Crash { .. } | Outcome::OutOfMemory => failed(FailureClass::Crash),
        Outcome::Timeout => failed(FailureClass::Timeout),
        Outcome::OutputMismatch { .. } => failed(FailureClass::WrongOutput),
        Outcome::RunFailed { .. } => failed(FailureClass::Other),
    }
}

/// Times each of `schedules` `passes` times in rotation (a pass over all
/// of them, then the next, so that a slow spell of the machine costs
/// several schedules one timing each rather than one schedule all of its
/// timings), keeping each one's best; one that fails is not timed again.
/// `stop` is asked before each timing: once it says yes, the schedules
/// timed so far are returned (each with what it measured), the others left
/// out. Returns each one's compile time and outcome.
pub fn time_in_rotation(
    runner: &mut Runner,
    workload: &Workload,
    schedules: &[&Schedule],
    passes: usize,
    stop: &dyn Fn() -> bool,
) -> Vec<(Option<f64>, data::Outcome)> {
    let timing = training_sampling();
    let mut timed = Vec::with_capacity(schedules.len());
    for schedule in schedules {
        if stop() {
            break;
        }
        timed.push(measure(runner, workload, schedule, &timing));
    }
    for _ in 1..passes {
        for (schedule, (_, outcome)) in schedules.iter().zip(&mut timed) {
            if stop() {
                break;
            }
            if let data::Outcome::Measured(best) = outcome {
                if let data::Outcome::Measured(again) = measure(runner, workload, schedule, &timing).1 {
                    *best = best_of(*best, again);
                }
            }
        }
    }
    timed
}

/// Where schedules are timed: this machine's isolated runner (a
/// [`Runner`]), or elsewhere (the service's tunings time on an agent of the
/// tuning's host).
pub trait Timer {
    /// Times each of `schedules` of `workload` `passes` times in rotation,
    /// each one's best, asking `stop` before each timing (the contract of
    /// [`time_in_rotation`]); each one's compile time and outcome.
    fn time(
        &mut self,
        workload: &Workload,
        schedules: &[&Schedule],
        passes: usize,
        stop: &dyn Fn() -> bool,
    ) -> Result<Vec<(Option<f64>, data::Outcome)>, AgentError>;
}

impl Timer for Runner {
    fn time(
        &mut self,
        workload: &Workload,
        schedules: &[&Schedule],
        passes: usize,
        stop: &dyn Fn() -> bool,
    ) -> Result<Vec<(Option<f64>, data::Outcome)>, AgentError> {
        Ok(time_in_rotation(self, workload, schedules, passes, stop))
    }
}

/// Two timings of one schedule as one: the best time of both, the median
/// of the faster pass, the runs of both.
fn best_of(a: Runtime, b: Runtime) -> Runtime {
    let faster = if b.min_s < a.min_s { b } else { a };
    Runtime { min_s: faster.min_s, median_s: faster.median_s, samples: a.samples + b.samples }
}

/// Times the schedules `sources` (schedule source texts) again on
/// `workload`, as data generation times them (`passes` in rotation, each
/// one's best, in seconds); `None` where one failed or did not parse. How
/// repeatable the stored times are bounds how well any model can order
/// them.
pub fn remeasure(runner: &mut Runner, workload: &Workload, sources: &[String], passes: usize) -> Vec<Option<f64>> {
    let schedules: Vec<Option<Schedule>> = sources.iter().map(|s| s.parse().ok()).collect();
    let parsed: Vec<&Schedule> = schedules.iter().flatten().collect();
    let mut times = time_in_rotation(runner, workload, &parsed, passes, &|| false).into_iter().map(|(_, outcome)| match outcome {
        data::Outcome::Measured(r) => Some(r.min_s),
        data::Outcome::Failed(_) => None,
    });
    schedules.iter().map(|s| s.as_ref().and_then(|_| times.next().flatten())).collect()
}

/// Of the pairs of schedules that both `a` and `b` measured (with
/// different times in `a`), the fraction ordered the same way by both: the
/// ceiling of a model's pairwise accuracy on data measured like them.
pub fn pairwise_agreement(a: &[Option<f64>], b: &[Option<f64>]) -> f64 {
    let (pairs, agreeing) = agreeing_pairs(a, b);
    agreeing as f64 / pairs.max(1) as f64
}

/// The pairs [`pairwise_agreement`] counts, and how many of them `a` and
/// `b` order alike (to pool the agreement over several pipelines).
pub fn agreeing_pairs(a: &[Option<f64>], b: &[Option<f64>]) -> (usize, usize) {
    let both: Vec<(f64, f64)> = a.iter().zip(b).filter_map(|(a, b)| Some(((*a)?, (*b)?))).collect();
    let (mut pairs, mut agreeing) = (0usize, 0usize);
    for (i, x) in both.iter().enumerate() {
        for y in &both[i + 1..] {
            if x.0 != y.0 {
                pairs += 1;
                agreeing += usize::from((x.0 < y.0) == (x.1 < y.1));
            }
        }
    }
    (pairs, agreeing)
}

#[cfg(test)]
mod tests {
    use super::{agreeing_pairs, pairwise_agreement};

    #[test]
    fn agreement_counts_pairs_ordered_alike_by_both_measurements() {
        let stored = [Some(1.0), Some(2.0), Some(3.0)];
        assert_eq!(pairwise_agreement(&stored, &[Some(1.1), Some(2.2), Some(2.9)]), 1.0);
        assert_eq!(pairwise_agreement(&stored, &[Some(3.0), Some(2.0), Some(1.0)]), 0.0);
        assert_eq!(pairwise_agreement(&stored, &[Some(1.0), None, Some(0.5)]), 0.0, "only pairs measured twice count");
        assert_eq!(agreeing_pairs(&stored, &[Some(1.0), Some(3.0), Some(2.0)]), (3, 2));
    }
}
