//! A box filter through an integral image (summed-area table; Crow 1984,
//! Viola and Jones 2001; OpenCV's `integral`): the 8-bit image's prefix sums
//! along x (`row_sum`, a scan over the width), then down y (`integral`, a
//! scan over the height), in i32; each output pixel sums the square of
//! radius 32 around it from four corners of the table, the square cropped
//! to the image (a corner before the first row or column reads 0), and is
//! that sum divided by the cropped square's area, rounded to nearest, as u8
//! (a box mean normalized by the window's pixel count, as He et al.'s
//! guided filter normalizes the sums of its `boxfilter`).

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::ops::{cast, max, min, select, CompareExt};
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::target::Target;

/// The box's radius: a 65x65 window.
const RADIUS: i32 = 32;

/// The integral-image box filter at `size`: a 1920x1080 image (70x50 small).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h) = pick(size, (1920, 1080), (70, 50));
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::U8, 2);
    let row_sum = Func::new("row_sum");
    row_sum.define(&[&x, &y], cast(Type::i32(), input.at([x.expr(), y.expr()])));
    let rx = RDom::new("rx", &[(Expr::i32(1), Expr::i32(w - 1))]);
    row_sum.update([rx.x().expr(), y.expr()], row_sum.at([rx.x() - 1, y.expr()]) + row_sum.at([rx.x().expr(), y.expr()]));
    let integral = Func::new("integral");
    integral.define(&[&x, &y], row_sum.at([x.expr(), y.expr()]));
    let ry = RDom::new("ry", &[(Expr::i32(1), Expr::i32(h - 1))]);
    integral.update([x.expr(), ry.x().expr()], integral.at([x.expr(), ry.x() - 1]) + integral.at([x.expr(), ry.x().expr()]));
    // The window's corners, cropped to the image: the sum over
    // (x0, x1] x (y0, y1] with x0 and y0 possibly -1 (an empty prefix).
    let (x0, x1) = (max(&x - (RADIUS + 1), -1), min(&x + RADIUS, (w - 1) as i32));
    let (y0, y1) = (max(&y - (RADIUS + 1), -1), min(&y + RADIUS, (h - 1) as i32));
    let corner = |cx: &Expr, cy: &Expr| {
        let inside = cx.ge(0) & cy.ge(0);
        select(inside, integral.at([max(cx, 0), max(cy, 0)]), 0)
    };
    let box_sum = Func::new("box_sum");
    box_sum.define(&[&x, &y], corner(&x1, &y1) - corner(&x0, &y1) - corner(&x1, &y0) + corner(&x0, &y0));
    let area = (x1 - x0) * (y1 - y0);
    let output = Func::new("output");
    output.define(&[&x, &y], cast(Type::u8(), (box_sum.at([x.expr(), y.expr()]) + area.clone() / 2) / area));
    let pipeline = Pipeline::new(&[&output]).expect("integral_box is well formed");
    let image = vec![(0, w), (0, h)];
    App { name: "integral_box", pipeline, expert: None, inputs: vec![("input".into(), image.clone())], output: image, params: vec![] }
}
