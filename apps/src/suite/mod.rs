//! The suite: real pipelines beyond the twelve apps, ported from public
//! sources (Halide's apps folder, the PolyMage benchmarks, vision kernels,
//! DNN layers) and written as their users write them: the algorithm at a
//! realistic size, estimates on the inputs and output, and no expert
//! schedule (no shape was chosen to suit our search). Each has a Halide 21
//! version beside it in `bench/halide/suite/`, checked output against
//! output by `bench/halide/run.sh`.
//!
//! # The split
//!
//! The suite was split once, by a rule fixed before any pipeline of it was
//! scheduled or timed: the pipelines sorted by the SHA-256 of their names
//! (lowercase hex), then alternately development (first, third, ...) and
//! held-out (second, fourth, ...). The development half is worked from; the
//! held-out half is run only to report, every time the apps are reported.
//! `apps/tests/suite.rs` checks that [`PIPELINES`] records that split.

use crate::{Builder, Set};

pub mod attention;
pub mod conv_bn_relu;
pub mod depthwise_separable_conv;
pub mod layer_norm;
pub mod max_pool;
pub mod optical_flow;
pub mod rgb_to_yuv420;
pub mod sobel;
pub mod softmax;
pub mod tone_map_reinhard;

/// The suite's pipelines, each with the half of the split it belongs to.
pub(crate) const PIPELINES: &[(&str, Set, Builder)] = &[
    ("sobel", Set::Development, sobel::app),
    ("rgb_to_yuv420", Set::HeldOut, rgb_to_yuv420::app),
    ("tone_map_reinhard", Set::Development, tone_map_reinhard::app),
    ("depthwise_separable_conv", Set::Development, depthwise_separable_conv::app),
    ("max_pool", Set::HeldOut, max_pool::app),
    ("softmax", Set::HeldOut, softmax::app),
    ("layer_norm", Set::Development, layer_norm::app),
    ("attention", Set::HeldOut, attention::app),
    ("conv_bn_relu", Set::Development, conv_bn_relu::app),
    ("optical_flow", Set::Development, optical_flow::app),
];
