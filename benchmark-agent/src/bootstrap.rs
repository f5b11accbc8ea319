//! Bootstrapped retraining, run locally: rounds of (generate samples with
//! the current model, retrain on everything stored, promote if the held-out
//! metrics are no worse). Round 0 samples with whatever is promoted already,
//! else the nearest known host's weights of the zoo given, else the
//! analytical model; each round's promoted weights steer the next round's
//! sampling, as in Adams et al.'s autotuning loop.

use crate::generate::{generate, GenerateOptions, GenerateStats};
use crate::AgentError;
use codegen::runner::Runner;
use data::{HostFingerprint, Store};
use trainer::{choose_model, RetrainError, RetrainOptions, Zoo};

/// One round's results.
#[derive(Clone, Debug)]
pub struct RoundReport {
    /// The round's number.
    pub round: u32,
    /// Wall time of the round's generation and retraining.
    pub took: std::time::Duration,
    /// The model that ranked this round's samples.
    pub sampled_with: String,
    /// What the round's data generation did.
    pub generated: GenerateStats,
    /// Measured samples in the store after the round.
    pub samples_in_store: u64,
    /// The stored version of the weights the round's retraining made
    /// (`None`: the store cannot train or judge weights yet, `reason` says why).
    pub version: Option<u32>,
    /// Whether those weights were promoted.
    pub promoted: bool,
    /// Why they were (or were not) promoted, or not made, in words.
    pub reason: String,
    /// Their metrics on the held-out set.
    pub held_out: Option<trainer::Metrics>,
}

/// Runs `rounds` rounds from `first_round`; round `r` generates the seeds
/// `first_seed + r * per_round ..` (or batches of the app). `each` is told
/// after every round, with the store (to measure the host's model as it now
/// stands), and answers whether to go on; its errors (of any type that an
/// [`AgentError`] converts into) end the bootstrap. Sampling takes the nearest known host's weights
/// (`nearest`'s, or the store's of another host) until the host has
/// promoted weights of its own; `None`: the analytical model until then (retraining starts from
/// them only if `retrain_options` says so: [`trainer::Start`]).
#[allow(clippy::too_many_arguments)]
pub fn bootstrap<E: From<AgentError>>(
    store: &mut Store,
    nearest: Option<&Zoo>,
    runner: &mut Runner,
    generate_options: &GenerateOptions,
    retrain_options: &RetrainOptions,
    first_round: u32,
    rounds: u32,
    mut each: impl FnMut(&RoundReport, &Store) -> Result<bool, E>,
) -> Result<Vec<RoundReport>, E> {
    let host_key = HostFingerprint::detect().map_err(AgentError::from)?.key();
    let mut reports = vec![];
    for round in first_round..first_round + rounds {
        let started = std::time::Instant::now();
        let threads = retrain_options.target.unwrap_or_else(compiler::Target::host).threads;
        let chosen = choose_model(None, Some(store), &host_key, nearest, threads).map_err(AgentError::from)?;
        let mut model = chosen.model;
        let options = GenerateOptions {
            round,
            first_seed: generate_options.first_seed + u64::from(round) * generate_options.pipelines,
            ..generate_options.clone()
        };
        let generated = generate(store, model.as_mut(), runner, &options, |_| {})?;
        // The first rounds of an empty store may hold no pipeline to train
        // or judge on (the held-out share is drawn by hash): the next round
        // adds more.
        let (version, promoted, reason, held_out) = match trainer::retrain(store, &host_key, retrain_options, None) {
            Ok(outcome) => (Some(outcome.version), outcome.promoted, outcome.reason, Some(outcome.metrics.held_out)),
            Err(e @ (RetrainError::NoHeldOutData { .. } | RetrainError::NoTrainingData { .. })) => (None, false, e.to_string(), None),
            Err(e) => return Err(AgentError::from(e).into()),
        };
        let report = RoundReport {
            round,
            took: started.elapsed(),
            sampled_with: chosen.why,
            generated,
            samples_in_store: store.summary().map_err(AgentError::from)?.samples,
            version,
            promoted,
            reason,
            held_out,
        };
        let go_on = each(&report, store)?;
        reports.push(report);
        if !go_on {
            break;
        }
    }
    Ok(reports)
}
