//! Autotuning one app (the fine-tuning mode of Adams et al. 2019): rounds
//! of (sample batches of the app's schedules with the current network and
//! time them into the store, fine-tune the network on every sample of the
//! app so far, autoschedule the app with the fine-tuned network and time
//! that schedule beside the app's expert schedule). The question it answers
//! is how many rounds the autoscheduler needs before its own schedule of
//! the app beats the expert's on this machine.
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

use crate::generate::{generate, GenerateOptions};
use crate::measure::time_in_rotation;
use crate::records::pipeline_record;
use crate::sampling::SamplingOptions;
use crate::{AgentError, Workload};
use codegen::runner::Runner;
use compiler::Target;
use data::{HostFingerprint, Outcome, Store};
use featurizer::Dag;
use search::{autoschedule, Analytical, BeamOptions, CostModel, Machine};
use trainer::retrain::calibrated;
use trainer::{fine_tune, ChosenNetwork, CostNetwork, LearnedModel, TrainOptions};

/// What to autotune, and how hard.
#[derive(Clone, Debug)]
pub struct AutotuneOptions {
    pub app: apps::App,
    /// Rounds of sampling and fine-tuning (after round 0, the baseline).
    pub rounds: u32,
    /// Batches of sampled schedules per round.
    pub batches: u64,
    pub sampling: SamplingOptions,
    /// Timing passes over each batch, and over each round's pick and the
    /// expert schedule (the best time over the passes is kept).
    pub timing_passes: usize,
    /// The agent's name in the work ids.
    pub agent: String,
    /// Fine-tuning epochs per round over the app's samples (one step each).
    pub epochs: usize,
    pub train: TrainOptions,
    /// Members of a network started from the analytical model (when no
    /// starting weights are given).
    pub members: usize,
    /// The autoscheduler's search for each round's pick.
    pub search: BeamOptions,
}

/// One round's results.
#[derive(Clone, Debug)]
pub struct AutotuneRound {
    pub round: u32,
    /// The model that picked this round's schedule: round 0's is the
    /// starting model (the autoscheduler as it stands); a later round's is
    /// the network fine-tuned on every sample through that round (the
    /// previous round's model sampled its batches).
    pub model: String,
    /// Schedules timed in this round's batches, and those that failed.
    pub timed: u64,
    pub failed: u64,
    /// Measured samples of the app in the store after the round.
    pub app_samples: usize,
    /// The fastest sampled schedule measured so far, in seconds.
    pub best_sampled_seconds: Option<f64>,
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
}

/// What autotuning gave.
pub struct Autotuned {
    pub rounds: Vec<AutotuneRound>,
    /// The last round's network (`None` when no round sampled anything).
    pub network: Option<CostNetwork>,
    /// Its label, for a weights file.
    pub label: String,
}

impl Autotuned {
    /// The first round whose pick beats the expert schedule.
    pub fn first_round_beating_the_expert(&self) -> Option<u32> {
        self.rounds.iter().find(|r| r.pick_speedup().is_some_and(|s| s > 1.0)).map(|r| r.round)
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
    let (mut network, mut label) = (start.network, start.why);
    let mut expert_seconds: Option<f64> = None;
    let mut rounds = vec![];
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
        }
        let app = trainer::dataset::load_pipeline(store, &host_key, &target, &app_hash, round).map_err(trainer::RetrainError::from)?;
        if let (true, Some(app)) = (round > 0, &app) {
            let start = match network.take() {
                Some(network) => network,
                None => calibrated(CostNetwork::starting_from_analytical(options.members, options.train.seed), std::slice::from_ref(app))?,
            };
            network = Some(fine_tune(start, &[&app.samples], options.epochs, &options.train).map_err(trainer::RetrainError::from)?);
            label = format!("fine-tuned on {} through round {round} ({} samples)", options.app.name, app.samples.schedules.len());
        }
        let pick = autoschedule(&workload.pipeline, &target, model_of(&network, &label, &target).as_mut(), &options.search, 0)?.schedule;
        let times = time_in_rotation(runner, &workload, &[&pick, &options.app.expert], options.timing_passes, &|| false);
        let seconds = |outcome: &Outcome| match outcome {
            Outcome::Measured(r) => Some(r.min_s),
            Outcome::Failed(_) => None,
        };
        if let Some(expert) = seconds(&times[1].1) {
            expert_seconds = Some(expert_seconds.map_or(expert, |best| best.min(expert)));
        }
        let measured: Vec<f64> = app.iter().flat_map(|a| a.samples.schedules.iter().map(|s| s.runtime_seconds)).collect();
        let report = AutotuneRound {
            round,
            model: label.clone(),
            timed,
            failed,
            app_samples: measured.len(),
            best_sampled_seconds: measured.iter().copied().min_by(f64::total_cmp),
            pick_seconds: seconds(&times[0].1),
            expert_seconds,
        };
        each(&report);
        rounds.push(report);
    }
    Ok(Autotuned { rounds, network, label })
}

/// The cost model of the current network, or the analytical model.
fn model_of(network: &Option<CostNetwork>, label: &str, target: &Target) -> Box<dyn CostModel> {
    match network {
        Some(network) => Box::new(LearnedModel::new(network.clone(), label)),
        None => Box::new(Analytical::new(Machine::typical(target.threads))),
    }
}
