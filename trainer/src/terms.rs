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

use crate::inputs::ScheduleRow;
use crate::network::CONV1_CHANNELS;
use featurizer::ScheduleFeatures;

/// Seconds per unit of work (the coefficients are of the order of cycles
/// per unit of work at about 1 GHz).
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
}

/// The value of each term for one stage of one candidate, in seconds per
/// unit of its coefficient: `is_output` says the stage is the last of an
/// output Func, `num_cores` the machine's.
pub fn term_values(row: &ScheduleRow, is_output: bool, num_cores: f64) -> [f32; CONV1_CHANNELS] {
    use Coefficient::*;
    let f = ScheduleFeatures::from_array(&row.map(f64::from));
    let mut terms = [0.0f64; CONV1_CHANNELS];
    let mut add = |k: Coefficient, v: f64| terms[k as usize] += v;

    // Compute, by idle-core wastage: the last round of tasks may leave
    // cores idle.
    let tasks = (f.inner_parallelism * f.outer_parallelism).max(1.0);
    let tasks_per_core = tasks / num_cores.max(1.0);
    let idle_core_wastage = tasks_per_core.ceil() / tasks_per_core.max(1.0);
    let lanes = f.vector_size * f.num_vectors;
    if f.inlined_calls != 0.0 {
        add(InlinedVectorLane, lanes * idle_core_wastage);
        add(InlinedScalar, f.num_scalars * idle_core_wastage);
    } else {
        add(ComputeVectorLane, lanes * idle_core_wastage);
        add(ComputeScalar, f.num_scalars * idle_core_wastage);
    }

    add(LinesPerRealization, f.num_realizations * f.unique_lines_read_per_realization);
    add(BytesPerRealization, f.num_realizations * f.unique_bytes_read_per_realization);
    add(ScalarLoadPerVector, f.num_vectors * f.scalar_loads_per_vector);
    add(LoadPerScalar, f.num_scalars * f.scalar_loads_per_scalar);
    add(VectorLoadPerVector, f.num_vectors * f.vector_loads_per_vector);
    add(VectorBytesPerScalar, f.num_scalars * f.unique_bytes_read_per_vector);
    add(VectorBytesPerVector, f.num_vectors * f.unique_bytes_read_per_vector);
    add(VectorLinesPerScalar, f.num_scalars * f.unique_lines_read_per_vector);
    add(VectorLinesPerVector, f.num_vectors * f.unique_lines_read_per_vector);
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

    terms.map(|t| (t * SECONDS_PER_UNIT) as f32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use featurizer::schedule_features::SCHEDULE_FEATURES;

    fn row(f: &ScheduleFeatures) -> ScheduleRow {
        f.to_array().map(|v| v as f32)
    }

    #[test]
    fn an_unplaced_stage_has_no_terms() {
        assert!(term_values(&[0.0; SCHEDULE_FEATURES], true, 8.0).iter().all(|&t| t == 0.0));
    }

    #[test]
    fn compute_is_charged_for_idle_cores_and_to_the_inlined_channels_when_inlined() {
        let f = ScheduleFeatures {
            vector_size: 8.0,
            num_vectors: 1000.0,
            num_scalars: 10.0,
            inner_parallelism: 12.0,
            outer_parallelism: 1.0,
            ..Default::default()
        };
        // 12 tasks on 8 cores: two rounds for 1.5 rounds of work.
        let t = term_values(&row(&f), false, 8.0);
        assert_eq!(t[0], (8000.0 * 2.0 / 1.5 * 1e-9) as f32);
        assert_eq!(t[1], (10.0 * 2.0 / 1.5 * 1e-9) as f32);
        let inlined = term_values(&row(&ScheduleFeatures { inlined_calls: 3.0, ..f }), false, 8.0);
        assert_eq!((inlined[0], inlined[2]), (0.0, t[0]));
    }

    #[test]
    fn stores_go_to_the_shared_output_or_private_channels() {
        let f = ScheduleFeatures { num_realizations: 2.0, bytes_at_realization: 100.0, inner_parallelism: 1.0, ..Default::default() };
        let channel = |f: &ScheduleFeatures, output| term_values(&row(f), output, 4.0).iter().position(|&t| t == (200.0 * 1e-9) as f32);
        assert_eq!(channel(&f, true), Some(Coefficient::StoreBytesOutput as usize));
        assert_eq!(channel(&f, false), Some(Coefficient::StoreBytesPrivate as usize));
        let parallel = ScheduleFeatures { inner_parallelism: 4.0, ..f };
        assert_eq!(channel(&parallel, true), Some(Coefficient::StoreBytesShared as usize));
    }
}
