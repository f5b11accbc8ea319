//! Autotuning one app (the fine-tuning mode of Adams et al. 2019): rounds
//! of (sample batches of the app's schedules with the current network and
//! time them into the store, fine-tune the network on every sample of the
//! app so far, autoschedule the app with the fine-tuned network and time
//! that schedule beside the app's expert schedule). The question it answers
//! is how many rounds the autoscheduler needs before its own schedule of
//! the app beats the expert's on this machine. Autotuning's answer is the
//! fastest schedule it has measured, sampled or picked, so it is never
//! slower than round 0's pick: a network fine-tuned on one app can misjudge
//! schedules far from its samples and pick worse than before.
//!
//! Round 0 samples nothing: it is the autoscheduler as it stands (the
//! starting weights, or the analytical model when there are none), the
//! baseline of every later round. The fine-tuned weights are the caller's
//! to keep ([`Autotuned::network`]); the store's promoted weights, which
//! rank random pipelines, are left alone.
//!
//! Resumable and deterministic: the batches are ordinary reports (work ids
//! name the app, the round and the batch), so a run stopped and started
//! again skips the batches already stored, and each round fine-tunes on
//! the samples of the rounds up to its own, one torch thread giving the
//! same weights each time.

use crate::generate::{generate, work_id, GenerateOptions};
use crate::measure::time_in_rotation;
use crate::records::pipeline_record;
use crate::sampling::SamplingOptions;
use crate::{AgentError, Workload};
use codegen::runner::Runner;
use compiler::Target;
use data::{HostFingerprint, Outcome, Store};
use featurizer::Dag;
use search::{autoschedule, Analytical, BeamOptions, CostModel, Machine};
use trainer::metrics::{analytical_predictions, metrics_of, predictions};
use trainer::retrain::calibrated;
use trainer::{fine_tune, ChosenNetwork, CostNetwork, LearnedModel, PipelineSamples, StoredPipeline, TrainOptions};

/// What to autotune, and how hard.
#[derive(Clone, Debug)]
pub struct AutotuneOptions {
    /// The app to autotune.
    pub app: apps::App,
    /// Rounds of sampling and fine-tuning (after round 0, the baseline).
    pub rounds: u32,
    /// Batches of sampled schedules per round.
    pub batches: u64,
    /// How each batch's schedules are sampled.
    pub sampling: SamplingOptions,
    /// Timing passes over each batch (the best time over the passes is kept).
    pub timing_passes: usize,
    /// Timing passes over each round's pick and the expert schedule, in
    /// rotation: two schedules a round can afford more than a batch, and
    /// whether the pick beats the expert often turns on a few percent.
    pub pick_timing_passes: usize,
    /// The agent's name in the work ids.
    pub agent: String,
    /// Fine-tuning epochs per round over the app's samples (one step each).
    pub epochs: usize,
    /// Training settings of the fine-tuning.
    pub train: TrainOptions,
    /// Members of a network started from the analytical model (when no
    /// starting weights are given).
    pub members: usize,
    /// Other pipelines' samples on this host (random pipelines of a
    /// training store), one of which is rehearsed after each fine-tuning
    /// step on the app, so the network keeps what it knew of schedules far
    /// from the app's samples; empty: the app's samples alone.
    pub rehearsal: Vec<PipelineSamples>,
    /// The autoscheduler's search for each round's pick (raising its
    /// abandon flag ends the rounds).
    pub search: BeamOptions,
}

/// One round's results.
#[derive(Clone, Debug)]
pub struct AutotuneRound {
    /// The round's number (0: the baseline).
    pub round: u32,
    /// The model that picked this round's schedule: round 0's is the
    /// starting model (the autoscheduler as it stands); a later round's is
    /// the network fine-tuned on every sample through that round (the
    /// previous round's model sampled its batches).
    pub model: String,
    /// Schedules timed in this round's batches, and those that failed.
    pub timed: u64,
    /// Schedules of this round's batches whose timing failed.
    pub failed: u64,
    /// Measured samples of the app in the store after the round (that the
    /// trainer can read back).
    pub app_samples: usize,
    /// How well the model that sampled this round's batches orders them
    /// (pairwise accuracy, before it is fine-tuned on them): whether it
    /// is learning the app. `None` in round 0.
    pub sampler_pairwise: Option<f64>,
    /// The fastest schedule sampled so far, in seconds.
    pub best_sampled_seconds: Option<f64>,
    /// The fastest schedule measured so far, sampled or picked: what
    /// autotuning answers after this round, never slower than round 0's
    /// pick. (Picks are timed with more passes than samples, so a pick's
    /// best time is a little more likely to be its fastest.)
    pub best_seconds: Option<f64>,
    /// The autoscheduler's schedule of the app with this round's model.
    pub pick_seconds: Option<f64>,
    /// The expert schedule, the best of its timings so far.
    pub expert_seconds: Option<f64>,
}

impl AutotuneRound {
    /// The pick's speed over the expert's (above 1: the pick is faster).
    pub fn pick_speedup(&self) -> Option<f64> {
        Some(self.expert_seconds? / self.pick_seconds?)
    }

    /// The speed of the fastest schedule measured so far over the expert's.
    pub fn best_speedup(&self) -> Option<f64> {
        Some(self.expert_seconds? / self.best_seconds?)
    }
}

/// What autotuning gave.
pub struct Autotuned {
    /// Every round's results, round 0 first.
    pub rounds: Vec<AutotuneRound>,
    /// The last round's network (`None` when no round sampled anything).
    pub network: Option<CostNetwork>,
    /// Its label, for a weights file.
    pub label: String,
    /// The fastest schedule measured in any round, sampled or picked: its
    /// text and seconds (autotuning's answer).
    pub best: Option<(String, f64)>,
}

impl Autotuned {
    /// The first round whose pick beats the expert schedule.
    pub fn first_round_beating_the_expert(&self) -> Option<u32> {
        self.rounds.iter().find(|r| r.pick_speedup().is_some_and(|s| s > 1.0)).map(|r| r.round)
    }

    /// The first round after which the fastest schedule measured beats it.
    pub fn first_round_autotuned_beyond_the_expert(&self) -> Option<u32> {
        self.rounds.iter().find(|r| r.best_speedup().is_some_and(|s| s > 1.0)).map(|r| r.round)
    }
}

/// Runs the rounds from `start` (see the module documentation;
/// [`trainer::choose_network`] finds the network the autoscheduler uses);
/// `each` is told after every round, round 0 first.
pub fn autotune(
    store: &mut Store,
    runner: &mut Runner,
    start: ChosenNetwork,
    options: &AutotuneOptions,
    mut each: impl FnMut(&AutotuneRound),
) -> Result<Autotuned, AgentError> {
    let target = Target::host();
    let host_key = HostFingerprint::detect()?.key();
    let workload = Workload::from_app(&options.app);
    let app_hash = pipeline_record(&Dag::new(&workload.pipeline, &target)?, &workload).hash;
    let started_from = match &start.network {
        Some(_) => format!("weights {:?}", start.version),
        None => "the analytical model".to_string(),
    };
    let (mut network, mut label) = (start.network, start.why);
    let mut expert_seconds: Option<f64> = None;
    let mut rounds = vec![];
    let mut best_sampled: Option<f64> = None;
    let mut best: Option<(String, f64)> = None;
    for round in 0..=options.rounds {
        let (mut timed, mut failed) = (0, 0);
        if round > 0 {
            let generate_options = GenerateOptions {
                first_seed: u64::from(round - 1) * options.batches,
                pipelines: options.batches,
                round,
                agent: options.agent.clone(),
                sampling: options.sampling.clone(),
                timing_passes: options.timing_passes,
                app: Some(options.app.clone()),
            };
            let stats = generate(store, model_of(&network, &label, &target).as_mut(), runner, &generate_options, |_| {})?;
            timed = stats.measured;
            failed = stats.failed.values().sum();
            for batch in generate_options.first_seed..generate_options.first_seed + options.batches {
                let id = work_id(&options.agent, round, Some(&options.app), batch);
                for (_, text, seconds) in store.report_runtimes(&id, &host_key)? {
                    best_sampled = Some(best_sampled.map_or(seconds, |fastest: f64| fastest.min(seconds)));
                    keep_if_fastest(&mut best, &text, seconds);
                }
            }
        }
        let load =
            |rounds| trainer::dataset::load_pipeline(store, &host_key, &target, &app_hash, rounds).map_err(trainer::RetrainError::from);
        let sampler_pairwise = match load(round..=round)? {
            Some(batch) if round > 0 => Some(pairwise_accuracy(network.as_ref(), &batch, &target)?),
            _ => None,
        };
        let app = load(0..=round)?;
        if let (true, Some(app)) = (round > 0, &app) {
            let start = match network.take() {
                Some(network) => network,
                None => calibrated(CostNetwork::starting_from_analytical(options.members, options.train.seed), std::slice::from_ref(app))?,
            };
            let rehearsal: Vec<&PipelineSamples> = options.rehearsal.iter().collect();
            let first = (round as usize - 1) * options.epochs;
            network = Some(
                fine_tune(start, &[&app.samples], &rehearsal, first, options.epochs, &options.train)
                    .map_err(trainer::RetrainError::from)?,
            );
            label = format!(
                "fine-tuned on {} through round {round} ({} samples, {} epochs a round), from {started_from}",
                options.app.name,
                app.samples.schedules.len(),
                options.epochs
            );
        }
        let searched = autoschedule(&workload.pipeline, &target, model_of(&network, &label, &target).as_mut(), &options.search, 0)?;
        // A caller that raised the search's abandon flag wants no more rounds.
        let Some(pick) = searched.answer().map(|a| a.schedule) else { break };
        let timed_beside: Vec<&compiler::Schedule> = std::iter::once(&pick).chain(options.app.expert.as_ref()).collect();
        let times = time_in_rotation(runner, &workload, &timed_beside, options.pick_timing_passes, &|| false);
        let seconds = |outcome: &Outcome| match outcome {
            Outcome::Measured(r) => Some(r.min_s),
            Outcome::Failed(_) => None,
        };
        let pick_seconds = seconds(&times[0].1);
        if let Some(pick_seconds) = pick_seconds {
            keep_if_fastest(&mut best, &pick.to_string(), pick_seconds);
        }
        if let Some(expert) = times.get(1).and_then(|(_, outcome)| seconds(outcome)) {
            expert_seconds = Some(expert_seconds.map_or(expert, |best| best.min(expert)));
        }
        let report = AutotuneRound {
            round,
            model: label.clone(),
            timed,
            failed,
            app_samples: app.as_ref().map_or(0, |a| a.samples.schedules.len()),
            best_sampled_seconds: best_sampled,
            best_seconds: best.as_ref().map(|(_, seconds)| *seconds),
            sampler_pairwise,
            pick_seconds,
            expert_seconds,
        };
        each(&report);
        rounds.push(report);
    }
    Ok(Autotuned { rounds, network, label, best })
}

/// Keeps `text` as the fastest schedule when it is faster than `best`'s.
pub(crate) fn keep_if_fastest(best: &mut Option<(String, f64)>, text: &str, seconds: f64) {
    if best.as_ref().is_none_or(|(_, fastest)| seconds < *fastest) {
        *best = Some((text.to_string(), seconds));
    }
}

/// The cost model of the current network, or the analytical model.
pub(crate) fn model_of(network: &Option<CostNetwork>, label: &str, target: &Target) -> Box<dyn CostModel> {
    match network {
        Some(network) => Box::new(LearnedModel::new(network.clone(), label)),
        None => Box::new(Analytical::new(Machine::typical(target.threads))),
    }
}

/// The pairwise accuracy of `network` (`None`: the analytical model) on
/// `batch`'s measured schedules.
fn pairwise_accuracy(network: Option<&CostNetwork>, batch: &StoredPipeline, target: &Target) -> Result<f64, AgentError> {
    let batch = std::slice::from_ref(batch);
    let predictions = match network {
        Some(network) => predictions(network, batch).map_err(trainer::RetrainError::from)?,
        None => analytical_predictions(batch, &Machine::typical(target.threads)),
    };
    Ok(metrics_of(&predictions).pairwise_accuracy)
}
