//! The hand-designed cost terms (Adams et al. 2019, section 3.3, in the
//! form of the public implementation): the network's coefficients weight
//! products of **raw** schedule features (compute, loads, stores, false
//! sharing, page faults, allocations, parallel overheads, working set), so
//! the model only learns how much each kind of work costs, not what work a
//! schedule does.
//!
//! Every term is linear in its coefficient, so a stage's cost is the dot
//! product of the 32 coefficients with 32 term values that depend on the
//! features alone: [`term_values`] computes them here, in plain f64
//! arithmetic, once per (candidate, stage), and the network does one
//! multiply and one sum. (A term per tensor operation would be about a
//! hundred small libtorch calls per batch.)
//!
//! Every term is a product with a count that is zero for a stage a
//! candidate has not placed, so such a stage costs nothing.
//!
//! Two terms are ours, not Adams's: the analytical model's price of the
//! stage ([`search::Analytical`]), so the network starts from what the
//! analytical model knows (arithmetic per point, where the footprint fits
//! in the caches) and learns how much of it this machine confirms; and
//! the dependent steps of a reduction (`dependent_steps`), the latency
//! a tile of few accumulators waits out.
//!
//! The terms are versioned ([`TERMS_VERSION`]): weights record the
//! version they were trained with, and a network weights only its
//! version's terms ([`in_version`]), so weights trained before a term
//! existed price exactly as they did.

use featurizer::ScheduleFeatures;

/// Coefficients per stage (the hand-designed terms use 29 of them:
/// Adams's 27, the analytical model's price and the dependent steps).
pub const CONV1_CHANNELS: usize = 32;

/// The coefficient channel of the analytical model's price of a stage
/// (a term of this module).
pub const ANALYTICAL_TERM: usize = 28;

/// Seconds per unit of work (the coefficients are of the order of cycles
/// per unit of work at about 1 GHz).
const SECONDS_PER_UNIT: f64 = 1e-9;

/// Bytes of a page, for the page-fault term.
const PAGE_BYTES: f64 = 4096.0;

/// Version of the hand-designed terms; bump it when a term is added or
/// changes meaning. Version 1: Adams's terms and the analytical model's
/// price; version 2 adds the dependent steps of reductions.
pub const TERMS_VERSION: u32 = 2;

/// The coefficient channel of the dependent steps of reductions (terms
/// version 2).
pub const DEPENDENT_STEPS_TERM: usize = Coefficient::DependentSteps as usize;

/// Whether coefficient channel `channel` weights a term of terms version
/// `version` (a channel of no term has a zero term in every version).
pub fn in_version(channel: usize, version: u32) -> bool {
    version >= 2 || channel != DEPENDENT_STEPS_TERM
}

/// The coefficient (network output channel) of each of the terms.
/// Channel 4 and channels 30 and 31 weight nothing; channel 28 weights the
/// analytical model's price ([`ANALYTICAL_TERM`]).
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
    /// Per byte produced, by the pages the tasks touch.
    PageFaults = 23,
    /// Per allocation.
    Malloc = 24,
    /// Per parallel loop started.
    ParallelLaunch = 25,
    /// Per parallel task beyond the first.
    TaskOverhead = 26,
    /// Per byte of working set.
    WorkingSet = 27,
    /// Per dependent step of a reduction's accumulators (ours, not
    /// Adams's: see [`dependent_steps`]).
    DependentSteps = 29,
}

/// What a stage's terms depend on besides its schedule features.
#[derive(Clone, Copy, Debug)]
pub struct StageContext {
    /// The stage is the last of an output Func (its stores are never read
    /// again).
    pub is_output: bool,
    /// The machine's cores.
    pub num_cores: f64,
}

/// The value of each term for one stage of one candidate with features
/// `f`, in seconds per unit of its coefficient; `analytical_seconds` is
/// the analytical model's price of the stage.
pub fn term_values(f: &ScheduleFeatures, context: StageContext, analytical_seconds: f64) -> [f32; CONV1_CHANNELS] {
    use Coefficient::*;
    let StageContext { is_output, num_cores } = context;
    let mut terms = [0.0f64; CONV1_CHANNELS];
    let mut add = |k: Coefficient, v: f64| terms[k as usize] += v;

    // Compute, in the time of the busiest core: the tasks run in rounds of
    // one per core, so a stage of fewer tasks than cores leaves cores idle
    // and the last round may too.
    let tasks = (f.inner_parallelism * f.outer_parallelism).max(1.0);
    let per_core = (tasks / num_cores.max(1.0)).ceil() / tasks;
    let lanes = f.vector_size * f.num_vectors;
    if f.inlined_calls != 0.0 {
        add(InlinedVectorLane, lanes * per_core);
        add(InlinedScalar, f.num_scalars * per_core);
    } else {
        add(ComputeVectorLane, lanes * per_core);
        add(ComputeScalar, f.num_scalars * per_core);
    }

    add(LinesPerRealization, f.num_realizations * f.unique_lines_read_per_realization);
    add(BytesPerRealization, f.num_realizations * f.unique_bytes_read_per_realization);
    add(ScalarLoadPerVector, f.num_vectors * f.scalar_loads_per_vector * per_core);
    add(LoadPerScalar, f.num_scalars * f.scalar_loads_per_scalar * per_core);
    add(VectorLoadPerVector, f.num_vectors * f.vector_loads_per_vector * per_core);
    add(VectorBytesPerScalar, f.num_scalars * f.unique_bytes_read_per_vector * per_core);
    add(VectorBytesPerVector, f.num_vectors * f.unique_bytes_read_per_vector * per_core);
    add(VectorLinesPerScalar, f.num_scalars * f.unique_lines_read_per_vector * per_core);
    add(VectorLinesPerVector, f.num_vectors * f.unique_lines_read_per_vector * per_core);
    add(BytesPerTask, tasks * f.unique_bytes_read_per_task);
    add(LinesPerTask, tasks * f.unique_lines_read_per_task);

    // Stores: values another core reads, the pipeline's output (never read
    // again), or values the same core reads.
    let parallel = f.inner_parallelism > 1.0;
    let innermost_bytes_at_task = f.innermost_bytes_at_task.max(1.0);
    let lines_written = f.inner_parallelism * f.bytes_at_task / innermost_bytes_at_task;
    let (lines, bytes) = match (parallel, is_output) {
        (true, _) => (StoreLinesShared, StoreBytesShared),
        (false, true) => (StoreLinesOutput, StoreBytesOutput),
        (false, false) => (StoreLinesPrivate, StoreBytesPrivate),
    };
    add(lines, f.num_realizations * lines_written);
    add(bytes, f.num_realizations * f.bytes_at_realization);
    if parallel {
        add(FalseSharing, (f.num_vectors + f.num_scalars) / innermost_bytes_at_task);
        add(ParallelLaunch, f.num_productions);
    }
    let pages_per_task = (PAGE_BYTES / innermost_bytes_at_task).min(f.inner_parallelism);
    add(PageFaults, f.bytes_at_production * pages_per_task * f.inner_parallelism * f.outer_parallelism);

    add(Malloc, f.num_realizations);
    add(TaskOverhead, f.num_productions * (f.inner_parallelism - 1.0).max(0.0));
    add(WorkingSet, f.working_set);
    add(DependentSteps, dependent_steps(f) * per_core);

    let mut terms = terms.map(|t| (t * SECONDS_PER_UNIT) as f32);
    terms[ANALYTICAL_TERM] = analytical_seconds as f32;
    terms
}

/// The steps a stage's reduction takes one after another: when the
/// innermost tile reduces (its loops include reduction steps), each
/// accumulator waits for its own previous step, and the tile's
/// independent accumulators (native registers of its pure lanes) are all
/// that overlap; a tile of few accumulators runs at the latency of its
/// steps, not at the throughput of its lanes. Zero when the tile does not
/// reduce.
fn dependent_steps(f: &ScheduleFeatures) -> f64 {
    let pure = f.innermost_pure_loop_extent.max(1.0);
    if f.innermost_loop_extent <= pure {
        return 0.0;
    }
    let registers_per_vector = (f.vector_size / f.native_vector_size.max(1.0)).max(1.0);
    let accumulators = if f.vector_size > 1.0 { pure / f.vector_size * registers_per_vector } else { pure };
    (f.num_vectors * registers_per_vector + f.num_scalars) / accumulators.max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(num_cores: f64, is_output: bool) -> StageContext {
        StageContext { is_output, num_cores }
    }

    #[test]
    fn an_unplaced_stage_has_no_terms() {
        assert!(term_values(&ScheduleFeatures::default(), on(8.0, true), 0.0).iter().all(|&t| t == 0.0));
    }

    #[test]
    fn compute_is_charged_as_the_busiest_cores_share_and_to_the_inlined_channels_when_inlined() {
        let f = ScheduleFeatures {
            vector_size: 8.0,
            num_vectors: 1000.0,
            num_scalars: 10.0,
            inner_parallelism: 12.0,
            outer_parallelism: 1.0,
            ..Default::default()
        };
        // 12 tasks on 8 cores: the busiest core runs two of the twelve.
        let t = term_values(&f, on(8.0, false), 0.0);
        assert_eq!(t[0], (8000.0 * 2.0 / 12.0 * 1e-9) as f32);
        assert_eq!(t[1], (10.0 * 2.0 / 12.0 * 1e-9) as f32);
        let inlined = term_values(&ScheduleFeatures { inlined_calls: 3.0, ..f.clone() }, on(8.0, false), 0.0);
        assert_eq!((inlined[0], inlined[2]), (0.0, t[0]));
        // One task leaves seven cores idle: the work is the busiest core's.
        let serial = term_values(&ScheduleFeatures { inner_parallelism: 1.0, ..f }, on(8.0, false), 0.0);
        assert_eq!(serial[0], (8000.0 * 1e-9) as f32);
    }

    #[test]
    fn stores_go_to_the_shared_output_or_private_channels() {
        let f = ScheduleFeatures { num_realizations: 2.0, bytes_at_realization: 100.0, inner_parallelism: 1.0, ..Default::default() };
        let channel = |f: &ScheduleFeatures, output| term_values(f, on(4.0, output), 0.0).iter().position(|&t| t == (200.0 * 1e-9) as f32);
        assert_eq!(channel(&f, true), Some(Coefficient::StoreBytesOutput as usize));
        assert_eq!(channel(&f, false), Some(Coefficient::StoreBytesPrivate as usize));
        let parallel = ScheduleFeatures { inner_parallelism: 4.0, ..f };
        assert_eq!(channel(&parallel, true), Some(Coefficient::StoreBytesShared as usize));
    }

    #[test]
    fn a_reduction_into_one_accumulator_takes_a_dependent_step_per_vector() {
        // matmul's update: a tile of 1,024 reduction steps over 16 pure
        // lanes in one native register, 65,536 vectors on one core.
        let one = ScheduleFeatures {
            innermost_loop_extent: 16.0 * 1024.0,
            innermost_pure_loop_extent: 16.0,
            vector_size: 16.0,
            native_vector_size: 16.0,
            num_vectors: 65536.0,
            inner_parallelism: 1.0,
            outer_parallelism: 1.0,
            ..Default::default()
        };
        let steps = |f: &ScheduleFeatures| term_values(f, on(1.0, false), 0.0)[DEPENDENT_STEPS_TERM];
        assert_eq!(steps(&one), (65536.0 * 1e-9) as f32);
        // 32 lanes (two registers) by 8 rows: 16 accumulators, as many
        // vectors of 32 as there were of 16 in half the count.
        let sixteen = ScheduleFeatures { innermost_pure_loop_extent: 256.0, vector_size: 32.0, num_vectors: 32768.0, ..one.clone() };
        assert_eq!(steps(&sixteen), (65536.0 / 16.0 * 1e-9) as f32);
        // A tile without reduction steps waits for nothing.
        let pure = ScheduleFeatures { innermost_loop_extent: 16.0, ..one };
        assert_eq!(steps(&pure), 0.0);
        assert!(in_version(DEPENDENT_STEPS_TERM, 2) && !in_version(DEPENDENT_STEPS_TERM, 1));
        assert!(in_version(Coefficient::WorkingSet as usize, 1));
    }

    #[test]
    fn the_analytical_price_is_a_term_of_its_own() {
        let t = term_values(&ScheduleFeatures::default(), on(2.0, false), 0.25);
        assert_eq!(t[ANALYTICAL_TERM], 0.25);
        assert_eq!(t.iter().filter(|&&v| v != 0.0).count(), 1);
    }
}
