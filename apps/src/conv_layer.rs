//! A convolution layer with ReLU, as in a CNN:
//! `conv(c, x, y, n) = bias(c) + sum_{r} filter(c, r.y, r.z, r.x) * input(r.x, x + r.y, y + r.z, n)`
//! over 3x3 windows and every input channel (`r.x` innermost), then
//! `relu = max(conv, 0)`. Channels are innermost in memory. The paper's
//! size: batch 5, 128 input and 128 output channels, 100x80 outputs.
//!
//! Expert schedule: the output in register tiles of two vectors of
//! channels by 4 columns, rows and batch images in parallel; `conv`
//! computed per tile, its reduction inside the tile so the 8 accumulators
//! stay in registers.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::ScalarType;
use compiler::lang::ops::max;
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::schedule::Schedule;
use compiler::target::Target;

/// The conv_layer app at `size` for `host`: batch 5, 128 channels in and out, 100x80 outputs (small: batch 2, 8 in, 32 out, 8x6).
pub fn app(size: Size, host: &Target) -> App {
    let (n, ci, co, w, h) = pick(size, (5, 128, 128, 100, 80), (2, 8, 2 * 16, 8, 6));
    let (c, x, y, b) = (Var::new("c"), Var::new("x"), Var::new("y"), Var::new("n"));
    let input = ImageParam::new("input", ScalarType::F32, 4);
    let filter = ImageParam::new("filter", ScalarType::F32, 4);
    let bias = ImageParam::new("bias", ScalarType::F32, 1);
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(ci)), (Expr::i32(0), Expr::i32(3)), (Expr::i32(0), Expr::i32(3))]);
    let (rc, rx, ry) = (r.x().expr(), r.y().expr(), r.z().expr());
    let conv = Func::new("conv");
    conv.define(&[&c, &x, &y, &b], bias.at([c.expr()]));
    let at = [c.expr(), x.expr(), y.expr(), b.expr()];
    conv.update(
        at.clone(),
        conv.at(at.clone()) + filter.at([c.expr(), rx.clone(), ry.clone(), rc.clone()]) * input.at([rc, &x + rx, &y + ry, b.expr()]),
    );
    let relu = Func::new("relu");
    relu.define(&[&c, &x, &y, &b], max(conv.at(at), 0.0f32));
    let pipeline = Pipeline::new(&[&relu]).expect("the conv layer is well formed");

    let lanes = host.natural_lanes(ScalarType::F32);
    let mut expert = Schedule::new();
    expert
        .func("relu")
        .split("c", "co", "ci", 2 * lanes)
        .split("x", "xo", "xi", 4)
        .reorder(&["ci", "xi", "xo", "y", "n", "co"])
        .vectorize_by("ci", lanes)
        .unroll("ci")
        .unroll("xi")
        .parallel("y");
    // Per tile, conv covers 2 vectors of channels by 4 columns: split so
    // that the unrolled loops have those constant extents.
    expert.func("conv").compute_at("relu", "xo");
    for stage in 0..2 {
        let conv = if stage == 0 { expert.func("conv") } else { expert.func("conv").update(0) };
        let conv = conv.split("c", "co", "ci", 2 * lanes).split("x", "xo", "xi", 4);
        let conv = if stage == 0 { conv } else { conv.reorder(&["ci", "xi", "r.x", "r.y", "r.z", "co", "xo", "y", "n"]) };
        conv.vectorize_by("ci", lanes).unroll("ci").unroll("xi");
    }
    App {
        name: "conv_layer",
        pipeline,
        expert: Some(expert),
        inputs: vec![
            ("input".into(), vec![(0, ci), (0, w + 2), (0, h + 2), (0, n)]),
            ("filter".into(), vec![(0, co), (0, 3), (0, 3), (0, ci)]),
            ("bias".into(), vec![(0, co)]),
        ],
        output: vec![(0, co), (0, w), (0, h), (0, n)],
        params: vec![],
    }
}
