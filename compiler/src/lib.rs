//! A Halide-style image-processing language and compiler.
//!
//! An *algorithm* ([`lang`]) says what each Func computes over an infinite
//! integer grid; a *schedule* ([`schedule`]) says how: loop order, tiling,
//! where each Func is computed and stored, SIMD and threads. [`lower`](mod@lower)
//! turns the two into a loop-nest statement of the [`ir`], which
//! [`exec::interpret`] executes; [`exec::reference`] evaluates the algorithm
//! directly and is the oracle every schedule is checked against.
//!
//! The module groups read as the architecture:
//!
//! | group | concern |
//! |---|---|
//! | [`ir`] | types, expressions, statements, traversal, printer, semantics |
//! | [`lang`] | the algorithm language and the checked [`PipelineDef`] |
//! | [`schedule`] | schedules as data, their text form, legality at the estimates, random schedules |
//! | [`analysis`] | interval arithmetic, footprints of statements, linear forms |
//! | [`simplify`] | the simplifier |
//! | [`lower`](mod@lower) | the lowering passes and their driver |
//! | [`exec`] | buffers, the reference evaluator, the interpreter |
//! | [`stack`] | the large-stack thread that lowering and the evaluator recurse on |
//! | [`target`] | the machine a schedule is for |
//!
//! This crate links no LLVM: code generation lives in the `codegen` crate,
//! so analyses and the autoscheduler build on this one alone.
//!
//! # Example
//!
//! An algorithm, a schedule, the lowered loop nest run on the IR
//! interpreter, and the reference evaluator's answer from the algorithm
//! alone: they agree.
//!
//! ```
//! use compiler::exec::{realize::realize, reference};
//! use compiler::{Buffer, Scalar, ScalarType, Schedule};
//! use std::collections::BTreeMap;
//!
//! let blur = compiler::examples::blur(); // blur_y(x, y) of blur_x of `input`
//! let mut schedule = Schedule::new();
//! schedule.func("blur_y").split("y", "yo", "yi", 8).parallel("yo").vectorize_by("x", 8);
//! schedule.func("blur_x").compute_at("blur_y", "yo");
//! let lowered = compiler::lower(&blur, &schedule)?;
//!
//! let mut input = Buffer::new("input", ScalarType::U16, &[(-1, 66), (-1, 34)])?;
//! input.fill(|c| Scalar::UInt((c[0] * 7 + c[1] * 3).rem_euclid(1000) as u64));
//! let inputs = BTreeMap::from([("input".to_string(), input)]);
//! let region = vec![(0, 64), (0, 32)];
//! let run = realize(&lowered, &inputs, &BTreeMap::new(), &[("blur_y", region.clone())])?;
//! let expected = reference::realize(&blur, &inputs, &BTreeMap::new(), "blur_y", &region)?;
//! assert!(run["blur_y"] == expected);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod analysis;
pub mod error;
pub mod examples;
pub mod exec;
pub mod ir;
pub mod lang;
pub mod lower;
pub mod schedule;
pub mod simplify;
pub mod stack;
pub mod target;

pub use error::{GpuError, InternalError, LangError, LowerError, ScheduleError, ScheduleErrorKind, UserError};
pub use exec::buffer::Buffer;
pub use ir::expr::Expr;
pub use ir::stmt::Stmt;
pub use ir::types::{ScalarType, Type};
pub use ir::value::Scalar;
pub use lang::pipeline::{FuncDef, FuncId, PipelineDef, StageId};
pub use lang::{Func, ImageParam, Param, Pipeline, RDom, RVar, Var};
pub use lower::{lower, lower_gpu, lower_gpu_with, lower_with, GpuLowered, LowerOptions, Lowered};
pub use schedule::legality::{check_at_estimates, EstimateError};
pub use schedule::{LoopLevel, Schedule};
pub use target::{GpuTarget, Target};
