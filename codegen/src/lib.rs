//! CPU code generation: a lowered pipeline becomes machine code for the
//! host through LLVM (inkwell), JIT-compiled into one callable function.
//!
//! - [`emit`] translates the flattened statement IR to LLVM IR (vector
//!   operations for vector IR, outlined closures for parallel loops);
//! - [`float_mode`] relaxes float rounding when asked (fused multiply-adds);
//! - [`jit`] optimizes it for the host CPU's features (detected at run time:
//!   AVX2, AVX-512, whatever LLVM reports), compiles it with MCJIT and runs
//!   it on [`compiler::exec::buffer::Buffer`]s;
//! - [`runtime`] is what generated code calls back: the thread pool and
//!   aligned allocation ([`guard_pages`] is its debug allocator);
//! - [`runner`] lowers, compiles and times schedules in a child process
//!   (the `hl-runner` binary), so that no schedule can take the caller
//!   down; [`timing`] is the best-of-samples rule it times with;
//! - [`cache`] keeps compiled pipelines (bounded, least recently used out)
//!   by a hash of pipeline, schedule, lowering options, target and compiler
//!   version;
//! - [`demo`] is the embedded default job of `hlc demo`.

pub mod cache;
pub mod demo;
pub mod emit;
pub mod float_mode;
pub mod guard_pages;
pub mod jit;
pub mod runner;
pub mod runtime;
pub mod thread_pool;
pub mod timing;

use thiserror::Error;

/// Why a pipeline could not be compiled.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum CodegenError {
    #[error("code generation does not support this statement: {0}")]
    Unsupported(String),
    #[error("LLVM: {0}")]
    Llvm(String),
}

impl From<inkwell::builder::BuilderError> for CodegenError {
    fn from(e: inkwell::builder::BuilderError) -> Self {
        CodegenError::Llvm(e.to_string())
    }
}

pub use cache::JitCache;
pub use jit::{compile, compile_with, CompileOptions, CompiledPipeline, CompiledText, HostTarget, RunError};
