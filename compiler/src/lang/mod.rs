//! The algorithm language as a Rust API: [`Var`], [`RDom`], [`Func`],
//! [`ImageParam`], [`Param`], and [`Pipeline`] which collects the Funcs
//! reachable from the outputs into a checked
//! [`PipelineDef`](pipeline::PipelineDef).
//!
//! Definitions never panic: a mistake (a free variable, a type mismatch, an
//! update that breaks the pure-variable rule) is recorded on the Func and
//! reported, naming the Func, when the pipeline is built.
//!
//! | module | idea |
//! |---|---|
//! | `handles` | the handles a program builds definitions with ([`Func`], [`Var`], ...) |
//! | `collect` | collecting the checked [`PipelineDef`](pipeline::PipelineDef) from the outputs ([`Pipeline`]) |
//! | `checks` | the rules of updates, names and calls |
//! | [`pipeline`] | the plain-data definitions lowering consumes |
//! | [`ops`] | operators and functions on expressions |
//! | [`intrinsics`] | Halide's composite intrinsics (`absd`, `mux`, `lerp`, `saturating_cast`) |
//! | [`fast_math`] | fast approximate `exp`, `log`, `pow`, inverse and inverse square root on f32 |
//! | [`reductions`] | inline reductions (`sum`, `argmax`, ...) |
//! | [`boundary`] | boundary conditions |

pub mod boundary;
mod checks;
mod collect;
pub mod fast_math;
mod handles;
pub mod intrinsics;
pub mod ops;
pub mod pipeline;
pub mod reductions;

pub use collect::Pipeline;
pub use handles::{Func, ImageParam, Param, RDom, RVar, Var};
pub use pipeline::for_each_expr;
