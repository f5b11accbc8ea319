//! Retraining from the store (Adams et al.'s bootstrap rounds): train from
//! the host's promoted weights (or a seeded random network, or given
//! weights, such as another machine's, to fine-tune) on the
//! training pipelines, store the result as a new weights version, and
//! promote it only if it is no worse than the promoted weights.
//!
//! Each epoch takes one [`Trainer::step`] per training pipeline, in an
//! order shuffled by a generator seeded from the options; after each the
//! held-out metrics are recorded with the epoch's mean loss. The weights
//! kept are those after the last epoch: choosing the epoch by its held-out
//! metrics would tune on the set that then decides promotion. For the same
//! reason a seed is never chosen by those metrics: several runs, seeded
//! one after the other, can instead train side by side and be joined into
//! one ensemble ([`RetrainOptions::runs`]), so that what one seed gains or
//! loses by chance averages out. Last, the kept network's predictions are
//! scaled by the one factor that fits the training pipelines' runtimes
//! best in log space ([`ScaleFit::Mean`]): the loss leaves them too slow
//! by a common factor, and a common factor changes no order.
//!
//! Promotion rule: new weights are promoted only if their held-out
//! pairwise accuracy is not lower and their top-1 regret not higher than
//! the promoted weights', both measured now on the same held-out set.
//! When the host has no promoted weights, or its promoted weights are for
//! other feature layouts or network shape, the analytical model is what
//! the search would use instead, so the new weights must be no worse than
//! it on the same held-out set ([`FirstPromotion`] can lift that for tests
//! of the loop on a handful of samples).

use crate::dataset::{load, store_layout, Dataset, DatasetError, Skipped};
use crate::metrics::{analytical_predictions, evaluate, metrics_of, Metrics};
use crate::network::{CostNetwork, MAX_MEMBERS};
use crate::terms::TERMS_VERSION;
use crate::train::{TrainError, TrainOptions, Trainer};
use crate::weights::{WeightsError, WeightsFile};
use compiler::Target;
use data::{NewWeights, Store, StoreError};
use featurizer::{PIPELINE_LAYOUT, SCHEDULE_LAYOUT};
use indicatif::ProgressBar;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use search::Machine;
use serde::{Deserialize, Serialize};
use thiserror::Error;
use tracing::{info, warn};

/// Why retraining stopped.
#[derive(Debug, Error)]
pub enum RetrainError {
    /// The training data could not be read.
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// A store call failed.
    #[error("training store: {0}")]
    Store(#[from] StoreError),
    /// Looking for the nearest known host's weights to start from failed.
    #[error("finding the nearest known host's weights: {0}")]
    Nearest(#[from] crate::ChooseError),
    /// No pipeline of the host is left for the training set.
    #[error("no training pipelines for host {host_key} in this build's feature layouts (pipelines skipped: {skipped:?}); are there measured samples for this host?")]
    NoTrainingData {
        /// The host's key.
        host_key: String,
        /// The pipelines left out, by reason.
        skipped: Skipped,
    },
    /// No pipeline of the host fell in the held-out set.
    #[error("no held-out pipelines for host {host_key} ({train} training pipelines): nothing to judge new weights on; measure more pipelines or hold out a larger share")]
    NoHeldOutData {
        /// The host's key.
        host_key: String,
        /// Pipelines in the training set.
        train: usize,
    },
    /// Stored weights that do not decode or fit this build.
    #[error("weights version {version}: {source}")]
    Weights {
        /// Their version in the store.
        version: u32,
        /// What is wrong with them.
        source: WeightsError,
    },
    /// The weights given to start from ([`Start::Weights`]) do not fit this build.
    #[error("the starting weights: {0}")]
    StartingWeights(WeightsError),
    /// The runs together would hold more members than a network may.
    #[error("{runs} runs of {members_per_run} members make {members} members; a network holds at most {MAX_MEMBERS}")]
    TooManyMembers {
        /// Training runs asked for.
        runs: usize,
        /// Members of each run's network.
        members_per_run: usize,
        /// Their product.
        members: usize,
    },
    /// Training failed.
    #[error(transparent)]
    Train(#[from] TrainError),
    /// The metrics could not be encoded as JSON.
    #[error("encoding the metrics: {0}")]
    Json(#[from] serde_json::Error),
}

/// Where training starts.
#[derive(Clone, Debug, PartialEq)]
pub enum Start {
    /// From the host's promoted weights; from `CostNetwork::starting_from_analytical(members, seed)` when there are none.
    Promoted,
    /// From `CostNetwork::starting_from_analytical(members, seed)`.
    Scratch,
    /// From these weights, whatever host they learned (fine-tuning weights
    /// of another machine on this host's samples); they keep their members.
    Weights(Box<WeightsFile>),
    /// From the host's promoted weights; when there are none, from the
    /// weights of the nearest known host (this zoo's, or the store's
    /// promoted weights of another host: [`crate::nearest_known_host`]),
    /// as [`Start::Weights`]; from scratch when no known host is near.
    PromotedElseNearest(std::sync::Arc<crate::Zoo>),
}

/// What the first weights of a host (no comparable weights promoted) must
/// be no worse than to be promoted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstPromotion {
    /// The analytical model on the same held-out set: learned weights
    /// never replace a model that ranks the held-out schedules better.
    NoWorseThanAnalytical,
    /// Nothing: promoted whatever their metrics. For tests of the learning
    /// loop, whose few samples cannot show a difference between models.
    Unconditional,
}

/// The ranking term's weight by default: with it the loss orders the
/// held-out pairs of this project's stores better than the paper's loss
/// alone (README of `trainer/assets`).
pub const DEFAULT_RANKING_WEIGHT: f64 = 100.0;

/// Members of a network trained from scratch by default: the members'
/// mean orders the held-out samples better than a typical member alone
/// (README of `trainer/assets`).
pub const DEFAULT_MEMBERS: usize = 5;

/// Retraining's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct RetrainOptions {
    /// Epochs, each one step per training pipeline.
    pub epochs: usize,
    /// Adam's learning rate.
    pub learning_rate: f64,
    /// Weight of the loss's ranking term (see [`crate::loss`]).
    pub ranking_weight: f64,
    /// Members of a network trained from scratch (see [`crate::network`]);
    /// training from promoted weights keeps theirs.
    pub members: usize,
    /// Seeds the initial network (when random), the epoch order and the batch windows.
    pub seed: u64,
    /// Training runs joined into the new weights: run `k` is seeded with
    /// `seed + k` (its random start when training from scratch, its epoch
    /// order and windows) and the new network holds every run's members
    /// ([`CostNetwork::joined`]). 1 trains one network, as before there
    /// were runs.
    pub runs: usize,
    /// The share of pipelines held out, in percent (below 100).
    pub held_out_percent: u32,
    /// Where training starts.
    pub start: Start,
    /// Whether a starting network of older terms (promoted weights or a
    /// file) is brought to this build's terms first
    /// ([`CostNetwork::with_current_terms`]) instead of training on in its
    /// own version.
    pub current_terms: bool,
    /// Threads libtorch uses (`tch::set_num_threads`); `None` leaves its default.
    pub torch_threads: Option<i32>,
    /// The target pipelines are rebuilt for; `None`: the host's own, as the
    /// store records it ([`crate::dataset::target_of_host`]).
    pub target: Option<Target>,
    /// What a host's first weights must beat to be promoted.
    pub first_promotion: FirstPromotion,
}

impl RetrainOptions {
    /// Defaults for this machine: 50 epochs at learning rate 1e-3 (the
    /// paper's 1e-4 is for millions of samples), the ranking term at
    /// weight [`DEFAULT_RANKING_WEIGHT`], [`DEFAULT_MEMBERS`] members,
    /// seed 0, one run, 20% held out,
    /// starting from the promoted weights, first weights promoted only if
    /// no worse than the analytical model.
    pub fn for_host() -> RetrainOptions {
        RetrainOptions {
            epochs: 50,
            learning_rate: 1e-3,
            ranking_weight: DEFAULT_RANKING_WEIGHT,
            members: DEFAULT_MEMBERS,
            seed: 0,
            runs: 1,
            held_out_percent: crate::dataset::DEFAULT_HELD_OUT_PERCENT,
            start: Start::Promoted,
            current_terms: false,
            torch_threads: None,
            target: None,
            first_promotion: FirstPromotion::NoWorseThanAnalytical,
        }
    }
}

/// One epoch's record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpochRecord {
    /// 0 is the starting network, before any step.
    pub epoch: usize,
    /// Mean loss of the epoch's steps (`None` for epoch 0).
    pub mean_loss: Option<f64>,
    /// The network's metrics on the held-out set after the epoch.
    pub held_out: Metrics,
}

/// What a weights version stores as its metrics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredMetrics {
    /// Of the kept (last) epoch, after the scale ([`StoredMetrics::output_scale`]).
    pub held_out: Metrics,
    /// The analytical model's metrics on the same held-out samples: the
    /// baseline the learned model has to beat.
    pub analytical_held_out: Metrics,
    /// Pipelines in the training set.
    pub train_pipelines: usize,
    /// Measured samples in the training set.
    pub train_samples: usize,
    /// The share of pipelines held out, in percent.
    pub held_out_percent: u32,
    /// Adam's learning rate.
    pub learning_rate: f64,
    /// 0 in metrics stored before the loss had a ranking term.
    #[serde(default)]
    pub ranking_weight: f64,
    /// All runs' together. 1 in metrics stored before networks had members.
    #[serde(default = "one")]
    pub members: usize,
    /// The first run's seed.
    pub seed: u64,
    /// Training runs joined. 1 in metrics stored before there were runs.
    #[serde(default = "one")]
    pub runs: usize,
    /// Each epoch's held-out metrics, of the network as trained (before
    /// the scale below).
    pub epochs: Vec<EpochRecord>,
    /// The factor the trained network's predictions were multiplied by to
    /// fit the training pipelines' runtimes ([`ScaleFit::Mean`]); `held_out`
    /// is measured after it. 1 in metrics stored before weights were scaled.
    #[serde(default = "unit_scale")]
    pub output_scale: f64,
}

/// The promoted weights' metrics, measured again on this run's held-out set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Incumbent {
    /// Their version in the store.
    pub version: u32,
    /// `None` when they are for other feature layouts or network shape.
    pub held_out: Option<Metrics>,
}

/// What retraining did.
#[derive(Clone, Debug, PartialEq)]
pub struct RetrainOutcome {
    /// The stored version of the new weights.
    pub version: u32,
    /// The metrics stored with them.
    pub metrics: StoredMetrics,
    /// The weights promoted before, if any.
    pub incumbent: Option<Incumbent>,
    /// Whether the new weights were promoted.
    pub promoted: bool,
    /// Why (not) promoted, in words.
    pub reason: String,
    /// The pipelines left out of the data, by reason.
    pub skipped: Skipped,
    /// The new weights, as stored.
    pub weights: WeightsFile,
}

/// What new weights are compared with before promotion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Baseline<'a> {
    /// The host's promoted weights, measured on the same held-out set.
    Promoted(&'a Metrics),
    /// The nearest known host's weights, which rank the host's searches
    /// while it has none of its own (and which retraining started from),
    /// measured on the same held-out set.
    Nearest(&'a Metrics),
    /// The analytical model on the same held-out set (no comparable weights promoted).
    Analytical(&'a Metrics),
    /// Nothing to beat ([`FirstPromotion::Unconditional`]).
    None,
}

/// Whether weights with `new` held-out metrics are promoted over
/// `baseline`: by what users get, neither a lower top-1 score (the speed
/// of the picks) nor a lower pairwise accuracy on the pairs more than
/// [`crate::metrics::FAR_APART`] times apart (the orders timing noise
/// cannot blur).
pub fn should_promote(new: &Metrics, baseline: Baseline) -> (bool, String) {
    let (current, name) = match baseline {
        Baseline::Promoted(m) => (m, "the promoted weights"),
        Baseline::Nearest(m) => (m, "the nearest host's weights, which rank this host's searches until it has its own"),
        Baseline::Analytical(m) => (m, "the analytical model (no comparable weights promoted)"),
        Baseline::None => return (true, "no comparable promoted weights, and the first weights are promoted unconditionally".to_string()),
    };
    let score_ok = new.top1_score >= current.top1_score;
    let far_ok = new.pairwise_accuracy_far >= current.pairwise_accuracy_far;
    let comparison = format!(
        "held-out top-1 score {:.4} vs {:.4}, pairwise accuracy of pairs > {}x apart {:.4} vs {:.4} (all pairs {:.4} vs {:.4})",
        new.top1_score,
        current.top1_score,
        crate::metrics::FAR_APART,
        new.pairwise_accuracy_far,
        current.pairwise_accuracy_far,
        new.pairwise_accuracy,
        current.pairwise_accuracy
    );
    match (score_ok, far_ok) {
        (true, true) => (true, format!("no worse than {name}: {comparison}")),
        (false, _) => (false, format!("a lower top-1 score than {name}: {comparison}")),
        (true, false) => (false, format!("a lower accuracy on pairs far apart than {name}: {comparison}")),
    }
}

/// The network of a stored version, checked against this build's layouts and shape.
pub fn stored_network(store: &Store, version: u32) -> Result<CostNetwork, RetrainError> {
    let weights = store.weights(version)?;
    WeightsFile::decode(&weights.blob).and_then(|file| file.to_network()).map_err(|source| RetrainError::Weights { version, source })
}

/// Retrains the cost model of `host_key` from `store` (see the module
/// documentation); `progress`, when given, advances by one per step.
pub fn retrain(
    store: &mut Store,
    host_key: &str,
    options: &RetrainOptions,
    progress: Option<&ProgressBar>,
) -> Result<RetrainOutcome, RetrainError> {
    let target = match options.target {
        Some(target) => target,
        None => crate::dataset::target_of_host(store, host_key)?,
    };
    let dataset = load(store, host_key, &target, options.held_out_percent)?;
    if dataset.train.is_empty() {
        return Err(RetrainError::NoTrainingData { host_key: host_key.to_string(), skipped: dataset.skipped });
    }
    if dataset.held_out.is_empty() {
        return Err(RetrainError::NoHeldOutData { host_key: host_key.to_string(), train: dataset.train.len() });
    }
    let promoted = store.promoted_weights(Some(host_key))?.map(|w| w.info.version);
    let incumbent_network = match promoted {
        Some(version) => match stored_network(store, version) {
            Ok(network) => Some(network),
            Err(RetrainError::Weights { source, .. }) if matches!(source, WeightsError::Layout(_) | WeightsError::Shape { .. }) => {
                warn!(version, "the promoted weights do not fit this build ({source}); training from random weights");
                None
            }
            Err(e) => return Err(e),
        },
        None => None,
    };
    let incumbent = promoted
        .map(|version| {
            let held_out = incumbent_network.as_ref().map(|n| evaluate(n, &dataset.held_out)).transpose()?;
            Ok::<_, RetrainError>(Incumbent { version, held_out })
        })
        .transpose()?;
    // Without promoted weights, the nearest host's (when asked for) are
    // both the start and what the new weights must beat: they rank the
    // host's searches until it has its own.
    let mut nearest_held_out = None;
    let start = match &options.start {
        Start::PromotedElseNearest(zoo) if promoted.is_none() => match crate::nearest_known_host(Some(store), host_key, zoo)? {
            Ok(nearest) => {
                info!(host_key, "no promoted weights: fine-tuning {}", nearest.describe());
                let network = nearest.entry.file.to_network().map_err(RetrainError::StartingWeights)?;
                nearest_held_out = Some(evaluate(&network, &dataset.held_out)?);
                Start::Weights(Box::new(nearest.entry.file))
            }
            Err(_) => Start::Promoted,
        },
        Start::PromotedElseNearest(_) => Start::Promoted,
        other => other.clone(),
    };
    let runs = options.runs.max(1);
    let in_terms = |network: CostNetwork| if options.current_terms { network.with_current_terms() } else { network };
    let start_of_run = |run: usize| match (&start, &incumbent_network) {
        (Start::Weights(file), _) => file.to_network().map(in_terms).map_err(RetrainError::StartingWeights),
        (Start::Promoted, Some(network)) => Ok(in_terms(network.clone())),
        _ => calibrated(CostNetwork::starting_from_analytical(options.members, run_seed(options.seed, run)), &dataset.train),
    };
    let first_start = start_of_run(0)?;
    let members = first_start.members() * runs;
    if members > MAX_MEMBERS {
        return Err(RetrainError::TooManyMembers { runs, members_per_run: first_start.members(), members });
    }
    let starts = std::iter::once(Ok(first_start)).chain((1..runs).map(start_of_run)).collect::<Result<Vec<_>, _>>()?;
    if let Some(threads) = options.torch_threads {
        tch::set_num_threads(threads);
    }
    let (trained, epochs) = train_epochs(starts, &dataset, options, progress)?;
    let (network, output_scale) = scaled_to_fit(trained, &dataset.train, ScaleFit::Mean)?;
    let held_out = evaluate(&network, &dataset.held_out)?;
    let machine = Machine::typical(target.threads);
    let analytical_held_out = metrics_of(&analytical_predictions(&dataset.held_out, &machine));
    let metrics = StoredMetrics {
        held_out,
        analytical_held_out,
        train_pipelines: dataset.train.len(),
        train_samples: Dataset::sample_count(&dataset.train),
        held_out_percent: options.held_out_percent,
        learning_rate: options.learning_rate,
        ranking_weight: options.ranking_weight,
        members,
        seed: options.seed,
        runs,
        epochs,
        output_scale,
    };
    let noting_terms = |from: String| if options.current_terms { format!("{from}, in terms version {TERMS_VERSION}") } else { from };
    let started_from = match (&start, &incumbent_network) {
        (Start::Weights(file), _) => {
            // The label's first clause ("host KEY"): whole labels nest one in another round after round.
            let first = file.header.version.split(", ").next().unwrap_or_default();
            noting_terms(format!(", started from weights of {first}"))
        }
        (Start::Promoted, Some(_)) => noting_terms(String::new()),
        _ => String::new(),
    };
    let joined_runs = if runs == 1 { String::new() } else { format!(" of {runs} runs") };
    let label = format!(
        "host {host_key}, parent {}, {} epochs, ranking weight {}, {members} member{}{joined_runs}{started_from}, outputs scaled by {output_scale:.4}",
        promoted.map_or("none".to_string(), |v| v.to_string()),
        options.epochs,
        options.ranking_weight,
        if members == 1 { "" } else { "s" }
    );
    let weights = WeightsFile::of(&network, &label).learned_on(store.host(host_key)?);
    let version = store.insert_weights(&NewWeights {
        parent: promoted,
        blob: weights.encode(),
        pipeline_layout: store_layout(&PIPELINE_LAYOUT),
        schedule_layout: store_layout(&SCHEDULE_LAYOUT),
        training_set: training_set_text(host_key, &dataset),
        metrics: serde_json::to_value(&metrics)?,
        host_key: Some(host_key.to_string()),
    })?;
    let baseline = match (incumbent.as_ref().and_then(|i| i.held_out.as_ref()), &nearest_held_out, options.first_promotion) {
        (Some(promoted), _, _) => Baseline::Promoted(promoted),
        (None, _, FirstPromotion::Unconditional) => Baseline::None,
        (None, Some(nearest), FirstPromotion::NoWorseThanAnalytical) => Baseline::Nearest(nearest),
        (None, None, FirstPromotion::NoWorseThanAnalytical) => Baseline::Analytical(&metrics.analytical_held_out),
    };
    let (promote, reason) = should_promote(&metrics.held_out, baseline);
    if promote {
        store.promote(version)?;
    }
    info!(version, promote, "{reason}");
    Ok(RetrainOutcome { version, metrics, incumbent, promoted: promote, reason, skipped: dataset.skipped, weights })
}

/// The epochs, every run taking its steps of an epoch in turn: the
/// trained runs joined, and one record per epoch (epoch 0, the starting
/// networks, first; the loss is the runs' mean).
fn train_epochs(
    starts: Vec<CostNetwork>,
    dataset: &Dataset,
    options: &RetrainOptions,
    progress: Option<&ProgressBar>,
) -> Result<(CostNetwork, Vec<EpochRecord>), RetrainError> {
    let mut runs = starts
        .into_iter()
        .enumerate()
        .map(|(run, start)| {
            let seed = run_seed(options.seed, run);
            let train_options = TrainOptions {
                learning_rate: options.learning_rate,
                seed,
                ranking_weight: options.ranking_weight,
                ..TrainOptions::default()
            };
            let order: Vec<usize> = (0..dataset.train.len()).collect();
            Ok(Run { trainer: Trainer::new(start, &train_options)?, order, shuffle: ChaCha8Rng::seed_from_u64(seed) })
        })
        .collect::<Result<Vec<_>, RetrainError>>()?;
    let mut epochs = vec![EpochRecord { epoch: 0, mean_loss: None, held_out: evaluate(&joined(&runs), &dataset.held_out)? }];
    if let Some(bar) = progress {
        bar.set_length((options.epochs * dataset.train.len() * runs.len()) as u64);
    }
    for epoch in 1..=options.epochs {
        let mut loss_sum = 0.0;
        for run in &mut runs {
            run.order.shuffle(&mut run.shuffle);
            for &i in &run.order {
                loss_sum += run.trainer.step(&dataset.train[i].samples)?.loss;
                if let Some(bar) = progress {
                    bar.inc(1);
                }
            }
        }
        let held_out = evaluate(&joined(&runs), &dataset.held_out)?;
        if let Some(bar) = progress {
            bar.set_message(format!("epoch {epoch}: held-out pairwise accuracy {:.3}", held_out.pairwise_accuracy));
        }
        let mean_loss = loss_sum / (dataset.train.len() * runs.len()) as f64;
        epochs.push(EpochRecord { epoch, mean_loss: Some(mean_loss), held_out });
    }
    Ok((joined(&runs), epochs))
}

/// The seed of run `run` of a retraining seeded `seed`.
fn run_seed(seed: u64, run: usize) -> u64 {
    seed.wrapping_add(run as u64)
}

/// One training run: its trainer and its own epoch order.
struct Run {
    trainer: Trainer,
    order: Vec<usize>,
    shuffle: ChaCha8Rng,
}

/// The runs' networks as one ensemble (they share their start's terms
/// version, and [`retrain`] bounds their members).
fn joined(runs: &[Run]) -> CostNetwork {
    CostNetwork::joined(runs.iter().map(|run| run.trainer.network())).expect("runs of one start's terms version within the members bound")
}

/// Which centre of the log ratios of measured to predicted runtimes
/// [`scaled_to_fit`] moves to zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScaleFit {
    /// Their median: for a fresh network, whose predictions may start
    /// orders of magnitude off on a few pipelines. The loss compares
    /// inverse relative runtimes, whose gradient vanishes when predictions
    /// start far too high, so a fresh network would otherwise barely move.
    Median,
    /// Their mean: the one factor that minimizes the squared error of log
    /// runtime, for trained weights. The paper's loss charges a prediction
    /// too slow less than one too fast (`1/p` flattens as `p` grows) and
    /// the ranking term is blind to scale, so trained weights predict too
    /// slow by a common factor (1.35x, the AVX-512 EPYC's weights of
    /// 2026-12-02, on their training pipelines).
    Mean,
}

/// How far from zero (in log space) the fitted centre must be for
/// [`scaled_to_fit`] to scale: weights that already fit to within 0.01%
/// are left as they are, so fitting twice changes nothing.
const SCALE_TOLERANCE: f64 = 1e-4;

/// `network` with every prediction multiplied by one factor, fitted over
/// the samples of `train` as `fit` says, and that factor (1 when there is
/// nothing to fit, or the weights already fit). A common factor leaves the
/// order of any two predictions as it was: pairwise accuracy, regret and
/// the search's picks do not change, only how close the predicted seconds
/// come.
pub fn scaled_to_fit(
    network: CostNetwork,
    train: &[crate::dataset::StoredPipeline],
    fit: ScaleFit,
) -> Result<(CostNetwork, f64), RetrainError> {
    let mut log_ratios = vec![];
    for p in train {
        let predicted = crate::train::predict(&network, &p.samples)?;
        for (s, &pred) in p.samples.schedules.iter().zip(&predicted) {
            if pred > 0.0 && pred.is_finite() {
                log_ratios.push((s.runtime_seconds / pred).ln());
            }
        }
    }
    if log_ratios.is_empty() {
        return Ok((network, 1.0));
    }
    let centre = match fit {
        ScaleFit::Median => {
            log_ratios.sort_by(f64::total_cmp);
            log_ratios[log_ratios.len() / 2]
        }
        ScaleFit::Mean => log_ratios.iter().sum::<f64>() / log_ratios.len() as f64,
    };
    if centre.abs() < SCALE_TOLERANCE {
        return Ok((network, 1.0));
    }
    let factor = centre.exp() as f32;
    Ok(if factor.is_finite() && factor > 0.0 { (network.with_output_scaled(factor), f64::from(factor)) } else { (network, 1.0) })
}

/// A fresh network scaled so that its median prediction over `train`
/// matches the median measured runtime ([`ScaleFit::Median`]).
pub fn calibrated(network: CostNetwork, train: &[crate::dataset::StoredPipeline]) -> Result<CostNetwork, RetrainError> {
    Ok(scaled_to_fit(network, train, ScaleFit::Median)?.0)
}

fn one() -> usize {
    1
}

fn unit_scale() -> f64 {
    1.0
}

/// What the weights were trained on, in words.
fn training_set_text(host_key: &str, dataset: &Dataset) -> String {
    let rounds: Vec<String> = dataset.rounds().iter().map(u32::to_string).collect();
    format!(
        "host {host_key}: {} training pipelines ({} samples), {} held-out pipelines ({} samples), rounds [{}]; skipped: {} with fewer than 2 samples, {} unbuildable, {} with mismatched features",
        dataset.train.len(),
        Dataset::sample_count(&dataset.train),
        dataset.held_out.len(),
        Dataset::sample_count(&dataset.held_out),
        rounds.join(", "),
        dataset.skipped.too_few_samples,
        dataset.skipped.unbuildable,
        dataset.skipped.feature_mismatch
    )
}
