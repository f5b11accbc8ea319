//! Reinhard et al.'s global tone-mapping operator ("Photographic Tone
//! Reproduction for Digital Images", SIGGRAPH 2002, equations 1-4) on a
//! planar f32 RGB high-dynamic-range image `input(x, y, c)`: the luminance
//! `L = 0.2126 R + 0.7152 G + 0.0722 B` (Rec. 709); the log-average
//! luminance `exp(mean(log(delta + L)))` over the whole image (a full
//! reduction, `delta = 1e-4`); the luminance scaled to the key `a = 0.18`,
//! `Ls = a L / log_average`; the white point `L_white` the largest scaled
//! luminance of the image (the paper's default, a second full reduction);
//! the mapped luminance `Ld = Ls (1 + Ls / L_white^2) / (1 + Ls)`; each
//! channel scaled by `Ld / L` (`L` kept above 1e-6), then gamma-encoded
//! with exponent 1/2.2 and rounded to 8 bits.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::ops::{cast, clamp, exp, log, max, pow};
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::target::Target;

/// The key: the mean luminance the log-average is mapped to.
const KEY: f32 = 0.18;
/// Keeps the log of a black pixel finite.
const DELTA: f32 = 1e-4;

/// The tone-mapping pipeline at `size`: a 1920x1080 RGB image (37x29
/// small).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h): (i32, i32) = pick(size, (1920, 1080), (37, 29));
    let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
    let input = ImageParam::new("input", ScalarType::F32, 3);
    let channel = |k: i32| input.at([x.expr(), y.expr(), Expr::i32(k.into())]);
    let lum = Func::new("lum");
    lum.define(&[&x, &y], channel(0) * 0.2126f32 + channel(1) * 0.7152f32 + channel(2) * 0.0722f32);
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(w.into())), (Expr::i32(0), Expr::i32(h.into()))]);
    let lum_r = lum.at([r.x().expr(), r.y().expr()]);
    let log_sum = Func::new("log_sum");
    log_sum.define(&[], 0.0f32);
    log_sum.update([] as [Expr; 0], log_sum.at([] as [Expr; 0]) + log(lum_r.clone() + DELTA));
    let max_lum = Func::new("max_lum");
    max_lum.define(&[], 0.0f32);
    max_lum.update([] as [Expr; 0], max(max_lum.at([] as [Expr; 0]), lum_r));
    let scalar = |f: &Func| f.at([] as [Expr; 0]);
    let log_average = Func::new("log_average");
    log_average.define(&[], exp(scalar(&log_sum) / (w * h) as f32));
    let exposure = Func::new("exposure");
    exposure.define(&[], KEY / scalar(&log_average));
    let white_sq = Func::new("white_sq");
    let white = scalar(&max_lum) * scalar(&exposure);
    white_sq.define(&[], white.clone() * white);
    let mapped = Func::new("mapped");
    let scaled = lum.at([x.expr(), y.expr()]) * scalar(&exposure);
    mapped.define(&[&x, &y], scaled.clone() * (scaled.clone() / scalar(&white_sq) + 1.0f32) / (scaled + 1.0f32));
    let output = Func::new("output");
    let ratio = mapped.at([x.expr(), y.expr()]) / max(lum.at([x.expr(), y.expr()]), 1e-6f32);
    let linear = input.at([x.expr(), y.expr(), c.expr()]) * ratio;
    let encoded = pow(linear, 1.0f32 / 2.2f32) * 255.0f32 + 0.5f32;
    output.define(&[&x, &y, &c], cast(Type::u8(), clamp(encoded, 0.0f32, 255.0f32)));
    let pipeline = Pipeline::new(&[&output]).expect("tone_map_reinhard is well formed");
    let image = vec![(0, w.into()), (0, h.into()), (0, 3)];
    App { name: "tone_map_reinhard", pipeline, expert: None, inputs: vec![("input".into(), image.clone())], output: image, params: vec![] }
}
