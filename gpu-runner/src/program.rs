//! A GPU program and its run: the pipeline, its GPU-lowered statement and
//! its compiled module, as data; run with the host code on the interpreter
//! and the kernels on a [`Device`].

use compiler::exec::buffer::Buffer;
use compiler::exec::interpret::{run_with_launcher, InterpretError, Options};
use compiler::exec::kernels::{GpuModule, KernelLauncher};
use compiler::exec::realize::{bind_arguments, take_outputs, BoundArguments, RealizeError};
use compiler::ir::stmt::Stmt;
use compiler::ir::value::Scalar;
use compiler::lang::pipeline::PipelineDef;
use compiler::lower::GpuLowered;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use thiserror::Error;

/// A pipeline compiled for a GPU: what a GPU host needs to run it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuProgram {
    /// The algorithm (its inputs, outputs and params).
    pub pipeline: PipelineDef,
    /// The GPU-lowered statement: host code around the kernels.
    pub stmt: Stmt,
    /// The kernels, compiled.
    pub module: GpuModule,
}

impl GpuProgram {
    /// The program of `l`, whose kernels compiled to `module`.
    pub fn new(l: &GpuLowered, module: GpuModule) -> GpuProgram {
        GpuProgram { pipeline: l.lowered.pipeline.clone(), stmt: l.lowered.stmt.clone(), module }
    }
}

/// Why a GPU program did not run, by kind.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum RunError {
    /// No GPU to run on: no CUDA driver, or no device, or one older than
    /// the program's architecture.
    #[error("no GPU: {0}")]
    NoDevice(String),
    /// The arguments do not fit the pipeline, or the host code failed (an
    /// assertion on the buffers' sizes, say).
    #[error(transparent)]
    Host(#[from] InterpretError),
    /// The arguments do not fit the pipeline.
    #[error(transparent)]
    Arguments(#[from] RealizeError),
    /// The driver refused the PTX.
    #[error("the driver refused the PTX: {0}")]
    Load(String),
    /// A kernel's assertion failed on the device.
    #[error("kernel {kernel}: assertion failed: {message}")]
    Assertion {
        /// The kernel's entry.
        kernel: String,
        /// The assertion's message.
        message: String,
    },
    /// A kernel read or wrote outside its memory.
    #[error("kernel {kernel}: illegal address ({detail})")]
    IllegalAddress {
        /// The kernel's entry.
        kernel: String,
        /// The driver's words.
        detail: String,
    },
    /// The device ran out of memory.
    #[error("out of GPU memory: {0}")]
    OutOfMemory(String),
    /// A kernel ran past the driver's watchdog.
    #[error("kernel {kernel} timed out ({detail})")]
    Timeout {
        /// The kernel's entry.
        kernel: String,
        /// The driver's words.
        detail: String,
    },
    /// A launch failed otherwise.
    #[error("kernel {kernel}: launch failed ({detail})")]
    LaunchFailed {
        /// The kernel's entry.
        kernel: String,
        /// The driver's words.
        detail: String,
    },
}

/// What a run took on the device.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timings {
    /// Kernels launched.
    pub launches: usize,
    /// Their time on the device (CUDA events around each), in seconds.
    pub kernel_seconds: f64,
    /// Bytes copied to and from the device.
    pub copied_bytes: u64,
}

/// Runs a program's kernels, keeping what they touch until the run ends.
pub trait Device: KernelLauncher {
    /// Brings the pipeline's buffers up to date with the device's copies
    /// at the end of a run.
    fn finish(&mut self, buffers: &mut BTreeMap<String, Buffer>) -> Result<Timings, RunError>;
    /// The error the last failed launch raised, if a launch failed: the
    /// interpreter only carries its message.
    fn take_error(&mut self) -> Option<RunError>;
}

/// Runs `program` on `device` over `inputs` and `params`; returns each
/// output over its region (by buffer name) and the device's timings.
pub fn run(
    program: &GpuProgram,
    device: &mut dyn Device,
    inputs: &BTreeMap<String, Buffer>,
    params: &BTreeMap<String, Scalar>,
    regions: &[(&str, Vec<(i64, i64)>)],
) -> Result<(BTreeMap<String, Buffer>, Timings), RunError> {
    let BoundArguments { mut buffers, scalars } = bind_arguments(&program.pipeline, inputs, params, regions)?;
    let ran = run_with_launcher(&program.stmt, &mut buffers, &scalars, &Options::default(), device);
    if let Some(e) = device.take_error() {
        return Err(e);
    }
    ran?;
    let timings = device.finish(&mut buffers)?;
    Ok((take_outputs(&program.pipeline, buffers, regions), timings))
}
