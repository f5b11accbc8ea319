//! The local data-generation loop: for each seed of a range, a random
//! pipeline (or, autotuning, the same app each time), its sampled schedules
//! timed one at a time in the isolated runner, one report in the store. Work already in the store (same work
//! id and host) is skipped, so an interrupted run resumes where it
//! stopped.

use crate::measure::Timer;
use crate::records::{pipeline_record, schedule_record};
use crate::sampling::{sample_schedules, SamplingOptions};
use crate::{AgentError, Workload};
use codegen::runner::Runner;
use compiler::{Schedule, Target};
use data::{FailureClass, HostFingerprint, Outcome, Report, SampleRecord, Store};
use featurizer::Dag;
use search::CostModel;
use std::collections::BTreeMap;
use std::time::Instant;

/// What to generate.
#[derive(Clone, Debug)]
pub struct GenerateOptions {
    /// The first seed (autotuning an app: the first batch's sampling seed).
    pub first_seed: u64,
    /// How many seeds, from `first_seed`.
    pub pipelines: u64,
    /// The bootstrap round (which weights steer the sampling).
    pub round: u32,
    /// The agent's name, recorded with each report and part of its work id.
    pub agent: String,
    /// How each pipeline's schedules are sampled.
    pub sampling: SamplingOptions,
    /// Timing passes over the batch (each schedule timed once per pass,
    /// in rotation; its best time over the passes is kept), so that a burst
    /// of load on the machine slows one pass of a schedule, not all of it.
    pub timing_passes: usize,
    /// Autotune this app (its pipeline every time, a new sampling seed per
    /// batch) instead of random pipelines.
    pub app: Option<apps::App>,
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct GenerateStats {
    /// Pipelines measured and recorded.
    pub pipelines: u64,
    /// Pipelines already in the store.
    pub skipped: u64,
    /// Seeds whose pipeline could not be generated or scheduled.
    pub unusable: u64,
    /// Samples timed.
    pub measured: u64,
    /// Samples whose measuring failed, by failure class.
    pub failed: BTreeMap<FailureClass, u64>,
    /// Seconds the run has taken so far.
    pub wall_seconds: f64,
}

impl GenerateStats {
    /// Timed samples per hour of wall time.
    pub fn samples_per_hour(&self) -> f64 {
        self.measured as f64 * 3600.0 / self.wall_seconds.max(1e-9)
    }

    /// Counts one sample's outcome: measured, or failed in its class.
    pub fn count(&mut self, outcome: &Outcome) {
        match outcome {
            Outcome::Measured(_) => self.measured += 1,
            Outcome::Failed(class) => *self.failed.entry(*class).or_default() += 1,
        }
    }
}

/// The work id of `seed` in `round` for `agent` (and the app autotuned).
pub fn work_id(agent: &str, round: u32, app: Option<&apps::App>, seed: u64) -> String {
    match app {
        Some(app) => format!("{agent}/round{round}/{}/batch{seed}", app.name),
        None => format!("{agent}/round{round}/seed{seed}"),
    }
}

/// Generates, measures and records `options.pipelines` pipelines, ranking
/// schedules with `model`; `progress` is told after each pipeline.
pub fn generate(
    store: &mut Store,
    model: &mut dyn CostModel,
    runner: &mut Runner,
    options: &GenerateOptions,
    mut progress: impl FnMut(&GenerateStats),
) -> Result<GenerateStats, AgentError> {
    let started = Instant::now();
    let host = HostFingerprint::detect()?;
    let host_key = store.upsert_host(&host)?;
    let target = Target::host();
    let mut stats = GenerateStats::default();
    for seed in options.first_seed..options.first_seed + options.pipelines {
        let id = work_id(&options.agent, options.round, options.app.as_ref(), seed);
        if store.has_report(&id, &host_key)? {
            stats.skipped += 1;
        } else {
            match measure_pipeline(seed, &target, model, runner, options) {
                Ok((pipeline, schedules, samples)) => {
                    for s in &samples {
                        stats.count(&s.outcome);
                    }
                    let report = Report {
                        work_id: id,
                        host: host.clone(),
                        agent: options.agent.clone(),
                        round: options.round,
                        pipeline,
                        schedules,
                        samples,
                    };
                    store.record_report(&report)?;
                    stats.pipelines += 1;
                }
                Err(e) => {
                    tracing::warn!(seed, error = %e, "seed skipped");
                    stats.unusable += 1;
                }
            }
        }
        stats.wall_seconds = started.elapsed().as_secs_f64();
        progress(&stats);
    }
    Ok(stats)
}

/// One pipeline's records: the pipeline, its sampled schedules, and a
/// sample of each (ranked with `model`, timed `options.timing_passes` times).
fn measure_pipeline(
    seed: u64,
    target: &Target,
    model: &mut dyn CostModel,
    runner: &mut Runner,
    options: &GenerateOptions,
) -> Result<(data::PipelineRecord, Vec<data::ScheduleRecord>, Vec<SampleRecord>), AgentError> {
    let workload = match &options.app {
        Some(app) => Workload::from_app(app),
        None => Workload::random(seed)?,
    };
    let measured = measure_workload(&workload, target, model, runner, &options.sampling, seed, options.timing_passes, &|| false)?;
    Ok((measured.pipeline, measured.schedules, measured.samples))
}

/// A workload's records: the pipeline, the schedules measured, a sample of each.
#[derive(Clone, Debug)]
pub struct Measured {
    /// The pipeline's record.
    pub pipeline: data::PipelineRecord,
    /// The records of the schedules measured.
    pub schedules: Vec<data::ScheduleRecord>,
    /// One per schedule, in the same order.
    pub samples: Vec<SampleRecord>,
}

/// Samples `workload`'s schedules with `model` (`seed` seeds the probes)
/// and times each `timing_passes` times in rotation, keeping its best.
/// `stop` is asked before each timing: once it says yes, the schedules
/// timed so far are returned (each with what it measured), the others left
/// out.
#[allow(clippy::too_many_arguments)]
pub fn measure_workload(
    workload: &Workload,
    target: &Target,
    model: &mut dyn CostModel,
    timer: &mut dyn Timer,
    sampling: &SamplingOptions,
    seed: u64,
    timing_passes: usize,
    stop: &dyn Fn() -> bool,
) -> Result<Measured, AgentError> {
    let dag = Dag::new(&workload.pipeline, target)?;
    let sampled = sample_schedules(&workload.pipeline, target, model, sampling, seed)?;
    let schedules: Vec<&Schedule> = sampled.iter().map(|s| &s.schedule).collect();
    let samples: Vec<SampleRecord> = timer
        .time(workload, &schedules, timing_passes, stop)?
        .into_iter()
        .zip(&sampled)
        .map(|((compile_time_s, outcome), s)| SampleRecord { schedule_hash: s.hash.clone(), compile_time_s, outcome })
        .collect();
    let schedules = sampled.iter().take(samples.len()).map(|s| schedule_record(&dag, s)).collect();
    Ok(Measured { pipeline: pipeline_record(&dag, workload), schedules, samples })
}
