//! Affine warp of an f32 grayscale image with bilinear interpolation, as
//! OpenCV's `warpAffine` computes it (`INTER_LINEAR`, `BORDER_REPLICATE`)
//! for the matrix `getRotationMatrix2D` gives: a rotation by 30 degrees
//! about the image centre with a scale of 1.25. Each output pixel is
//! mapped back through the inverse transform to a float source coordinate
//! (computed in f32 from the output coordinates); the four source pixels
//! around it, clamped to the image (a replicated border), are blended by
//! the fractional parts, along x and then along y.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::boundary::repeat_edge;
use compiler::lang::ops::{cast, clamp, floor};
use compiler::lang::{Func, ImageParam, Pipeline, Var};
use compiler::target::Target;

/// cos(30 degrees) / 1.25 and sin(30 degrees) / 1.25: the inverse
/// transform's rotation-and-scale part.
const INVERSE_COS: f64 = 0.866_025_403_784_438_6 / 1.25;
const INVERSE_SIN: f64 = 0.5 / 1.25;

/// The affine warp at `size`: a 1920x1080 image to 1920x1080 (40x30 small).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h) = pick(size, (1920, 1080), (40, 30));
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let clamped = repeat_edge(&input);
    let (a, b) = (INVERSE_COS as f32, INVERSE_SIN as f32);
    let (cx, cy) = ((w as f64 - 1.0) as f32 * 0.5, (h as f64 - 1.0) as f32 * 0.5);
    // Offsets from the centre, rotated back and unscaled.
    let dx = || cast(Type::f32(), &x) - cx;
    let dy = || cast(Type::f32(), &y) - cy;
    let src_x = Func::new("src_x");
    src_x.define(&[&x, &y], dx() * a + dy() * b + cx);
    let src_y = Func::new("src_y");
    src_y.define(&[&x, &y], dy() * a - dx() * b + cy);
    // The top-left source pixel, clamped so that the reads stay within one
    // pixel of the image (the boundary condition replicates its edge), and
    // the fractional weights.
    let xy = || [x.expr(), y.expr()];
    let ix = Func::new("ix");
    ix.define(&[&x, &y], clamp(cast(Type::i32(), floor(src_x.at(xy()))), -1, w as i32 - 1));
    let iy = Func::new("iy");
    iy.define(&[&x, &y], clamp(cast(Type::i32(), floor(src_y.at(xy()))), -1, h as i32 - 1));
    let fx = src_x.at(xy()) - floor(src_x.at(xy()));
    let fy = src_y.at(xy()) - floor(src_y.at(xy()));
    let at = |ddx: i32, ddy: i32| clamped.at([ix.at(xy()) + ddx, iy.at(xy()) + ddy]);
    let lerp = |p: Expr, q: Expr, t: Expr| p.clone() + (q - p) * t;
    let top = lerp(at(0, 0), at(1, 0), fx.clone());
    let bottom = lerp(at(0, 1), at(1, 1), fx);
    let output = Func::new("output");
    output.define(&[&x, &y], lerp(top, bottom, fy));
    let pipeline = Pipeline::new(&[&output]).expect("warp_affine is well formed");
    let image = vec![(0, w), (0, h)];
    App { name: "warp_affine", pipeline, expert: None, inputs: vec![("input".into(), image.clone())], output: image, params: vec![] }
}
