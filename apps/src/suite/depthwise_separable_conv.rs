//! A depthwise-separable convolution, the block MobileNet is built of, as
//! Halide's `apps/depthwise_separable_conv` computes it (channels innermost:
//! `input(c, x, y, n)`), with the MobileNet block's bias and ReLU6 after
//! each convolution (Howard et al. 2017, figure 3): a 3x3 depthwise
//! convolution, stride 1, the image padded with zeros,
//! `depthwise(c, x, y, n) = dw_bias(c) + sum_{r} dw_filter(c, r.x, r.y) *
//! input(c, x + r.x - 1, y + r.y - 1, n)`, clamped to `[0, 6]`; then a 1x1
//! pointwise convolution across the channels,
//! `pointwise(c, x, y, n) = pw_bias(c) + sum_{k} pw_filter(c, k) *
//! dw_relu6(k, x, y, n)`, clamped to `[0, 6]`. The paper size is
//! MobileNet v1's second block at batch 4: 112x112, 32 channels in, 64 out.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::boundary::constant_exterior;
use compiler::lang::ops::{max, min};
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::target::Target;

/// `min(max(e, 0), 6)`.
fn relu6(e: Expr) -> Expr {
    min(max(e, 0.0f32), 6.0f32)
}

/// The depthwise-separable convolution at `size`: batch 4, 112x112, 32
/// channels in, 64 out (small: batch 2, 9x7, 8 in, 16 out).
pub fn app(size: Size, _host: &Target) -> App {
    let (n, ci, co, w, h): (i64, i32, i64, i64, i64) = pick(size, (4, 32, 64, 112, 112), (2, 8, 16, 9, 7));
    let (c, x, y, b) = (Var::new("c"), Var::new("x"), Var::new("y"), Var::new("n"));
    let input = ImageParam::new("input", ScalarType::F32, 4);
    let dw_filter = ImageParam::new("dw_filter", ScalarType::F32, 3);
    let dw_bias = ImageParam::new("dw_bias", ScalarType::F32, 1);
    let pw_filter = ImageParam::new("pw_filter", ScalarType::F32, 2);
    let pw_bias = ImageParam::new("pw_bias", ScalarType::F32, 1);
    let padded = constant_exterior(&input, Expr::float(0.0, Type::f32()));
    let at = [c.expr(), x.expr(), y.expr(), b.expr()];
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(3)), (Expr::i32(0), Expr::i32(3))]);
    let (rx, ry) = (r.x().expr(), r.y().expr());
    let depthwise = Func::new("depthwise");
    depthwise.define(&[&c, &x, &y, &b], dw_bias.at([c.expr()]));
    depthwise.add_update(
        at.clone(),
        dw_filter.at([c.expr(), rx.clone(), ry.clone()]) * padded.at([c.expr(), &x + rx - 1, &y + ry - 1, b.expr()]),
    );
    let dw_relu6 = Func::new("dw_relu6");
    dw_relu6.define(&[&c, &x, &y, &b], relu6(depthwise.at(at.clone())));
    let k = RDom::new("k", &[(Expr::i32(0), Expr::i32(ci.into()))]);
    let pointwise = Func::new("pointwise");
    pointwise.define(&[&c, &x, &y, &b], pw_bias.at([c.expr()]));
    pointwise.add_update(at.clone(), pw_filter.at([c.expr(), k.x().expr()]) * dw_relu6.at([k.x().expr(), x.expr(), y.expr(), b.expr()]));
    let output = Func::new("output");
    output.define(&[&c, &x, &y, &b], relu6(pointwise.at(at)));
    let pipeline = Pipeline::new(&[&output]).expect("depthwise_separable_conv is well formed");
    let ci = i64::from(ci);
    App {
        name: "depthwise_separable_conv",
        pipeline,
        expert: None,
        inputs: vec![
            ("input".into(), vec![(0, ci), (0, w), (0, h), (0, n)]),
            ("dw_filter".into(), vec![(0, ci), (0, 3), (0, 3)]),
            ("dw_bias".into(), vec![(0, ci)]),
            ("pw_filter".into(), vec![(0, co), (0, ci)]),
            ("pw_bias".into(), vec![(0, co)]),
        ],
        output: vec![(0, co), (0, w), (0, h), (0, n)],
        params: vec![],
    }
}
