//! A ResNet convolution unit at inference (He et al. 2016; batch
//! normalization, Ioffe and Szegedy 2015, with its running statistics):
//! a 3x3 convolution, stride 1, the image padded with zeros and no bias,
//! over channels-innermost activations `input(k, x, y, n)` and an HWIO
//! filter `filter(c, k, r.x, r.y)` (output channel innermost),
//! `conv(c, x, y, n) = sum_{k, r} filter(c, k, r.x, r.y) *
//! input(k, x + r.x - 1, y + r.y - 1, n)`; batch normalization folded into
//! a scale and shift per channel, `bn_scale = gamma / sqrt(variance + 1e-5)`
//! and `bn_shift = beta - mean * bn_scale`; then ReLU,
//! `max(conv * bn_scale + bn_shift, 0)`. The paper size is a ResNet-50/34
//! stage-1 convolution: 56x56, 64 channels in and out, batch 1.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::boundary::constant_exterior;
use compiler::lang::ops::{max, sqrt};
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::target::Target;

/// Batch normalization's epsilon (the frameworks' default).
const EPSILON: f32 = 1e-5;

/// The conv + batch norm + ReLU pipeline at `size`: batch 1, 56x56, 64
/// channels in and out (small: batch 2, 9x7, 8 in, 16 out).
pub fn app(size: Size, _host: &Target) -> App {
    let (n, ci, co, w, h): (i64, i32, i64, i64, i64) = pick(size, (1, 64, 64, 56, 56), (2, 8, 16, 9, 7));
    let (c, x, y, b) = (Var::new("c"), Var::new("x"), Var::new("y"), Var::new("n"));
    let input = ImageParam::new("input", ScalarType::F32, 4);
    let filter = ImageParam::new("filter", ScalarType::F32, 4);
    let params: Vec<ImageParam> =
        ["mean", "variance", "gamma", "beta"].iter().map(|name| ImageParam::new(name, ScalarType::F32, 1)).collect();
    let [mean, variance, gamma, beta] = &params[..] else { unreachable!("four parameters") };
    let padded = constant_exterior(&input, Expr::float(0.0, Type::f32()));
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(ci.into())), (Expr::i32(0), Expr::i32(3)), (Expr::i32(0), Expr::i32(3))]);
    let (rk, rx, ry) = (r.x().expr(), r.y().expr(), r.z().expr());
    let at = [c.expr(), x.expr(), y.expr(), b.expr()];
    let conv = Func::new("conv");
    conv.define(&[&c, &x, &y, &b], 0.0f32);
    conv.add_update(
        at.clone(),
        filter.at([c.expr(), rk.clone(), rx.clone(), ry.clone()]) * padded.at([rk, &x + rx - 1, &y + ry - 1, b.expr()]),
    );
    let bn_scale = Func::new("bn_scale");
    bn_scale.define(&[&c], gamma.at([c.expr()]) / sqrt(variance.at([c.expr()]) + EPSILON));
    let bn_shift = Func::new("bn_shift");
    bn_shift.define(&[&c], beta.at([c.expr()]) - mean.at([c.expr()]) * bn_scale.at([c.expr()]));
    let output = Func::new("output");
    output.define(&[&c, &x, &y, &b], max(conv.at(at) * bn_scale.at([c.expr()]) + bn_shift.at([c.expr()]), 0.0f32));
    let pipeline = Pipeline::new(&[&output]).expect("conv_bn_relu is well formed");
    let ci = i64::from(ci);
    let channels = vec![(0, co)];
    App {
        name: "conv_bn_relu",
        pipeline,
        expert: None,
        inputs: vec![
            ("input".into(), vec![(0, ci), (0, w), (0, h), (0, n)]),
            ("filter".into(), vec![(0, co), (0, ci), (0, 3), (0, 3)]),
            ("mean".into(), channels.clone()),
            ("variance".into(), channels.clone()),
            ("gamma".into(), channels.clone()),
            ("beta".into(), channels),
        ],
        output: vec![(0, co), (0, w), (0, h), (0, n)],
        params: vec![],
    }
}
