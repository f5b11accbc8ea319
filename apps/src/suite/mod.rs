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
pub mod bilateral_filter;
pub mod canny;
pub mod census_stereo;
pub mod conv_bn_relu;
pub mod demosaic_bilinear;
pub mod depthwise_separable_conv;
pub mod dog_pyramid;
pub mod guided_filter;
pub mod integral_box;
pub mod layer_norm;
pub mod linear_blur;
pub mod max_filter;
pub mod max_pool;
pub mod median3x3;
pub mod morphology_open;
pub mod nl_means;
pub mod optical_flow;
pub mod pyramid_blend;
pub mod resize_bicubic;
pub mod rgb_to_yuv420;
pub mod sad_stereo;
pub mod sobel;
pub mod softmax;
pub mod tone_map_reinhard;
pub mod warp_affine;
pub mod wavelet_haar;

/// The suite's pipelines, each with the half of the split it belongs to.
pub(crate) const PIPELINES: &[(&str, Set, Builder)] = &[
    ("attention", Set::HeldOut, attention::app),
    ("bilateral_filter", Set::Development, bilateral_filter::app),
    ("canny", Set::Development, canny::app),
    ("census_stereo", Set::Development, census_stereo::app),
    ("conv_bn_relu", Set::Development, conv_bn_relu::app),
    ("demosaic_bilinear", Set::Development, demosaic_bilinear::app),
    ("depthwise_separable_conv", Set::Development, depthwise_separable_conv::app),
    ("dog_pyramid", Set::HeldOut, dog_pyramid::app),
    ("guided_filter", Set::HeldOut, guided_filter::app),
    ("integral_box", Set::HeldOut, integral_box::app),
    ("layer_norm", Set::Development, layer_norm::app),
    ("linear_blur", Set::Development, linear_blur::app),
    ("max_filter", Set::HeldOut, max_filter::app),
    ("max_pool", Set::HeldOut, max_pool::app),
    ("median3x3", Set::Development, median3x3::app),
    ("morphology_open", Set::HeldOut, morphology_open::app),
    ("nl_means", Set::Development, nl_means::app),
    ("optical_flow", Set::Development, optical_flow::app),
    ("pyramid_blend", Set::HeldOut, pyramid_blend::app),
    ("resize_bicubic", Set::Development, resize_bicubic::app),
    ("rgb_to_yuv420", Set::HeldOut, rgb_to_yuv420::app),
    ("sad_stereo", Set::HeldOut, sad_stereo::app),
    ("sobel", Set::Development, sobel::app),
    ("softmax", Set::HeldOut, softmax::app),
    ("tone_map_reinhard", Set::Development, tone_map_reinhard::app),
    ("warp_affine", Set::HeldOut, warp_affine::app),
    ("wavelet_haar", Set::HeldOut, wavelet_haar::app),
];
