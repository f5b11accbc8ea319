//! How far the learned model can be trusted on a pipeline: the members of
//! its ensemble, trained alike from different starting weights, agree where
//! the training data taught them the same thing and drift apart away from
//! it, so their disagreement flags a pipeline unlike the training set.
//!
//! A candidate's disagreement is the standard deviation of the natural
//! logarithms of the members' predictions (0.1: about 10% apart). A
//! pipeline's is that of its every-Func-at-the-root schedule, which every
//! pipeline has and which needs no search: [`root_disagreement`].
//! [`by_threshold`] says, over a store's held-out pipelines, what answering
//! from the analytical model above a threshold would have done to the
//! picks (`trainer evaluate` prints it).

use crate::inputs::PipelineSamples;
use crate::learned::LearnedModel;
use crate::metrics::Predictions;
use crate::network::CostNetwork;
use crate::train::{to_f64s, TrainError};
use featurizer::Dag;
use search::CostModel;

/// The standard deviation of the logarithms of an ensemble's members'
/// predictions; `None` for fewer than two members.
pub fn disagreement(predictions: impl Iterator<Item = f64>) -> Option<f64> {
    let logs: Vec<f64> = predictions.map(|t| t.max(f64::MIN_POSITIVE).ln()).collect();
    if logs.len() < 2 {
        return None;
    }
    let mean = logs.iter().sum::<f64>() / logs.len() as f64;
    Some((logs.iter().map(|l| (l - mean) * (l - mean)).sum::<f64>() / logs.len() as f64).sqrt())
}

/// The members' disagreement on the schedule that computes every Func of
/// `dag`'s pipeline at the root; `None` for a network of one member.
pub fn root_disagreement(network: &CostNetwork, dag: &Dag) -> Option<f64> {
    let mut model = LearnedModel::new(network.clone(), "");
    model.set_pipeline(dag);
    search::beam::all_at_root(dag, &model).cost.disagreement
}

/// The members' disagreement on each of a pipeline's measured samples.
pub fn sample_disagreements(network: &CostNetwork, samples: &PipelineSamples) -> Result<Vec<f64>, TrainError> {
    samples.validate()?;
    let (input, _) = samples.tensors(&samples.schedules);
    let members = to_f64s(&tch::no_grad(|| network.forward(&input).member_totals))?;
    let n = samples.schedules.len();
    Ok((0..n).map(|i| disagreement((0..members.len() / n.max(1)).map(|m| members[m * n + i])).unwrap_or(0.0)).collect())
}

/// Mean top-1 regret when each pipeline's samples are ranked by the
/// prediction times `e^(k * disagreement)`: `k > 0` prefers schedules the
/// members agree on.
pub fn pessimistic_regret(learned: &[Predictions], disagreements: &[Vec<f64>], k: f64) -> f64 {
    let regrets: Vec<f64> = learned
        .iter()
        .zip(disagreements)
        .map(|(p, d)| {
            let ranked: Vec<f64> = p.predicted.iter().zip(d).map(|(q, d)| q * (k * d).exp()).collect();
            Predictions { predicted: ranked, ..p.clone() }.score().top1_regret
        })
        .collect();
    regrets.iter().sum::<f64>() / regrets.len().max(1) as f64
}

/// What answering from the analytical model on the pipelines whose
/// disagreement exceeds `threshold` does to the picks.
#[derive(Clone, Debug, PartialEq)]
pub struct GuardOutcome {
    /// The disagreement above which the analytical model answers.
    pub threshold: f64,
    /// Pipelines above it.
    pub above: usize,
    /// Mean top-1 regret over every pipeline: the learned model's picks.
    pub learned_regret: f64,
    /// The same, with the analytical model's picks above the threshold.
    pub guarded_regret: f64,
    /// Over the pipelines above the threshold only: the learned model's
    /// mean regret and the analytical model's.
    pub above_regret: (f64, f64),
}

/// For each threshold, the outcome of the guard over pipelines of
/// `disagreements` (one per pipeline, in the order of `learned` and
/// `analytical`, each model's predictions of the same samples).
pub fn by_threshold(disagreements: &[f64], learned: &[Predictions], analytical: &[Predictions], thresholds: &[f64]) -> Vec<GuardOutcome> {
    let regrets: Vec<(f64, f64)> = learned.iter().zip(analytical).map(|(l, a)| (l.score().top1_regret, a.score().top1_regret)).collect();
    let mean = |v: &mut dyn Iterator<Item = f64>| {
        let (sum, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
        if n == 0 {
            0.0
        } else {
            sum / n as f64
        }
    };
    thresholds
        .iter()
        .map(|&threshold| {
            let above = |d: &f64| *d > threshold;
            let pairs = || disagreements.iter().zip(&regrets);
            GuardOutcome {
                threshold,
                above: disagreements.iter().filter(|d| above(d)).count(),
                learned_regret: mean(&mut regrets.iter().map(|r| r.0)),
                guarded_regret: mean(&mut pairs().map(|(d, r)| if above(d) { r.1 } else { r.0 })),
                above_regret: (
                    mean(&mut pairs().filter(|(d, _)| above(d)).map(|(_, r)| r.0)),
                    mean(&mut pairs().filter(|(d, _)| above(d)).map(|(_, r)| r.1)),
                ),
            }
        })
        .collect()
}

/// The `q`-quantile (0 to 1) of `values`, by the nearest rank.
pub fn quantile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_that_agree_disagree_by_nothing_and_a_factor_of_e_by_one_half() {
        assert_eq!(disagreement([2.0, 2.0, 2.0].into_iter()), Some(0.0));
        let d = disagreement([1.0, std::f64::consts::E].into_iter()).unwrap();
        assert!((d - 0.5).abs() < 1e-12, "{d}");
        assert_eq!(disagreement([3.0].into_iter()), None);
    }

    #[test]
    fn the_guard_takes_the_analytical_picks_above_the_threshold() {
        let p = |measured: &[f64], predicted: &[f64]| Predictions {
            pipeline_hash: "p".into(),
            measured: measured.to_vec(),
            predicted: predicted.to_vec(),
        };
        // Pipeline 0: learned picks right, analytical wrong (regret 1);
        // pipeline 1: learned wrong (regret 3), analytical right.
        let learned = [p(&[1.0, 2.0], &[1.0, 2.0]), p(&[1.0, 4.0], &[2.0, 1.0])];
        let analytical = [p(&[1.0, 2.0], &[2.0, 1.0]), p(&[1.0, 4.0], &[1.0, 2.0])];
        let out = by_threshold(&[0.1, 0.5], &learned, &analytical, &[0.3, 1.0]);
        assert_eq!(out[0].above, 1);
        assert_eq!((out[0].learned_regret, out[0].guarded_regret), (1.5, 0.0));
        assert_eq!(out[0].above_regret, (3.0, 0.0));
        assert_eq!((out[1].above, out[1].guarded_regret), (0, 1.5));
        assert_eq!(quantile(&[3.0, 1.0, 2.0, 4.0], 0.5), 2.0);
        assert_eq!(quantile(&[3.0, 1.0, 2.0, 4.0], 1.0), 4.0);
    }
}
