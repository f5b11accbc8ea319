//! CPU code generation: a lowered pipeline becomes machine code for the
//! host through LLVM (inkwell), JIT-compiled into one callable function.
//!
//! - [`emit`] translates the flattened statement IR to LLVM IR (vector
//!   operations for vector IR, outlined closures for parallel loops);
//! - [`jit`] optimizes it for the host CPU's features (detected at run time:
//!   AVX2, AVX-512, whatever LLVM reports), compiles it with MCJIT and runs
//!   it on [`compiler::buffer::Buffer`]s;
//! - [`runtime`] is what generated code calls back: the thread pool and
//!   aligned allocation ([`guard_pages`] is its debug allocator);
//! - [`cache`] keeps compiled pipelines by (lowered statement, signature,
//!   host target).

pub mod cache;
pub mod demo;
pub mod emit;
pub mod guard_pages;
pub mod jit;
pub mod runtime;
pub mod thread_pool;

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
