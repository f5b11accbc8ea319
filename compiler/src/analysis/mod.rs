//! Analyses of expressions that lowering, the simplifier and the
//! autoscheduler's featurizer share: interval arithmetic (the range an
//! expression takes when its variables range over intervals), footprints
//! (the box of a Func or an input a statement touches, built on intervals)
//! the linear canonical form (exact coefficients of each variable, from
//! which load Jacobians are read), monotonicity (how an expression moves
//! with a loop variable, for the sliding window) and the value bounds of
//! Funcs (so that an index computed from a Func's value is bounded), and
//! constant bounds through `min` and `max` (the sizes of storage a GPU
//! kernel allocates).

pub mod const_range;
pub mod footprint;
pub mod interval;
pub mod linear;
pub mod monotonic;
pub mod value_bounds;
