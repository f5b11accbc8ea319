//! Non-local means denoising (Buades, Coll and Morel 2005) of an f32 RGB
//! image, as Halide's `apps/nl_means` computes it with its defaults (patch
//! size 7, search area 7, sigma 0.12): under a repeat-edge boundary, the
//! squared difference of the image and its shift by each offset of the
//! search area (`dc`), summed over the channels (`d`), box-summed over the
//! 7x7 patch along y then x (`blur_d_y`, `blur_d`); the weights
//! `fast_exp(-blur_d / (sigma^2 patch^2))` (`w`); the image with an alpha
//! channel of 1 added (`clamped_with_alpha`); the weighted sum of the
//! shifted images over the search area, alpha included
//! (`non_local_means_sum`); the output each colour channel divided by the
//! summed alpha, clamped to [0, 1].

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::ScalarType;
use compiler::lang::boundary::repeat_edge;
use compiler::lang::fast_math::fast_exp;
use compiler::lang::ops::{clamp, select, CompareExt};
use compiler::lang::reductions::sum;
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::target::Target;

const PATCH_SIZE: i64 = 7;
const SEARCH_AREA: i64 = 7;
const SIGMA: f32 = 0.12;

/// The non-local means pipeline at `size`: a 614x1024 RGB image (the
/// app's estimates; 24x20 small).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h) = pick(size, (614, 1024), (24, 20));
    let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
    let (dx, dy) = (Var::new("dx"), Var::new("dy"));
    let input = ImageParam::new("input", ScalarType::F32, 3);
    let inv_sigma_sq = -1.0f32 / (SIGMA * SIGMA * PATCH_SIZE as f32 * PATCH_SIZE as f32);
    let clamped = repeat_edge(&input);
    // The difference images, one per offset (dx, dy).
    let dc = Func::new("dc");
    let diff = clamped.at([x.expr(), y.expr(), c.expr()]) - clamped.at([&x + &dx, &y + &dy, c.expr()]);
    dc.define(&[&x, &y, &dx, &dy, &c], diff.clone() * diff);
    let channels = RDom::new("channels", &[(Expr::i32(0), Expr::i32(3))]);
    let d = Func::new("d");
    d.define(&[&x, &y, &dx, &dy], sum(dc.at([x.expr(), y.expr(), dx.expr(), dy.expr(), channels.x().expr()])));
    // The patch differences: the difference images box-summed over a patch.
    let patch_dom = RDom::new("patch_dom", &[(Expr::i32(-(PATCH_SIZE / 2)), Expr::i32(PATCH_SIZE))]);
    let blur_d_y = Func::new("blur_d_y");
    blur_d_y.define(&[&x, &y, &dx, &dy], sum(d.at([x.expr(), &y + patch_dom.x(), dx.expr(), dy.expr()])));
    let blur_d = Func::new("blur_d");
    blur_d.define(&[&x, &y, &dx, &dy], sum(blur_d_y.at([&x + patch_dom.x(), y.expr(), dx.expr(), dy.expr()])));
    let weight = Func::new("w");
    let exponent = blur_d.at([x.expr(), y.expr(), dx.expr(), dy.expr()]) * inv_sigma_sq;
    weight.define(&[&x, &y, &dx, &dy], fast_exp(exponent).expect("an f32 argument"));
    let clamped_with_alpha = Func::new("clamped_with_alpha");
    let channel = |k: i64| clamped.at([x.expr(), y.expr(), Expr::i32(k)]);
    clamped_with_alpha
        .define(&[&x, &y, &c], select(c.eq_(0), channel(0), select(c.eq_(1), channel(1), select(c.eq_(2), channel(2), 1.0f32))));
    // The weighted sum over the search area, alpha (the sum of the weights) included.
    let half = -(SEARCH_AREA / 2);
    let s_dom = RDom::new("s_dom", &[(Expr::i32(half), Expr::i32(SEARCH_AREA)), (Expr::i32(half), Expr::i32(SEARCH_AREA))]);
    let nl_sum = Func::new("non_local_means_sum");
    nl_sum.define(&[&x, &y, &c], 0.0f32);
    nl_sum.add_update(
        [x.expr(), y.expr(), c.expr()],
        weight.at([x.expr(), y.expr(), s_dom.x().expr(), s_dom.y().expr()])
            * clamped_with_alpha.at([&x + s_dom.x(), &y + s_dom.y(), c.expr()]),
    );
    let output = Func::new("non_local_means");
    let ratio = nl_sum.at([x.expr(), y.expr(), c.expr()]) / nl_sum.at([x.expr(), y.expr(), Expr::i32(3)]);
    output.define(&[&x, &y, &c], clamp(ratio, 0.0f32, 1.0f32));
    let pipeline = Pipeline::new(&[&output]).expect("nl_means is well formed");
    let image = vec![(0, w), (0, h), (0, 3)];
    App { name: "nl_means", pipeline, expert: None, inputs: vec![("input".into(), image.clone())], output: image, params: vec![] }
}
