//! Unsharp masking of an f32 RGB image (x, y, c): the luminance `gray`
//! (repeat-edge boundary), a separable 7-tap Gaussian of it (`blur_y`
//! along y, then `blur_x` along x; sigma 1.5, weights
//! `exp(-i^2 / (2 sigma^2)) / (sqrt(2 pi) sigma)` computed in f64 and
//! rounded to f32, symmetric taps added in pairs), `sharpen = 2 gray -
//! blur_x`, and the output scales each channel of the input by
//! `sharpen / gray`.
//!
//! Expert schedule: strips of 32 rows in parallel, rows outside channels;
//! `gray` line-buffered per strip, `blur_y` and `ratio` (with `blur_x` and
//! `sharpen` inlined) computed per row, all vectorized.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::ScalarType;
use compiler::lang::boundary::repeat_edge;
use compiler::lang::{Func, ImageParam, Pipeline, Var};
use compiler::schedule::Schedule;
use compiler::target::Target;

/// The Gaussian's weights for offsets 0..=3.
pub fn weights() -> [f32; 4] {
    let sigma = 1.5f64;
    [0, 1, 2, 3].map(|i: i32| ((-(i * i) as f64 / (2.0 * sigma * sigma)).exp() / ((2.0 * std::f64::consts::PI).sqrt() * sigma)) as f32)
}

/// `k0 f(0) + k1 (f(-1) + f(1)) + k2 (f(-2) + f(2)) + k3 (f(-3) + f(3))`.
fn symmetric_taps(f: impl Fn(i32) -> Expr) -> Expr {
    let k = weights();
    (1..=3).fold(f(0) * k[0], |acc, i| acc + (f(-i) + f(i)) * k[i as usize])
}

/// The unsharp app at `size` for `host`: a 1536x2560 RGB image (40x36 small).
pub fn app(size: Size, host: &Target) -> App {
    let (w, h) = pick(size, (1536, 2560), (40, 36));
    let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
    let input = ImageParam::new("input", ScalarType::F32, 3);
    let clamped = repeat_edge(&input);
    let gray = Func::new("gray");
    gray.define(
        &[&x, &y],
        clamped.at([x.expr(), y.expr(), Expr::i32(0)]) * 0.299f32
            + clamped.at([x.expr(), y.expr(), Expr::i32(1)]) * 0.587f32
            + clamped.at([x.expr(), y.expr(), Expr::i32(2)]) * 0.114f32,
    );
    let blur_y = Func::new("blur_y");
    blur_y.define(&[&x, &y], symmetric_taps(|i| gray.at([x.expr(), &y + i])));
    let blur_x = Func::new("blur_x");
    blur_x.define(&[&x, &y], symmetric_taps(|i| blur_y.at([&x + i, y.expr()])));
    let sharpen = Func::new("sharpen");
    sharpen.define(&[&x, &y], gray.at([x.expr(), y.expr()]) * 2.0f32 - blur_x.at([x.expr(), y.expr()]));
    let ratio = Func::new("ratio");
    ratio.define(&[&x, &y], sharpen.at([x.expr(), y.expr()]) / gray.at([x.expr(), y.expr()]));
    let output = Func::new("output");
    output.define(&[&x, &y, &c], ratio.at([x.expr(), y.expr()]) * input.at([x.expr(), y.expr(), c.expr()]));
    let pipeline = Pipeline::new(&[&output]).expect("unsharp is well formed");

    let lanes = host.natural_lanes(ScalarType::F32);
    let mut expert = Schedule::new();
    expert.func("output").reorder(&["x", "c", "y"]).split("y", "yo", "yi", 32).parallel("yo").vectorize_by("x", lanes);
    expert.func("gray").store_at("output", "yo").compute_at("output", "yi").vectorize_by("x", lanes);
    for f in ["blur_y", "ratio"] {
        expert.func(f).compute_at("output", "yi").vectorize_by("x", lanes);
    }
    let image = vec![(0, w), (0, h), (0, 3)];
    App { name: "unsharp", pipeline, expert: Some(expert), inputs: vec![("input".into(), image.clone())], output: image, params: vec![] }
}
