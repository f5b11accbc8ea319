//! Multi-scale interpolation of an f32 RGBA image (x, y, c) over 10
//! levels (4 at the small size): alpha is premultiplied, a pyramid of
//! [1 2 1]/4 downsamplings
//! (x then y) is built, and from the coarsest level up each level is
//! composited over the [1 1]/2 upsampling of the level below (`over`:
//! `down + (1 - down.alpha) up`); the output divides the finest level's
//! colour by its alpha (3 channels). Repeat-edge boundary.
//!
//! Expert schedule: every level of both pyramids at root, rows in parallel
//! strips, vectorized along x; the horizontal halves of the down- and
//! upsamplings computed per row of their level.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::ScalarType;
use compiler::lang::boundary::repeat_edge;
use compiler::lang::ops::{select, CompareExt};
use compiler::lang::{Func, ImageParam, Pipeline, Var};
use compiler::schedule::Schedule;
use compiler::target::Target;

/// The interpolate app at `size` for `host`: a 1536x2560 image, 10 levels (small: 36x28, 4 levels).
pub fn app(size: Size, host: &Target) -> App {
    // A pyramid's reach grows with its depth (the finest level of a
    // 10-level one spans about 2^10 pixels past the output on each side),
    // so the small size, checked by the slow reference evaluator, is
    // shallower.
    let (w, h, levels) = pick(size, (1536, 2560, 10), (36, 28, 4));
    let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
    let input = ImageParam::new("input", ScalarType::F32, 3);
    let clamped = repeat_edge(&input);
    let xyc = |f: &Func, x: Expr, y: Expr, c: Expr| f.at([x, y, c]);

    let mut down = vec![Func::new("down0")];
    let alpha = clamped.at([x.expr(), y.expr(), Expr::i32(3)]);
    down[0].define(&[&x, &y, &c], select(c.lt(3), clamped.at([x.expr(), y.expr(), c.expr()]) * alpha.clone(), alpha));
    for l in 1..levels {
        let prev = down[l - 1].clone();
        let dx = Func::new(&format!("downx{l}"));
        dx.define(
            &[&x, &y, &c],
            (xyc(&prev, &x * 2 - 1, y.expr(), c.expr())
                + xyc(&prev, &x * 2, y.expr(), c.expr()) * 2.0f32
                + xyc(&prev, &x * 2 + 1, y.expr(), c.expr()))
                * 0.25f32,
        );
        let d = Func::new(&format!("down{l}"));
        d.define(
            &[&x, &y, &c],
            (xyc(&dx, x.expr(), &y * 2 - 1, c.expr())
                + xyc(&dx, x.expr(), &y * 2, c.expr()) * 2.0f32
                + xyc(&dx, x.expr(), &y * 2 + 1, c.expr()))
                * 0.25f32,
        );
        down.push(d);
    }
    let mut interpolated: Vec<Option<Func>> = vec![None; levels];
    let top = Func::new(&format!("interp{}", levels - 1));
    top.define(&[&x, &y, &c], xyc(&down[levels - 1], x.expr(), y.expr(), c.expr()));
    interpolated[levels - 1] = Some(top);
    for l in (0..levels - 1).rev() {
        let below = interpolated[l + 1].clone().expect("the level below is built");
        let ux = Func::new(&format!("upx{l}"));
        ux.define(&[&x, &y, &c], (xyc(&below, &x / 2, y.expr(), c.expr()) + xyc(&below, (&x + 1) / 2, y.expr(), c.expr())) * 0.5f32);
        let up = (xyc(&ux, x.expr(), &y / 2, c.expr()) + xyc(&ux, x.expr(), (&y + 1) / 2, c.expr())) * 0.5f32;
        let f = Func::new(&format!("interp{l}"));
        let d = &down[l];
        f.define(&[&x, &y, &c], xyc(d, x.expr(), y.expr(), c.expr()) + (1.0f32 - xyc(d, x.expr(), y.expr(), Expr::i32(3))) * up);
        interpolated[l] = Some(f);
    }
    let finest = interpolated[0].clone().expect("level 0 is built");
    let output = Func::new("output");
    output.define(&[&x, &y, &c], xyc(&finest, x.expr(), y.expr(), c.expr()) / xyc(&finest, x.expr(), y.expr(), Expr::i32(3)));
    let pipeline = Pipeline::new(&[&output]).expect("interpolate is well formed");

    let lanes = host.natural_lanes(ScalarType::F32);
    let mut expert = Schedule::new();
    for l in 0..levels {
        for f in [format!("down{l}"), format!("interp{l}")] {
            expert.func(&f).compute_root().reorder(&["x", "c", "y"]).split("y", "yo", "yi", 8).parallel("yo").vectorize_by("x", lanes);
        }
        if l > 0 {
            expert.func(&format!("downx{l}")).compute_at(&format!("down{l}"), "yi").vectorize_by("x", lanes);
        }
        if l < levels - 1 {
            expert.func(&format!("upx{l}")).compute_at(&format!("interp{l}"), "yi").vectorize_by("x", lanes);
        }
    }
    expert.func("output").reorder(&["x", "c", "y"]).split("y", "yo", "yi", 8).parallel("yo").vectorize_by("x", lanes);
    App {
        name: "interpolate",
        pipeline,
        expert: Some(expert),
        inputs: vec![("input".into(), vec![(0, w), (0, h), (0, 4)])],
        output: vec![(0, w), (0, h), (0, 3)],
        params: vec![("levels", levels as i64)],
    }
}
