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
//!
//! When today's schedule layout changed only what the DAG holds (not how a
//! feature is computed from it), the matrices of an earlier version can be
//! carried over ([`Carry`]): for each pipeline a few schedules are replayed
//! first, and when each reproduces its earlier matrix bit for bit (the
//! pipeline's DAG is as it was), the rest are relabelled instead of
//! replayed; otherwise every schedule is replayed. Relabelled matrices
//! keep the schedules no nest of today's search spells.

use crate::records::{pipeline_matrix, schedule_matrix};
use compiler::Target;
use data::{Features, LayoutId, Store, StoreError, StoredSchedule};
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
    /// Of `added`, the matrices carried over from an earlier layout version
    /// (see [`Carry`]) rather than replayed.
    pub carried: usize,
    /// Pipelines whose probes did not reproduce their earlier matrices, so
    /// that every schedule was replayed.
    pub changed: usize,
}

/// Matrices of an earlier version of today's schedule layout (the same
/// names), carried over where a pipeline's probes show them unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Carry {
    /// The earlier layout.
    pub from: LayoutId,
    /// Schedules replayed per pipeline before the rest are carried.
    pub probes: usize,
}

impl Carry {
    /// Carry from version `version` of today's schedule layout, after two
    /// probes per pipeline.
    pub fn from_version(version: u32) -> Carry {
        Carry { from: LayoutId { version, ..store_layout(&SCHEDULE_LAYOUT) }, probes: 2 }
    }
}

/// The features in today's layout of each of `texts` (schedules of the
/// pipeline `dag`), `None` where no nest of today's search spells it.
pub fn featurize_texts(dag: &Dag, texts: &[&str]) -> Vec<Option<Features>> {
    texts.par_iter().map(|text| replay(dag, text, Placements::ALL).ok().map(|nest| schedule_matrix(dag, &featurize(dag, &nest)))).collect()
}

/// Adds features in today's layouts to every pipeline and schedule of
/// `store` that lacks them, the pipelines analysed for `target` (the machine
/// whose samples they are), carrying earlier matrices over where `carry`
/// allows; `progress` is told after each pipeline.
pub fn relayout(
    store: &mut Store,
    target: &Target,
    carry: Option<Carry>,
    mut progress: impl FnMut(&RelayoutStats),
) -> Result<RelayoutStats, StoreError> {
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
        stats.schedules += stored.len();
        let carried = match carry {
            Some(carry) => carried_over(&dag, &stored, &store.schedules_of(&info.hash, carry.from)?, carry.probes, layout),
            None => None,
        };
        stats.changed += usize::from(carry.is_some() && carried.is_none());
        // Carried over, the rest need no replay but for the check of those
        // already in today's layout.
        let (mut missing, replayed): (_, Vec<&StoredSchedule>) = match carried {
            Some(carried) => {
                stats.carried += carried.len();
                (carried, stored.iter().filter(|s| s.features.is_some()).collect())
            }
            None => (vec![], stored.iter().collect()),
        };
        let texts: Vec<&str> = replayed.iter().map(|s| s.source.as_str()).collect();
        for (schedule, features) in replayed.iter().zip(featurize_texts(&dag, &texts)) {
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

/// The earlier matrices of the schedules lacking today's, relabelled as
/// today's `layout`, when up to `probes` of them (replayed) each reproduce
/// their earlier matrix bit for bit; `None` when one does not, or when no
/// schedule could be probed.
fn carried_over(
    dag: &Dag,
    today: &[StoredSchedule],
    earlier: &[StoredSchedule],
    probes: usize,
    layout: LayoutId,
) -> Option<Vec<(String, Features)>> {
    // Both lists are the pipeline's schedules in storage order.
    let lacking: Vec<(&StoredSchedule, &Features)> = today
        .iter()
        .zip(earlier)
        .filter(|(t, e)| t.features.is_none() && t.hash == e.hash)
        .filter_map(|(_, e)| Some((e, e.features.as_ref()?)))
        .collect();
    // Probe schedules that replay, trying a few more than asked for.
    let mut probed = 0;
    for (schedule, old) in lacking.iter().take(probes * 3) {
        let Some(new) = featurize_texts(dag, &[&schedule.source]).pop().flatten() else { continue };
        if new.values != old.values || new.stages != old.stages {
            return None;
        }
        probed += 1;
        if probed == probes {
            break;
        }
    }
    (probed > 0).then(|| lacking.into_iter().map(|(s, old)| (s.hash.clone(), Features { layout, ..old.clone() })).collect())
}
