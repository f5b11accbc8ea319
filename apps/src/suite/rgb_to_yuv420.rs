//! Colour conversion of an 8-bit packed RGB image (RGB24: channels
//! interleaved, `input(c, x, y)`) to planar YUV 4:2:0, with the BT.601
//! limited-range integer arithmetic libyuv's `RGB24ToI420` and ffmpeg's
//! swscale use: `Y = (66 R + 129 G + 25 B + 0x1080) >> 8` at every pixel;
//! the chroma from the rounded mean of each 2x2 block of RGB values,
//! `U = (112 B - 74 G - 38 R + 0x8080) >> 8` and
//! `V = (112 R - 94 G - 18 B + 0x8080) >> 8` (all in 32-bit integers).
//!
//! The single output is the frame as one 8-bit buffer of W x 3H/2: the Y
//! plane in rows `[0, H)`, then the U plane (W/2 x H/2) and the V plane
//! side by side below it (Microsoft's IMC4 layout). Reads of the planes
//! are clamped to their boxes, so each is computed exactly over its size.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::ops::{cast, clamp, select, CompareExt};
use compiler::lang::{Func, ImageParam, Pipeline, Var};
use compiler::target::Target;

/// The RGB to YUV 4:2:0 pipeline at `size`: a 1920x1080 image (38x30
/// small), the output 1920x1620 (38x45).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h): (i32, i32) = pick(size, (1920, 1080), (38, 30));
    let (c, x, y) = (Var::new("c"), Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::U8, 3);
    let px = |k: Expr, x: Expr, y: Expr| cast(Type::i32(), input.at([k, x, y]));
    let (r, g, b) = (Expr::i32(0), Expr::i32(1), Expr::i32(2));
    let luma = Func::new("luma");
    luma.define(
        &[&x, &y],
        (px(r.clone(), x.expr(), y.expr()) * 66
            + px(g.clone(), x.expr(), y.expr()) * 129
            + px(b.clone(), x.expr(), y.expr()) * 25
            + 0x1080)
            >> 8,
    );
    // The rounded mean of each 2x2 block, per channel.
    let average = Func::new("average");
    let (x2, y2) = (x.expr() * 2, y.expr() * 2);
    average.define(
        &[&c, &x, &y],
        (px(c.expr(), x2.clone(), y2.clone())
            + px(c.expr(), x2.clone() + 1, y2.clone())
            + px(c.expr(), x2.clone(), y2.clone() + 1)
            + px(c.expr(), x2 + 1, y2 + 1)
            + 2)
            >> 2,
    );
    let avg = |k: &Expr| average.at([k.clone(), x.expr(), y.expr()]);
    let u = Func::new("u");
    u.define(&[&x, &y], (avg(&b) * 112 - avg(&g) * 74 - avg(&r) * 38 + 0x8080) >> 8);
    let v = Func::new("v");
    v.define(&[&x, &y], (avg(&r) * 112 - avg(&g) * 94 - avg(&b) * 18 + 0x8080) >> 8);
    let (cw, ch) = (w / 2, h / 2);
    let chroma_y = clamp(y.expr() - h, 0, ch - 1);
    let chroma = select(x.lt(cw), u.at([clamp(x.expr(), 0, cw - 1), chroma_y.clone()]), v.at([clamp(x.expr() - cw, 0, cw - 1), chroma_y]));
    let output = Func::new("output");
    output.define(&[&x, &y], cast(Type::u8(), select(y.lt(h), luma.at([x.expr(), clamp(y.expr(), 0, h - 1)]), chroma)));
    let pipeline = Pipeline::new(&[&output]).expect("rgb_to_yuv420 is well formed");
    App {
        name: "rgb_to_yuv420",
        pipeline,
        expert: None,
        inputs: vec![("input".into(), vec![(0, 3), (0, w.into()), (0, h.into())])],
        output: vec![(0, w.into()), (0, (h + ch).into())],
        params: vec![],
    }
}
