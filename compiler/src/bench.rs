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

/// A chain of `stages` box stencils of radius `radius` over an f32 input
/// (`s0` reads the input, `s{k}` reads `s{k-1}`), the output
/// `s{stages-1}`. Each stage sums its window row by row, left to right, and
/// scales by `1 / (2 radius + 1)^2`.
pub fn stencil_chain(stages: usize, radius: i32) -> crate::pipeline::PipelineDef {
    use crate::lang::{Func, ImageParam, Pipeline, Var};
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", crate::types::ScalarType::F32, 2);
    let side = 2 * radius + 1;
    let mut funcs: Vec<Func> = vec![];
    for k in 0..stages.max(1) {
        let f = Func::new(&format!("s{k}"));
        let at = |dx: i32, dy: i32| match funcs.last() {
            Some(prev) => prev.at([&x + dx, &y + dy]),
            None => input.at([&x + dx, &y + dy]),
        };
        let window = (-radius..=radius).flat_map(|dy| (-radius..=radius).map(move |dx| (dx, dy)));
        let sum = window.map(|(dx, dy)| at(dx, dy)).reduce(|a, b| a + b).expect("a window has points");
        f.define(&[&x, &y], sum * (1.0f32 / (side * side) as f32));
        funcs.push(f);
    }
    Pipeline::new(&[funcs.last().expect("one stage at least")]).expect("the chain is well formed")
}

/// The separable Gaussian: a 7-tap binomial kernel (`[1 6 15 20 15 6 1] /
/// 64`) along x (`gx`), then along y (`gy`), over an f32 input.
pub fn gaussian() -> crate::pipeline::PipelineDef {
    use crate::lang::{Func, ImageParam, Pipeline, Var};
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", crate::types::ScalarType::F32, 2);
    let weights = [1.0f32, 6.0, 15.0, 20.0, 15.0, 6.0, 1.0].map(|w| w / 64.0);
    let taps = |f: &dyn Fn(i32) -> crate::expr::Expr| (-3..=3).map(|i| f(i) * weights[(i + 3) as usize]).reduce(|a, b| a + b).expect("seven taps");
    let gx = Func::new("gx");
    gx.define(&[&x, &y], taps(&|i| input.at([&x + i, y.expr()])));
    let gy = Func::new("gy");
    gy.define(&[&x, &y], taps(&|i| gx.at([x.expr(), &y + i])));
    Pipeline::new(&[&gy]).expect("the Gaussian is well formed")
}

/// Matrix multiply of f32 `n x n` matrices: `C(x, y) = sum_r A(r, y) *
/// B(x, r)`, as a pure zero and an update over the reduction domain `r`.
pub fn matmul(n: i64) -> crate::pipeline::PipelineDef {
    use crate::expr::Expr;
    use crate::lang::{Func, ImageParam, Pipeline, RDom, Var};
    let (x, y) = (Var::new("x"), Var::new("y"));
    let a = ImageParam::new("A", crate::types::ScalarType::F32, 2);
    let b = ImageParam::new("B", crate::types::ScalarType::F32, 2);
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(n))]);
    let c = Func::new("C");
    c.define(&[&x, &y], Expr::float(0.0, crate::types::Type::f32()));
    c.update([x.expr(), y.expr()], c.at([x.expr(), y.expr()]) + a.at([r.x().expr(), y.expr()]) * b.at([x.expr(), r.x().expr()]));
    Pipeline::new(&[&c]).expect("the matrix multiply is well formed")
}

/// Strips of 32 rows in parallel; `producer` stored per strip and computed
/// per row (a sliding window); both vectorized at `lanes`.
fn line_buffered(output: &str, producers: &[&str], lanes: i64) -> crate::schedule::Schedule {
    let mut s = crate::schedule::Schedule::new();
    s.func(output).split("y", "yo", "yi", 32).parallel("yo").vectorize_by("x", lanes);
    for p in producers {
        s.func(p).store_at(output, "yo").compute_at(output, "yi").vectorize_by("x", lanes);
    }
    s
}

/// The hand-written schedule of the blur (`lanes` for u16).
pub fn blur_expert_schedule(lanes: i64) -> crate::schedule::Schedule {
    line_buffered("blur_y", &["blur_x"], lanes)
}

/// A benchmark: a pipeline, its expert schedule, and the regions of its
/// inputs and output.
pub struct BenchCase {
    pub name: &'static str,
    pub pipeline: crate::pipeline::PipelineDef,
    pub expert: crate::schedule::Schedule,
    pub input_region: Vec<(i64, i64)>,
    pub region: Vec<(i64, i64)>,
}

/// The sizes of the benchmark set.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct BenchSizes {
    pub width: i64,
    pub height: i64,
    pub chain_stages: usize,
    pub matmul_n: i64,
}

/// The benchmark set: blur, a 5x5 stencil chain, a separable Gaussian and a
/// matrix multiply, each with its expert schedule at the host's vector
/// widths. `bench/halide/halide_bench.py` writes the same algorithms and
/// schedules in Halide. The matrix multiply rounds its tiles up (as
/// Halide's update loops do by default), so `matmul_n` must be a multiple
/// of 8 and of the f32 vector width.
pub fn cases(sizes: BenchSizes, host: &crate::codegen::HostTarget) -> Vec<BenchCase> {
    use crate::types::ScalarType;
    let BenchSizes { width, height, chain_stages, matmul_n } = sizes;
    let (l16, l32) = (host.natural_lanes(ScalarType::U16), host.natural_lanes(ScalarType::F32));
    let image = vec![(0, width), (0, height)];
    let margin = |m: i64| vec![(-m, width + 2 * m), (-m, height + 2 * m)];
    let chain = stencil_chain(chain_stages, 2);
    let stages: Vec<String> = chain.funcs.iter().map(|f| f.name.to_string()).collect();
    let (output, producers) = stages.split_last().expect("one stage at least");
    let producers: Vec<&str> = producers.iter().map(String::as_str).collect();
    let mut matmul_schedule = crate::schedule::Schedule::new();
    matmul_schedule.func("C").vectorize_by("x", l32);
    // Round-up tails, as Halide's default for the pure loops of an update.
    let round_up = crate::schedule::TailStrategy::RoundUp;
    matmul_schedule
        .func("C")
        .update(0)
        .split_with("x", "xo", "xi", l32, round_up)
        .split_with("y", "yo", "yi", 8, round_up)
        .reorder(&["xi", "yi", "r.x", "xo", "yo"])
        .vectorize("xi")
        .unroll("yi")
        .parallel("yo");
    vec![
        BenchCase { name: "blur", pipeline: crate::demo::blur_pipeline(), expert: blur_expert_schedule(l16), input_region: margin(1), region: image.clone() },
        BenchCase { name: "stencil_chain", pipeline: chain.clone(), expert: line_buffered(output, &producers, l32), input_region: margin(2 * chain_stages as i64), region: image.clone() },
        BenchCase { name: "gaussian", pipeline: gaussian(), expert: line_buffered("gy", &["gx"], l32), input_region: margin(3), region: image },
        BenchCase { name: "matmul", pipeline: matmul(matmul_n), expert: matmul_schedule, input_region: vec![(0, matmul_n), (0, matmul_n)], region: vec![(0, matmul_n), (0, matmul_n)] },
    ]
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

/// One measured (pipeline, schedule) pair, times in milliseconds.
#[derive(Clone, Debug, Serialize)]
pub struct BenchRow {
    pub pipeline: String,
    pub schedule: String,
    pub compile_ms: f64,
    pub min_ms: f64,
    pub median_ms: f64,
    pub samples: usize,
}

/// The rows of one benchmark and the output of its last schedule.
pub struct Measured {
    pub rows: Vec<BenchRow>,
    pub output: Buffer,
}

/// The naive schedule: every Func computed at root, serial, scalar.
pub fn naive_schedule(p: &crate::pipeline::PipelineDef) -> crate::schedule::Schedule {
    let mut s = crate::schedule::Schedule::new();
    for f in &p.funcs {
        s.func(&f.name).compute_root();
    }
    s
}

/// The deterministic input pattern shared with the Halide benchmark:
/// `((17*31 + x)*31 + y) & 1023` at absolute coordinates, divided by 1024
/// for float inputs.
pub fn pattern_input(name: &str, ty: crate::types::ScalarType, region: &[(i64, i64)]) -> Result<Buffer, crate::buffer::BufferError> {
    let mut b = Buffer::new(name, ty, region)?;
    b.fill(|c| {
        let v = c.iter().fold(17i64, |h, &x| h.wrapping_mul(31).wrapping_add(x)) & 1023;
        if ty.is_float() {
            Scalar::Float(v as f64 / 1024.0)
        } else {
            Scalar::Int(v)
        }
    });
    Ok(b)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Times `case` under the naive schedule and its expert schedule, checking
/// that both compute the same output.
pub fn measure(case: &BenchCase, options: &SamplingOptions) -> Result<Measured, BenchError> {
    let p = &case.pipeline;
    let mut inputs = BTreeMap::new();
    for i in &p.inputs {
        inputs.insert(i.name.to_string(), pattern_input(&i.name, i.ty, &case.input_region[..i.dims])?);
    }
    let output = p.outputs[0].to_string();
    let regions = [(output.as_str(), case.region.clone())];
    let mut rows = vec![];
    let mut reference: Option<Buffer> = None;
    for (schedule_name, schedule) in [("naive", naive_schedule(p)), ("expert", case.expert.clone())] {
        let lowered = crate::lower::lower(p, &schedule)?;
        let started = Instant::now();
        let compiled = crate::codegen::compile(&lowered)?;
        let compile = started.elapsed();
        let crate::realize::BoundArguments { mut buffers, scalars } = crate::realize::bind_arguments(p, &inputs, &BTreeMap::new(), &regions)?;
        let timing = time_compiled(&compiled, &mut buffers, &scalars, options)?;
        let out = buffers.remove(&output).expect("bound output");
        if reference.as_ref().is_some_and(|r| *r != out) {
            return Err(BenchError::Mismatch { what: case.name.to_string(), schedule: schedule_name.to_string() });
        }
        reference = Some(out);
        rows.push(BenchRow {
            pipeline: case.name.to_string(),
            schedule: schedule_name.to_string(),
            compile_ms: ms(compile),
            min_ms: ms(timing.min),
            median_ms: ms(timing.median),
            samples: timing.samples,
        });
    }
    Ok(Measured { rows, output: reference.expect("two schedules ran") })
}

/// Median wall time of `repeats` JIT compiles of an all-root, vectorized
/// `stages`-stage chain of 3x3 stencils (lowering excluded).
pub fn chain_compile_time(stages: usize, repeats: usize, lanes: i64) -> Result<Duration, BenchError> {
    let p = stencil_chain(stages, 1);
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
