//! Halide's `apps/linear_blur`: a box blur of an f32 sRGB image (x, y, c;
//! four channels) done in linear light. sRGB to linear by the standard
//! piecewise curve (`v / 12.92` up to 0.04045, else `((v + 0.055) /
//! 1.055)^2.4`); a 3x3 box blur looking right and down (`simple_blur`:
//! three taps along x, then along y, each divided by 3) of the linear
//! image under a repeat-edge boundary over the image's width and height;
//! back to sRGB (`12.92 v` up to 0.0031308, else `1.055 v^(1/2.4) -
//! 0.055`).

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::ScalarType;
use compiler::lang::boundary::repeat_edge_within;
use compiler::lang::ops::{pow, select, CompareExt};
use compiler::lang::{Func, ImageParam, Pipeline, Var};
use compiler::target::Target;

/// The linear blur at `size`: a 1536x2560 image of four channels (the
/// app's estimates; 37x29 small).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h) = pick(size, (1536, 2560), (37, 29));
    let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
    let input = ImageParam::new("input", ScalarType::F32, 3);
    let v = input.at([x.expr(), y.expr(), c.expr()]);
    let linear = Func::new("linear");
    linear.define(&[&x, &y, &c], select(v.le(0.04045f32), v.clone() / 12.92f32, pow((v.clone() + 0.055f32) / (1.0f32 + 0.055f32), 2.4f32)));
    let clamped = repeat_edge_within(&linear, &[(Expr::i32(0), input.width()), (Expr::i32(0), input.height())]);
    let at = |f: &Func, dx: i32, dy: i32| f.at([&x + dx, &y + dy, c.expr()]);
    let blur_x = Func::new("blur_x");
    blur_x.define(&[&x, &y, &c], (at(&clamped, 0, 0) + at(&clamped, 1, 0) + at(&clamped, 2, 0)) / 3.0f32);
    let blurred = Func::new("blurred");
    blurred.define(&[&x, &y, &c], (at(&blur_x, 0, 0) + at(&blur_x, 0, 1) + at(&blur_x, 0, 2)) / 3.0f32);
    let l = at(&blurred, 0, 0);
    let srgb = Func::new("srgb");
    srgb.define(&[&x, &y, &c], select(l.le(0.0031308f32), l.clone() * 12.92f32, (1.0f32 + 0.055f32) * pow(l, 1.0f32 / 2.4f32) - 0.055f32));
    let output = Func::new("output");
    output.define(&[&x, &y, &c], at(&srgb, 0, 0));
    let pipeline = Pipeline::new(&[&output]).expect("linear_blur is well formed");
    let image = vec![(0, w), (0, h), (0, 4)];
    App { name: "linear_blur", pipeline, expert: None, inputs: vec![("input".into(), image.clone())], output: image, params: vec![] }
}
