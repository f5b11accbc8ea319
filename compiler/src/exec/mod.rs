//! Executing pipelines without a code generator: runtime buffers, the
//! reference evaluator (the algorithm straight from its definitions: the
//! oracle), and the interpreter of the lowered statement with the argument
//! checks around it.

pub mod buffer;
pub mod interpret;
pub mod realize;
pub mod reference;
