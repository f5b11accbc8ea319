//! The intermediate representation shared by algorithms and lowered code:
//! types, expressions, statements, the one traversal (visitor and mutator),
//! the printer, and the arithmetic semantics every evaluator follows.
//!
//! Invariants: expressions are immutable trees shared through `Arc`; every
//! node carries its type and constructors check operand types; wrapping
//! integer arithmetic, Euclidean division and `x / 0 = 0` are defined once,
//! in [`semantics`] and [`value`].

pub mod exp;
pub mod expr;
pub(crate) mod f32_nodes;
mod float_serde;
pub mod log;
pub mod printer;
pub mod semantics;
pub mod share;
pub mod stmt;
pub mod types;
pub mod value;
pub mod visit;
