//! Tuning one pipeline on request, within a time budget: Adams et al.'s
//! autotuning mode for any pipeline (an app's, a user's, a random one),
//! for one host ([`TuneOn`]): this machine, timing in its isolated runner,
//! or another whose agent times the schedules (the service's tunings).
//!
//! Round 0 is the one-shot answer: the search under the starting model
//! (promoted, nearest host's or analytical), its pick timed. Each later
//! round samples the pipeline's schedules with the current model (the
//! search's best guess, then probes), times them and records them in the store as one report (work id
//! `{agent}/tune/{pipeline hash}/round{r}`, so the samples are training data
//! like any other, and a round already stored is read back rather than timed
//! again), then fine-tunes the network on every sample of the pipeline so
//! far. Rounds stop at the budget's [`ROUNDS_SHARE`]; the rest is for the
//! last step, which times the fastest schedule measured beside the one-shot
//! answer, in rotation, so that the answer's time and the one-shot's are
//! measured alike (a best time picked out of many is biased fast).
//!
//! Guarantees: the answer is a schedule that was compiled and ran (or the
//! one-shot answer, when nothing ran faster); it is never slower than the
//! one-shot answer as measured in the last step, which compares them side
//! by side; every timing stops at the deadline or when `cancelled` says so.

use crate::autotune::{keep_if_fastest, model_of};
use crate::generate::measure_workload;
use crate::measure::Timer;
use crate::records::pipeline_record;
use crate::sampling::SamplingOptions;
use crate::{AgentError, Workload};
use codegen::runner::Runner;
use compiler::{Schedule, Target};
use data::{HostFingerprint, Outcome, Report, Store};
use featurizer::Dag;
use search::{autoschedule, BeamOptions};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use trainer::retrain::calibrated;
use trainer::{fine_tune, ChosenNetwork, CostNetwork, TrainOptions};

/// The share of the budget the rounds may take; the rest is the last
/// step's (the answer timed beside the one-shot answer).
pub const ROUNDS_SHARE: f64 = 0.8;

/// How to tune.
#[derive(Clone, Debug)]
pub struct TuneOptions {
    /// Wall time for everything: searches, timings, fine-tuning.
    pub budget: Duration,
    /// The one-shot answer's search (and the seed of every round's).
    pub search: BeamOptions,
    /// How each round's schedules are sampled (`schedules` of them).
    pub sampling: SamplingOptions,
    /// Timing passes over each round's schedules (the best kept).
    pub timing_passes: usize,
    /// Timing passes of the last step (the answer beside the one-shot answer).
    pub final_timing_passes: usize,
    /// Fine-tuning epochs per round over the pipeline's samples.
    pub epochs: usize,
    /// Training settings of the fine-tuning.
    pub train: TrainOptions,
    /// Members of a network started from the analytical model (when there are no starting weights).
    pub members: usize,
    /// The most rounds after round 0.
    pub max_rounds: u32,
    /// The agent's name in the work ids.
    pub agent: String,
}

impl TuneOptions {
    /// Defaults for a budget: the one-shot search at the default budget
    /// of `autoschedule` and the bench (5 s, at most a tenth of the
    /// budget), each round's sampling search 1 s (at most a twentieth), 8
    /// schedules a round timed twice, 5 epochs a round at learning rate
    /// 3e-4, the answer timed 5 times beside the one-shot's.
    pub fn within(budget: Duration) -> TuneOptions {
        TuneOptions {
            budget,
            search: BeamOptions { budget: Duration::from_secs(5).min(budget / 10), strict_budget: true, ..BeamOptions::default() },
            sampling: SamplingOptions { schedules: 8, budget: Duration::from_secs(1).min(budget / 20), ..SamplingOptions::default() },
            timing_passes: 2,
            final_timing_passes: 5,
            epochs: 5,
            train: TrainOptions { learning_rate: 3e-4, ..TrainOptions::default() },
            members: trainer::retrain::DEFAULT_MEMBERS,
            max_rounds: 1000,
            agent: "tune".to_string(),
        }
    }
}

/// The host a tuning is for: where its schedules are timed, and the host
/// and target they are compiled and recorded for.
pub struct TuneOn<'a> {
    /// Times the schedules on the host.
    pub timer: &'a mut dyn Timer,
    /// The host (its samples are recorded under its key).
    pub host: HostFingerprint,
    /// The target the searches schedule for.
    pub target: Target,
}

impl<'a> TuneOn<'a> {
    /// This machine, timing in `runner`.
    pub fn this_machine(runner: &'a mut Runner) -> Result<TuneOn<'a>, AgentError> {
        Ok(TuneOn { timer: runner, host: HostFingerprint::detect()?, target: Target::host() })
    }
}

/// One round's results.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneRound {
    /// 0: the one-shot answer.
    pub round: u32,
    /// The model that chose this round's schedules.
    pub model: String,
    /// Schedules this round timed (read back from the store, when it had them).
    pub timed: u64,
    /// Of them, those whose timing failed.
    pub failed: u64,
    /// The fastest time measured so far, in seconds.
    pub best_seconds: Option<f64>,
    /// Seconds since the tuning began.
    pub elapsed_seconds: f64,
}

/// What tuning gave.
#[derive(Clone, Debug)]
pub struct Tuned {
    /// Every round, round 0 first.
    pub rounds: Vec<TuneRound>,
    /// The answer: the fastest schedule measured.
    pub best: Schedule,
    /// Its time in the last step (else in its round), in seconds.
    pub best_seconds: Option<f64>,
    /// The one-shot answer (round 0's pick).
    pub one_shot: Schedule,
    /// Its time in the last step (else in round 0), in seconds.
    pub one_shot_seconds: Option<f64>,
    /// Samples recorded in the store by this tuning.
    pub samples_stored: u64,
    /// The pipeline's hash in the store.
    pub pipeline_hash: String,
}

/// Tunes `workload` (see the module documentation) from `start` for the
/// host `on`, recording its samples in `store` (locked for each read and
/// write only, so a server's other calls share it meanwhile); `each` is
/// told after every round, round 0 first.
pub fn tune(
    store: &Mutex<Store>,
    on: TuneOn<'_>,
    workload: &Workload,
    start: ChosenNetwork,
    options: &TuneOptions,
    cancelled: &dyn Fn() -> bool,
    mut each: impl FnMut(&TuneRound),
) -> Result<Tuned, AgentError> {
    let began = Instant::now();
    let rounds_end = began + options.budget.mul_f64(ROUNDS_SHARE);
    let deadline = began + options.budget;
    let TuneOn { timer, host, target } = on;
    let locked = || store.lock().map_err(|_| AgentError::StorePoisoned);
    let host_key = locked()?.upsert_host(&host)?;
    let dag = Dag::new(&workload.pipeline, &target)?;
    let pipeline_hash = pipeline_record(&dag, workload).hash;
    let (mut network, mut label) = (start.network, start.why);
    let search = |network: &Option<CostNetwork>, label: &str, seed: u64| -> Result<Option<Schedule>, AgentError> {
        let options = BeamOptions { seed, ..options.search.clone() };
        let answer = autoschedule(&workload.pipeline, &target, model_of(network, label, &target).as_mut(), &options, 0)?;
        Ok(answer.answer().map(|a| a.schedule))
    };
    let one_shot = search(&network, &label, options.search.seed)?.ok_or(AgentError::Abandoned)?;
    let seconds = |outcome: &Outcome| match outcome {
        Outcome::Measured(r) => Some(r.min_s),
        Outcome::Failed(_) => None,
    };
    let stop_at = |end: Instant| move || cancelled() || Instant::now() >= end;
    let timed = timer.time(workload, &[&one_shot], options.timing_passes, &stop_at(rounds_end))?;
    let mut best: Option<(String, f64)> = None;
    if let Some(s) = timed.first().and_then(|(_, o)| seconds(o)) {
        keep_if_fastest(&mut best, &one_shot.to_string(), s);
    }
    let mut rounds = vec![TuneRound {
        round: 0,
        model: label.clone(),
        timed: timed.len() as u64,
        failed: timed.iter().filter(|(_, o)| seconds(o).is_none()).count() as u64,
        best_seconds: best.as_ref().map(|b| b.1),
        elapsed_seconds: began.elapsed().as_secs_f64(),
    }];
    each(&rounds[0]);
    let mut samples_stored = 0;
    for round in 1..=options.max_rounds {
        if stop_at(rounds_end)() {
            break;
        }
        let id = format!("{}/tune/{}/round{round}", options.agent, &pipeline_hash[..pipeline_hash.len().min(16)]);
        if !locked()?.has_report(&id, &host_key)? {
            let seed = options.search.seed.wrapping_add(u64::from(round));
            let mut model = model_of(&network, &label, &target);
            let measured = measure_workload(
                workload,
                &target,
                model.as_mut(),
                &mut *timer,
                &options.sampling,
                seed,
                options.timing_passes,
                &stop_at(rounds_end),
            )?;
            if measured.samples.is_empty() {
                break;
            }
            samples_stored += measured.samples.len() as u64;
            locked()?.record_report(&Report {
                work_id: id.clone(),
                host: host.clone(),
                agent: options.agent.clone(),
                round,
                pipeline: measured.pipeline,
                schedules: measured.schedules,
                samples: measured.samples,
            })?;
        }
        let stored = locked()?.report_runtimes(&id, &host_key)?;
        for (_, text, s) in &stored {
            keep_if_fastest(&mut best, text, *s);
        }
        let samples = trainer::dataset::load_pipeline(&*locked()?, &host_key, &target, &pipeline_hash, 0..=round)
            .map_err(trainer::RetrainError::from)?;
        if let Some(samples) = &samples {
            let from = match network.take() {
                Some(network) => network,
                None => {
                    calibrated(CostNetwork::starting_from_analytical(options.members, options.train.seed), std::slice::from_ref(samples))?
                }
            };
            let first = (round as usize - 1) * options.epochs;
            network = Some(
                fine_tune(from, &[&samples.samples], &[], first, options.epochs, &options.train).map_err(trainer::RetrainError::from)?,
            );
            label = format!("fine-tuned on the pipeline through round {round} ({} samples)", samples.samples.schedules.len());
        }
        let report = TuneRound {
            round,
            model: label.clone(),
            timed: stored.len() as u64,
            failed: 0,
            best_seconds: best.as_ref().map(|b| b.1),
            elapsed_seconds: began.elapsed().as_secs_f64(),
        };
        each(&report);
        rounds.push(report);
    }
    let (best, best_seconds) = match best {
        Some((text, s)) => (text.parse::<Schedule>().map_err(|e| AgentError::StoredSchedule(e.to_string()))?, Some(s)),
        None => (one_shot.clone(), None),
    };
    let one_shot_seconds = rounds[0].best_seconds.filter(|_| rounds[0].timed > 0);
    if best == one_shot {
        return Ok(Tuned { rounds, best, best_seconds, one_shot, one_shot_seconds, samples_stored, pipeline_hash });
    }
    // The last step: the answer beside the one-shot answer, timed alike;
    // the one-shot answer stays the answer unless the other beats it here.
    let last = timer.time(workload, &[&best, &one_shot], options.final_timing_passes, &stop_at(deadline))?;
    let again = |k: usize| last.get(k).and_then(|(_, o)| seconds(o));
    let (best, best_seconds, one_shot_seconds) = match (again(0), again(1)) {
        (Some(b), Some(o)) if o <= b => (one_shot.clone(), Some(o), Some(o)),
        (Some(b), Some(o)) => (best, Some(b), Some(o)),
        _ => (best, best_seconds, one_shot_seconds),
    };
    Ok(Tuned { rounds, best, best_seconds, one_shot, one_shot_seconds, samples_stored, pipeline_hash })
}
