//! Sampling a pipeline's schedules for training, after Adams et al.: the
//! first is the deterministic beam search's answer (the model's best
//! guess), the rest are beam-1 searches with heavy random dropout, random
//! probes biased towards what the model thinks good. Optionally, some of
//! those probes are ranked by a [`RandomModel`] instead: schedules drawn
//! without the model's bias, spread further apart in runtime (the model's
//! probes of one pipeline tend to be near ties). With sliding placements
//! offered, some probes may favour line buffers (see
//! `FavouringLineBuffers`): line buffers are few of a decision's choices
//! and seldom the model's first, which dropout mostly keeps, so other
//! probes rarely take one. Duplicates (same schedule text) are drawn again, up to a limit.

use compiler::{PipelineDef, Schedule, Target};
use featurizer::Dag;
use search::cost_model::Cost;
use search::featurize::StageFeatures;
use search::{autoschedule, AutoSchedule, BeamOptions, CostModel, RandomModel, SearchError};
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
    /// Probes ranked by a [`RandomModel`] rather than the model (the first
    /// ones after the deterministic search).
    pub random_probes: usize,
    /// Let the searches offer sliding placements (line buffers; see
    /// [`BeamOptions::sliding`]).
    pub sliding: bool,
    /// Of the probes ranked by the model, those that favour line buffers
    /// (the first ones after the random probes; only with `sliding`).
    pub line_buffer_probes: usize,
}

impl Default for SamplingOptions {
    fn default() -> Self {
        SamplingOptions {
            schedules: 32,
            beam: 32,
            random_dropout: 1,
            budget: Duration::from_millis(1000),
            random_probes: 0,
            sliding: false,
            line_buffer_probes: 0,
        }
    }
}

/// One sampled schedule with what training needs of it.
#[derive(Clone, Debug)]
pub struct SampledSchedule {
    /// The schedule.
    pub schedule: Schedule,
    /// Its text (`Schedule`'s form).
    pub text: String,
    /// SHA-256 of the text, hex.
    pub hash: String,
    /// Its schedule features, by stage.
    pub features: Arc<StageFeatures>,
    /// Its runtime as the sampling model predicts it, in seconds (whichever
    /// ranking found it).
    pub predicted_seconds: f64,
}

pub use proto::content_hash;

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
    let random = 1..=options.random_probes;
    let favouring = options.random_probes + 1..=options.random_probes + options.line_buffer_probes;
    for attempt in 0..attempts {
        if sampled.len() == options.schedules {
            break;
        }
        let beam = if attempt == 0 {
            BeamOptions { beam: options.beam, seed, budget: options.budget, sliding: options.sliding, ..BeamOptions::default() }
        } else {
            BeamOptions {
                beam: 1,
                random_dropout: options.random_dropout,
                seed: seed.wrapping_mul(1000).wrapping_add(attempt as u64),
                budget: options.budget / 10,
                sliding: options.sliding,
                ..BeamOptions::default()
            }
        };
        let searched = if random.contains(&attempt) {
            autoschedule(pipeline, target, &mut RandomModel::new(beam.seed), &beam, 0)?.answer().map(|r| priced_by(model, r))
        } else if options.sliding && favouring.contains(&attempt) {
            let searched = autoschedule(pipeline, target, &mut FavouringLineBuffers { model: &mut *model }, &beam, 0)?;
            searched.answer().map(|r| priced_by(model, r))
        } else {
            autoschedule(pipeline, target, model, &beam, 0)?.answer()
        };
        // Only a search with an abandon flag comes to no answer.
        let Some(result) = searched else { continue };
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

/// `result`, searched under another ranking, with `model`'s prediction.
fn priced_by(model: &dyn CostModel, mut result: AutoSchedule) -> AutoSchedule {
    result.predicted_seconds = model.evaluate(&[&result.features])[0].total;
    result
}

/// Ranks as its model does, but prices a candidate that line-buffers a
/// Func (allocates it fewer times than it runs its loop nest) at a quarter
/// of its predicted runtime, so a probe takes line buffers wherever the
/// search offers them and its dropout spares them. What is recorded is the
/// model's own prediction.
struct FavouringLineBuffers<'a> {
    model: &'a mut dyn CostModel,
}

/// The price of a line-buffered candidate, relative to its prediction.
const LINE_BUFFER_DISCOUNT: f64 = 0.25;

impl CostModel for FavouringLineBuffers<'_> {
    fn name(&self) -> String {
        format!("{}, favouring line buffers", self.model.name())
    }

    fn set_pipeline(&mut self, dag: &Dag) {
        self.model.set_pipeline(dag);
    }

    fn evaluate(&self, batch: &[&StageFeatures]) -> Vec<Cost> {
        let mut costs = self.model.evaluate(batch);
        for (cost, features) in costs.iter_mut().zip(batch) {
            if features.shared().any(|(_, f)| f.num_realizations < f.num_productions) {
                cost.total *= LINE_BUFFER_DISCOUNT;
                cost.per_stage.iter_mut().for_each(|(_, seconds)| *seconds *= LINE_BUFFER_DISCOUNT);
            }
        }
        costs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use random_pipelines::{generate, GeneratorParams};
    use search::{Analytical, Machine};

    /// Far more than these searches need, so that no search stops at its
    /// deadline (which would make what it samples depend on the machine's load).
    const SEARCH_BUDGET: Duration = Duration::from_secs(60);

    /// The machine the samples are made for: fixed (an AVX-512 machine of two
    /// threads), so that what these tests sample does not depend on the host
    /// running them; the search offers other placements at other widths.
    const TARGET: Target = Target { vector_bytes: 64, threads: 2 };

    fn sample_with(seed: u64, options: &SamplingOptions) -> Vec<SampledSchedule> {
        let pipeline = generate(&GeneratorParams { seed, max_stages: 5, input_size: (96, 96, 3), ..Default::default() }).unwrap().pipeline;
        let mut model = Analytical::new(Machine::typical(2));
        sample_schedules(&pipeline, &TARGET, &mut model, options, 3).unwrap()
    }

    fn sample(seed: u64, random_probes: usize) -> Vec<SampledSchedule> {
        sample_with(seed, &SamplingOptions { schedules: 8, beam: 4, budget: SEARCH_BUDGET, random_probes, ..SamplingOptions::default() })
    }

    /// How many of `sampled` store a Func outside the loop computing it.
    fn line_buffered(sampled: &[SampledSchedule]) -> usize {
        sampled.iter().filter(|s| s.schedule.funcs.values().any(|f| f.stored_outside_compute())).count()
    }

    #[test]
    fn sliding_placements_are_sampled_only_when_asked_for() {
        let options = |sliding| SamplingOptions {
            schedules: 16,
            beam: 4,
            budget: SEARCH_BUDGET,
            random_probes: 8,
            sliding,
            ..SamplingOptions::default()
        };
        let favouring = |sliding| SamplingOptions { line_buffer_probes: 8, ..options(sliding) };
        let (mut with, mut without, mut favoured, mut favoured_without) = (0, 0, 0, 0);
        for seed in 0..6 {
            with += line_buffered(&sample_with(seed, &options(true)));
            without += line_buffered(&sample_with(seed, &options(false)));
            favoured += line_buffered(&sample_with(seed, &favouring(true)));
            favoured_without += line_buffered(&sample_with(seed, &favouring(false)));
        }
        assert_eq!((without, favoured_without), (0, 0), "no line buffer unless asked for");
        assert!(with > 0, "some sampled schedule line-buffers a Func");
        assert!(favoured > 2 * with, "probes favouring line buffers take more of them: {favoured} against {with}");
    }

    #[test]
    fn random_probes_are_distinct_reproducible_and_priced_by_the_model() {
        for seed in [1, 2] {
            let guided = sample(seed, 0);
            let mixed = sample(seed, 4);
            assert!(mixed.len() <= 8 && mixed.len() >= 5, "{} schedules", mixed.len());
            let hashes: HashSet<_> = mixed.iter().map(|s| &s.hash).collect();
            assert_eq!(hashes.len(), mixed.len(), "no schedule twice");
            assert_eq!(mixed[0].hash, guided[0].hash, "the deterministic search comes first either way");
            assert_ne!(
                mixed.iter().map(|s| &s.hash).collect::<Vec<_>>(),
                guided.iter().map(|s| &s.hash).collect::<Vec<_>>(),
                "the random probes draw other schedules"
            );
            assert_eq!(mixed.iter().map(|s| &s.hash).collect::<Vec<_>>(), sample(seed, 4).iter().map(|s| &s.hash).collect::<Vec<_>>());
            assert!(mixed.iter().all(|s| s.predicted_seconds.is_finite() && s.predicted_seconds > 0.0));
        }
    }
}
