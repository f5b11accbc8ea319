//! The hand-designed cost terms (Adams et al. 2019, section 3.3, in the
//! form of the public implementation): the network's coefficients weight
//! products of **raw** schedule features (compute, loads, stores, false
//! sharing, page faults, allocations, parallel overheads, working set), so
//! the model only learns how much each kind of work costs, not what work a
//! schedule does.
//!
//! Every term is a product with a feature that is zero for a stage a
//! candidate has not placed, so such a stage costs nothing.

use featurizer::ScheduleFeatures;
use tch::Tensor;

/// Seconds per unit of the terms' sum (the coefficients are of the order
/// of cycles per unit of work at about 1 GHz).
const SECONDS_PER_UNIT: f64 = 1e-9;

/// Bytes of a page, for the page-fault term.
const PAGE_BYTES: f64 = 4096.0;

/// The coefficient (network output channel) of each term. Channel 4 and
/// channels 28 to 31 weight nothing.
#[derive(Clone, Copy)]
enum Coefficient {
    /// Per vector iteration of a computed stage, per lane.
    ComputeVectorLane = 0,
    /// Per scalar iteration of a computed stage.
    ComputeScalar = 1,
    /// Per vector iteration of an inlined Func, per lane.
    InlinedVectorLane = 2,
    /// Per scalar iteration of an inlined Func.
    InlinedScalar = 3,
    /// Per line loaded per realization.
    LinesPerRealization = 5,
    /// Per byte loaded per realization.
    BytesPerRealization = 6,
    /// Per scalar load of a vector iteration.
    ScalarLoadPerVector = 7,
    /// Per load of a scalar iteration.
    LoadPerScalar = 8,
    /// Per vector load of a vector iteration.
    VectorLoadPerVector = 9,
    /// Per byte of a vector iteration's footprint, per scalar iteration.
    VectorBytesPerScalar = 10,
    /// The same per vector iteration.
    VectorBytesPerVector = 11,
    /// Per line of a vector iteration's footprint, per scalar iteration.
    VectorLinesPerScalar = 12,
    /// The same per vector iteration.
    VectorLinesPerVector = 13,
    /// Per byte loaded per parallel task.
    BytesPerTask = 14,
    /// Per line loaded per parallel task.
    LinesPerTask = 15,
    /// Per line written that another core will read.
    StoreLinesShared = 16,
    /// Per line written of the pipeline's output (never read again).
    StoreLinesOutput = 17,
    /// Per line written that the same core reads.
    StoreLinesPrivate = 18,
    /// Per byte written that another core will read.
    StoreBytesShared = 19,
    /// Per byte written of the pipeline's output.
    StoreBytesOutput = 20,
    /// Per byte written that the same core reads.
    StoreBytesPrivate = 21,
    /// Per iteration of a parallel stage, by how few bytes a task's
    /// innermost dimension holds (cores writing the same lines).
    FalseSharing = 22,
    /// Per byte allocated, by how many pages the tasks touch at once.
    PageFaults = 23,
    /// Per allocation.
    Malloc = 24,
    /// Per parallel loop started.
    ParallelLaunch = 25,
    /// Per parallel task beyond the first.
    TaskOverhead = 26,
    /// Per byte of working set.
    WorkingSet = 27,
}

/// What the terms need beyond the features: which stages write the
/// pipeline's output, and the machine's cores.
pub struct StageContext {
    /// `[stages]` bools: the stage is the last stage of an output Func.
    pub is_output: Tensor,
    pub num_cores: f64,
}

/// `[batch, stages]` predicted seconds per stage, from the coefficients
/// `[batch, stages, 32]` and the raw features `[batch, stages, 39]`.
pub fn stage_costs(coefficients: &Tensor, raw: &Tensor, context: &StageContext) -> Tensor {
    let c = |k: Coefficient| coefficients.select(2, k as i64);
    let positions = ScheduleFeatures::from_array(&std::array::from_fn(|i| i as f64));
    let f = |field: fn(&ScheduleFeatures) -> f64| raw.select(2, field(&positions) as i64);
    use Coefficient::*;

    let num_vectors = f(|s| s.num_vectors);
    let num_scalars = f(|s| s.num_scalars);
    let vector_size = f(|s| s.vector_size);
    let inner_parallelism = f(|s| s.inner_parallelism);
    let outer_parallelism = f(|s| s.outer_parallelism);
    let num_realizations = f(|s| s.num_realizations);
    let num_productions = f(|s| s.num_productions);
    let innermost_bytes_at_task = f(|s| s.innermost_bytes_at_task).clamp_min(1.0);
    let parallel = inner_parallelism.gt(1.0);
    let parallel_mask = parallel.to_kind(tch::Kind::Float);

    // Compute, by idle-core wastage: the last round of tasks may leave
    // cores idle.
    let lanes = &vector_size * &num_vectors;
    let inlined = f(|s| s.inlined_calls).ne(0.0);
    let computed = &lanes * c(ComputeVectorLane) + &num_scalars * c(ComputeScalar);
    let inlined_compute = &lanes * c(InlinedVectorLane) + &num_scalars * c(InlinedScalar);
    let tasks = (&inner_parallelism * &outer_parallelism).clamp_min(1.0);
    let tasks_per_core = &tasks / context.num_cores;
    let idle_core_wastage = tasks_per_core.ceil() / tasks_per_core.clamp_min(1.0);
    let compute = inlined_compute.where_self(&inlined, &computed) * idle_core_wastage;

    let per_vector_bytes = f(|s| s.unique_bytes_read_per_vector);
    let per_vector_lines = f(|s| s.unique_lines_read_per_vector);
    let loads = &num_realizations * f(|s| s.unique_lines_read_per_realization) * c(LinesPerRealization)
        + &num_realizations * f(|s| s.unique_bytes_read_per_realization) * c(BytesPerRealization)
        + &num_vectors * f(|s| s.scalar_loads_per_vector) * c(ScalarLoadPerVector)
        + &num_scalars * f(|s| s.scalar_loads_per_scalar) * c(LoadPerScalar)
        + &num_vectors * f(|s| s.vector_loads_per_vector) * c(VectorLoadPerVector)
        + &num_scalars * &per_vector_bytes * c(VectorBytesPerScalar)
        + &num_vectors * &per_vector_bytes * c(VectorBytesPerVector)
        + &num_scalars * &per_vector_lines * c(VectorLinesPerScalar)
        + &num_vectors * &per_vector_lines * c(VectorLinesPerVector)
        + &tasks * f(|s| s.unique_bytes_read_per_task) * c(BytesPerTask)
        + &tasks * f(|s| s.unique_lines_read_per_task) * c(LinesPerTask);

    // Stores: values another core reads, the pipeline's output (never read
    // again), or values the same core reads.
    let per_line = |shared: Coefficient, output: Coefficient, private: Coefficient| {
        c(shared).where_self(&parallel, &c(output).where_self(&context.is_output, &c(private)))
    };
    let lines_written = &inner_parallelism * f(|s| s.bytes_at_task) / &innermost_bytes_at_task;
    let stores = &num_realizations
        * (lines_written * per_line(StoreLinesShared, StoreLinesOutput, StoreLinesPrivate)
            + f(|s| s.bytes_at_realization) * per_line(StoreBytesShared, StoreBytesOutput, StoreBytesPrivate));
    let false_sharing = (&num_vectors + &num_scalars) / &innermost_bytes_at_task * c(FalseSharing) * &parallel_mask;
    let pages_per_task = (PAGE_BYTES / &innermost_bytes_at_task).minimum(&inner_parallelism);
    let page_faults = f(|s| s.bytes_at_production) * pages_per_task * &inner_parallelism * &outer_parallelism * c(PageFaults);

    let malloc = &num_realizations * c(Malloc);
    let parallel_launch = &num_productions * c(ParallelLaunch) * &parallel_mask;
    let task_overhead = &num_productions * (&inner_parallelism - 1.0).clamp_min(0.0) * c(TaskOverhead);
    let working_set = f(|s| s.working_set) * c(WorkingSet);

    (compute + loads + stores + false_sharing + page_faults + malloc + parallel_launch + task_overhead + working_set) * SECONDS_PER_UNIT
}
