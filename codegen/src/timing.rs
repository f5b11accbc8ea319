//! Timing compiled pipelines the way Halide's benchmarks do: warm up, then
//! take samples until enough were taken and the time budget is spent, and
//! report the minimum (the best-of-samples rule) and the median. Inputs
//! are filled with a deterministic pattern shared with the Halide side of
//! the benchmark.

use crate::{CompiledPipeline, RunError};
use compiler::exec::buffer::Buffer;
use compiler::ir::value::Scalar;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Timing of repeated runs.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Timing {
    /// The fastest sample.
    pub min: Duration,
    /// The median sample.
    pub median: Duration,
    /// Samples taken (warm-up runs excluded).
    pub samples: usize,
}

/// How long to sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sampling {
    /// Untimed runs before sampling.
    pub warmup: usize,
    /// Samples taken whatever the budget (at least one).
    pub min_samples: usize,
    /// Most samples taken while the budget lasts.
    pub max_samples: usize,
    /// Stop once this much time was spent sampling (after `min_samples`).
    pub budget: Duration,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling { warmup: 2, min_samples: 5, max_samples: 200, budget: Duration::from_secs(2) }
    }
}

impl Sampling {
    /// One run, no warm-up: for checking outputs.
    pub fn once() -> Sampling {
        Sampling { warmup: 0, min_samples: 1, max_samples: 1, budget: Duration::ZERO }
    }
}

/// Times `f` under `options`.
pub fn sample<E>(options: &Sampling, mut f: impl FnMut() -> Result<(), E>) -> Result<Timing, E> {
    for _ in 0..options.warmup {
        f()?;
    }
    let mut times = vec![];
    let started = Instant::now();
    while times.len() < options.min_samples.max(1) || (times.len() < options.max_samples && started.elapsed() < options.budget) {
        let t = Instant::now();
        f()?;
        times.push(t.elapsed());
    }
    times.sort();
    Ok(Timing { min: times[0], median: times[times.len() / 2], samples: times.len() })
}

/// Times runs of a compiled pipeline on bound buffers (outputs reused).
pub fn time_compiled(
    compiled: &CompiledPipeline,
    buffers: &mut BTreeMap<String, Buffer>,
    scalars: &BTreeMap<String, Scalar>,
    options: &Sampling,
) -> Result<Timing, RunError> {
    sample(options, || compiled.run_on(buffers, scalars))
}

pub use compiler::exec::buffer::{pattern_input, salted_pattern_input};
