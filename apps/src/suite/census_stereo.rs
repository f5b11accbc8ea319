//! Census-transform stereo matching of two 8-bit grayscale images (left
//! and right views), as Zabih and Woodfill's census transform is used in
//! stereo pipelines (the matching cost of semi-global matching, without
//! its path aggregation): each pixel's 7x7 census signature (one bit per
//! neighbour, set where the neighbour is darker than the centre; 48 bits
//! in a u64, in raster order), the Hamming distance (popcount of the xor)
//! between the left signature and the right one `d` pixels to the left
//! for 64 disparities, the costs summed over a 5x5 window (along x then
//! y), and the winner-take-all disparity: the first of the smallest
//! aggregated costs (an inline `argmin`). Repeat-edge boundary.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::boundary::repeat_edge;
use compiler::lang::ops::{cast, popcount, select, CompareExt};
use compiler::lang::reductions::argmin;
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::target::Target;

/// The disparities searched: 0 to 63 pixels.
const DISPARITIES: i64 = 64;

/// The census signature of `image` (7x7 window, centre left out).
fn census(image: &ImageParam, x: &Var, y: &Var) -> Func {
    let name = image.name();
    let clamped = repeat_edge(image);
    let win = RDom::with_where(&format!("win_{name}"), &[(Expr::i32(-3), Expr::i32(7)), (Expr::i32(-3), Expr::i32(7))], |r| {
        r.x().ne_(0) | r.y().ne_(0)
    });
    let f = Func::new(&format!("census_{name}"));
    f.define(&[x, y], Expr::int(0, Type::u64()));
    let darker = clamped.at([x + win.x(), y + win.y()]).lt(clamped.at([x.expr(), y.expr()]));
    let bit = select(darker, Expr::int(1, Type::u64()), Expr::int(0, Type::u64()));
    f.update([x.expr(), y.expr()], (f.at([x.expr(), y.expr()]) << 1) | bit);
    f
}

/// Census stereo at `size`: 640x480 views, 64 disparities (small: 40x24).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h) = pick(size, (640, 480), (40, 24));
    let (x, y, d) = (Var::new("x"), Var::new("y"), Var::new("d"));
    let left = ImageParam::new("left", ScalarType::U8, 2);
    let right = ImageParam::new("right", ScalarType::U8, 2);
    let (census_left, census_right) = (census(&left, &x, &y), census(&right, &x, &y));
    let cost = Func::new("cost");
    cost.define(&[&x, &y, &d], cast(Type::u16(), popcount(census_left.at([x.expr(), y.expr()]) ^ census_right.at([&x - &d, y.expr()]))));
    let cost_x = Func::new("cost_x");
    let c = |f: &Func, dx: i32, dy: i32| f.at([&x + dx, &y + dy, d.expr()]);
    cost_x.define(&[&x, &y, &d], c(&cost, -2, 0) + c(&cost, -1, 0) + c(&cost, 0, 0) + c(&cost, 1, 0) + c(&cost, 2, 0));
    let aggregated = Func::new("aggregated");
    aggregated.define(&[&x, &y, &d], c(&cost_x, 0, -2) + c(&cost_x, 0, -1) + c(&cost_x, 0, 0) + c(&cost_x, 0, 1) + c(&cost_x, 0, 2));
    let rd = RDom::new("rd", &[(Expr::i32(0), Expr::i32(DISPARITIES))]);
    let best = argmin(aggregated.at([x.expr(), y.expr(), rd.x().expr()]));
    let output = Func::new("output");
    output.define(&[&x, &y], cast(Type::u8(), best[0].clone()));
    let pipeline = Pipeline::new(&[&output]).expect("census_stereo is well formed");
    let image = vec![(0, w), (0, h)];
    App {
        name: "census_stereo",
        pipeline,
        expert: None,
        inputs: vec![("left".into(), image.clone()), ("right".into(), image.clone())],
        output: image,
        params: vec![],
    }
}
