//! Timing compiled pipelines the way Halide's benchmarks do: warm up, then
//! take samples until the result is stable, and report the minimum (the
//! best-of-samples rule) and the median.

use crate::buffer::Buffer;
use crate::codegen::{CompiledPipeline, RunError};
use crate::value::Scalar;
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
}

impl Default for SamplingOptions {
    fn default() -> Self {
        SamplingOptions { warmup: 2, min_samples: 5, max_samples: 200, budget: Duration::from_secs(2) }
    }
}

/// Times `f` under `options`.
pub fn sample<E>(options: &SamplingOptions, mut f: impl FnMut() -> Result<(), E>) -> Result<Timing, E> {
    for _ in 0..options.warmup {
        f()?;
    }
    let mut times = vec![];
    let started = Instant::now();
    while times.len() < options.min_samples || (times.len() < options.max_samples && started.elapsed() < options.budget) {
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

/// A chain of `stages` 3x3 box stencils over an f32 input (`s0` reads the
/// input, `s{k}` reads `s{k-1}`), the output `s{stages-1}`.
pub fn stencil_chain(stages: usize) -> crate::pipeline::PipelineDef {
    use crate::lang::{Func, ImageParam, Pipeline, Var};
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", crate::types::ScalarType::F32, 2);
    let mut funcs: Vec<Func> = vec![];
    for k in 0..stages.max(1) {
        let f = Func::new(&format!("s{k}"));
        let at = |dx: i32, dy: i32| match funcs.last() {
            Some(prev) => prev.at([&x + dx, &y + dy]),
            None => input.at([&x + dx, &y + dy]),
        };
        let mut sum = at(-1, -1);
        for (dx, dy) in [(0, -1), (1, -1), (-1, 0), (0, 0), (1, 0), (-1, 1), (0, 1), (1, 1)] {
            sum = sum + at(dx, dy);
        }
        f.define(&[&x, &y], sum * (1.0f32 / 9.0));
        funcs.push(f);
    }
    Pipeline::new(&[funcs.last().expect("one stage at least")]).expect("the chain is well formed")
}

/// Why a benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Lower(#[from] crate::error::LowerError),
    #[error(transparent)]
    Codegen(#[from] crate::codegen::CodegenError),
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(transparent)]
    Buffer(#[from] crate::buffer::BufferError),
    #[error(transparent)]
    Arguments(#[from] crate::realize::RealizeError),
    #[error("{what}: the {schedule} schedule's output differs from the naive schedule's")]
    Mismatch { what: String, schedule: String },
}

/// One measured (pipeline, schedule) pair.
#[derive(Clone, Debug, Serialize)]
pub struct BenchRow {
    pub pipeline: String,
    pub schedule: String,
    pub compile: Duration,
    pub timing: Timing,
}

/// The naive schedule: every Func computed at root, serial, scalar.
pub fn naive_schedule(p: &crate::pipeline::PipelineDef) -> crate::schedule::Schedule {
    let mut s = crate::schedule::Schedule::new();
    for f in &p.funcs {
        s.func(&f.name).compute_root();
    }
    s
}

/// The hand-written schedule of the blur: strips of 32 rows in parallel,
/// `blur_x` computed per row into a per-strip sliding window, both
/// vectorized at the host's natural width for u16.
pub fn blur_expert_schedule(lanes: i64) -> crate::schedule::Schedule {
    let mut s = crate::schedule::Schedule::new();
    s.func("blur_y").split("y", "yo", "yi", 32).parallel("yo").vectorize_by("x", lanes);
    s.func("blur_x").store_at("blur_y", "yo").compute_at("blur_y", "yi").vectorize_by("x", lanes);
    s
}

/// Times `p` under each named schedule over `region` (inputs filled with a
/// deterministic pattern), checking every output against the first
/// schedule's.
pub fn compare_schedules(
    name: &str,
    p: &crate::pipeline::PipelineDef,
    schedules: &[(&str, crate::schedule::Schedule)],
    input_region: &[(i64, i64)],
    region: &[(i64, i64)],
    options: &SamplingOptions,
) -> Result<Vec<BenchRow>, BenchError> {
    let mut inputs = BTreeMap::new();
    for i in &p.inputs {
        let mut b = Buffer::new(&i.name, i.ty, &input_region[..i.dims])?;
        b.fill(|c| {
            let v = c.iter().fold(17i64, |h, &x| h.wrapping_mul(31).wrapping_add(x)) & 1023;
            if i.ty.is_float() {
                Scalar::Float(v as f64 / 1024.0)
            } else {
                Scalar::Int(v)
            }
        });
        inputs.insert(i.name.to_string(), b);
    }
    let output = p.outputs[0].to_string();
    let regions = [(output.as_str(), region.to_vec())];
    let mut rows = vec![];
    let mut reference: Option<Buffer> = None;
    for (schedule_name, schedule) in schedules {
        let lowered = crate::lower::lower(p, schedule)?;
        let started = Instant::now();
        let compiled = crate::codegen::compile(&lowered)?;
        let compile = started.elapsed();
        let crate::realize::BoundArguments { mut buffers, scalars } = crate::realize::bind_arguments(p, &inputs, &BTreeMap::new(), &regions)?;
        let timing = time_compiled(&compiled, &mut buffers, &scalars, options)?;
        let out = buffers.remove(&output).expect("bound output");
        match &reference {
            None => reference = Some(out),
            Some(r) if *r != out => return Err(BenchError::Mismatch { what: name.to_string(), schedule: schedule_name.to_string() }),
            Some(_) => {}
        }
        rows.push(BenchRow { pipeline: name.to_string(), schedule: schedule_name.to_string(), compile, timing });
    }
    Ok(rows)
}

/// Median wall time of `repeats` JIT compiles of an all-root, vectorized
/// `stages`-stage stencil chain (lowering excluded).
pub fn chain_compile_time(stages: usize, repeats: usize, lanes: i64) -> Result<Duration, BenchError> {
    let p = stencil_chain(stages);
    let mut s = crate::schedule::Schedule::new();
    for f in &p.funcs {
        s.func(&f.name).compute_root().split("y", "yo", "yi", 16).parallel("yo").vectorize_by("x", lanes);
    }
    let lowered = crate::lower::lower(&p, &s)?;
    let mut times = vec![];
    for _ in 0..repeats.max(1) {
        let started = Instant::now();
        crate::codegen::compile(&lowered)?;
        times.push(started.elapsed());
    }
    times.sort();
    Ok(times[times.len() / 2])
}
