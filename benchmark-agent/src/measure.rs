//! Timing one schedule in the isolated runner, and classifying what came
//! of it in the store's terms.

use crate::Workload;
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

/// One stored schedule measured again.
#[derive(Clone, Debug)]
pub struct Remeasured {
    pub schedule_hash: String,
    pub stored_s: f64,
    /// `None` when it failed this time.
    pub again_s: Option<f64>,
}

/// Measures the schedules of a stored report again, on the same workload:
/// how repeatable the stored times are bounds how well any model can order
/// them.
pub fn remeasure(runner: &mut Runner, workload: &Workload, stored: &[(String, String, f64)]) -> Vec<Remeasured> {
    let sampling = training_sampling();
    stored
        .iter()
        .map(|(hash, source, stored_s)| {
            let again_s = source.parse::<Schedule>().ok().and_then(|schedule| match measure(runner, workload, &schedule, &sampling).1 {
                data::Outcome::Measured(r) => Some(r.min_s),
                data::Outcome::Failed(_) => None,
            });
            Remeasured { schedule_hash: hash.clone(), stored_s: *stored_s, again_s }
        })
        .collect()
}

/// Of the pairs of schedules whose two measurements both exist, the
/// fraction ordered the same way by both (the ceiling of a model's
/// pairwise accuracy on such data).
pub fn pairwise_agreement(remeasured: &[Remeasured]) -> f64 {
    let both: Vec<(f64, f64)> = remeasured.iter().filter_map(|r| r.again_s.map(|a| (r.stored_s, a))).collect();
    let (mut pairs, mut agreeing) = (0usize, 0usize);
    for (i, a) in both.iter().enumerate() {
        for b in &both[i + 1..] {
            if a.0 != b.0 {
                pairs += 1;
                agreeing += usize::from((a.0 < b.0) == (a.1 < b.1));
            }
        }
    }
    agreeing as f64 / pairs.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::{pairwise_agreement, Remeasured};

    fn pair(stored_s: f64, again_s: Option<f64>) -> Remeasured {
        Remeasured { schedule_hash: String::new(), stored_s, again_s }
    }

    #[test]
    fn agreement_counts_pairs_ordered_alike_by_both_measurements() {
        let same = [pair(1.0, Some(1.1)), pair(2.0, Some(2.2)), pair(3.0, Some(2.9))];
        assert_eq!(pairwise_agreement(&same), 1.0);
        let reversed = [pair(1.0, Some(3.0)), pair(2.0, Some(2.0)), pair(3.0, Some(1.0))];
        assert_eq!(pairwise_agreement(&reversed), 0.0);
        let with_failure = [pair(1.0, Some(1.0)), pair(2.0, None), pair(3.0, Some(0.5))];
        assert_eq!(pairwise_agreement(&with_failure), 0.0, "only pairs measured twice count");
    }
}
