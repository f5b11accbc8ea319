//! Timing apps the way Halide's benchmarks do: compile, warm up, then take
//! samples until the result is stable, and report the minimum (the
//! best-of-samples rule) and the median. Every schedule's output is checked
//! against the first schedule's (the naive one): bit for bit in the strict
//! float mode; in the fast mode (fused multiply-adds), within
//! [`codegen::float_mode::FAST_FLOAT_TOLERANCE`] relative for floats and 1
//! for integers (an integer output computed through floats may round the
//! other way).
//!
//! # Example
//!
//! The blur at its small size under its naive and expert schedules, run
//! once each, outputs compared.
//!
//! ```
//! use benchmark::{measure, naive_schedule, SamplingOptions};
//!
//! let app = apps::build("blur", apps::Size::Small, &compiler::Target::host()).expect("a listed app");
//! let schedules = [("naive", naive_schedule(&app.pipeline)), ("expert", app.expert.clone().expect("the apps have expert schedules"))];
//! let measured = measure(&app, &schedules, &SamplingOptions::once())?;
//! assert_eq!(measured.rows.len(), 2);
//! # Ok::<(), benchmark::BenchError>(())
//! ```

#![warn(missing_docs)]

use apps::App;
use codegen::timing::Sampling;
use codegen::RunError;
use compiler::exec::buffer::{Buffer, BufferError};
use compiler::lang::pipeline::PipelineDef;
use compiler::schedule::Schedule;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

pub use codegen::timing::{pattern_input, salted_pattern_input, sample, time_compiled, Timing};

/// How long to sample, and how to lower.
#[derive(Clone, Copy, Debug, Default)]
pub struct SamplingOptions {
    /// Warm-up and sampling settings of the timing loop.
    pub sampling: Sampling,
    /// Lower in checked mode (every access asserted; see
    /// [`compiler::LowerOptions::check_accesses`]).
    pub check_accesses: bool,
    /// Compile in the fast float mode ([`codegen::float_mode`]).
    pub fast_float: bool,
}

impl SamplingOptions {
    /// One run, no warm-up, in checked mode: for checking outputs.
    pub fn once() -> SamplingOptions {
        SamplingOptions { sampling: Sampling::once(), check_accesses: true, fast_float: false }
    }
}

/// Whether `out` computes what `reference` does: equal, or in the fast
/// float mode equal within its tolerance
/// ([`codegen::float_mode::agrees_within_fast_float`]).
pub fn agrees(reference: &Buffer, out: &Buffer, fast_float: bool) -> bool {
    if !fast_float || reference == out {
        return reference == out;
    }
    reference.ty == out.ty
        && reference.len() == out.len()
        && (0..reference.len() as i64).all(|i| match (reference.read(i), out.read(i)) {
            (Some(a), Some(b)) => codegen::float_mode::agrees_within_fast_float(a, b),
            _ => false,
        })
}

/// Why a benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// Lowering a schedule failed.
    #[error("{app}: {source}")]
    Lower {
        /// The app's name.
        app: String,
        /// The lowering error.
        source: compiler::error::LowerError,
    },
    /// Compiling the lowered pipeline failed.
    #[error("{app}: {source}")]
    Codegen {
        /// The app's name.
        app: String,
        /// The code generator's error.
        source: codegen::CodegenError,
    },
    /// Running the compiled pipeline failed.
    #[error("{app}: {source}")]
    Run {
        /// The app's name.
        app: String,
        /// The run's error.
        source: Box<RunError>,
    },
    /// An input buffer could not be made.
    #[error("{app}: {source}")]
    Buffer {
        /// The app's name.
        app: String,
        /// The buffer error.
        source: BufferError,
    },
    /// The inputs and output region could not be bound to the pipeline's arguments.
    #[error("{app}: {source}")]
    Arguments {
        /// The app's name.
        app: String,
        /// The binding error.
        source: Box<compiler::exec::realize::RealizeError>,
    },
    /// A schedule's output differs from the first schedule's.
    #[error("{app}: the {schedule} schedule's output differs from the {reference} schedule's")]
    Mismatch {
        /// The app's name.
        app: String,
        /// The schedule whose output differs.
        schedule: String,
        /// The first schedule, whose output is the reference.
        reference: String,
    },
}

/// One measured (app, schedule) pair, times in milliseconds.
#[derive(Clone, Debug, Serialize)]
pub struct BenchRow {
    /// The schedule's name.
    pub schedule: String,
    /// For a searched schedule, the search's wall time (legality check
    /// included).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search_ms: Option<f64>,
    /// Time to compile the lowered pipeline.
    pub compile_ms: f64,
    /// The fastest sample.
    pub min_ms: f64,
    /// The median sample.
    pub median_ms: f64,
    /// Timed samples taken.
    pub samples: usize,
}

/// The rows of one app and the output of its last schedule.
pub struct Measured {
    /// One row per schedule, in the order given.
    pub rows: Vec<BenchRow>,
    /// The output the last schedule computed.
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

/// The app's inputs ([`App::pattern_inputs`]).
pub fn app_inputs(app: &App) -> Result<BTreeMap<String, Buffer>, BufferError> {
    app.pattern_inputs()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Times `app` under each of `schedules` (named), checking that all compute
/// the output the first computes.
pub fn measure<S: AsRef<str>>(app: &App, schedules: &[(S, Schedule)], options: &SamplingOptions) -> Result<Measured, BenchError> {
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
        let compile_options = codegen::CompileOptions { fast_float: options.fast_float, ..Default::default() };
        let compiled = codegen::compile_with(&lowered, &compile_options).map_err(|source| BenchError::Codegen { app: name(), source })?;
        let compile = started.elapsed();
        let compiler::exec::realize::BoundArguments { mut buffers, scalars } =
            compiler::exec::realize::bind_arguments(p, &inputs, &BTreeMap::new(), &regions)
                .map_err(|source| BenchError::Arguments { app: name(), source: Box::new(source) })?;
        let timing = time_compiled(&compiled, &mut buffers, &scalars, &options.sampling)
            .map_err(|source| BenchError::Run { app: name(), source: Box::new(source) })?;
        let out = buffers.remove(&output).expect("bound output");
        if reference.as_ref().is_some_and(|r| !agrees(r, &out, options.fast_float)) {
            return Err(BenchError::Mismatch {
                app: name(),
                schedule: schedule_name.as_ref().to_string(),
                reference: schedules[0].0.as_ref().to_string(),
            });
        }
        reference = Some(out);
        rows.push(BenchRow {
            schedule: schedule_name.as_ref().to_string(),
            search_ms: None,
            compile_ms: ms(compile),
            min_ms: ms(timing.min),
            median_ms: ms(timing.median),
            samples: timing.samples,
        });
    }
    Ok(Measured { rows, output: reference.expect("at least one schedule") })
}

/// What an `--emit` flag writes for `schedule` of `app`: its lowered
/// statement, and the LLVM IR and assembly code generation makes of it,
/// each with its file extension (`stmt`, `ll`, `s`).
pub fn listings(app: &App, schedule: &Schedule, fast_float: bool) -> Result<[(&'static str, String); 3], BenchError> {
    let name = || app.name.to_string();
    let lowered = compiler::lower::lower(&app.pipeline, schedule).map_err(|source| BenchError::Lower { app: name(), source })?;
    let options = codegen::CompileOptions { keep_text: true, fast_float };
    let compiled = codegen::compile_with(&lowered, &options).map_err(|source| BenchError::Codegen { app: name(), source })?;
    let text = compiled.text.clone().expect("the compiled text was asked for");
    Ok([("stmt", lowered.stmt.to_string()), ("ll", text.llvm_ir), ("s", text.assembly)])
}

/// Median wall time of `repeats` JIT compiles of an all-root, vectorized
/// `stages`-stage chain of 3x3 stencils (lowering excluded).
pub fn chain_compile_time(stages: usize, repeats: usize, lanes: i64) -> Result<Duration, BenchError> {
    let app = || "compile-time chain".to_string();
    let p = apps::stencil_chain::chain(stages, 1);
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

#[cfg(test)]
mod tests {
    use super::*;
    use compiler::ir::types::ScalarType;
    use compiler::ir::value::Scalar;

    fn buffer(ty: ScalarType, values: &[f64]) -> Buffer {
        let mut b = Buffer::new("out", ty, &[(0, values.len() as i64)]).unwrap();
        b.fill(|c| if ty.is_float() { Scalar::Float(values[c[0] as usize]) } else { Scalar::Int(values[c[0] as usize] as i64) });
        b
    }

    #[test]
    fn the_fast_float_mode_accepts_a_rounding_and_nothing_more() {
        let exact = buffer(ScalarType::F32, &[1.0, 1000.0, -3.0]);
        let rounded = buffer(ScalarType::F32, &[1.0, 1000.0 * (1.0 + 1e-6), -3.0]);
        let wrong = buffer(ScalarType::F32, &[1.0, 1001.0, -3.0]);
        assert!(agrees(&exact, &exact, false) && agrees(&exact, &exact, true));
        assert!(!agrees(&exact, &rounded, false), "strict is bit for bit");
        assert!(agrees(&exact, &rounded, true));
        assert!(!agrees(&exact, &wrong, true));
        let ints = buffer(ScalarType::I32, &[5.0, 7.0]);
        assert!(agrees(&ints, &buffer(ScalarType::I32, &[5.0, 8.0]), true), "an integer computed through floats may round the other way");
        assert!(!agrees(&ints, &buffer(ScalarType::I32, &[5.0, 9.0]), true));
        assert!(!agrees(&ints, &buffer(ScalarType::I32, &[5.0, 8.0]), false));
    }
}
