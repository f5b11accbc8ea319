//! Morphological opening of an 8-bit grayscale image by a 7x7 square
//! structuring element, as OpenCV's `morphologyEx(MORPH_OPEN)` computes it
//! with `BORDER_REPLICATE`: an erosion (the minimum over the square, taken
//! separably, along x then y) of the image under a repeat-edge boundary,
//! then a dilation (the maximum, the same way) of the eroded image under
//! its own repeat-edge boundary over the image's box. The window minima and
//! maxima are inline reductions over a 7-point domain.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::ScalarType;
use compiler::lang::boundary::{repeat_edge, repeat_edge_within};
use compiler::lang::reductions::{maximum, minimum};
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::target::Target;

/// The structuring element's radius: a 7x7 square.
const RADIUS: i64 = 3;

/// The opening pipeline at `size`: a 1920x1080 image (37x29 small).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h) = pick(size, (1920, 1080), (37, 29));
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::U8, 2);
    let clamped = repeat_edge(&input);
    let window = |name: &str| RDom::new(name, &[(Expr::i32(-RADIUS), Expr::i32(2 * RADIUS + 1))]);
    let along_x = |name: &str, f: &Func, reduce: fn(Expr) -> Expr| {
        let r = window(&format!("{name}_r"));
        let g = Func::new(name);
        g.define(&[&x, &y], reduce(f.at([&x + r.x(), y.expr()])));
        g
    };
    let along_y = |name: &str, f: &Func, reduce: fn(Expr) -> Expr| {
        let r = window(&format!("{name}_r"));
        let g = Func::new(name);
        g.define(&[&x, &y], reduce(f.at([x.expr(), &y + r.x()])));
        g
    };
    let erode_x = along_x("erode_x", &clamped, minimum);
    let erode = along_y("erode", &erode_x, minimum);
    // The dilation reads the eroded image replicated beyond the image's box.
    let eroded = repeat_edge_within(&erode, &[(input.min(0), input.extent(0)), (input.min(1), input.extent(1))]);
    let dilate_x = along_x("dilate_x", &eroded, maximum);
    let output = along_y("output", &dilate_x, maximum);
    let pipeline = Pipeline::new(&[&output]).expect("morphology_open is well formed");
    let image = vec![(0, w), (0, h)];
    App { name: "morphology_open", pipeline, expert: None, inputs: vec![("input".into(), image.clone())], output: image, params: vec![] }
}
