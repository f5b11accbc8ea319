//! The layout of schedule features: what a candidate schedule does with one
//! stage (how many points it computes, how well its inner loops vectorize,
//! what it loads and allocates at each loop level, its parallelism and
//! working sets). The fields follow Adams et al. 2019 (the 39 of their
//! version 3), named here; the search computes them from a loop nest.
//!
//! Realizations and productions differ only for a Func stored outside the
//! loop that computes it (a sliding window): each realization is computed
//! once, in slides spread over its productions.
//!
//! The struct and [`SCHEDULE_LAYOUT`]'s names come from one list, so they
//! cannot disagree; [`ScheduleFeatures::to_array`] gives them in layout
//! order for a model.

use crate::layout::Layout;
use serde::{Deserialize, Serialize};

/// Version of the schedule-feature layout; bump it with any change of
/// meaning. Version 3: loads per vector count reads at strides up to 8,
/// upsamplings and reads through clamps as the dense loads the code
/// generator makes of them (version 2 counted them as gathers). Version 4:
/// the DAG counts equal calls of a Func in one stage once however the
/// pipeline was built (version 3 counted calls shared in memory once).
pub const SCHEDULE_FEATURES_VERSION: u32 = 4;

/// The schedule-feature layout: its version and the names of the
/// `ScheduleFeatures` fields.
pub const SCHEDULE_LAYOUT: Layout = Layout { kind: "schedule", version: SCHEDULE_FEATURES_VERSION, names: schedule_feature_names };

macro_rules! schedule_features {
    ($($(#[doc = $doc:literal])* $field:ident),* $(,)?) => {
        /// The features of one stage under one candidate schedule.
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        pub struct ScheduleFeatures {
            $($(#[doc = $doc])* pub $field: f64,)*
        }

        /// The number of schedule features per stage.
        pub const SCHEDULE_FEATURES: usize = [$(stringify!($field)),*].len();

        /// The name of every schedule feature, in layout order.
        pub fn schedule_feature_names() -> Vec<String> {
            vec![$(stringify!($field).to_string()),*]
        }

        impl ScheduleFeatures {
            /// The features in layout order.
            pub fn to_array(&self) -> [f64; SCHEDULE_FEATURES] {
                [$(self.$field),*]
            }

            /// The features from an array in layout order.
            pub fn from_array(a: &[f64; SCHEDULE_FEATURES]) -> ScheduleFeatures {
                let mut it = a.iter().copied();
                ScheduleFeatures { $($field: it.next().unwrap_or_default(),)* }
            }
        }
    };
}

schedule_features! {
    /// Times the Func's storage is allocated.
    num_realizations,
    /// Times the stage's loop nest runs.
    num_productions,
    /// Points computed per allocation.
    points_computed_per_realization,
    /// Points computed per run of the loop nest.
    points_computed_per_production,
    /// Points computed in all.
    points_computed_total,
    /// Points the stage must compute at least (its region at root).
    points_computed_minimum,
    /// Iterations of the innermost loops.
    innermost_loop_extent,
    /// Iterations of the innermost pure loops.
    innermost_pure_loop_extent,
    /// Iterations of the innermost loops when they are unrolled (else 1).
    unrolled_loop_extent,
    /// Parallel tasks the stage's own loops give.
    inner_parallelism,
    /// Parallel tasks of the loops around it.
    outer_parallelism,
    /// Bytes of one allocation.
    bytes_at_realization,
    /// Bytes written per run of the loop nest.
    bytes_at_production,
    /// Bytes of the whole region at root.
    bytes_at_root,
    /// Bytes along the innermost storage dimension per allocation.
    innermost_bytes_at_realization,
    /// The same per run of the loop nest.
    innermost_bytes_at_production,
    /// The same at root.
    innermost_bytes_at_root,
    /// For an inlined Func: calls at all its use sites.
    inlined_calls,
    /// Distinct bytes loaded per allocation.
    unique_bytes_read_per_realization,
    /// Distinct cache lines (contiguous runs) loaded per allocation.
    unique_lines_read_per_realization,
    /// Bytes of the producers' allocations read per allocation.
    allocation_bytes_read_per_realization,
    /// Bytes of all allocations live inside the loop nest.
    working_set,
    /// Lanes of the vectorized loop (1 if none).
    vector_size,
    /// The target's natural vector width for the stage's types.
    native_vector_size,
    /// Vector iterations in all.
    num_vectors,
    /// Scalar iterations in all (tails and unvectorized loops).
    num_scalars,
    /// Scalar loads per vector iteration (broadcasts, gathers).
    scalar_loads_per_vector,
    /// Vector loads per vector iteration (dense and strided).
    vector_loads_per_vector,
    /// Loads per scalar iteration.
    scalar_loads_per_scalar,
    /// Bytes written per parallel task.
    bytes_at_task,
    /// Bytes along the innermost dimension per parallel task.
    innermost_bytes_at_task,
    /// Distinct bytes loaded per vector iteration.
    unique_bytes_read_per_vector,
    /// Distinct lines loaded per vector iteration.
    unique_lines_read_per_vector,
    /// Distinct bytes loaded per parallel task.
    unique_bytes_read_per_task,
    /// Distinct lines loaded per parallel task.
    unique_lines_read_per_task,
    /// Bytes live within one parallel task.
    working_set_at_task,
    /// Bytes live within one run of the loop nest.
    working_set_at_production,
    /// Bytes live within one allocation's lifetime.
    working_set_at_realization,
    /// Bytes live at root.
    working_set_at_root,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_nine_named_features_round_trip_through_arrays() {
        assert_eq!(SCHEDULE_FEATURES, 39);
        assert_eq!(schedule_feature_names()[0], "num_realizations");
        let mut a = [0.0; SCHEDULE_FEATURES];
        a.iter_mut().enumerate().for_each(|(i, v)| *v = i as f64);
        let f = ScheduleFeatures::from_array(&a);
        assert_eq!(f.working_set_at_root, 38.0);
        assert_eq!(f.to_array(), a);
    }
}
