//! Retraining in the loop: the server counts the samples agents report for
//! each host key and, once `after_samples` new ones have arrived for a
//! host, retrains that host's cost model from the store with
//! [`trainer::retrain()`] (held-out split by pipeline; the new version is
//! promoted only if its held-out pairwise accuracy is not lower and its
//! regret not higher than the promoted weights', or than the analytical
//! model's when none are promoted), logging the held-out metrics.
//!
//! At most one retraining runs at a time, on a blocking thread, over a
//! store connection of its own (the file is in WAL mode: the agents' reports
//! and the `Schedule` calls go on meanwhile, and the store's write lock is
//! held only to insert and promote the new version). Samples reported while
//! a retraining runs count towards the next one, which starts as soon as it
//! ends if a host has enough. Nothing else needs telling: leases read the
//! promoted version of their agent's host from the store when they are
//! issued, and a `Schedule` call naming no weights loads the promoted
//! weights of its host on every call.

use data::{Store, StoreError};
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;
use thiserror::Error;
use tracing::{info, warn};
use trainer::{RetrainError, RetrainOptions};

/// When and how to retrain.
#[derive(Clone, Debug)]
pub struct RetrainSettings {
    /// New samples of a host key that start a retraining for it (at least 1).
    pub after_samples: u64,
    /// How each retraining trains and decides on promotion.
    pub options: RetrainOptions,
}

/// Why retraining in the loop cannot be set up.
#[derive(Debug, Error)]
pub enum RetrainingError {
    /// The training store is in memory, not in a file.
    #[error("retraining in the loop needs the training store in a file (it trains over a connection of its own)")]
    InMemoryStore,
    /// The training store failed.
    #[error("training store: {0}")]
    Store(#[from] StoreError),
}

/// What one retraining did.
#[derive(Clone, Debug)]
pub struct Retrained {
    /// The host key retrained for.
    pub host_key: String,
    /// The stored version and whether it was promoted, or why retraining failed.
    pub result: Result<(u32, bool), RetrainFailure>,
}

/// Why a retraining in the loop failed (the loop goes on).
#[derive(Clone, Debug, Error)]
pub enum RetrainFailure {
    /// The trainer's error: too little data, say.
    #[error(transparent)]
    Retrain(Arc<RetrainError>),
    /// A panic (in libtorch, say), with its message when it had one.
    #[error("retraining panicked: {}", .0.as_deref().unwrap_or("?"))]
    Panicked(Option<String>),
}

/// The samples waiting for a retraining, and whether one runs.
#[derive(Debug, Default)]
struct Pending {
    /// New samples per host key since its last retraining began.
    samples: BTreeMap<String, u64>,
    running: bool,
    history: Vec<Retrained>,
}

impl Pending {
    /// The host with the most new samples, if at least `after`; its count starts again from zero.
    fn take_due(&mut self, after: u64) -> Option<String> {
        let (host, _) = self.samples.iter().filter(|&(_, &n)| n >= after.max(1)).max_by_key(|&(_, &n)| n)?;
        let host = host.clone();
        self.samples.remove(&host);
        Some(host)
    }
}

/// Retrains hosts' models as their samples arrive; clones share one state.
#[derive(Clone)]
pub struct Retrainer {
    settings: Arc<RetrainSettings>,
    /// The retrainer's own connection to the server's store file.
    store: Arc<Mutex<Store>>,
    pending: Arc<Mutex<Pending>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Retrainer {
    /// A retrainer over a second connection to `server_store`'s file.
    pub fn new(settings: RetrainSettings, server_store: &Store) -> Result<Retrainer, RetrainingError> {
        let path = server_store.path().ok_or(RetrainingError::InMemoryStore)?;
        Ok(Retrainer { settings: Arc::new(settings), store: Arc::new(Mutex::new(Store::open(path)?)), pending: Arc::default() })
    }

    /// Counts `samples` newly stored samples of `host_key` and, if a host
    /// has enough and no retraining runs, starts one on a blocking thread
    /// (so it must be called within a tokio runtime); returns at once.
    pub fn stored(&self, host_key: &str, samples: u64) {
        if samples == 0 {
            return;
        }
        let mut pending = lock(&self.pending);
        *pending.samples.entry(host_key.to_string()).or_default() += samples;
        if pending.running {
            return;
        }
        if let Some(host) = pending.take_due(self.settings.after_samples) {
            pending.running = true;
            let retrainer = self.clone();
            tokio::task::spawn_blocking(move || retrainer.run(host));
        }
    }

    /// Whether a retraining runs now.
    pub fn is_running(&self) -> bool {
        lock(&self.pending).running
    }

    /// The retrainings finished so far, oldest first.
    pub fn history(&self) -> Vec<Retrained> {
        lock(&self.pending).history.clone()
    }

    /// Retrains `host_key`, then every host that became due meanwhile.
    fn run(&self, mut host_key: String) {
        loop {
            let retrained = self.retrain(&host_key);
            let mut pending = lock(&self.pending);
            pending.history.push(retrained);
            match pending.take_due(self.settings.after_samples) {
                Some(next) => host_key = next,
                None => {
                    pending.running = false;
                    return;
                }
            }
        }
    }

    /// One retraining, logged; a failure (too little data, a panic in
    /// libtorch) is logged and recorded, and the loop goes on.
    fn retrain(&self, host_key: &str) -> Retrained {
        let started = Instant::now();
        info!(host_key, "retraining");
        let outcome = {
            let mut store = lock(&self.store);
            std::panic::catch_unwind(AssertUnwindSafe(|| trainer::retrain(&mut store, host_key, &self.settings.options, None)))
        };
        let wall_s = started.elapsed().as_secs_f64();
        let result = match outcome {
            Ok(Ok(outcome)) => {
                let (m, a) = (&outcome.metrics.held_out, &outcome.metrics.analytical_held_out);
                info!(
                    host_key,
                    version = outcome.version,
                    promoted = outcome.promoted,
                    train_pipelines = outcome.metrics.train_pipelines,
                    train_samples = outcome.metrics.train_samples,
                    held_out_pipelines = m.pipelines,
                    held_out_top1_score = m.top1_score,
                    held_out_pairwise_accuracy_far = m.pairwise_accuracy_far,
                    held_out_pairwise_accuracy = m.pairwise_accuracy,
                    held_out_r2_log_runtime = m.r2_log_runtime,
                    analytical_top1_score = a.top1_score,
                    analytical_pairwise_accuracy_far = a.pairwise_accuracy_far,
                    wall_s,
                    "retrained: {}",
                    outcome.reason
                );
                Ok((outcome.version, outcome.promoted))
            }
            Ok(Err(e)) => Err(RetrainFailure::Retrain(Arc::new(e))),
            Err(panic) => Err(RetrainFailure::Panicked(crate::panic_message(&*panic).map(str::to_string))),
        };
        if let Err(e) = &result {
            warn!(host_key, wall_s, "retraining failed: {e}");
        }
        Retrained { host_key: host_key.to_string(), result }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_with_most_new_samples_is_due_once_it_has_enough() {
        let mut p = Pending::default();
        p.samples.insert("a".into(), 4);
        p.samples.insert("b".into(), 9);
        p.samples.insert("c".into(), 6);
        assert_eq!(p.take_due(10), None);
        assert_eq!(p.take_due(5).as_deref(), Some("b"));
        assert_eq!(p.take_due(5).as_deref(), Some("c"));
        assert_eq!(p.take_due(5), None);
        assert_eq!(p.samples.get("a"), Some(&4), "a's samples still count towards its next retraining");
        assert_eq!(p.take_due(0).as_deref(), Some("a"), "a threshold of 0 is 1");
    }

    #[test]
    fn an_in_memory_store_cannot_be_retrained_in_the_loop() {
        let settings = RetrainSettings { after_samples: 1, options: RetrainOptions::for_host() };
        let err = Retrainer::new(settings, &Store::open_in_memory().unwrap()).err().unwrap();
        assert!(matches!(err, RetrainingError::InMemoryStore), "{err}");
    }
}
