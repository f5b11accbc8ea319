//! Block-matching stereo of two 8-bit grayscale images (left and right
//! views), as OpenCV's `StereoBM` matches blocks (without its prefilter,
//! texture and uniqueness checks): for each of 64 disparities `d`, the
//! sum of absolute differences between the left view and the right view
//! shifted `d` pixels, over a 9x9 window (summed along x, then y, each an
//! update over a reduction domain), and for each pixel the disparity of
//! the smallest sum, the first one on ties (a Tuple reduction of the
//! disparity and its cost over the disparities). Repeat-edge boundary.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::boundary::repeat_edge;
use compiler::lang::intrinsics::absd;
use compiler::lang::ops::{cast, select, CompareExt};
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::target::Target;

/// The disparities searched: 0 to 63 pixels.
const DISPARITIES: i64 = 64;
/// The matching window's radius: 9x9 blocks.
const RADIUS: i64 = 4;

/// SAD stereo at `size`: 640x480 views, 64 disparities (small: 40x24).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h) = pick(size, (640, 480), (40, 24));
    let (x, y, d) = (Var::new("x"), Var::new("y"), Var::new("d"));
    let left = repeat_edge(&ImageParam::new("left", ScalarType::U8, 2));
    let right_input = ImageParam::new("right", ScalarType::U8, 2);
    let right = repeat_edge(&right_input);
    let diff = Func::new("diff");
    diff.define(&[&x, &y, &d], cast(Type::u16(), absd(left.at([x.expr(), y.expr()]), right.at([&x - &d, y.expr()]))));
    let window = || (Expr::i32(-RADIUS), Expr::i32(2 * RADIUS + 1));
    let xyd = || [x.expr(), y.expr(), d.expr()];
    let sad_x = Func::new("sad_x");
    sad_x.define(&[&x, &y, &d], Expr::int(0, Type::u16()));
    let rx = RDom::new("rx", &[window()]);
    sad_x.update(xyd(), sad_x.at(xyd()) + diff.at([&x + rx.x(), y.expr(), d.expr()]));
    let sad = Func::new("sad");
    sad.define(&[&x, &y, &d], Expr::int(0, Type::u16()));
    let ry = RDom::new("ry", &[window()]);
    sad.update(xyd(), sad.at(xyd()) + sad_x.at([x.expr(), &y + ry.x(), d.expr()]));
    let best = Func::new("best");
    best.define_tuple(&[&x, &y], [Expr::i32(0), Expr::int(65535, Type::u16())]);
    let rd = RDom::new("rd", &[(Expr::i32(0), Expr::i32(DISPARITIES))]);
    let xy = || [x.expr(), y.expr()];
    let cost = sad.at([x.expr(), y.expr(), rd.x().expr()]);
    let better = cost.lt(best.value_at(xy(), 1));
    best.update_tuple(xy(), [select(better.clone(), rd.x().expr(), best.value_at(xy(), 0)), select(better, cost, best.value_at(xy(), 1))]);
    let output = Func::new("output");
    output.define(&[&x, &y], cast(Type::u8(), best.value_at(xy(), 0)));
    let pipeline = Pipeline::new(&[&output]).expect("sad_stereo is well formed");
    let image = vec![(0, w), (0, h)];
    App {
        name: "sad_stereo",
        pipeline,
        expert: None,
        inputs: vec![("left".into(), image.clone()), ("right".into(), image.clone())],
        output: image,
        params: vec![],
    }
}
