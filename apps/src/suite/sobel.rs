//! Sobel edge magnitude of an 8-bit grayscale image, as OpenCV's `Sobel`
//! followed by `magnitude` computes it: the image under a repeat-edge
//! boundary, the 3x3 Sobel derivatives in x and y as separable integer
//! filters (smoothing `[1 2 1]` across, difference `[-1 0 1]` along), and
//! the output `sqrt(gx^2 + gy^2)` saturated to 8 bits.

use crate::{pick, App, Size};
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::boundary::repeat_edge;
use compiler::lang::ops::{cast, sqrt};
use compiler::lang::{Func, ImageParam, Pipeline, Var};
use compiler::target::Target;

/// The Sobel pipeline at `size`: a 1920x1080 image (37x29 small).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h) = pick(size, (1920, 1080), (37, 29));
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::U8, 2);
    let clamped = repeat_edge(&input);
    let wide = Func::new("wide");
    wide.define(&[&x, &y], cast(Type::i16(), clamped.at([x.expr(), y.expr()])));
    let at = |f: &Func, dx: i32, dy: i32| f.at([&x + dx, &y + dy]);
    // Smoothed down the columns, then differenced along the rows (gx), and
    // the other way round (gy).
    let smooth_y = Func::new("smooth_y");
    smooth_y.define(&[&x, &y], at(&wide, 0, -1) + at(&wide, 0, 0) * 2 + at(&wide, 0, 1));
    let gx = Func::new("gx");
    gx.define(&[&x, &y], at(&smooth_y, 1, 0) - at(&smooth_y, -1, 0));
    let smooth_x = Func::new("smooth_x");
    smooth_x.define(&[&x, &y], at(&wide, -1, 0) + at(&wide, 0, 0) * 2 + at(&wide, 1, 0));
    let gy = Func::new("gy");
    gy.define(&[&x, &y], at(&smooth_x, 0, 1) - at(&smooth_x, 0, -1));
    let magnitude = Func::new("magnitude");
    let square = |g: &Func| {
        let v = cast(Type::f32(), at(g, 0, 0));
        v.clone() * v
    };
    magnitude.define(&[&x, &y], sqrt(square(&gx) + square(&gy)));
    let output = Func::new("output");
    output.define(&[&x, &y], cast(Type::u8(), compiler::lang::ops::min(at(&magnitude, 0, 0), 255.0f32)));
    let pipeline = Pipeline::new(&[&output]).expect("sobel is well formed");
    let image = vec![(0, w), (0, h)];
    App { name: "sobel", pipeline, expert: None, inputs: vec![("input".into(), image.clone())], output: image, params: vec![] }
}
