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
