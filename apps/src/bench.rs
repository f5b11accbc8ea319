//! Timing apps the way Halide's benchmarks do: compile, warm up, then take
//! samples until the result is stable, and report the minimum (the
//! best-of-samples rule) and the median. Every schedule's output is checked
//! against the first schedule's (the naive one) bit for bit.

use crate::{App, Region};
use codegen::{CompiledPipeline, RunError};
use compiler::buffer::{Buffer, BufferError};
use compiler::pipeline::PipelineDef;
use compiler::schedule::Schedule;
use compiler::types::ScalarType;
use compiler::value::Scalar;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Timing of repeated runs.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Timing {
    pub min: Duration,
    pub median: Duration,
    pub samples: usize,
}

/// How long to sample.
#[derive(Clone, Copy, Debug)]
pub struct SamplingOptions {
    pub warmup: usize,
    pub min_samples: usize,
    pub max_samples: usize,
    /// Stop once this much time was spent sampling (after `min_samples`).
    pub budget: Duration,
    /// Lower in checked mode (every access asserted; see
    /// `compiler::lower::access_checks`).
    pub check_accesses: bool,
}

impl Default for SamplingOptions {
    fn default() -> Self {
        SamplingOptions { warmup: 2, min_samples: 5, max_samples: 200, budget: Duration::from_secs(2), check_accesses: false }
    }
}

impl SamplingOptions {
    /// One run, no warm-up, in checked mode: for checking outputs.
    pub fn once() -> SamplingOptions {
        SamplingOptions { warmup: 0, min_samples: 1, max_samples: 1, budget: Duration::ZERO, check_accesses: true }
    }
}

/// Times `f` under `options`.
pub fn sample<E>(options: &SamplingOptions, mut f: impl FnMut() -> Result<(), E>) -> Result<Timing, E> {
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
    options: &SamplingOptions,
) -> Result<Timing, RunError> {
    sample(options, || compiled.run_on(buffers, scalars))
}

/// Why a benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("{app}: {source}")]
    Lower { app: String, source: compiler::error::LowerError },
    #[error("{app}: {source}")]
    Codegen { app: String, source: codegen::CodegenError },
    #[error("{app}: {source}")]
    Run { app: String, source: RunError },
    #[error("{app}: {source}")]
    Buffer { app: String, source: BufferError },
    #[error("{app}: {source}")]
    Arguments { app: String, source: compiler::realize::RealizeError },
    #[error("{app}: the {schedule} schedule's output differs from the {reference} schedule's")]
    Mismatch { app: String, schedule: String, reference: String },
}

/// One measured (app, schedule) pair, times in milliseconds.
#[derive(Clone, Debug, Serialize)]
pub struct BenchRow {
    pub schedule: String,
    pub compile_ms: f64,
    pub min_ms: f64,
    pub median_ms: f64,
    pub samples: usize,
}

/// The rows of one app and the output of its last schedule.
pub struct Measured {
    pub rows: Vec<BenchRow>,
    pub output: Buffer,
}

/// The naive schedule: every Func computed at root, serial, scalar.
pub fn naive_schedule(p: &PipelineDef) -> Schedule {
    let mut s = Schedule::new();
    for f in &p.funcs {
        s.func(&f.name).compute_root();
    }
    s
}

/// The deterministic input pattern shared with the Halide benchmark: at
/// absolute coordinates `c0, c1, ...`, `h = (((17*31 + c0)*31 + c1)*31 ...)`;
/// integer inputs hold `h & 1023` (`h & 255` for 8-bit types), float
/// inputs `(h & 1023) / 1024`.
pub fn pattern_input(name: &str, ty: ScalarType, region: &[(i64, i64)]) -> Result<Buffer, BufferError> {
    let mut b = Buffer::new(name, ty, region)?;
    let mask = if ty.bytes() == 1 { 255 } else { 1023 };
    b.fill(|c| {
        let v = c.iter().fold(17i64, |h, &x| h.wrapping_mul(31).wrapping_add(x)) & mask;
        if ty.is_float() {
            Scalar::Float(v as f64 / 1024.0)
        } else {
            Scalar::Int(v)
        }
    });
    Ok(b)
}

/// The app's inputs, filled with [`pattern_input`] over their regions.
pub fn app_inputs(app: &App) -> Result<BTreeMap<String, Buffer>, BufferError> {
    let mut inputs = BTreeMap::new();
    for i in &app.pipeline.inputs {
        let empty = Region::new();
        let region = app.input_region(&i.name).unwrap_or(&empty);
        inputs.insert(i.name.to_string(), pattern_input(&i.name, i.ty, region)?);
    }
    Ok(inputs)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Times `app` under each of `schedules` (named), checking that all compute
/// the output the first computes.
pub fn measure(app: &App, schedules: &[(&str, Schedule)], options: &SamplingOptions) -> Result<Measured, BenchError> {
    let name = || app.name.to_string();
    let p = &app.pipeline;
    let inputs = app_inputs(app).map_err(|source| BenchError::Buffer { app: name(), source })?;
    let output = app.output_name().to_string();
    let regions = [(output.as_str(), app.output.clone())];
    let mut rows = vec![];
    let mut reference: Option<Buffer> = None;
    for (schedule_name, schedule) in schedules {
        let lower_options = compiler::lower::LowerOptions { check_accesses: options.check_accesses, ..Default::default() };
        let lowered =
            compiler::lower::lower_with(p, schedule, &lower_options).map_err(|source| BenchError::Lower { app: name(), source })?;
        let started = Instant::now();
        let compiled = codegen::compile(&lowered).map_err(|source| BenchError::Codegen { app: name(), source })?;
        let compile = started.elapsed();
        let compiler::realize::BoundArguments { mut buffers, scalars } =
            compiler::realize::bind_arguments(p, &inputs, &BTreeMap::new(), &regions)
                .map_err(|source| BenchError::Arguments { app: name(), source })?;
        let timing = time_compiled(&compiled, &mut buffers, &scalars, options).map_err(|source| BenchError::Run { app: name(), source })?;
        let out = buffers.remove(&output).expect("bound output");
        if reference.as_ref().is_some_and(|r| *r != out) {
            return Err(BenchError::Mismatch { app: name(), schedule: schedule_name.to_string(), reference: schedules[0].0.to_string() });
        }
        reference = Some(out);
        rows.push(BenchRow {
            schedule: schedule_name.to_string(),
            compile_ms: ms(compile),
            min_ms: ms(timing.min),
            median_ms: ms(timing.median),
            samples: timing.samples,
        });
    }
    Ok(Measured { rows, output: reference.expect("at least one schedule") })
}

/// Median wall time of `repeats` JIT compiles of an all-root, vectorized
/// `stages`-stage chain of 3x3 stencils (lowering excluded).
pub fn chain_compile_time(stages: usize, repeats: usize, lanes: i64) -> Result<Duration, BenchError> {
    let app = || "compile-time chain".to_string();
    let p = crate::stencil_chain::chain(stages, 1);
    let mut s = Schedule::new();
    for f in &p.funcs {
        s.func(&f.name).compute_root().split("y", "yo", "yi", 16).parallel("yo").vectorize_by("x", lanes);
    }
    let lowered = compiler::lower::lower(&p, &s).map_err(|source| BenchError::Lower { app: app(), source })?;
    let mut times = vec![];
    for _ in 0..repeats.max(1) {
        let started = Instant::now();
        codegen::compile(&lowered).map_err(|source| BenchError::Codegen { app: app(), source })?;
        times.push(started.elapsed());
    }
    times.sort();
    Ok(times[times.len() / 2])
}
