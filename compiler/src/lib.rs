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

pub mod analysis;
pub mod error;
pub mod exec;
pub mod ir;
pub mod lang;
pub mod lower;
pub mod schedule;
pub mod simplify;
pub mod stack;
pub mod target;

pub use error::{InternalError, LangError, LowerError, ScheduleError, ScheduleErrorKind, UserError};
pub use exec::buffer::Buffer;
pub use ir::expr::Expr;
pub use ir::stmt::Stmt;
pub use ir::types::{ScalarType, Type};
pub use ir::value::Scalar;
pub use lang::pipeline::{FuncDef, FuncId, PipelineDef, StageId};
pub use lang::{Func, ImageParam, Param, Pipeline, RDom, RVar, Var};
pub use lower::{lower, lower_with, LowerOptions, Lowered};
pub use schedule::legality::{check_at_estimates, EstimateError};
pub use schedule::{LoopLevel, Schedule};
pub use target::Target;
