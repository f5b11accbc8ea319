//! Errors of the compiler, each naming what is wrong: the Func, the stage,
//! the dimension or the directive. A lowering error says whose it is: the
//! algorithm's or the schedule's ([`UserError`]), the compiler's
//! ([`InternalError`]: a bug, which its message asks to report), or the
//! caller's deadline's ([`LowerError::Deadline`], naming the [`Pass`]).

use crate::ir::types::Type;
use serde::{Deserialize, Serialize};
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
    #[error(
        "Func {func}: its definitions have {nodes} expression nodes (a subexpression shared k times counts k times), more than the {limit} a Func may have; compute parts of it in Funcs of their own"
    )]
    DefinitionTooLarge { func: String, nodes: usize, limit: usize },
    #[error("{what}: the estimate {why}")]
    Estimate { what: String, why: String },
    #[error("the pipeline has {nodes} expression nodes, more than the {limit} a pipeline may have")]
    PipelineTooLarge { nodes: usize, limit: usize },
    #[error("Func {func}: `{op}` {why}, in {expr}")]
    Operands { func: String, op: &'static str, why: String, expr: String },
    #[error("Func {func}: the literal {value:e} does not fit {ty}, the type of the float expression it meets (write it in range, or cast the expression to f64)")]
    FloatLiteral { func: String, value: f64, ty: Type },
    #[error("Func {func}: reinterpret<{to}>({expr}) of a {from} value: reinterpret needs types of one width, neither bool")]
    Reinterpret { func: String, from: Type, to: Type, expr: String },
    #[error("{name}: {why}")]
    Intrinsic { name: &'static str, why: String },
    #[error("{kind} name `{name}` is not allowed: {why}")]
    InvalidName { kind: &'static str, name: String, why: String },
}

/// What is wrong with an illegal schedule, as data a search can branch on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ScheduleErrorKind {
    /// A directive names a loop the stage does not have.
    NoSuchLoop,
    /// A split or fuse would give a new loop the name of an existing one.
    DuplicateLoopName,
    /// A split factor below 1, or outer and inner loops with one name.
    InvalidSplit,
    /// `shift_inwards` on a loop shorter than the factor.
    ShiftInwardsTooShort,
    /// A tail strategy that would change a reduction or an update.
    TailChangesUpdate,
    /// `vectorize` of a loop without a constant extent (an unrolled loop's
    /// extent may also come from bounds inference; lowering reports
    /// `UserError::UnrollExtent` when it does not).
    NonConstantExtent,
    /// A vectorized loop that is not innermost once all of its stage's
    /// directives have applied.
    VectorLoopNotInnermost,
    /// `fuse` of loops that are not adjacent, or of a reduction loop with a pure one.
    InvalidFuse,
    /// `reorder` lists a loop twice.
    DuplicateInReorder,
    /// The schedule names an update the Func does not have.
    NoSuchUpdate,
    /// Loop, storage or bound directives on a Func that is inlined.
    DirectivesOnInlinedFunc,
    /// `compute_at` or `store_at` of an output, or an inline store level.
    InvalidOutputPlacement,
    /// `bound` names no dimension, or has an empty extent.
    InvalidBound,
    /// `reorder_storage` does not list each dimension once.
    InvalidStorageOrder,
    /// Compute levels that form a cycle.
    ComputeLevelCycle,
    /// A compute or store level names a Func, update or loop that does not
    /// exist, or a Func that is inlined.
    NoSuchLevel,
    /// A compute or store level inside a vectorized loop.
    LevelInsideVectorLoop,
    /// Storage inside the compute level.
    StorageInsideCompute,
    /// Storage outside a parallel loop the Func is computed in.
    StorageOutsideParallelLoop,
    /// A compute level that does not enclose every use.
    ComputeLevelDoesNotEncloseUses,
    /// A reduction loop made parallel or vectorized, or reduction loops reordered.
    ReductionOrderChanged,
    /// The schedule names a Func that is not in the pipeline.
    UnknownFunc,
}

/// An illegal schedule, found before lowering.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum ScheduleError {
    #[error("Func {func}, stage {stage}: `{directive}`: {why}")]
    Directive { func: String, stage: usize, directive: String, kind: ScheduleErrorKind, why: String },
    #[error("Func {func}: {why}")]
    Func { func: String, kind: ScheduleErrorKind, why: String },
    #[error("schedule names Func {func}, which is not in the pipeline")]
    UnknownFunc { func: String },
}

impl ScheduleError {
    /// What is wrong, as data.
    pub fn kind(&self) -> ScheduleErrorKind {
        match self {
            ScheduleError::Directive { kind, .. } | ScheduleError::Func { kind, .. } => *kind,
            ScheduleError::UnknownFunc { .. } => ScheduleErrorKind::UnknownFunc,
        }
    }

    /// The Func whose schedule is illegal.
    pub fn func(&self) -> &str {
        match self {
            ScheduleError::Directive { func, .. } | ScheduleError::Func { func, .. } | ScheduleError::UnknownFunc { func } => func,
        }
    }
}

/// Why a pipeline and schedule could not be lowered: the algorithm or the
/// schedule is at fault ([`UserError`]), the compiler is
/// ([`InternalError`], a bug), or the caller's deadline passed first.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum LowerError {
    #[error(transparent)]
    User(#[from] UserError),
    #[error(
        "internal compiler error, a bug in the compiler rather than in the algorithm or the schedule (please report it with both): {0}"
    )]
    Internal(#[from] InternalError),
    #[error("lowering stopped at its deadline, in the pass {pass}")]
    Deadline { pass: Pass },
}

impl From<ScheduleError> for LowerError {
    fn from(e: ScheduleError) -> LowerError {
        LowerError::User(UserError::Schedule(e))
    }
}

impl LowerError {
    /// The Func (or buffer) at fault, for a user error.
    pub fn func(&self) -> Option<&str> {
        match self {
            LowerError::User(e) => Some(e.func()),
            LowerError::Internal(_) | LowerError::Deadline { .. } => None,
        }
    }
}

/// A pipeline and schedule that cannot be lowered because of what they
/// say: the schedule is illegal, or the algorithm reads or computes
/// regions the compiler cannot bound or build.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum UserError {
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    #[error(
        "cannot bound {what} of {func} in dimension {dim}: an index has no finite range; clamp it or make it depend on loop variables only"
    )]
    Unbounded { func: String, dim: String, what: String },
    #[error(
        "cannot bound the region of {func} that {consumer} reads in dimension {dim}: its index {index} has no finite range; clamp it or make it depend on loop variables only"
    )]
    UnboundedRead { func: String, dim: String, consumer: String, index: String },
    #[error(
        "Func {func}: with {inlined} inlined into it, its definition grows to {nodes} expression nodes (the limit is {limit}); compute {inlined} (or a Func it inlines) at root or at a loop"
    )]
    InlinedTooLarge { func: String, inlined: String, nodes: usize, limit: usize },
    #[error(
        "Func {func}, stage {stage}: unroll({var}) needs a constant extent of at most {max}, but after bounds inference loop {var} has extent {extent}; split it by a constant factor (unroll({var}, n)) or bound the dimension"
    )]
    UnrollExtent { func: String, stage: usize, var: String, extent: String, max: i64 },
}

impl UserError {
    /// The Func at fault (or the input or output buffer, for a region of
    /// it that cannot be bounded).
    pub fn func(&self) -> &str {
        match self {
            UserError::Schedule(e) => e.func(),
            UserError::Unbounded { func, .. }
            | UserError::UnboundedRead { func, .. }
            | UserError::InlinedTooLarge { func, .. }
            | UserError::UnrollExtent { func, .. } => func,
        }
    }
}

/// A failure of the compiler itself: whatever the algorithm and the
/// schedule, lowering should not produce it.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum InternalError {
    #[error("after lowering pass `{pass}`, the statement is malformed: {problem}")]
    IrCheck { pass: Pass, problem: String },
}

/// The passes of lowering that run on the statement, in order (see
/// [`crate::lower`](mod@crate::lower)): where a deadline stopped it or an
/// internal error was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pass {
    /// Loop nests built, realizations injected.
    LoopSynthesis,
    /// Bounds inference and sliding window, Func by Func, and the sizes of
    /// realizations.
    BoundsAndSliding,
    StorageFolding,
    /// The bounds promises of loop synthesis stripped.
    Promises,
    /// Every access asserted against its storage (checked mode only).
    AccessChecks,
    /// Storage flattened to 1-D buffers.
    Flattening,
    /// The simplifier, after flattening.
    Simplification,
    Vectorization,
    Unrolling,
    /// Loops of shift-inwards splits and tail guards partitioned.
    LoopPartitioning,
    /// Register tiles' accumulators kept in stack slots.
    RegisterAccumulators,
    /// The simplifier, last.
    FinalSimplification,
}

impl Pass {
    /// The pass's name, as `HL_PRINT_PASSES` and messages print it.
    pub fn name(self) -> &'static str {
        match self {
            Pass::LoopSynthesis => "loop synthesis",
            Pass::BoundsAndSliding => "bounds inference and sliding window",
            Pass::StorageFolding => "storage folding",
            Pass::Promises => "promises",
            Pass::AccessChecks => "access checks",
            Pass::Flattening => "flattening",
            Pass::Simplification => "simplification",
            Pass::Vectorization => "vectorization",
            Pass::Unrolling => "unrolling",
            Pass::LoopPartitioning => "loop partitioning",
            Pass::RegisterAccumulators => "register accumulators",
            Pass::FinalSimplification => "final simplification",
        }
    }
}

impl std::fmt::Display for Pass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_internal_error_says_it_is_a_bug_to_report() {
        let problem = "variable x is used outside its loop".to_string();
        let e = LowerError::from(InternalError::IrCheck { pass: Pass::Flattening, problem: problem.clone() });
        let msg = e.to_string();
        for part in ["internal compiler error", "a bug in the compiler", "please report it", "`flattening`", &problem] {
            assert!(msg.contains(part), "{part:?} missing from: {msg}");
        }
    }

    #[test]
    fn user_errors_and_deadlines_do_not_claim_a_bug() {
        let user = LowerError::from(ScheduleError::UnknownFunc { func: "f".into() });
        assert!(matches!(&user, LowerError::User(UserError::Schedule(_))));
        let deadline = LowerError::Deadline { pass: Pass::BoundsAndSliding };
        for e in [user, deadline] {
            assert!(!e.to_string().contains("bug"), "{e}");
        }
        assert_eq!(LowerError::Deadline { pass: Pass::Unrolling }.to_string(), "lowering stopped at its deadline, in the pass unrolling");
    }
}
