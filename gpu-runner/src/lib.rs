//! Running GPU pipelines compiled elsewhere, without LLVM: a
//! [`GpuProgram`] (the pipeline, its GPU-lowered statement and its
//! [`compiler::exec::kernels::GpuModule`]: PTX and launch plans, all plain
//! data) runs its host code on the IR interpreter and hands each kernel to
//! a device:
//!
//! - [`cuda::CudaDevice`] loads the PTX through the CUDA driver (found at
//!   run time, so this crate builds and its tests run where there is no
//!   CUDA), keeps buffers on the GPU between kernels (inputs copied in
//!   once, outputs out once), times the kernels with CUDA events, and
//!   names what went wrong ([`RunError`]);
//! - [`emulated::Emulator`] runs each kernel's statement on the
//!   interpreter from its launch plan alone (the grid and arguments the
//!   host evaluated), so the plans are checked on every CI run.
//!
//! [`launch`] evaluates a launch plan where the host code reaches the
//! kernel: grid, block and argument values. [`check`] is the GPU
//! differential check a GPU host runs on cases compiled elsewhere.

pub mod check;
pub mod cuda;
pub mod emulated;
pub mod launch;
pub mod program;

pub use program::{run, Device, GpuProgram, RunError, Timings};
