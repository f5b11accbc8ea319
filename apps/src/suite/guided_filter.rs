//! He, Sun and Tang's guided filter (ECCV 2010 / TPAMI 2013, Algorithm 1)
//! of an f32 grayscale image `input` (p) guided by an f32 grayscale image
//! `guide` (I), radius 8 and `eps = 0.01` (the paper's 0.1^2): box means
//! (square windows of side 17, summed separably by inline reductions, along
//! x then y, then scaled by 1/289) of I, p, I*I and I*p under repeat-edge
//! boundaries; `a = cov(I, p) / (var(I) + eps)` and `b = mean(p) - a
//! mean(I)`; the box means of `a` and `b`, each replicated beyond the
//! image's box as its inputs are; the output `mean(a) I + mean(b)`.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::ScalarType;
use compiler::lang::boundary::{repeat_edge, repeat_edge_within};
use compiler::lang::reductions::sum;
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::target::Target;

/// The box windows' radius.
const RADIUS: i64 = 8;
/// The regularization of `a`.
const EPS: f32 = 0.01;

/// The guided filter at `size`: 1920x1080 images (37x29 small).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h) = pick(size, (1920, 1080), (37, 29));
    let (x, y) = (Var::new("x"), Var::new("y"));
    let guide = ImageParam::new("guide", ScalarType::F32, 2);
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let guide_c = repeat_edge(&guide);
    let input_c = repeat_edge(&input);
    let here = |f: &Func| f.at([x.expr(), y.expr()]);
    let side = (2 * RADIUS + 1) as f32;
    let scale = 1.0f32 / (side * side);
    // The mean of `f` over the square window: sums along x, then along y.
    let box_mean = |name: &str, f: &Func| {
        let rx = RDom::new(&format!("{name}_rx"), &[(Expr::i32(-RADIUS), Expr::i32(2 * RADIUS + 1))]);
        let sum_x = Func::new(&format!("{name}_x"));
        sum_x.define(&[&x, &y], sum(f.at([&x + rx.x(), y.expr()])));
        let ry = RDom::new(&format!("{name}_ry"), &[(Expr::i32(-RADIUS), Expr::i32(2 * RADIUS + 1))]);
        let mean = Func::new(name);
        mean.define(&[&x, &y], sum(sum_x.at([x.expr(), &y + ry.x()])) * scale);
        mean
    };
    let product = |name: &str, a: &Func, b: &Func| {
        let f = Func::new(name);
        f.define(&[&x, &y], here(a) * here(b));
        f
    };
    let guide_sq = product("guide_sq", &guide_c, &guide_c);
    let guide_input = product("guide_input", &guide_c, &input_c);
    let mean_i = box_mean("mean_i", &guide_c);
    let mean_p = box_mean("mean_p", &input_c);
    let corr_i = box_mean("corr_i", &guide_sq);
    let corr_ip = box_mean("corr_ip", &guide_input);
    let var_i = here(&corr_i) - here(&mean_i) * here(&mean_i);
    let cov_ip = here(&corr_ip) - here(&mean_i) * here(&mean_p);
    let a = Func::new("a");
    a.define(&[&x, &y], cov_ip / (var_i + EPS));
    let b = Func::new("b");
    b.define(&[&x, &y], here(&mean_p) - here(&a) * here(&mean_i));
    let image_box = [(guide.min(0), guide.extent(0)), (guide.min(1), guide.extent(1))];
    let mean_a = box_mean("mean_a", &repeat_edge_within(&a, &image_box));
    let mean_b = box_mean("mean_b", &repeat_edge_within(&b, &image_box));
    let output = Func::new("output");
    output.define(&[&x, &y], here(&mean_a) * here(&guide_c) + here(&mean_b));
    let pipeline = Pipeline::new(&[&output]).expect("guided_filter is well formed");
    let image = vec![(0, w), (0, h)];
    App {
        name: "guided_filter",
        pipeline,
        expert: None,
        inputs: vec![("guide".into(), image.clone()), ("input".into(), image.clone())],
        output: image,
        params: vec![],
    }
}
