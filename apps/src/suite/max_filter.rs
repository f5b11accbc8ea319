//! Halide's `apps/max_filter`: a circular-support max filter of radius 26
//! of an f32 RGB image (x, y, c) under a repeat-edge boundary, in O(radius)
//! work per pixel. `vert_log` holds vertical max filters of heights 1, 2,
//! 4, ... (slice `t` is the max of slice `t - 1` at `y` and at `y + 2^(t-1)`,
//! an update over the image's rows and the slices); `vert` is every
//! vertical max filter of half-height `t` up to `radius + 1`, the max of
//! two overlapping samples of the slice `floor(log2(2t + 1))`
//! (`slice_for_radius`); `filter_height` is the disc's half-height at each
//! column offset; the output is the max over the columns of the disc of
//! the vertical filter of that column's height.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::boundary::repeat_edge;
use compiler::lang::ops::{cast, clamp, floor, log, max, select, CompareExt};
use compiler::lang::reductions::{maximum, sum};
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::target::Target;

/// The disc's radius.
const RADIUS: i32 = 26;

/// The max filter at `size`: a 1536x2560 RGB image (the app's estimates;
/// 40x32 small).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h) = pick(size, (1536, 2560), (40, 32));
    let (x, y, c, t) = (Var::new("x"), Var::new("y"), Var::new("c"), Var::new("t"));
    let input = ImageParam::new("input", ScalarType::F32, 3);
    let clamped = repeat_edge(&input);
    let radius = i64::from(RADIUS);
    let slices = ((RADIUS as f32).ln() / 2f32.ln()).ceil() as i32 + 1;
    // Vertical max filters of heights 1, 2, 4, ..., all looking down.
    let vert_log = Func::new("vert_log");
    vert_log.define(&[&x, &y, &c, &t], clamped.at([x.expr(), y.expr(), c.expr()]));
    let r = RDom::new("r", &[(Expr::i32(-radius), Expr::i32(h + radius)), (Expr::i32(1), Expr::i32(i64::from(slices) - 1))]);
    let (ry, rt) = (r.x().expr(), r.y().expr());
    let step = clamp(1 << (rt.clone() - 1), 0, RADIUS * 2);
    vert_log.update(
        [x.expr(), ry.clone(), c.expr(), rt.clone()],
        max(vert_log.at([x.expr(), ry.clone(), c.expr(), rt.clone() - 1]), vert_log.at([x.expr(), ry + step, c.expr(), rt - 1])),
    );
    // The slice whose height is the largest power of two within 2t + 1.
    let slice_for_radius = Func::new("slice_for_radius");
    let log2 = log(cast(Type::f32(), &t * 2 + 1)) / 2f32.ln();
    slice_for_radius.define(&[&t], cast(Type::i32(), floor(log2)));
    // Every vertical max filter of half-height t: two overlapping samples.
    let vert = Func::new("vert");
    let slice = clamp(slice_for_radius.at([t.expr()]), 0, slices);
    let first_sample = vert_log.at([x.expr(), &y - &t, c.expr(), slice.clone()]);
    let second_sample = vert_log.at([x.expr(), &y + &t + 1 - clamp(1 << slice.clone(), 0, 2 * RADIUS), c.expr(), slice]);
    vert.define(&[&x, &y, &c, &t], max(first_sample, second_sample));
    // The disc's half-height at each column offset.
    let filter_height = Func::new("filter_height");
    let dy = RDom::new("dy", &[(Expr::i32(0), Expr::i32(radius + 1))]);
    let bound = (RADIUS as f32 + 0.25f32) * (RADIUS as f32 + 0.25f32);
    let inside = cast(Type::f32(), &x * &x + dy.x() * dy.x()).lt(bound);
    filter_height.define(&[&x], sum(select(inside, 1, 0)));
    // The max over the disc's columns of the vertical filters of their heights.
    let dx = RDom::new("dx", &[(Expr::i32(-radius), Expr::i32(2 * radius + 1))]);
    let height = clamp(filter_height.at([dx.x().expr()]), 0, RADIUS + 1);
    let output = Func::new("output");
    output.define(&[&x, &y, &c], maximum(vert.at([&x + dx.x(), y.expr(), c.expr(), height])));
    let pipeline = Pipeline::new(&[&output]).expect("max_filter is well formed");
    let image = vec![(0, w), (0, h), (0, 3)];
    App { name: "max_filter", pipeline, expert: None, inputs: vec![("input".into(), image.clone())], output: image, params: vec![] }
}
