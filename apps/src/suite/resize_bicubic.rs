//! Bicubic resampling of an f32 RGB image (x, y, c) by the non-integer
//! factor 0.7, as Halide's `apps/resize` computes it with its cubic
//! kernel (Keys' kernel, a = -0.5): each output pixel's centre is mapped
//! to a float source coordinate, `(x + 0.5) / 0.7`; the taps covering the
//! kernel's support (widened by 1 / 0.7 when downscaling, so that it also
//! filters) start at the first source pixel inside it; each tap's weight
//! is the kernel at the tap's distance (scaled by 0.7), normalized by the
//! sum of the weights; the image is resampled along x, then along y,
//! separably, reading the source under a repeat-edge boundary, and the
//! result clamped to [0, 1].

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::boundary::repeat_edge;
use compiler::lang::ops::{abs, cast, ceil, clamp, select, CompareExt};
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::target::Target;

/// The scale factor: output size over input size.
const SCALE: f64 = 0.7;

/// Keys' cubic convolution kernel with a = -0.5, zero from |t| = 2 on.
fn cubic(t: Expr) -> Expr {
    let a = -0.5f64;
    let xx = abs(t);
    let xx2 = xx.clone() * xx.clone();
    let xx3 = xx2.clone() * xx.clone();
    let near = xx3.clone() * (a + 2.0) as f32 - xx2.clone() * (a + 3.0) as f32 + 1.0f32;
    let far = xx3 * a as f32 - xx2 * (5.0 * a) as f32 + xx.clone() * (8.0 * a) as f32 - (4.0 * a) as f32;
    select(xx.lt(1.0f32), near, select(xx.lt(2.0f32), far, 0.0f32))
}

/// The bicubic resize at `size`: a 1920x1080 RGB image to 1344x756 (small:
/// 40x30 to 28x21).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h) = pick(size, (1920, 1080), (40, 30));
    let (ow, oh) = ((w as f64 * SCALE).floor() as i64, (h as f64 * SCALE).floor() as i64);
    let (x, y, c, k) = (Var::new("x"), Var::new("y"), Var::new("c"), Var::new("k"));
    let input = ImageParam::new("input", ScalarType::F32, 3);
    let clamped = repeat_edge(&input);

    // Downscaling widens the kernel by 1 / SCALE (in source pixels).
    let scaling = SCALE.min(1.0);
    let radius = 2.0 / scaling;
    let taps = (2.0 * radius).floor() as i64 + 1;
    let inv_scale = (1.0 / SCALE) as f32;
    let source = |v: &Var| (cast(Type::f32(), v) + 0.5f32) * inv_scale;
    let first = (0.5 + radius) as f32;

    let axis = |suffix: &str, v: &Var| {
        // The first tap, an expression of the loop variable (as Halide's
        // resize writes it), so that the reads it indexes are bounded.
        let begin = cast(Type::i32(), ceil(source(v) - first));
        let weight = Func::new(&format!("weight_{suffix}"));
        let distance = cast(Type::f32(), begin.clone() + &k) + 0.5f32 - source(v);
        weight.define(&[v, &k], cubic(distance * scaling as f32));
        let weight_sum = Func::new(&format!("weight_sum_{suffix}"));
        weight_sum.define(&[v], Expr::float(0.0, Type::f32()));
        let r = RDom::new(&format!("r{suffix}"), &[(Expr::i32(0), Expr::i32(taps))]);
        weight_sum.update([v.expr()], weight_sum.at([v.expr()]) + weight.at([v.expr(), r.x().expr()]));
        let kernel = Func::new(&format!("kernel_{suffix}"));
        kernel.define(&[v, &k], weight.at([v.expr(), k.expr()]) / weight_sum.at([v.expr()]));
        (begin, kernel)
    };
    let (begin_x, kernel_x) = axis("x", &x);
    let (begin_y, kernel_y) = axis("y", &y);

    let zero = || Expr::float(0.0, Type::f32());
    let resized_x = Func::new("resized_x");
    resized_x.define(&[&x, &y, &c], zero());
    let rx = RDom::new("tx", &[(Expr::i32(0), Expr::i32(taps))]);
    let (xyc, tx) = ([x.expr(), y.expr(), c.expr()], rx.x().expr());
    resized_x.update(
        xyc.clone(),
        resized_x.at(xyc.clone()) + kernel_x.at([x.expr(), tx.clone()]) * clamped.at([begin_x + tx, y.expr(), c.expr()]),
    );
    let resized_y = Func::new("resized_y");
    resized_y.define(&[&x, &y, &c], zero());
    let ry = RDom::new("ty", &[(Expr::i32(0), Expr::i32(taps))]);
    let ty = ry.x().expr();
    resized_y.update(
        xyc.clone(),
        resized_y.at(xyc.clone()) + kernel_y.at([y.expr(), ty.clone()]) * resized_x.at([x.expr(), begin_y + ty, c.expr()]),
    );
    let output = Func::new("output");
    output.define(&[&x, &y, &c], clamp(resized_y.at(xyc), 0.0f32, 1.0f32));
    let pipeline = Pipeline::new(&[&output]).expect("resize_bicubic is well formed");
    App {
        name: "resize_bicubic",
        pipeline,
        expert: None,
        inputs: vec![("input".into(), vec![(0, w), (0, h), (0, 3)])],
        output: vec![(0, ow), (0, oh), (0, 3)],
        params: vec![],
    }
}
