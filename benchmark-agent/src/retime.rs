//! Timing a store's schedules again with today's compiler: each stored
//! report of a random pipeline on this host gets a twin, `{tag}/{work id}`,
//! that times the same measured schedules again (in rotation, as data
//! generation does) and keeps their stored features and round. The trainer
//! reads a schedule's newest sample of a round on a host, so once a
//! pipeline is retimed its labels are today's code generator's; a pipeline
//! not yet retimed keeps its old ones. Reports already retimed under the tag are skipped, so an
//! interrupted run resumes where it stopped.

use crate::generate::{work_id, GenerateStats};
use crate::measure::time_in_rotation;
use crate::records::pipeline_record;
use crate::{AgentError, Workload};
use codegen::runner::Runner;
use compiler::{Schedule, Target};
use data::{HostFingerprint, Outcome, Report, SampleRecord, ScheduleRecord, Store};
use featurizer::{Dag, SCHEDULE_LAYOUT};
use std::collections::HashMap;
use std::time::Instant;
use trainer::dataset::store_layout;

/// Which stored reports to time again.
#[derive(Clone, Debug)]
pub struct RetimeOptions {
    /// The seeds of the random pipelines, as `generate` numbered them.
    pub first_seed: u64,
    /// How many seeds, from `first_seed`.
    pub pipelines: u64,
    /// The round and agent the reports were recorded under.
    pub round: u32,
    /// The agent the reports were recorded under.
    pub agent: String,
    /// Names this retiming: the retimed reports' work ids start with it.
    pub tag: String,
    /// Timing passes over each pipeline's schedules (the best is kept).
    pub timing_passes: usize,
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct RetimeStats {
    /// Pipelines timed again, reports already retimed under the tag
    /// (`skipped`), seeds whose pipeline today's generator builds
    /// differently from the stored one (`unusable`: its samples cannot be
    /// compared), samples timed and failed, wall time.
    pub timed: GenerateStats,
    /// Seeds with no stored report on this host.
    pub missing: u64,
    /// Of the schedules measured again, how many got faster and slower than
    /// stored by more than a tenth.
    pub faster: u64,
    /// Schedules slower than stored by more than a tenth.
    pub slower: u64,
}

/// The work id of the retiming `tag` of the report `original`.
pub fn retimed_work_id(tag: &str, original: &str) -> String {
    format!("{tag}/{original}")
}

/// Times the measured schedules of the stored reports `options` names again
/// and records each pipeline's new timings as one report; `progress` is
/// told after each seed.
pub fn retime(
    store: &mut Store,
    runner: &mut Runner,
    options: &RetimeOptions,
    mut progress: impl FnMut(&RetimeStats),
) -> Result<RetimeStats, AgentError> {
    let started = Instant::now();
    let host = HostFingerprint::detect()?;
    let host_key = store.upsert_host(&host)?;
    let target = Target::host();
    let mut stats = RetimeStats::default();
    for seed in options.first_seed..options.first_seed + options.pipelines {
        let original = work_id(&options.agent, options.round, None, seed);
        let id = retimed_work_id(&options.tag, &original);
        if store.has_report(&id, &host_key)? {
            stats.timed.skipped += 1;
        } else if let Some((pipeline_hash, source)) = store.report_pipeline(&original, &host_key)? {
            let workload = Workload::from_stored_source(&source).unwrap_or_else(|| Workload::random(seed))?;
            let dag = Dag::new(&workload.pipeline, &target)?;
            let pipeline = pipeline_record(&dag, &workload);
            if pipeline.hash != pipeline_hash {
                tracing::warn!(seed, stored = %pipeline_hash, today = %pipeline.hash, "seed skipped: its pipeline is generated differently today");
                stats.timed.unusable += 1;
            } else {
                let again = time_again(store, runner, &workload, &original, &pipeline_hash, &host_key, options.timing_passes)?;
                count(&mut stats, &again);
                let report = Report {
                    work_id: id,
                    host: host.clone(),
                    agent: options.agent.clone(),
                    round: options.round,
                    pipeline,
                    schedules: again.schedules,
                    samples: again.samples,
                };
                store.record_report(&report)?;
                stats.timed.pipelines += 1;
            }
        } else {
            stats.missing += 1;
        }
        stats.timed.wall_seconds = started.elapsed().as_secs_f64();
        progress(&stats);
    }
    Ok(stats)
}

/// A report's schedules timed again.
struct TimedAgain {
    schedules: Vec<ScheduleRecord>,
    /// One per schedule, in the same order.
    samples: Vec<SampleRecord>,
    /// Each schedule's stored best time, in seconds.
    stored_s: Vec<f64>,
}

/// The measured schedules of the report `original` (of the pipeline
/// `pipeline_hash`) that have features in today's layout, with a new
/// sample of each.
fn time_again(
    store: &Store,
    runner: &mut Runner,
    workload: &Workload,
    original: &str,
    pipeline_hash: &str,
    host_key: &str,
    passes: usize,
) -> Result<TimedAgain, AgentError> {
    let features: HashMap<String, data::Features> = store
        .schedules_of(pipeline_hash, store_layout(&SCHEDULE_LAYOUT))?
        .into_iter()
        .filter_map(|s| Some((s.hash, s.features?)))
        .collect();
    let (mut records, mut parsed, mut stored_s) = (Vec::new(), Vec::new(), Vec::new());
    for (hash, source, stored) in store.report_runtimes(original, host_key)? {
        let Some(features) = features.get(&hash) else { continue };
        match source.parse::<Schedule>() {
            Ok(schedule) => {
                parsed.push(schedule);
                records.push(ScheduleRecord { hash, source, features: features.clone() });
                stored_s.push(stored);
            }
            Err(e) => tracing::warn!(schedule = %hash, error = %e, "a stored schedule no longer parses; not timed again"),
        }
    }
    let schedules: Vec<&Schedule> = parsed.iter().collect();
    let samples = time_in_rotation(runner, workload, &schedules, passes, &|| false)
        .into_iter()
        .zip(&records)
        .map(|((compile_time_s, outcome), r)| SampleRecord { schedule_hash: r.hash.clone(), compile_time_s, outcome })
        .collect();
    Ok(TimedAgain { schedules: records, samples, stored_s })
}

/// Adds a pipeline's new samples to the tallies.
fn count(stats: &mut RetimeStats, again: &TimedAgain) {
    for (sample, stored) in again.samples.iter().zip(&again.stored_s) {
        stats.timed.count(&sample.outcome);
        if let Outcome::Measured(runtime) = sample.outcome {
            let ratio = runtime.min_s / stored;
            stats.faster += u64::from(ratio < 1.0 / 1.1);
            stats.slower += u64::from(ratio > 1.1);
        }
    }
}
