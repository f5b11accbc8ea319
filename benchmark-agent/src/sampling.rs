//! Sampling a pipeline's schedules for training, after Adams et al.: the
//! first is the deterministic beam search's answer (the model's best
//! guess), the rest are beam-1 searches with heavy random dropout, random
//! probes biased towards what the model thinks good. Duplicates (same
//! schedule text) are drawn again, up to a limit.

use compiler::{PipelineDef, Schedule, Target};
use search::featurize::StageFeatures;
use search::{autoschedule, BeamOptions, CostModel, SearchError};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

/// How many schedules, and how each is searched.
#[derive(Clone, Debug)]
pub struct SamplingOptions {
    /// Schedules per pipeline (Adams: 32).
    pub schedules: usize,
    /// Beam of the first, deterministic search.
    pub beam: usize,
    /// Dropout of the random probes (percent chance to survive a pass).
    pub random_dropout: u32,
    /// Budget of the deterministic search; each probe gets a tenth.
    pub budget: Duration,
}

impl Default for SamplingOptions {
    fn default() -> Self {
        SamplingOptions { schedules: 32, beam: 32, random_dropout: 1, budget: Duration::from_millis(1000) }
    }
}

/// One sampled schedule with what training needs of it.
#[derive(Clone, Debug)]
pub struct SampledSchedule {
    pub schedule: Schedule,
    pub text: String,
    /// SHA-256 of the text, hex.
    pub hash: String,
    pub features: Arc<StageFeatures>,
    pub predicted_seconds: f64,
}

/// The hex SHA-256 of `text`.
pub fn content_hash(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Samples up to `options.schedules` distinct schedules of `pipeline`;
/// `seed` makes the probes reproducible.
pub fn sample_schedules(
    pipeline: &PipelineDef,
    target: &Target,
    model: &mut dyn CostModel,
    options: &SamplingOptions,
    seed: u64,
) -> Result<Vec<SampledSchedule>, SearchError> {
    let mut seen = HashSet::new();
    let mut sampled = vec![];
    let attempts = options.schedules * 2;
    for attempt in 0..attempts {
        if sampled.len() == options.schedules {
            break;
        }
        let beam = if attempt == 0 {
            BeamOptions { beam: options.beam, seed, budget: options.budget, ..BeamOptions::default() }
        } else {
            BeamOptions {
                beam: 1,
                random_dropout: options.random_dropout,
                seed: seed.wrapping_mul(1000).wrapping_add(attempt as u64),
                budget: options.budget / 10,
                ..BeamOptions::default()
            }
        };
        let result = autoschedule(pipeline, target, model, &beam, 0)?;
        let text = result.schedule.to_string();
        let hash = content_hash(&text);
        if seen.insert(hash.clone()) {
            sampled.push(SampledSchedule {
                schedule: result.schedule,
                text,
                hash,
                features: result.features,
                predicted_seconds: result.predicted_seconds,
            });
        }
    }
    Ok(sampled)
}
