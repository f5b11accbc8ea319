//! Analyses of expressions that lowering, the simplifier and the
//! autoscheduler's featurizer share: interval arithmetic (the range an
//! expression takes when its variables range over intervals, and the box
//! of a Func a statement touches) and the linear canonical form (exact
//! coefficients of each variable, from which load Jacobians are read).

pub mod interval;
pub mod linear;
