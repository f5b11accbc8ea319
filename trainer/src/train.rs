//! Training: Adam over batches of one pipeline's measured schedules
//! ([`PipelineSamples`]), with the paper's settings by default
//! ([`TrainOptions`]), and the metric that matters to a search: how often
//! the model orders two schedules as the measurements do.
//!
//! Deterministic: the same network, options and sequence of batches give
//! the same weights (on one torch thread: `tch::set_num_threads(1)`); the
//! only randomness, the window taken from an oversized batch, comes from a
//! generator seeded by the options.

use crate::inputs::{PipelineSamples, SampleError};
use crate::loss::loss;
use crate::network::CostNetwork;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tch::nn::{Adam, Optimizer, OptimizerConfig};
use tch::{Kind, TchError, Tensor};
use thiserror::Error;

/// The optimizer's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainOptions {
    /// Adam's learning rate.
    pub learning_rate: f64,
    /// Decay rate of the first-moment estimate.
    pub beta1: f64,
    /// Decay rate of the second-moment estimate.
    pub beta2: f64,
    /// Added to the square root of the second moment.
    pub epsilon: f64,
    /// Schedules per step at most; a larger batch trains on a random
    /// contiguous window of this many.
    pub max_batch: usize,
    /// Seeds the choice of windows.
    pub seed: u64,
    /// Weight of the loss's ranking term (0: the paper's loss alone; see
    /// [`crate::loss`]).
    pub ranking_weight: f64,
}

impl Default for TrainOptions {
    /// Adams et al.'s: learning rate 1e-4, β 0.9 and 0.999, ε 1e-5,
    /// batches of up to 1024 schedules, no ranking term.
    fn default() -> Self {
        TrainOptions { learning_rate: 1e-4, beta1: 0.9, beta2: 0.999, epsilon: 1e-5, max_batch: 1024, seed: 0, ranking_weight: 0.0 }
    }
}

/// Why a step did not happen.
#[derive(Debug, Error)]
pub enum TrainError {
    /// The samples cannot be trained on.
    #[error("invalid samples: {0}")]
    Samples(#[from] SampleError),
    /// A libtorch call failed.
    #[error("libtorch: {0}")]
    Torch(#[from] TchError),
}

/// What one step did.
#[derive(Clone, Debug, PartialEq)]
pub struct StepReport {
    /// The batch's loss before the update (per member: the mean of the
    /// members' losses).
    pub loss: f64,
    /// Schedules in the batch.
    pub schedules: usize,
}

/// A network with its optimizer state.
pub struct Trainer {
    network: CostNetwork,
    optimizer: Optimizer,
    windows: ChaCha8Rng,
    max_batch: usize,
    ranking_weight: f64,
    steps: u64,
}

impl Trainer {
    /// A trainer of `network` with a fresh Adam state of `options`; fails when libtorch cannot build the optimizer.
    pub fn new(network: CostNetwork, options: &TrainOptions) -> Result<Trainer, TrainError> {
        let adam = Adam { beta1: options.beta1, beta2: options.beta2, wd: 0.0, eps: options.epsilon, amsgrad: false };
        let optimizer = adam.build(network.store(), options.learning_rate)?;
        Ok(Trainer {
            network,
            optimizer,
            windows: ChaCha8Rng::seed_from_u64(options.seed),
            max_batch: options.max_batch.max(2),
            ranking_weight: options.ranking_weight,
            steps: 0,
        })
    }

    /// One Adam step on `samples` (or a window of them).
    pub fn step(&mut self, samples: &PipelineSamples) -> Result<StepReport, TrainError> {
        samples.validate()?;
        let all = &samples.schedules;
        let window = if all.len() > self.max_batch {
            let start = self.windows.random_range(0..=all.len() - self.max_batch);
            &all[start..start + self.max_batch]
        } else {
            &all[..]
        };
        let (input, runtimes) = samples.tensors(window);
        let batch_loss = loss(&self.network.forward(&input), &runtimes, self.ranking_weight);
        self.optimizer.zero_grad();
        batch_loss.f_backward()?;
        self.optimizer.step();
        self.steps += 1;
        let members = self.network.members() as f64;
        Ok(StepReport { loss: batch_loss.double_value(&[]) / members, schedules: window.len() })
    }

    /// The network as trained so far.
    pub fn network(&self) -> &CostNetwork {
        &self.network
    }

    /// The trained network, without the optimizer state.
    pub fn into_network(self) -> CostNetwork {
        self.network
    }

    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }
}

/// `network` fine-tuned on `focus` (such as the one app being
/// autotuned): each of `epochs` epochs takes one step on every `focus`
/// pipeline, then one on the next `alongside` pipeline in rotation
/// (starting at `first_alongside`), so that what the network knows of
/// other pipelines is rehearsed as it learns the focus; `alongside` may be
/// empty.
pub fn fine_tune(
    network: CostNetwork,
    focus: &[&PipelineSamples],
    alongside: &[&PipelineSamples],
    first_alongside: usize,
    epochs: usize,
    options: &TrainOptions,
) -> Result<CostNetwork, TrainError> {
    let mut trainer = Trainer::new(network, options)?;
    for epoch in 0..epochs {
        for samples in focus {
            trainer.step(samples)?;
        }
        if !alongside.is_empty() {
            trainer.step(alongside[(first_alongside + epoch) % alongside.len()])?;
        }
    }
    Ok(trainer.into_network())
}

/// The network's predicted seconds for every schedule of `samples`.
pub fn predict(network: &CostNetwork, samples: &PipelineSamples) -> Result<Vec<f64>, TrainError> {
    samples.validate()?;
    let (input, _) = samples.tensors(&samples.schedules);
    let total = tch::no_grad(|| network.forward(&input).total);
    Ok(to_f64s(&total)?)
}

/// The values of a tensor, flattened, as f64.
pub(crate) fn to_f64s(t: &Tensor) -> Result<Vec<f64>, TchError> {
    Vec::<f64>::try_from(&t.to_kind(Kind::Double).flatten(0, -1))
}

/// Of the pairs of schedules with different measured runtimes, the
/// fraction the predictions order the same way (ties count half).
/// 1 when there is no such pair.
pub fn ordering_accuracy(predicted: &[f64], measured: &[f64]) -> f64 {
    let mut pairs = 0usize;
    let mut agree = 0.0;
    for i in 0..measured.len().min(predicted.len()) {
        for j in i + 1..measured.len().min(predicted.len()) {
            if measured[i] == measured[j] {
                continue;
            }
            pairs += 1;
            let m = measured[i] < measured[j];
            if predicted[i] == predicted[j] {
                agree += 0.5;
            } else if (predicted[i] < predicted[j]) == m {
                agree += 1.0;
            }
        }
    }
    if pairs == 0 {
        1.0
    } else {
        agree / pairs as f64
    }
}
