//! Histogram equalization of a u8 RGB image (x, y, c): the luminance `Y`
//! (f32), its 256-bin histogram per row (`hist_rows`, a data-dependent
//! update) summed over the rows (`hist`), the cumulative distribution
//! (`cdf`, a scan), the equalized luminance `eq = cdf(Y) * 255 / pixels`,
//! and the chroma `Cr`, `Cb` recombined with it into RGB, clamped to
//! [0, 255] and cast to u8.
//!
//! Expert schedule: row histograms at root, rows in parallel; the sum of
//! rows vectorized across bins; the scan serial; the output in parallel
//! strips of rows, vectorized, with the colour conversions inlined.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::ops::{cast, clamp, select, CompareExt};
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::schedule::Schedule;
use compiler::target::Target;

/// The hist_eq app at `size` for `host`: a 1536x2560 RGB image (24x20 small).
pub fn app(size: Size, host: &Target) -> App {
    let (w, h) = pick(size, (1536, 2560), (24, 20));
    let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
    let input = ImageParam::new("input", ScalarType::U8, 3);
    let channel = |k: i64, x: Expr, y: Expr| cast(Type::f32(), input.at([x, y, Expr::i32(k)]));
    let luma = Func::new("Y");
    luma.define(
        &[&x, &y],
        channel(0, x.expr(), y.expr()) * 0.299f32 + channel(1, x.expr(), y.expr()) * 0.587f32 + channel(2, x.expr(), y.expr()) * 0.114f32,
    );
    let bin = |x: Expr, y: Expr| cast(Type::u8(), clamp(luma.at([x, y]), 0.0f32, 255.0f32));
    let hist_rows = Func::new("hist_rows");
    hist_rows.define(&[&x, &y], Expr::i32(0));
    let rx = RDom::new("rx", &[(Expr::i32(0), Expr::i32(w))]);
    let b = cast(Type::i32(), bin(rx.x().expr(), y.expr()));
    hist_rows.update([b.clone(), y.expr()], hist_rows.at([b, y.expr()]) + 1);
    let hist = Func::new("hist");
    hist.define(&[&x], Expr::i32(0));
    let ry = RDom::new("ry", &[(Expr::i32(0), Expr::i32(h))]);
    hist.update([x.expr()], hist.at([x.expr()]) + hist_rows.at([x.expr(), ry.x().expr()]));
    let cdf = Func::new("cdf");
    cdf.define(&[&x], hist.at([Expr::i32(0)]));
    let rb = RDom::new("rb", &[(Expr::i32(1), Expr::i32(255))]);
    cdf.update([rb.x().expr()], cdf.at([rb.x().expr() - 1]) + hist.at([rb.x().expr()]));
    let eq = Func::new("eq");
    let scale = 255.0f32 / (w * h) as f32;
    eq.define(&[&x, &y], clamp(cast(Type::f32(), cdf.at([cast(Type::i32(), bin(x.expr(), y.expr()))])) * scale, 0.0f32, 255.0f32));
    let cr = Func::new("Cr");
    cr.define(&[&x, &y], (channel(0, x.expr(), y.expr()) - luma.at([x.expr(), y.expr()])) * 0.713f32 + 128.0f32);
    let cb = Func::new("Cb");
    cb.define(&[&x, &y], (channel(2, x.expr(), y.expr()) - luma.at([x.expr(), y.expr()])) * 0.564f32 + 128.0f32);
    let (e, r, bl) = (eq.at([x.expr(), y.expr()]), cr.at([x.expr(), y.expr()]) - 128.0f32, cb.at([x.expr(), y.expr()]) - 128.0f32);
    let red = e.clone() + r.clone() * 1.4f32;
    let green = e.clone() - bl.clone() * 0.343f32 - r * 0.711f32;
    let blue = e + bl * 1.765f32;
    let output = Func::new("output");
    let rgb = select(c.eq_(0), red, select(c.eq_(1), green, blue));
    output.define(&[&x, &y, &c], cast(Type::u8(), clamp(rgb, 0.0f32, 255.0f32)));
    let pipeline = Pipeline::new(&[&output]).expect("histogram equalization is well formed");

    let lanes = host.natural_lanes(ScalarType::F32);
    let mut expert = Schedule::new();
    expert.func("hist_rows").compute_root().parallel("y");
    expert.func("hist_rows").update(0).parallel("y");
    expert.func("hist").compute_root().vectorize_by("x", lanes);
    expert.func("hist").update(0).reorder(&["x", "ry.x"]).vectorize_by("x", lanes);
    expert.func("cdf").compute_root();
    expert.func("output").reorder(&["x", "c", "y"]).split("y", "yo", "yi", 8).parallel("yo").vectorize_by("x", lanes);
    let image = vec![(0, w), (0, h), (0, 3)];
    App { name: "hist_eq", pipeline, expert: Some(expert), inputs: vec![("input".into(), image.clone())], output: image, params: vec![] }
}
