//! Horn and Schunck's optical flow ("Determining Optical Flow", 1981)
//! between two f32 grayscale frames of a clip, `frames(x, y, t)` with
//! `t` in {0, 1} (under a repeat-edge boundary): the brightness derivatives `ix`,
//! `iy`, `it` estimated over the 2x2x2 cube of the paper's section 7; then
//! a fixed number of Jacobi iterations (10, unrolled as Funcs) of the
//! paper's update from the flow `(u, v)` of the previous iteration (zero to
//! start): the local averages `ubar`, `vbar` with the paper's weights (1/6
//! on the four edge neighbours, 1/12 on the corners) of the previous flow
//! under a repeat-edge boundary at the image's edges, and
//! `u = ubar - ix * t`, `v = vbar - iy * t` with
//! `t = (ix ubar + iy vbar + it) / (ix^2 + iy^2 + alpha^2)`, `alpha = 0.1`
//! for intensities in `[0, 1)`. The output is the flow, `flow(x, y, c)`
//! with `c = 0` for `u` and 1 for `v`.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::ScalarType;
use compiler::lang::boundary::{repeat_edge, repeat_edge_within};
use compiler::lang::ops::{select, CompareExt};
use compiler::lang::{Func, ImageParam, Pipeline, Var};
use compiler::target::Target;

/// The Jacobi iterations.
pub const ITERATIONS: usize = 10;
/// The smoothness weight squared (`alpha = 0.1`).
const ALPHA_SQ: f32 = 0.01;

/// The optical-flow pipeline at `size`: two 1920x1080 frames (37x29
/// small).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h): (i32, i32) = pick(size, (1920, 1080), (37, 29));
    let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
    let frames = repeat_edge(&ImageParam::new("frames", ScalarType::F32, 3));
    let at = |f: &Func, dx: i32, dy: i32| f.at([&x + dx, &y + dy]);
    let (e0, e1) = (Func::new("frame0"), Func::new("frame1"));
    e0.define(&[&x, &y], frames.at([x.expr(), y.expr(), Expr::i32(0)]));
    e1.define(&[&x, &y], frames.at([x.expr(), y.expr(), Expr::i32(1)]));
    let (e0, e1) = (&e0, &e1);
    let ix = Func::new("ix");
    ix.define(
        &[&x, &y],
        (at(e0, 1, 0) - at(e0, 0, 0) + at(e0, 1, 1) - at(e0, 0, 1) + at(e1, 1, 0) - at(e1, 0, 0) + at(e1, 1, 1) - at(e1, 0, 1)) * 0.25f32,
    );
    let iy = Func::new("iy");
    iy.define(
        &[&x, &y],
        (at(e0, 0, 1) - at(e0, 0, 0) + at(e0, 1, 1) - at(e0, 1, 0) + at(e1, 0, 1) - at(e1, 0, 0) + at(e1, 1, 1) - at(e1, 1, 0)) * 0.25f32,
    );
    let it = Func::new("it");
    it.define(
        &[&x, &y],
        (at(e1, 0, 0) - at(e0, 0, 0) + at(e1, 1, 0) - at(e0, 1, 0) + at(e1, 0, 1) - at(e0, 0, 1) + at(e1, 1, 1) - at(e0, 1, 1)) * 0.25f32,
    );
    let here = |f: &Func| at(f, 0, 0);
    let denom = Func::new("denom");
    denom.define(&[&x, &y], here(&ix) * here(&ix) + here(&iy) * here(&iy) + ALPHA_SQ);
    // The previous flow, its reads outside the image clamped to the image.
    let image = [(Expr::i32(0), Expr::i32(w.into())), (Expr::i32(0), Expr::i32(h.into()))];
    let average = |f: &Func| {
        let f = repeat_edge_within(f, &image);
        let edges = at(&f, -1, 0) + at(&f, 1, 0) + at(&f, 0, -1) + at(&f, 0, 1);
        let corners = at(&f, -1, -1) + at(&f, 1, -1) + at(&f, -1, 1) + at(&f, 1, 1);
        (edges * 2.0f32 + corners) / 12.0f32
    };
    let (mut u, mut v) = (Func::new("u_0"), Func::new("v_0"));
    u.define(&[&x, &y], 0.0f32);
    v.define(&[&x, &y], 0.0f32);
    for k in 1..=ITERATIONS {
        let (ubar, vbar) = (Func::new(&format!("ubar_{k}")), Func::new(&format!("vbar_{k}")));
        ubar.define(&[&x, &y], average(&u));
        vbar.define(&[&x, &y], average(&v));
        let t = (here(&ix) * here(&ubar) + here(&iy) * here(&vbar) + here(&it)) / here(&denom);
        let (next_u, next_v) = (Func::new(&format!("u_{k}")), Func::new(&format!("v_{k}")));
        next_u.define(&[&x, &y], here(&ubar) - here(&ix) * t.clone());
        next_v.define(&[&x, &y], here(&vbar) - here(&iy) * t);
        (u, v) = (next_u, next_v);
    }
    let flow = Func::new("flow");
    flow.define(&[&x, &y, &c], select(c.eq_(0), here(&u), here(&v)));
    let pipeline = Pipeline::new(&[&flow]).expect("optical_flow is well formed");
    App {
        name: "optical_flow",
        pipeline,
        expert: None,
        inputs: vec![("frames".into(), vec![(0, w.into()), (0, h.into()), (0, 2)])],
        output: vec![(0, w.into()), (0, h.into()), (0, 2)],
        params: vec![],
    }
}
