//! Timing compiled pipelines the way Halide's benchmarks do: warm up, then
//! take samples until enough were taken and the time budget is spent, and
//! report the minimum (the best-of-samples rule) and the median. Inputs
//! are filled with a deterministic pattern shared with the Halide side of
//! the benchmark.

use crate::{CompiledPipeline, RunError};
use compiler::exec::buffer::{Buffer, BufferError};
use compiler::ir::types::ScalarType;
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

/// The deterministic input pattern shared with the Halide benchmark: at
/// absolute coordinates `c0, c1, ...`, `h = (((17*31 + c0)*31 + c1)*31 ...)`;
/// integer inputs hold `h & 1023` (`h & 255` for 8-bit types), float
/// inputs `(h & 1023) / 1024`.
pub fn pattern_input(name: &str, ty: ScalarType, region: &[(i64, i64)]) -> Result<Buffer, BufferError> {
    salted_pattern_input(name, ty, region, 0)
}

/// [`pattern_input`] with `h` starting from `17 + 7919 * salt`: a
/// pipeline's second and further inputs take their position as the salt,
/// so that two inputs over one region (a stereo pair, two frames) differ.
/// The pattern is linear in the coordinates before the mask, so a salted
/// input is the unsalted one shifted.
pub fn salted_pattern_input(name: &str, ty: ScalarType, region: &[(i64, i64)], salt: u64) -> Result<Buffer, BufferError> {
    let mut b = Buffer::new(name, ty, region)?;
    let mask = if ty.bytes() == 1 { 255 } else { 1023 };
    let start = 17i64.wrapping_add(7919i64.wrapping_mul(salt as i64));
    b.fill(|c| {
        let v = c.iter().fold(start, |h, &x| h.wrapping_mul(31).wrapping_add(x)) & mask;
        if ty.is_float() {
            Scalar::Float(v as f64 / 1024.0)
        } else {
            Scalar::Int(v)
        }
    });
    Ok(b)
}
