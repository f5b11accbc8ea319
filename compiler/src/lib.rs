//! A Halide-style image-processing language and compiler.
//!
//! An *algorithm* ([`lang`]) says what each Func computes over an infinite
//! integer grid; a *schedule* ([`schedule`]) says how: loop order, tiling,
//! where each Func is computed and stored, SIMD and threads. [`lower`]
//! turns the two into a loop-nest statement, which [`interpret`] executes.
//! [`reference`] evaluates the algorithm directly and is the oracle every
//! schedule is checked against.

pub mod boundary;
pub mod buffer;
pub mod error;
pub mod expr;
pub mod interpret;
pub mod interval;
pub mod lang;
pub mod legality;
pub mod lower;
pub mod ops;
pub mod pipeline;
pub mod printer;
pub mod random_schedule;
pub mod realize;
pub mod reductions;
pub mod reference;
pub mod schedule;
pub mod schedule_text;
pub mod semantics;
pub mod simplify;
pub mod stmt;
pub mod target;
pub mod types;
pub mod value;
pub mod visit;

pub use expr::Expr;
pub use lang::{Func, ImageParam, Param, Pipeline, RDom, RVar, Var};
pub use stmt::Stmt;
pub use types::{ScalarType, Type};
