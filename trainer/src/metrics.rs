//! How well a network predicts a set of pipelines' measured samples
//! (the held-out set): what decides whether new weights are promoted.
//!
//! The network predicts absolute seconds (its loss compares predictions
//! with the measured times themselves), so predictions are used as they
//! are:
//! - `r2_log_runtime`: `1 - SS_res / SS_tot` of `ln(measured)` against
//!   `ln(predicted)` over every sample (predictions are not refitted, so it
//!   can be negative);
//! - `pairwise_accuracy`: of the pairs of one pipeline's schedules with
//!   different measured times, the fraction the predictions order the same
//!   way (ties count half), pooled over the pairs of every pipeline;
//! - `top1_score`: per pipeline, the best measured time over the measured
//!   time of the schedule the network ranks fastest (what a user of the
//!   pick gets: 1 is perfect, 0.5 a pick twice as slow as the best); the
//!   arithmetic mean over pipelines;
//! - `pairwise_accuracy_far` and `pairwise_accuracy_apart`:
//!   `pairwise_accuracy` over only the pairs whose measured times are more
//!   than [`FAR_APART`] (1.3) and [`APART`] (1.1) times apart: a timing's
//!   own noise (two fresh timings of one pipeline's schedules order about
//!   0.87 of its pairs alike on the 2-core hosts, `datagen remeasure`)
//!   makes closer pairs partly a coin toss for any model, so these are
//!   the pairs a model can be held to;
//! - `top1_regret`: per pipeline, the measured time of the schedule the
//!   network ranks fastest over the best measured time, minus one; the
//!   arithmetic mean over pipelines (0 is perfect). Kept for the metrics
//!   stored before `top1_score`, which replaces it in reports: one pick 10
//!   times slower outweighs nine perfect ones in a mean of regrets;
//! - [`accuracy_by_gap`]: the same accuracy within bands of how far apart
//!   a pair measured (reported, not used for promotion), which shows how
//!   much of what is misordered is near-ties.

use crate::dataset::StoredPipeline;
use crate::network::CostNetwork;
use crate::train::{ordering_accuracy, predict, TrainError};
use featurizer::{ScheduleFeatures, StageIdx};
use search::featurize::StageFeatures;
use search::{Analytical, CostModel, Machine};
use serde::{Deserialize, Serialize};

/// The ratio of measured times above which a pair counts for
/// `pairwise_accuracy_apart`.
pub const APART: f64 = 1.1;

/// The ratio of measured times above which a pair counts for
/// `pairwise_accuracy_far` (the gap Halide's retraining tool scores
/// schedules at).
pub const FAR_APART: f64 = 1.3;

/// Predictions below this many seconds count as this in logarithms.
const MIN_PREDICTED_SECONDS: f64 = 1e-30;

/// A network's metrics over a set of pipelines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Pipelines evaluated.
    pub pipelines: usize,
    /// Measured samples over them.
    pub samples: usize,
    /// Pairs of one pipeline's schedules with different measured times.
    pub pairs: usize,
    /// `1 - SS_res / SS_tot` of the log runtimes (can be negative).
    pub r2_log_runtime: f64,
    /// The fraction of `pairs` the predictions order as measured (ties count half; 1 when there are none).
    pub pairwise_accuracy: f64,
    /// The mean over pipelines of the measured time of the predicted fastest over the best, minus one (0 is perfect).
    pub top1_regret: f64,
    /// Pairs more than [`APART`] times apart, and the accuracy over them
    /// (absent from metrics stored before they were measured).
    #[serde(default)]
    pub pairs_apart: usize,
    /// The fraction of `pairs_apart` the predictions order as measured (a tie is wrong; 1 when there are none).
    #[serde(default)]
    pub pairwise_accuracy_apart: f64,
    /// The mean over pipelines of the best measured time over the measured
    /// time of the predicted fastest (1 is perfect; 0 in metrics stored
    /// before it was measured).
    #[serde(default)]
    pub top1_score: f64,
    /// Pairs more than [`FAR_APART`] times apart (0 in metrics stored before they were measured).
    #[serde(default)]
    pub pairs_far: usize,
    /// The fraction of `pairs_far` the predictions order as measured (a tie is wrong; 1 when there are none).
    #[serde(default)]
    pub pairwise_accuracy_far: f64,
}

impl Metrics {
    /// Whether the metrics hold `top1_score` and the far pairs (metrics
    /// stored before they were measured do not).
    pub fn has_top1_score(&self) -> bool {
        self.pipelines == 0 || self.top1_score > 0.0
    }
}

/// One pipeline's measured and predicted seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Predictions {
    /// The pipeline's hash in the store.
    pub pipeline_hash: String,
    /// Measured seconds, one per sample.
    pub measured: Vec<f64>,
    /// Predicted seconds, in the order of `measured`.
    pub predicted: Vec<f64>,
}

/// One pipeline's share of the metrics: how well the predictions order
/// its schedules and pick among them.
#[derive(Clone, Debug, PartialEq)]
pub struct PipelineScore {
    /// The pipeline's hash in the store.
    pub pipeline_hash: String,
    /// Its measured samples.
    pub samples: usize,
    /// Pairs of its schedules with different measured times.
    pub pairs: usize,
    /// The fraction of `pairs` the predictions order as measured (ties count half).
    pub pairwise_accuracy: f64,
    /// The measured time of the predicted fastest over the best, minus one.
    pub top1_regret: f64,
    /// The best measured time over the measured time of the predicted fastest.
    pub top1_score: f64,
    /// The slowest measured time over the fastest.
    pub spread: f64,
}

impl Predictions {
    /// This pipeline's metrics alone.
    pub fn score(&self) -> PipelineScore {
        let fastest = self.measured.iter().copied().fold(f64::INFINITY, f64::min);
        let slowest = self.measured.iter().copied().fold(0.0, f64::max);
        PipelineScore {
            pipeline_hash: self.pipeline_hash.clone(),
            samples: self.measured.len(),
            pairs: distinct_pairs(&self.measured),
            pairwise_accuracy: ordering_accuracy(&self.predicted, &self.measured),
            top1_regret: regret(&self.predicted, &self.measured),
            top1_score: 1.0 / (1.0 + regret(&self.predicted, &self.measured)),
            spread: if fastest > 0.0 { slowest / fastest } else { 1.0 },
        }
    }
}

/// The network's predictions for every sample of `pipelines`.
pub fn predictions(network: &CostNetwork, pipelines: &[StoredPipeline]) -> Result<Vec<Predictions>, TrainError> {
    pipelines
        .iter()
        .map(|p| {
            Ok(Predictions {
                pipeline_hash: p.hash.clone(),
                measured: p.samples.schedules.iter().map(|s| s.runtime_seconds).collect(),
                predicted: predict(network, &p.samples)?,
            })
        })
        .collect()
}

/// The metrics of `network` over `pipelines` (see the module documentation).
pub fn evaluate(network: &CostNetwork, pipelines: &[StoredPipeline]) -> Result<Metrics, TrainError> {
    Ok(metrics_of(&predictions(network, pipelines)?))
}

/// The metrics of predictions already made.
pub fn metrics_of(predictions: &[Predictions]) -> Metrics {
    let samples = predictions.iter().map(|p| p.measured.len()).sum();
    let (mut pairs, mut agreeing) = (0usize, 0.0);
    let (mut pairs_apart, mut agreeing_apart) = (0usize, 0usize);
    let (mut pairs_far, mut agreeing_far) = (0usize, 0usize);
    let (mut regret_sum, mut score_sum) = (0.0, 0.0);
    for p in predictions {
        let n = distinct_pairs(&p.measured);
        pairs += n;
        agreeing += ordering_accuracy(&p.predicted, &p.measured) * n as f64;
        let r = regret(&p.predicted, &p.measured);
        regret_sum += r;
        score_sum += 1.0 / (1.0 + r);
        let (apart, agree) = ordered_pairs_apart(&p.predicted, &p.measured, APART);
        pairs_apart += apart;
        agreeing_apart += agree;
        let (far, agree) = ordered_pairs_apart(&p.predicted, &p.measured, FAR_APART);
        pairs_far += far;
        agreeing_far += agree;
    }
    let fraction = |agree: usize, of: usize| if of > 0 { agree as f64 / of as f64 } else { 1.0 };
    let logs: Vec<(f64, f64)> = predictions
        .iter()
        .flat_map(|p| p.measured.iter().zip(&p.predicted))
        .map(|(m, q)| (m.ln(), q.max(MIN_PREDICTED_SECONDS).ln()))
        .collect();
    let mean = logs.iter().map(|(m, _)| m).sum::<f64>() / logs.len().max(1) as f64;
    let total: f64 = logs.iter().map(|(m, _)| (m - mean).powi(2)).sum();
    let residual: f64 = logs.iter().map(|(m, q)| (m - q).powi(2)).sum();
    Metrics {
        pipelines: predictions.len(),
        samples,
        pairs,
        r2_log_runtime: if total > 0.0 { 1.0 - residual / total } else { 0.0 },
        pairwise_accuracy: if pairs > 0 { agreeing / pairs as f64 } else { 1.0 },
        top1_regret: regret_sum / predictions.len().max(1) as f64,
        pairs_apart,
        pairwise_accuracy_apart: fraction(agreeing_apart, pairs_apart),
        top1_score: if predictions.is_empty() { 1.0 } else { score_sum / predictions.len() as f64 },
        pairs_far,
        pairwise_accuracy_far: fraction(agreeing_far, pairs_far),
    }
}

/// Pairs of samples more than `ratio` times apart, and how many of them
/// the predictions order as measured (a tied prediction is wrong here: the
/// measurements are not).
fn ordered_pairs_apart(predicted: &[f64], measured: &[f64], ratio: f64) -> (usize, usize) {
    let (mut pairs, mut agree) = (0, 0);
    for i in 0..measured.len() {
        for j in i + 1..measured.len() {
            let (fast, slow) = if measured[i] < measured[j] { (i, j) } else { (j, i) };
            if measured[slow] > measured[fast] * ratio {
                pairs += 1;
                agree += usize::from(predicted[fast] < predicted[slow]);
            }
        }
    }
    (pairs, agree)
}

/// The upper edges of the measured-gap bands of [`accuracy_by_gap`] (the
/// last band has none).
pub const GAP_BANDS: [f64; 6] = [1.05, 1.1, 1.2, 1.5, 2.0, 4.0];

/// Pairs whose slower measured time is at most `upto` times the faster
/// (and more than the band below allows), and the fraction of them the
/// predictions order as measured (a tied prediction counts half).
#[derive(Clone, Debug, PartialEq)]
pub struct GapBand {
    /// `None` for the last band (no upper edge).
    pub upto: Option<f64>,
    /// Pairs in the band.
    pub pairs: usize,
    /// The fraction of them the predictions order as measured.
    pub accuracy: f64,
}

/// Pairwise accuracy by how far apart each pair of one pipeline's
/// schedules measured, in the bands of [`GAP_BANDS`] (pairs of equal
/// measured times are left out, as in `pairwise_accuracy`).
pub fn accuracy_by_gap(predictions: &[Predictions]) -> Vec<GapBand> {
    let mut bands = vec![(0usize, 0.0f64); GAP_BANDS.len() + 1];
    for p in predictions {
        for i in 0..p.measured.len() {
            for j in i + 1..p.measured.len() {
                let (fast, slow) = if p.measured[i] < p.measured[j] { (i, j) } else { (j, i) };
                if p.measured[fast] == p.measured[slow] {
                    continue;
                }
                let gap = p.measured[slow] / p.measured[fast];
                let band = GAP_BANDS.iter().position(|&edge| gap <= edge).unwrap_or(GAP_BANDS.len());
                let credit = match p.predicted[fast].total_cmp(&p.predicted[slow]) {
                    std::cmp::Ordering::Less => 1.0,
                    std::cmp::Ordering::Equal => 0.5,
                    std::cmp::Ordering::Greater => 0.0,
                };
                bands[band].0 += 1;
                bands[band].1 += credit;
            }
        }
    }
    bands
        .into_iter()
        .enumerate()
        .map(|(k, (pairs, agreeing))| GapBand {
            upto: GAP_BANDS.get(k).copied(),
            pairs,
            accuracy: if pairs > 0 { agreeing / pairs as f64 } else { 1.0 },
        })
        .collect()
}

/// Pairs of samples with different measured times.
fn distinct_pairs(measured: &[f64]) -> usize {
    (0..measured.len()).map(|i| measured[i + 1..].iter().filter(|&&m| m != measured[i]).count()).sum()
}

/// Measured time of the predicted-fastest schedule over the fastest measured, minus one.
fn regret(predicted: &[f64], measured: &[f64]) -> f64 {
    let best = measured.iter().copied().fold(f64::INFINITY, f64::min);
    let pick = predicted.iter().zip(measured).min_by(|a, b| a.0.total_cmp(b.0)).map(|(_, &m)| m);
    match pick {
        Some(m) if best > 0.0 && best.is_finite() => m / best - 1.0,
        _ => 0.0,
    }
}

/// The analytical model's predictions for every sample of `pipelines`:
/// the baseline the learned model has to beat (its schedule features are
/// read back from the stored rows; a stage with a row of zeros is one the
/// schedule does not place).
pub fn analytical_predictions(pipelines: &[StoredPipeline], machine: &Machine) -> Vec<Predictions> {
    pipelines
        .iter()
        .map(|p| {
            let mut model = Analytical::new(machine.clone());
            model.set_pipeline(&p.dag);
            let features: Vec<StageFeatures> = p
                .samples
                .schedules
                .iter()
                .map(|s| {
                    s.stages
                        .iter()
                        .enumerate()
                        .filter(|(_, row)| row.iter().any(|&v| v != 0.0))
                        .map(|(i, row)| (StageIdx(i as u32), ScheduleFeatures::from_array(&row.map(f64::from))))
                        .collect()
                })
                .collect();
            let batch: Vec<&StageFeatures> = features.iter().collect();
            Predictions {
                pipeline_hash: p.hash.clone(),
                measured: p.samples.schedules.iter().map(|s| s.runtime_seconds).collect(),
                predicted: model.evaluate(&batch).into_iter().map(|c| c.total).collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(measured: &[f64], predicted: &[f64]) -> Predictions {
        Predictions { pipeline_hash: "p".into(), measured: measured.to_vec(), predicted: predicted.to_vec() }
    }

    #[test]
    fn perfect_predictions_score_perfectly() {
        let m = metrics_of(&[p(&[1.0, 2.0, 4.0], &[1.0, 2.0, 4.0]), p(&[3.0, 1.0], &[3.0, 1.0])]);
        assert_eq!((m.pipelines, m.samples, m.pairs), (2, 5, 4));
        assert_eq!((m.r2_log_runtime, m.pairwise_accuracy, m.top1_regret, m.top1_score), (1.0, 1.0, 0.0, 1.0));
        assert_eq!((m.pairs_far, m.pairwise_accuracy_far), (4, 1.0));
    }

    #[test]
    fn reversed_predictions_score_badly() {
        let m = metrics_of(&[p(&[1.0, 2.0, 4.0], &[4.0, 2.0, 1.0])]);
        assert_eq!(m.pairwise_accuracy, 0.0);
        assert_eq!((m.top1_regret, m.top1_score), (3.0, 0.25));
        assert!(m.r2_log_runtime < 0.0);
    }

    #[test]
    fn pairs_apart_leave_out_the_near_ties() {
        // 1.0 vs 1.05 is a near tie (left out); 1.0 vs 2.0 and 1.05 vs 2.0
        // are apart, one ordered right, one wrong.
        let m = metrics_of(&[p(&[1.0, 1.05, 2.0], &[1.0, 3.0, 2.0])]);
        assert_eq!((m.pairs, m.pairs_apart), (3, 2));
        assert_eq!(m.pairwise_accuracy_apart, 0.5);
        assert!((m.pairwise_accuracy - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn far_pairs_leave_out_pairs_within_1_3x() {
        // 1.0 vs 1.2 is within 1.3x (left out of the far pairs, counted
        // apart); 1.0 vs 2.0 is ordered right, 1.2 vs 2.0 wrong.
        let m = metrics_of(&[p(&[1.0, 1.2, 2.0], &[1.0, 3.0, 2.0])]);
        assert_eq!((m.pairs_apart, m.pairs_far), (3, 2));
        assert_eq!(m.pairwise_accuracy_far, 0.5);
        assert!((m.pairwise_accuracy_apart - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn the_top1_score_is_the_mean_speed_of_the_picks() {
        // One perfect pick and one four times slower than the best: the
        // score is the mean of 1 and 1/4, where the mean regret (1.5)
        // would make the slow pick outweigh the perfect one.
        let m = metrics_of(&[p(&[1.0, 2.0], &[1.0, 2.0]), p(&[1.0, 4.0], &[2.0, 1.0])]);
        assert_eq!((m.top1_score, m.top1_regret), (0.625, 1.5));
        assert!(m.has_top1_score());
        assert!(!Metrics { top1_score: 0.0, ..m }.has_top1_score(), "metrics stored before the score");
    }

    #[test]
    fn accuracy_by_gap_sorts_pairs_into_bands() {
        // Gaps up to 1.05: 1.5 vs 1.53 (right) and 1.0 vs 1.02 (wrong);
        // 1.5 (wrong); 1.53 (tied prediction: half); two beyond the last
        // edge (right).
        let bands = accuracy_by_gap(&[p(&[1.0, 1.5, 1.53], &[1.0, 0.5, 1.0]), p(&[1.0, 1.02, 8.0], &[2.0, 1.0, 9.0])]);
        let summary: Vec<(Option<f64>, usize, f64)> = bands.iter().map(|b| (b.upto, b.pairs, b.accuracy)).collect();
        assert_eq!(
            summary,
            [
                (Some(1.05), 2, 0.5),
                (Some(1.1), 0, 1.0),
                (Some(1.2), 0, 1.0),
                (Some(1.5), 1, 0.0),
                (Some(2.0), 1, 0.5),
                (Some(4.0), 0, 1.0),
                (None, 2, 1.0),
            ]
        );
        let total: usize = bands.iter().map(|b| b.pairs).sum();
        assert_eq!(total, 6);
    }

    #[test]
    fn pairs_are_pooled_over_pipelines() {
        // 3 pairs all right, 1 pair wrong: 3/4, not the mean of 1 and 0.
        let m = metrics_of(&[p(&[1.0, 2.0, 4.0], &[1.0, 2.0, 4.0]), p(&[1.0, 2.0], &[2.0, 1.0])]);
        assert_eq!(m.pairwise_accuracy, 0.75);
        assert_eq!((m.top1_regret, m.top1_score), (0.5, 0.75));
    }

    #[test]
    fn a_pipeline_scores_alone_what_it_adds_to_the_pool() {
        let good = p(&[1.0, 2.0, 4.0], &[1.0, 2.0, 4.0]).score();
        let bad = p(&[1.0, 1.0, 8.0], &[3.0, 2.0, 1.0]).score();
        assert_eq!((good.samples, good.pairs, good.pairwise_accuracy, good.top1_score, good.spread), (3, 3, 1.0, 1.0, 4.0));
        // The tie is not a pair; both others are reversed; the pick is 8x the best.
        assert_eq!(
            (bad.samples, bad.pairs, bad.pairwise_accuracy, bad.top1_regret, bad.top1_score, bad.spread),
            (3, 2, 0.0, 7.0, 0.125, 8.0)
        );
    }
}
