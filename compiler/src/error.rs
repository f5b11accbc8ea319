//! Errors of the compiler, each naming what is wrong: the Func, the stage,
//! the dimension or the directive.

use crate::types::Type;
use thiserror::Error;

/// A mistake in an algorithm, found while defining it or building its pipeline.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum LangError {
    #[error("Func {func} is called but never defined")]
    Undefined { func: String },
    #[error("Func {func} is defined twice; add update definitions with update()")]
    Redefined { func: String },
    #[error("Func {func}: variable {var} appears twice in its argument list")]
    DuplicateArg { func: String, var: String },
    #[error("two different Funcs or inputs are named {name}")]
    DuplicateName { name: String },
    #[error("Func {func} depends on itself through other Funcs")]
    Cycle { func: String },
    #[error("Func {func}: {context} has {got} arguments but the Func has {expected} dimensions")]
    Arity { func: String, expected: usize, got: usize, context: String },
    #[error("Func {func}: stage {stage} uses variable {var}, which is not one of its pure variables left of the `=`")]
    FreeVariable { func: String, stage: usize, var: String },
    #[error("Func {func}: its pure definition uses reduction variable {rvar}; reductions belong in update definitions")]
    RVarInPureDefinition { func: String, rvar: String },
    #[error("Func {func}: update {stage} has type {got} but the Func has type {expected}")]
    UpdateType { func: String, stage: usize, expected: Type, got: Type },
    #[error("Func {func}: update {stage} must use pure variable {var} unadorned at position {position} in every reference to {func}")]
    PureVarMisplaced { func: String, stage: usize, var: String, position: usize },
    #[error("Func {func}: update definition before the pure definition")]
    UpdateBeforeDefinition { func: String },
    #[error("Func {func}: coordinate {position} of its call to {callee} has type {ty}; coordinates must be integers")]
    CoordinateType { func: String, callee: String, position: usize, ty: Type },
    #[error("Func {func}: {why}")]
    Invalid { func: String, why: String },
}

/// An illegal schedule, found before lowering.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum ScheduleError {
    #[error("Func {func}, stage {stage}: `{directive}`: {why}")]
    Directive { func: String, stage: usize, directive: String, why: String },
    #[error("Func {func}: {why}")]
    Func { func: String, why: String },
    #[error("schedule names Func {func}, which is not in the pipeline")]
    UnknownFunc { func: String },
    #[error("schedule text, line {line}: {why}")]
    Parse { line: usize, why: String },
}

/// Why a pipeline and schedule could not be lowered.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum LowerError {
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    #[error(
        "cannot bound {what} of {func} in dimension {dim}: an index has no finite range; clamp it or make it depend on loop variables only"
    )]
    Unbounded { func: String, dim: String, what: String },
}
