//! The benchmark agent: it produces the cost model's training data by
//! measuring schedules on the machine it runs on.
//!
//! One unit of work is one pipeline: a random pipeline from a seed
//! ([`workload`]), a batch of schedules sampled for it by the search under
//! the current cost model ([`sampling`]: one deterministic beam search and
//! randomized probes, as Adams et al. do), each compiled and timed in the
//! isolated runner ([`mod@measure`]), written to the training store as one
//! report ([`records`]). [`generate()`] runs that loop over a range of seeds
//! without any server; the `datagen` binary drives it, and its `bootstrap` command alternates
//! it with retraining ([`bootstrap`]); [`retime`] times a store's schedules
//! again after the compiler changed. [`remote`] is the networked agent
//! (the `benchmark-agent` binary): the same measuring, with work leased
//! from a scheduling server and reports sent to it. [`tune`] tunes one
//! pipeline on request within a time budget (the `Tune` RPC and the
//! `tune` command). [`yardstick`] times the twelve apps under a model
//! against another scheduler's times (a bootstrap's learning curve).
//!
//! # Example
//!
//! A random pipeline sized for training, and schedules sampled for it by
//! the search (timing them needs the `hl-runner` child: see [`generate()`]).
//!
//! ```
//! use benchmark_agent::{sample_schedules, SamplingOptions, Workload};
//!
//! let params = random_pipelines::GeneratorParams { seed: 3, max_stages: 3, ..Default::default() };
//! let workload = Workload::generated(&params)?;
//! # let _ = (sample_schedules, SamplingOptions::default(), workload);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod autotune;
pub mod bootstrap;
pub mod generate;
pub mod measure;
pub mod records;
pub mod relayout;
pub mod remote;
pub mod retime;
pub mod sampling;
pub mod spool;
pub mod tune;
pub mod workload;
pub mod yardstick;

pub use generate::{generate, GenerateOptions, GenerateStats};
pub use measure::measure;
pub use sampling::{sample_schedules, SampledSchedule, SamplingOptions};
pub use workload::Workload;

use thiserror::Error;

/// Why the agent stopped.
#[derive(Debug, Error)]
pub enum AgentError {
    /// The training store failed.
    #[error("training store: {0}")]
    Store(#[from] data::StoreError),
    /// A random pipeline could not be generated.
    #[error("random pipeline: {0}")]
    Generate(#[from] random_pipelines::GenError),
    /// A pipeline cannot be analysed.
    #[error("the pipeline cannot be analysed: {0}")]
    Dag(#[from] featurizer::DagError),
    /// A search for schedules failed.
    #[error("search: {0}")]
    Search(#[from] search::SearchError),
    /// Retraining the cost model failed.
    #[error("retraining: {0}")]
    Retrain(#[from] trainer::RetrainError),
    /// No cost model could be chosen.
    #[error("choosing the cost model: {0}")]
    Model(#[from] trainer::ChooseError),
    /// Cost-model weights could not be read or used.
    #[error("cost-model weights: {0}")]
    Weights(#[from] trainer::WeightsError),
    /// Another thread panicked holding the training store.
    #[error("the training store's lock is poisoned (a thread panicked holding it)")]
    StorePoisoned,
    /// The search was abandoned before it answered.
    #[error("the search was abandoned before it answered")]
    Abandoned,
    /// An app could not be timed.
    #[error("timing an app: {0}")]
    Bench(#[from] Box<benchmark::BenchError>),
    /// A schedule read back from the store does not parse.
    #[error("a stored schedule does not parse: {0}")]
    StoredSchedule(String),
}
