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

use crate::network::NetworkOutput;
use tch::{Kind, Tensor};

/// Predicted relative runtimes below this count as this (no division by
/// zero while the coefficients are still zero).
const MIN_RELATIVE_PREDICTION: f64 = 1e-10;

/// Weight of the penalty on negative coefficient pre-activations.
pub const NEGATIVE_COEFFICIENT_PENALTY: f64 = 1e-5;

/// The loss of a batch of one pipeline's schedules: `runtimes` `[batch]`
/// in seconds, `output.total` the predictions in seconds. A scalar.
pub fn loss(output: &NetworkOutput, runtimes: &Tensor) -> Tensor {
    let reference = runtimes.min();
    let predicted = (&output.total / &reference).clamp_min(MIN_RELATIVE_PREDICTION);
    let measured = runtimes / &reference;
    let throughput_error = (predicted.reciprocal() - measured.reciprocal()).square().sum(Kind::Float);
    let negative_preactivations = -output.conv1_preactivation.clamp_max(0.0);
    throughput_error + negative_preactivations.sum(Kind::Float) * NEGATIVE_COEFFICIENT_PENALTY
}
