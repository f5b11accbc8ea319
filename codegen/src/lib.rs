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
//! - [`demo`] is the embedded default job of `hlc demo`;
//! - [`gpu`] compiles the kernels of a GPU-lowered pipeline to PTX through
//!   LLVM's NVPTX back end, with their launch plans, and checks PTX with
//!   NVIDIA's `ptxas` where it is installed.
//!
//! # Example
//!
//! The blur, scheduled, compiled for this CPU and run; the output is the
//! reference evaluator's.
//!
//! ```
//! use compiler::exec::reference;
//! use compiler::{Buffer, Scalar, ScalarType, Schedule};
//! use std::collections::BTreeMap;
//!
//! let blur = compiler::examples::blur();
//! let mut schedule = Schedule::new();
//! schedule.func("blur_y").split("y", "yo", "yi", 8).parallel("yo").vectorize_by("x", 8);
//! let compiled = codegen::compile(&compiler::lower(&blur, &schedule)?)?;
//!
//! let mut input = Buffer::new("input", ScalarType::U16, &[(-1, 66), (-1, 34)])?;
//! input.fill(|c| Scalar::UInt((c[0] * 5 + c[1]).rem_euclid(1000) as u64));
//! let inputs = BTreeMap::from([("input".to_string(), input)]);
//! let region = vec![(0, 64), (0, 32)];
//! let out = compiled.run(&inputs, &BTreeMap::new(), &[("blur_y", region.clone())])?;
//! assert!(out["blur_y"] == reference::realize(&blur, &inputs, &BTreeMap::new(), "blur_y", &region)?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod cache;
pub mod demo;
pub mod emit;
pub mod float_mode;
pub mod gpu;
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
    /// The statement uses something the code generator cannot emit (described
    /// in the message).
    #[error("code generation does not support this statement: {0}")]
    Unsupported(String),
    /// LLVM failed, or lacks something the code generator needs (an
    /// intrinsic, the host target); the message says what.
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
