//! Executing pipelines without a code generator: runtime buffers, the
//! reference evaluator (the algorithm straight from its definitions: the
//! oracle), and the interpreter of the lowered statement with the argument
//! checks around it. Both executors evaluate expressions through the one
//! evaluator of [`eval`], so they share one semantics (that of compiled code).
//! [`kernels`] is a compiled GPU module as data, and the interpreter's hook
//! for running a GPU pipeline's kernels elsewhere.

pub mod buffer;
pub mod eval;
pub mod interpret;
pub mod kernels;
pub mod realize;
pub mod reference;
