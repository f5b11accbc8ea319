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
    /// A Func is called (or is an output) but has no definition.
    #[error("Func {func} is called but never defined")]
    Undefined {
        /// The Func.
        func: String,
    },
    /// A Func is given a second pure definition.
    #[error("Func {func} is defined twice; add update definitions with update()")]
    Redefined {
        /// The Func.
        func: String,
    },
    /// A variable appears twice in a Func's pure argument list.
    #[error("Func {func}: variable {var} appears twice in its argument list")]
    DuplicateArg {
        /// The Func.
        func: String,
        /// The variable.
        var: String,
    },
    /// Two different Funcs or inputs of one pipeline share a name.
    #[error("two different Funcs or inputs are named {name}")]
    DuplicateName {
        /// The name.
        name: String,
    },
    /// A Func depends on itself through other Funcs.
    #[error("Func {func} depends on itself through other Funcs")]
    Cycle {
        /// A Func on the cycle.
        func: String,
    },
    /// A call or an update's left-hand side has a number of coordinates other
    /// than the Func's dimensions.
    #[error("Func {func}: {context} has {got} arguments but the Func has {expected} dimensions")]
    Arity {
        /// The Func called or updated.
        func: String,
        /// Its number of dimensions.
        expected: usize,
        /// The number of coordinates given.
        got: usize,
        /// The call or update at fault.
        context: String,
    },
    /// A stage uses a variable that is not one of the pure variables of its
    /// left-hand side.
    #[error("Func {func}: stage {stage} uses variable {var}, which is not one of its pure variables left of the `=`")]
    FreeVariable {
        /// The Func.
        func: String,
        /// The stage (0 for the pure definition).
        stage: usize,
        /// The variable.
        var: String,
    },
    /// A pure definition uses a reduction variable.
    #[error("Func {func}: its pure definition uses reduction variable {rvar}; reductions belong in update definitions")]
    RVarInPureDefinition {
        /// The Func.
        func: String,
        /// The reduction variable.
        rvar: String,
    },
    /// An update's value has a type other than the Func's.
    #[error("Func {func}: update {stage} has type {got} but the Func has type {expected}")]
    UpdateType {
        /// The Func.
        func: String,
        /// The update's stage (1 for the first update).
        stage: usize,
        /// The Func's type.
        expected: Type,
        /// The update's type.
        got: Type,
    },
    /// A pure variable of an update is not used unadorned, at its own
    /// position, in every reference the update makes to its Func.
    #[error("Func {func}: update {stage} must use pure variable {var} unadorned at position {position} in every reference to {func}")]
    PureVarMisplaced {
        /// The Func.
        func: String,
        /// The update's stage (1 for the first update).
        stage: usize,
        /// The pure variable.
        var: String,
        /// Its position among the Func's arguments.
        position: usize,
    },
    /// An update is defined before the Func's pure definition.
    #[error("Func {func}: update definition before the pure definition")]
    UpdateBeforeDefinition {
        /// The Func.
        func: String,
    },
    /// A coordinate of a call is not an `i32`.
    #[error("Func {func}: coordinate {position} of its call to {callee} has type {ty}; coordinates must be integers")]
    CoordinateType {
        /// The Func whose definition makes the call.
        func: String,
        /// The Func or input called.
        callee: String,
        /// The coordinate's position (0 for the first).
        position: usize,
        /// The coordinate's type.
        ty: Type,
    },
    /// A definition breaks another rule of the language; `why` says which.
    #[error("Func {func}: {why}")]
    Invalid {
        /// The Func.
        func: String,
        /// The rule broken, in words.
        why: String,
    },
    /// A Func's definitions have more expression nodes, counted as trees,
    /// than a Func may have.
    #[error(
        "Func {func}: its definitions have {nodes} expression nodes (a subexpression shared k times counts k times), more than the {limit} a Func may have; compute parts of it in Funcs of their own"
    )]
    DefinitionTooLarge {
        /// The Func.
        func: String,
        /// Its definitions' expression nodes, counted as trees.
        nodes: usize,
        /// The most a Func may have (`MAX_DEFINITION_NODES`).
        limit: usize,
    },
    /// An estimate is not a box of 32-bit coordinates, or a param's estimate
    /// is not finite.
    #[error("{what}: the estimate {why}")]
    Estimate {
        /// The Func, input or param whose estimate it is.
        what: String,
        /// What is wrong with it.
        why: String,
    },
    /// The pipeline's definitions together have more expression nodes than a
    /// pipeline may have.
    #[error("the pipeline has {nodes} expression nodes, more than the {limit} a pipeline may have")]
    PipelineTooLarge {
        /// The pipeline's expression nodes, counted as trees.
        nodes: usize,
        /// The most a pipeline may have (`MAX_PIPELINE_NODES`).
        limit: usize,
    },
    /// An operator meets operands it does not accept (a bitwise operator on
    /// floats, integers of mixed signedness, ...).
    #[error("Func {func}: `{op}` {why}, in {expr}")]
    Operands {
        /// The Func.
        func: String,
        /// The operator (`min/max` for either).
        op: &'static str,
        /// What is wrong with the operands.
        why: String,
        /// The operation, abbreviated.
        expr: String,
    },
    /// A float literal does not fit the type of the narrower float expression
    /// it meets.
    #[error("Func {func}: the literal {value:e} does not fit {ty}, the type of the float expression it meets (write it in range, or cast the expression to f64)")]
    FloatLiteral {
        /// The Func.
        func: String,
        /// The literal.
        value: f64,
        /// The float type it does not fit.
        ty: Type,
    },
    /// A `reinterpret` between types of different widths, or of or to a bool.
    #[error("Func {func}: reinterpret<{to}>({expr}) of a {from} value: reinterpret needs types of one width, neither bool")]
    Reinterpret {
        /// The Func.
        func: String,
        /// The type of the value.
        from: Type,
        /// The type its bits would be read as.
        to: Type,
        /// The value, abbreviated.
        expr: String,
    },
    /// A composite intrinsic (`mux`, `lerp`, a fast-math function, ...) is
    /// given arguments it cannot take.
    #[error("{name}: {why}")]
    Intrinsic {
        /// The intrinsic (`mux`, `lerp`, ...).
        name: &'static str,
        /// What is wrong with its arguments.
        why: String,
    },
    /// A name given by the user could collide with the names lowering derives
    /// (see `why`).
    #[error("{kind} name `{name}` is not allowed: {why}")]
    InvalidName {
        /// What is named (`Func`, `Var`, `RDom`, `input` or `Param`).
        kind: &'static str,
        /// The name.
        name: String,
        /// Why it is not allowed.
        why: String,
    },
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
    /// A directive of one stage is illegal.
    #[error("Func {func}, stage {stage}: `{directive}`: {why}")]
    Directive {
        /// The Func.
        func: String,
        /// The stage (0 for the pure definition).
        stage: usize,
        /// The directive, in the text form.
        directive: String,
        /// What is wrong, as data.
        kind: ScheduleErrorKind,
        /// What is wrong, in words.
        why: String,
    },
    /// A Func-level part of the schedule (compute or store level, bounds,
    /// storage order, ...) is illegal.
    #[error("Func {func}: {why}")]
    Func {
        /// The Func.
        func: String,
        /// What is wrong, as data.
        kind: ScheduleErrorKind,
        /// What is wrong, in words.
        why: String,
    },
    /// The schedule names a Func that is not in the pipeline.
    #[error("schedule names Func {func}, which is not in the pipeline")]
    UnknownFunc {
        /// The name the schedule uses.
        func: String,
    },
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
    /// The algorithm or the schedule is at fault.
    #[error(transparent)]
    User(#[from] UserError),
    /// The compiler is at fault: a bug.
    #[error(
        "internal compiler error, a bug in the compiler rather than in the algorithm or the schedule (please report it with both): {0}"
    )]
    Internal(#[from] InternalError),
    /// The caller's deadline passed before lowering finished.
    #[error("lowering stopped at its deadline, in the pass {pass}")]
    Deadline {
        /// The pass running when the deadline passed.
        pass: Pass,
    },
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
    /// The schedule is illegal.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    /// The schedule's GPU loops do not make kernels the GPU target can
    /// run.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// Bounds inference cannot bound a region of a Func or of an input or
    /// output buffer (`what`) in one dimension.
    #[error(
        "cannot bound {what} of {func} in dimension {dim}: an index has no finite range; clamp it or make it depend on loop variables only"
    )]
    Unbounded {
        /// The Func, input or output.
        func: String,
        /// The dimension.
        dim: String,
        /// The region that cannot be bounded, in words.
        what: String,
    },
    /// Bounds inference cannot bound the region of a Func that one of its
    /// consumers reads.
    #[error(
        "cannot bound the region of {func} that {consumer} reads in dimension {dim}: its index {index} has no finite range; clamp it or make it depend on loop variables only"
    )]
    UnboundedRead {
        /// The Func read.
        func: String,
        /// The dimension.
        dim: String,
        /// The Func that reads it (or "a loop bound or condition").
        consumer: String,
        /// The index with no finite range.
        index: String,
    },
    /// Inlining grows a Func's definition beyond the node limit.
    #[error(
        "Func {func}: with {inlined} inlined into it, its definition grows to {nodes} expression nodes (the limit is {limit}); compute {inlined} (or a Func it inlines) at root or at a loop"
    )]
    InlinedTooLarge {
        /// The Func that grows.
        func: String,
        /// The largest inlined Func it calls ("its producers" if none is
        /// known).
        inlined: String,
        /// The expression nodes of its definition after inlining.
        nodes: usize,
        /// The most allowed (`MAX_INLINED_NODES`).
        limit: usize,
    },
    /// An unrolled loop whose extent is not a constant, or is above the
    /// unrolling limit, after bounds inference.
    #[error(
        "Func {func}, stage {stage}: unroll({var}) needs a constant extent of at most {max}, but after bounds inference loop {var} has extent {extent}; split it by a constant factor (unroll({var}, n)) or bound the dimension"
    )]
    UnrollExtent {
        /// The Func.
        func: String,
        /// The stage (0 for the pure definition).
        stage: usize,
        /// The loop unrolled.
        var: String,
        /// Its extent after bounds inference.
        extent: String,
        /// The largest extent unrolled (`MAX_UNROLL`).
        max: i64,
    },
}

impl UserError {
    /// The Func at fault (or the input or output buffer, for a region of
    /// it that cannot be bounded).
    pub fn func(&self) -> &str {
        match self {
            UserError::Schedule(e) => e.func(),
            UserError::Gpu(e) => e.func(),
            UserError::Unbounded { func, .. }
            | UserError::UnboundedRead { func, .. }
            | UserError::InlinedTooLarge { func, .. }
            | UserError::UnrollExtent { func, .. } => func,
        }
    }
}

/// Why a schedule's GPU loops do not make kernels a GPU target can run,
/// found after bounds inference, before any code is generated. Loops are
/// named by Func and loop (`blur_x`, `xi`).
#[derive(Clone, Debug, Error, PartialEq)]
pub enum GpuError {
    /// Code that is not in any kernel stores to a Func: the GPU path runs
    /// no computation on the host.
    #[error(
        "Func {func} is computed on the host: under a GPU schedule every Func is computed in a kernel (map loops of it to gpu_blocks and gpu_threads, compute it at a loop of a kernel, or inline it)"
    )]
    HostComputation {
        /// The Func (its buffer) stored to.
        func: String,
    },
    /// A `gpu_threads` loop outside every `gpu_blocks` loop.
    #[error("loop {var} of Func {func} is gpu_threads but is not inside a gpu_blocks loop")]
    ThreadsOutsideBlocks {
        /// The Func.
        func: String,
        /// The loop.
        var: String,
    },
    /// A `gpu_blocks` loop inside a kernel other than directly inside its
    /// outer block loops: inside a thread loop or below other code.
    #[error(
        "loop {var} of Func {func} is gpu_blocks inside the kernel of loop {kernel}: a kernel's block loops are its outermost loops, nested directly in one another"
    )]
    BlocksInsideKernel {
        /// The Func.
        func: String,
        /// The loop.
        var: String,
        /// The outermost block loop of the kernel it is in.
        kernel: String,
    },
    /// A `gpu_threads` loop inside a thread loop other than directly in the
    /// nest of thread loops.
    #[error(
        "loop {var} of Func {func} is gpu_threads inside the thread loop {outer}: thread loops are nested directly in one another, at most three"
    )]
    ThreadsInsideThreads {
        /// The Func.
        func: String,
        /// The loop.
        var: String,
        /// The thread loop around it.
        outer: String,
    },
    /// More than three nested block or thread loops.
    #[error("loop {var} of Func {func} is the fourth nested {what} loop; a GPU has three {what} dimensions")]
    TooManyDimensions {
        /// The Func.
        func: String,
        /// The loop.
        var: String,
        /// `block` or `thread`.
        what: &'static str,
    },
    /// A thread loop whose extent is not a constant: a block's threads
    /// are fixed at launch.
    #[error(
        "loop {var} of Func {func} is gpu_threads over {extent} iterations, not a constant: split it by a constant factor and map the inner loop to threads"
    )]
    ThreadExtentNotConstant {
        /// The Func.
        func: String,
        /// The loop.
        var: String,
        /// Its extent, printed.
        extent: String,
    },
    /// A block loop whose extent depends on an outer block loop or on
    /// something computed in the kernel: the grid is fixed at launch.
    #[error("loop {var} of Func {func} is gpu_blocks over {extent} iterations, which depends on an outer block loop; the grid must be known at launch")]
    BlockExtentVaries {
        /// The Func.
        func: String,
        /// The loop.
        var: String,
        /// Its extent, printed.
        extent: String,
    },
    /// A parallel loop inside a kernel (only block and thread loops run
    /// concurrently there).
    #[error("loop {var} of Func {func} is parallel inside a kernel: map it to gpu_threads or make it serial")]
    ParallelInsideKernel {
        /// The Func.
        func: String,
        /// The loop.
        var: String,
    },
    /// A block's threads over the target's limit.
    #[error("the kernel of loop {kernel} has {threads} threads per block ({dims}); the target allows {limit}")]
    TooManyThreads {
        /// The kernel's outermost block loop.
        kernel: String,
        /// Threads per block.
        threads: i64,
        /// The block's shape, `x * y * z`.
        dims: String,
        /// The target's limit.
        limit: u32,
    },
    /// A block's shared memory over the target's limit.
    #[error("the kernel of loop {kernel} allocates {bytes} bytes of shared memory per block ({funcs}); the target allows {limit}")]
    SharedMemoryExceeded {
        /// The kernel's outermost block loop.
        kernel: String,
        /// Bytes of shared memory per block.
        bytes: i64,
        /// The Funcs stored there, with their bytes.
        funcs: String,
        /// The Func that takes the most of it.
        largest: String,
        /// The target's limit.
        limit: u32,
    },
    /// Storage in a kernel whose size no constant bounds (within what a
    /// kernel's memory can hold).
    #[error(
        "Func {func} is stored in {memory} memory of a kernel over {size} elements, which no constant of at most {max_bytes} bytes bounds: bound its region (a split by a constant factor, `bound`), compute it at a loop where the region is fixed, or give it a kernel of its own"
    )]
    StorageNotConstant {
        /// The Func.
        func: String,
        /// `shared` or `local`.
        memory: &'static str,
        /// The number of elements, printed.
        size: String,
        /// The largest storage a kernel allocates.
        max_bytes: i64,
    },
}

impl GpuError {
    /// The Func at fault (the kernel's outermost loop, for a limit of a
    /// whole kernel).
    pub fn func(&self) -> &str {
        match self {
            GpuError::HostComputation { func }
            | GpuError::ThreadsOutsideBlocks { func, .. }
            | GpuError::BlocksInsideKernel { func, .. }
            | GpuError::ThreadsInsideThreads { func, .. }
            | GpuError::TooManyDimensions { func, .. }
            | GpuError::ThreadExtentNotConstant { func, .. }
            | GpuError::BlockExtentVaries { func, .. }
            | GpuError::ParallelInsideKernel { func, .. }
            | GpuError::StorageNotConstant { func, .. } => func,
            GpuError::TooManyThreads { kernel, .. } | GpuError::SharedMemoryExceeded { kernel, .. } => kernel,
        }
    }
}

/// A failure of the compiler itself: whatever the algorithm and the
/// schedule, lowering should not produce it.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum InternalError {
    /// The IR checker found the statement malformed after a pass.
    #[error("after lowering pass `{pass}`, the statement is malformed: {problem}")]
    IrCheck {
        /// The pass after which the statement is malformed.
        pass: Pass,
        /// The first problem found.
        problem: String,
    },
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
    /// The storage of Funcs whose region slides along a serial loop folded to
    /// a circular window.
    StorageFolding,
    /// The bounds promises of loop synthesis stripped.
    Promises,
    /// Every access asserted against its storage (checked mode only).
    AccessChecks,
    /// Storage flattened to 1-D buffers.
    Flattening,
    /// The simplifier, after flattening.
    Simplification,
    /// Every f32 `exp` call replaced by its expansion into plain nodes.
    MathExpansion,
    /// Vectorized loops turned into vector code.
    Vectorization,
    /// Unrolled loops replaced by copies of their body.
    Unrolling,
    /// Loops of shift-inwards splits and tail guards partitioned.
    LoopPartitioning,
    /// Register tiles' accumulators kept in stack slots.
    RegisterAccumulators,
    /// The simplifier, last.
    FinalSimplification,
    /// GPU kernels checked against the GPU target, their thread loops
    /// over one thread space (GPU schedules only).
    GpuKernels,
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
            Pass::MathExpansion => "math expansion",
            Pass::Vectorization => "vectorization",
            Pass::Unrolling => "unrolling",
            Pass::LoopPartitioning => "loop partitioning",
            Pass::RegisterAccumulators => "register accumulators",
            Pass::FinalSimplification => "final simplification",
            Pass::GpuKernels => "GPU kernels",
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
