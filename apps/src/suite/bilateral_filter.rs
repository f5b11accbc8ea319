//! The direct (brute-force) bilateral filter of Tomasi and Manduchi (1998)
//! on an f32 grayscale image, as OpenCV's `bilateralFilter` computes it with
//! `d = 9`: every pixel within distance 4 of the centre (a disc, OpenCV's
//! window for `d = 9`: a reduction domain over the 9x9 square with a
//! predicate) weighted by a spatial Gaussian `exp(-(dx^2 + dy^2) / (2
//! sigma_s^2))` (a table over the offsets, `spatial`) times a range
//! Gaussian `exp(-(I(q) - I(p))^2 / (2 sigma_r^2))`, with `sigma_s = 3`
//! and `sigma_r = 0.1`; the weighted sum and the sum of the weights are
//! accumulated together (a Tuple), and the output is their quotient. The
//! image is extended by reflection about its edges (OpenCV's default
//! `BORDER_REFLECT_101`, our `mirror_interior`).

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::boundary::mirror_interior;
use compiler::lang::ops::{cast, exp, CompareExt};
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::target::Target;

/// The window's radius (`d = 9`).
const RADIUS: i32 = 4;
/// The spatial Gaussian's sigma, in pixels.
const SIGMA_SPACE: f32 = 3.0;
/// The range Gaussian's sigma, in intensity.
const SIGMA_COLOR: f32 = 0.1;

/// The bilateral filter at `size`: a 1920x1080 image (37x29 small).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h) = pick(size, (1920, 1080), (37, 29));
    let (x, y) = (Var::new("x"), Var::new("y"));
    let (dx, dy) = (Var::new("dx"), Var::new("dy"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let clamped = mirror_interior(&input);
    let space_coeff = -0.5f32 / (SIGMA_SPACE * SIGMA_SPACE);
    let color_coeff = -0.5f32 / (SIGMA_COLOR * SIGMA_COLOR);
    let spatial = Func::new("spatial");
    spatial.define(&[&dx, &dy], exp(cast(Type::f32(), &dx * &dx + &dy * &dy) * space_coeff));
    let side = Expr::i32(2 * RADIUS as i64 + 1);
    let r = RDom::with_where("r", &[(Expr::i32(-RADIUS as i64), side.clone()), (Expr::i32(-RADIUS as i64), side)], |r| {
        (r.x() * r.x() + r.y() * r.y()).le(RADIUS * RADIUS)
    });
    let centre = clamped.at([x.expr(), y.expr()]);
    let value = clamped.at([&x + r.x(), &y + r.y()]);
    let diff = value.clone() - centre;
    let weight = spatial.at([r.x().expr(), r.y().expr()]) * exp(diff.clone() * diff * color_coeff);
    let accum = Func::new("accum");
    accum.define_tuple(&[&x, &y], [Expr::from(0.0f32), Expr::from(0.0f32)]);
    let (sum, norm) = (accum.value_at([x.expr(), y.expr()], 0), accum.value_at([x.expr(), y.expr()], 1));
    accum.update_tuple([x.expr(), y.expr()], [sum + weight.clone() * value, norm + weight]);
    let output = Func::new("output");
    output.define(&[&x, &y], accum.value_at([x.expr(), y.expr()], 0) / accum.value_at([x.expr(), y.expr()], 1));
    let pipeline = Pipeline::new(&[&output]).expect("bilateral_filter is well formed");
    let image = vec![(0, w), (0, h)];
    App { name: "bilateral_filter", pipeline, expert: None, inputs: vec![("input".into(), image.clone())], output: image, params: vec![] }
}
