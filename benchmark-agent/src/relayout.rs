//! Featurizing a training store again: every stored pipeline and schedule
//! gets features in today's layouts, beside those it was recorded with, so
//! that a new feature layout trains on the samples already timed rather
//! than on data timed again.
//!
//! A pipeline is rebuilt from its source; a schedule's loop nest is found
//! again from its text ([`search::replay`]) and featurized. A schedule
//! whose features in today's layout are already stored is featurized too,
//! and counted as identical or not: the check that a replayed nest is the
//! one the schedule was sampled from.

use crate::records::{pipeline_matrix, schedule_matrix};
use compiler::Target;
use data::{Features, Store, StoreError};
use featurizer::{Dag, SCHEDULE_LAYOUT};
use rayon::prelude::*;
use search::expand::Placements;
use search::featurize::featurize;
use search::replay::replay;
use trainer::dataset::{rebuild_pipeline, store_layout, RebuildError};

/// What featurizing a store again found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RelayoutStats {
    /// Pipelines in the store.
    pub pipelines: usize,
    /// Pipelines that could not be rebuilt or analysed (their schedules are
    /// not counted below).
    pub unbuildable: usize,
    /// Stored schedules of the pipelines rebuilt.
    pub schedules: usize,
    /// Schedules whose loop nest was found again.
    pub replayed: usize,
    /// Of those, the ones whose features in today's layout were stored
    /// already, and of those, how many the replay reproduced bit for bit.
    pub compared: usize,
    /// Of `compared`, those the replay reproduced bit for bit.
    pub identical: usize,
    /// Feature matrices added to the store.
    pub added: usize,
}

/// The features in today's layout of each of `texts` (schedules of the
/// pipeline `dag`), `None` where no nest of today's search spells it.
pub fn featurize_texts(dag: &Dag, texts: &[&str]) -> Vec<Option<Features>> {
    texts.par_iter().map(|text| replay(dag, text, Placements::ALL).ok().map(|nest| schedule_matrix(dag, &featurize(dag, &nest)))).collect()
}

/// Adds features in today's layouts to every pipeline and schedule of
/// `store` that lacks them, the pipelines analysed for `target`;
/// `progress` is told after each pipeline.
pub fn relayout(store: &mut Store, target: &Target, mut progress: impl FnMut(&RelayoutStats)) -> Result<RelayoutStats, StoreError> {
    let layout = store_layout(&SCHEDULE_LAYOUT);
    let mut stats = RelayoutStats::default();
    for info in store.pipelines()? {
        stats.pipelines += 1;
        let dag = rebuild_pipeline(&info.source).and_then(|p| Dag::new(&p, target).map_err(RebuildError::from));
        let dag = match dag {
            Ok(dag) => dag,
            Err(problem) => {
                tracing::warn!(pipeline = %info.hash, "skipped: cannot rebuild it: {problem}");
                stats.unbuildable += 1;
                progress(&stats);
                continue;
            }
        };
        let stored = store.schedules_of(&info.hash, layout)?;
        let texts: Vec<&str> = stored.iter().map(|s| s.source.as_str()).collect();
        let mut missing = vec![];
        for (schedule, features) in stored.iter().zip(featurize_texts(&dag, &texts)) {
            stats.schedules += 1;
            let Some(features) = features else {
                tracing::debug!(pipeline = %info.hash, schedule = %schedule.hash, "no nest of today's search spells this schedule");
                continue;
            };
            stats.replayed += 1;
            match &schedule.features {
                Some(old) => {
                    stats.compared += 1;
                    stats.identical += usize::from(*old == features);
                }
                None => missing.push((schedule.hash.clone(), features)),
            }
        }
        stats.added += store.add_features(&info.hash, &pipeline_matrix(&dag), &missing)?;
        progress(&stats);
    }
    Ok(stats)
}
