//! The embedded default job: a 3x3 separable blur, scheduled the way the
//! thesis recommends (strips of rows in parallel, the horizontal blur
//! computed per row of a strip into a sliding, folded window, both
//! vectorized), lowered, run on the interpreter and through the LLVM JIT,
//! and both checked against the reference evaluator.

use crate::{compile_with, CodegenError, CompileOptions, RunError};
use compiler::error::LowerError;
use compiler::exec::buffer::{Buffer, BufferError};
use compiler::exec::realize::{realize, RealizeError};
use compiler::exec::reference::ReferenceError;
use compiler::ir::types::ScalarType;
use compiler::ir::value::Scalar;
use compiler::lower::{lower, Lowered};
use compiler::schedule::Schedule;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Strips of 8 rows in parallel; `blur_x` stored per strip, computed per
/// row (a sliding window folded to 4 rows); both vectorized by 8.
pub fn blur_schedule() -> Schedule {
    let mut s = Schedule::new();
    s.func("blur_y").split("y", "yo", "yi", 8).parallel("yo").vectorize_by("x", 8);
    s.func("blur_x").store_at("blur_y", "yo").compute_at("blur_y", "yi").vectorize_by("x", 8);
    s
}

/// What the demo produced.
pub struct DemoReport {
    /// The blur lowered under the schedule.
    pub lowered: Lowered,
    /// The interpreter's output (`blur_y`).
    pub output: Buffer,
    /// Output points checked against the reference evaluator (on both
    /// executors).
    pub points_checked: usize,
    /// Wall time of the interpreter run.
    pub interpret_time: Duration,
    /// Wall time of the JIT compile.
    pub compile_time: Duration,
    /// Wall time of the JIT run.
    pub jit_time: Duration,
    /// The optimized LLVM IR of the compiled pipeline.
    pub llvm_ir: String,
    /// The host assembly of the compiled pipeline.
    pub assembly: String,
}

/// Why the demo failed.
#[derive(Debug, Error)]
pub enum DemoError {
    /// The blur did not lower under the schedule.
    #[error(transparent)]
    Lower(#[from] LowerError),
    /// The interpreter run failed.
    #[error(transparent)]
    Realize(#[from] RealizeError),
    /// The reference evaluator failed.
    #[error(transparent)]
    Reference(#[from] ReferenceError),
    /// A buffer could not be made or read.
    #[error(transparent)]
    Buffer(#[from] BufferError),
    /// The JIT compile failed.
    #[error(transparent)]
    Codegen(#[from] CodegenError),
    /// The compiled pipeline failed to run.
    #[error(transparent)]
    Jit(#[from] RunError),
    /// An executor's output differs from the reference evaluator's at a point.
    #[error("the scheduled pipeline ({executor}) disagrees with the reference at {coords:?}: {got:?} instead of {expected:?}")]
    Mismatch {
        /// The executor: `"interpreter"` or `"JIT"`.
        executor: &'static str,
        /// The point's coordinates.
        coords: Vec<i64>,
        /// The reference evaluator's value.
        expected: Scalar,
        /// The executor's value.
        got: Scalar,
    },
}

/// Lowers the blur under `schedule`, runs it over a `width` x `height`
/// output, and checks every point against the reference evaluator.
pub fn run_demo(schedule: &Schedule, width: i64, height: i64) -> Result<DemoReport, DemoError> {
    let p = compiler::examples::blur();
    let lowered = lower(&p, schedule)?;
    let mut input = Buffer::new("input", ScalarType::U16, &[(-1, width + 2), (-1, height + 2)])?;
    input.fill(|c| Scalar::UInt(((c[0] * 37 + c[1] * 101) % 4096) as u64));
    let inputs = BTreeMap::from([("input".to_string(), input)]);
    let region = vec![(0, width), (0, height)];
    let outputs = [("blur_y", region.clone())];
    let started = Instant::now();
    let output = realize(&lowered, &inputs, &BTreeMap::new(), &outputs)?.remove("blur_y").expect("the output was realized");
    let interpret_time = started.elapsed();
    let started = Instant::now();
    let compiled = compile_with(&lowered, &CompileOptions { keep_text: true, ..Default::default() })?;
    let compile_time = started.elapsed();
    let started = Instant::now();
    let jit_output = compiled.run(&inputs, &BTreeMap::new(), &outputs)?.remove("blur_y").expect("the output was realized");
    let jit_time = started.elapsed();
    let expected = compiler::exec::reference::realize(&p, &inputs, &BTreeMap::new(), "blur_y", &region)?;
    let mut points_checked = 0;
    for c in expected.coordinates() {
        let want = expected.get(&c)?;
        for (executor, buffer) in [("interpreter", &output), ("JIT", &jit_output)] {
            let got = buffer.get(&c)?;
            if !want.bit_eq(got) {
                return Err(DemoError::Mismatch { executor, coords: c, expected: want, got });
            }
        }
        points_checked += 1;
    }
    Ok(DemoReport {
        lowered,
        output,
        points_checked,
        interpret_time,
        compile_time,
        jit_time,
        llvm_ir: compiled.text.as_ref().map(|t| t.llvm_ir.clone()).unwrap_or_default(),
        assembly: compiled.text.as_ref().map(|t| t.assembly.clone()).unwrap_or_default(),
    })
}

/// The algorithm's definitions as text.
pub fn blur_pipeline_text() -> String {
    compiler::examples::blur().funcs.iter().map(|f| f.definition_text()).collect::<Vec<_>>().join("\n")
}
