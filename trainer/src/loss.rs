//! The training loss (Adams et al. 2019, section 3.4, as the public
//! implementation computes it): squared error on throughput relative to
//! the fastest measured schedule of the batch, so the model is judged on
//! how schedules of one pipeline compare, and mistakes about fast
//! schedules (high throughput) weigh most.
//!
//! With `ref` the fastest measured runtime, `p = predicted / ref` and
//! `r = measured / ref`, each schedule adds `(1 / max(p, 1e-10) - 1 / r)²`.
//! A small penalty on negative pre-activations of the coefficients keeps
//! them from dying for good under their ReLU.
//!
//! A network of several members ([`crate::network`]) is charged the sum of
//! its members' losses, each computed on the member's own predictions: the
//! members share no parameter, so each gets the gradient it would alone.
//!
//! An optional ranking term (ours, off in the paper's settings) scores
//! every pair of the batch: a logistic loss on the difference of their
//! predicted log runtimes, signed by the measured order and weighted by the
//! measured log gap (capped), so near-ties, which re-timing alone can
//! swap, weigh little. The throughput error weighs the fastest schedules
//! most; the ranking term weighs every clear pair alike, as a search that
//! keeps a beam of many candidates needs.

use crate::network::NetworkOutput;
use tch::{Kind, Tensor};

/// Predicted relative runtimes below this count as this (no division by
/// zero while the coefficients are still zero).
const MIN_RELATIVE_PREDICTION: f64 = 1e-10;

/// Weight of the penalty on negative coefficient pre-activations.
pub const NEGATIVE_COEFFICIENT_PENALTY: f64 = 1e-5;

/// How sharply the ranking term's logistic loss turns on the predicted log
/// gap of a pair: a pair predicted in the right order by a factor of
/// `e^(1/4)` (1.28x) costs 0.45 of a tie, by `e^(1/2)` (1.65x) 0.18.
const RANKING_SHARPNESS: f64 = 4.0;

/// The measured log gap at which a pair's weight in the ranking term stops
/// growing (1: pairs more than e (2.7x) apart weigh the same).
const RANKING_GAP_CAP: f64 = 1.0;

/// The loss of a batch of one pipeline's schedules: `runtimes` `[batch]`
/// in seconds, `output.member_totals` each member's predictions in
/// seconds, `ranking_weight` the weight of the ranking term (0: the
/// paper's loss). A scalar: the sum over the members.
pub fn loss(output: &NetworkOutput, runtimes: &Tensor, ranking_weight: f64) -> Tensor {
    let reference = runtimes.min();
    let predicted = (&output.member_totals / &reference).clamp_min(MIN_RELATIVE_PREDICTION);
    let measured = runtimes / &reference;
    let throughput_error = (predicted.reciprocal() - measured.reciprocal()).square().sum(Kind::Float);
    let negative_preactivations = -output.conv1_preactivation.clamp_max(0.0);
    let paper = throughput_error + negative_preactivations.sum(Kind::Float) * NEGATIVE_COEFFICIENT_PENALTY;
    if ranking_weight == 0.0 {
        paper
    } else {
        paper + ranking_error(&predicted.log(), &measured.log()) * ranking_weight
    }
}

/// The ranking term: over every ordered pair `(i, j)` of the batch,
/// `min(|m_j - m_i|, cap) * softplus(-sharpness * sign(m_j - m_i) * (p_j - p_i))`
/// with `p` and `m` the predicted and measured log runtimes, divided by
/// `n²` for `n` schedules (ties and a schedule with itself weigh nothing);
/// summed over the members when `predicted_log` is `[members, n]`.
fn ranking_error(predicted_log: &Tensor, measured_log: &Tensor) -> Tensor {
    let schedules = measured_log.size()[0] as f64;
    let predicted_gap = predicted_log.unsqueeze(-2) - predicted_log.unsqueeze(-1);
    let measured_gap = measured_log.unsqueeze(0) - measured_log.unsqueeze(1);
    let misordering = (-(predicted_gap * measured_gap.sign()) * RANKING_SHARPNESS).softplus();
    (misordering * measured_gap.abs().clamp_max(RANKING_GAP_CAP)).sum(Kind::Float) / (schedules * schedules)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranking(predicted: &[f64], measured: &[f64]) -> f64 {
        let log = |v: &[f64]| Tensor::from_slice(v).log();
        ranking_error(&log(predicted), &log(measured)).double_value(&[])
    }

    #[test]
    fn the_ranking_term_charges_misordered_pairs() {
        let measured = [1.0, 2.0, 4.0];
        let ordered = ranking(&[1.0, 2.0, 4.0], &measured);
        let reversed = ranking(&[4.0, 2.0, 1.0], &measured);
        assert!(ordered < 0.1 * reversed, "ordered {ordered}, reversed {reversed}");
    }

    #[test]
    fn ties_weigh_nothing_and_wide_gaps_no_more_than_the_cap() {
        assert_eq!(ranking(&[1.0, 3.0], &[2.0, 2.0]), 0.0);
        let e = RANKING_GAP_CAP.exp();
        let at_cap = ranking(&[1.0, 1.0], &[1.0, e]);
        let far = ranking(&[1.0, 1.0], &[1.0, 10.0 * e]);
        assert!((at_cap - far).abs() < 1e-6, "{at_cap} vs {far}");
        let near = ranking(&[1.0, 1.0], &[1.0, 1.1]);
        assert!(near < 0.2 * at_cap, "a near tie weighs {near}, a clear pair {at_cap}");
    }
}
