//! Local Laplacian filtering (Paris et al.; Aubry et al.'s fast version)
//! of a u16 RGB image (x, y, c) with 8 pyramid levels and 8 intensity
//! levels: the luminance is remapped around each intensity level through a
//! lookup table (`remap`, `alpha f exp(-f^2 / 2)`), each remapped image
//! gets a Gaussian pyramid (`g{j}`, [1 3 3 1]/8 downsamplings) and a
//! Laplacian pyramid (`l{j}`, differences with the [1 3]/4 upsampling of
//! the next level); the output's Laplacian pyramid interpolates, per pixel,
//! between the two intensity levels around the input pyramid's value
//! (`in{j}`), is collapsed back up (`out{j}`), and the colour is
//! reintroduced by the ratio to the input luminance. Repeat-edge boundary.
//!
//! Expert schedule: the lookup table, and every level of the input,
//! processed and output pyramids at root, rows in parallel strips,
//! vectorized along x; the Laplacian levels and the resampling halves
//! inlined.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::boundary::repeat_edge;
use compiler::lang::ops::{cast, clamp, exp};
use compiler::lang::{Func, ImageParam, Pipeline, Var};
use compiler::schedule::Schedule;
use compiler::target::Target;

/// Intensity levels.
const K: i32 = 8;
const ALPHA: f32 = 1.0;
const BETA: f32 = 1.0;

/// A resampling of `f` (whose last `extra` arguments pass through).
type Access<'a> = dyn Fn(Expr, Expr) -> Expr + 'a;

/// `[1 3 3 1] / 8` along x then y, at half resolution.
fn downsample(name: &str, args: &[&Var], f: &Access) -> Func {
    let (x, y) = (args[0], args[1]);
    let dx = Func::new(&format!("{name}_dx"));
    dx.define(args, (f(x * 2 - 1, y.expr()) + (f(x * 2, y.expr()) + f(x * 2 + 1, y.expr())) * 3.0f32 + f(x * 2 + 2, y.expr())) / 8.0f32);
    let rest: Vec<Expr> = args[2..].iter().map(|v| v.expr()).collect();
    let at = |xx: Expr, yy: Expr| dx.at([xx, yy].into_iter().chain(rest.iter().cloned()));
    let d = Func::new(name);
    d.define(args, (at(x.expr(), y * 2 - 1) + (at(x.expr(), y * 2) + at(x.expr(), y * 2 + 1)) * 3.0f32 + at(x.expr(), y * 2 + 2)) / 8.0f32);
    d
}

/// `[1 3] / 4` upsampling along x then y (as an expression at `args`).
fn upsample(name: &str, args: &[&Var], f: &Access) -> Expr {
    let (x, y) = (args[0], args[1]);
    let ux = Func::new(&format!("{name}_ux"));
    ux.define(args, f(x / 2 - 1 + (x % 2) * 2, y.expr()) * 0.25f32 + f(x / 2, y.expr()) * 0.75f32);
    let rest: Vec<Expr> = args[2..].iter().map(|v| v.expr()).collect();
    let at = |yy: Expr| ux.at([x.expr(), yy].into_iter().chain(rest.iter().cloned()));
    at(y / 2 - 1 + (y % 2) * 2) * 0.25f32 + at(y / 2) * 0.75f32
}

/// The local_laplacian app at `size` for `host`: a 1536x2560 RGB image, 8 pyramid levels (small: 40x32, 3 levels).
pub fn app(size: Size, host: &Target) -> App {
    // Pyramid levels: fewer at the small size, as for interpolate.
    let (w, h, levels) = pick(size, (1536, 2560, 8), (40, 32, 3));
    let (x, y, c, k) = (Var::new("x"), Var::new("y"), Var::new("c"), Var::new("k"));
    let input = ImageParam::new("input", ScalarType::U16, 3);
    let clamped = repeat_edge(&input);

    let remap = Func::new("remap");
    let fx = cast(Type::f32(), x.expr()) / 256.0f32;
    remap.define(&[&x], fx.clone() * ALPHA * exp(fx.clone() * fx * -0.5f32));
    let floating = Func::new("floating");
    floating.define(&[&x, &y, &c], cast(Type::f32(), clamped.at([x.expr(), y.expr(), c.expr()])) / 65535.0f32);
    let channel = |i: i64| floating.at([x.expr(), y.expr(), Expr::i32(i)]);
    let gray = Func::new("gray");
    gray.define(&[&x, &y], channel(0) * 0.299f32 + channel(1) * 0.587f32 + channel(2) * 0.114f32);

    // The processed Gaussian pyramids, one per intensity level k.
    let level = cast(Type::f32(), k.expr()) * (1.0f32 / (K - 1) as f32);
    let g_here = gray.at([x.expr(), y.expr()]);
    let idx = clamp(cast(Type::i32(), g_here.clone() * ((K - 1) as f32 * 256.0f32)), 0, (K - 1) * 256);
    let mut g = vec![Func::new("g0")];
    g[0].define(&[&x, &y, &k], (g_here - level.clone()) * BETA + level + remap.at([idx - &k * 256]));
    for j in 1..levels {
        let prev = g[j - 1].clone();
        g.push(downsample(&format!("g{j}"), &[&x, &y, &k], &|xx, yy| prev.at([xx, yy, k.expr()])));
    }
    // Their Laplacian pyramids.
    let mut l: Vec<Func> = vec![];
    for j in 0..levels {
        let f = Func::new(&format!("l{j}"));
        let here = g[j].at([x.expr(), y.expr(), k.expr()]);
        if j == levels - 1 {
            f.define(&[&x, &y, &k], here);
        } else {
            let next = g[j + 1].clone();
            f.define(&[&x, &y, &k], here - upsample(&format!("l{j}"), &[&x, &y, &k], &|xx, yy| next.at([xx, yy, k.expr()])));
        }
        l.push(f);
    }
    // The input's Gaussian pyramid.
    let mut inp = vec![gray.clone()];
    for j in 1..levels {
        let prev = inp[j - 1].clone();
        inp.push(downsample(&format!("in{j}"), &[&x, &y], &|xx, yy| prev.at([xx, yy])));
    }
    // The output's Laplacian pyramid, then its collapse.
    let mut out_l = vec![];
    for j in 0..levels {
        let lv = inp[j].at([x.expr(), y.expr()]) * (K - 1) as f32;
        let li = clamp(cast(Type::i32(), lv.clone()), 0, K - 2);
        let lf = lv - cast(Type::f32(), li.clone());
        let f = Func::new(&format!("outl{j}"));
        f.define(&[&x, &y], (1.0f32 - lf.clone()) * l[j].at([x.expr(), y.expr(), li.clone()]) + lf * l[j].at([x.expr(), y.expr(), li + 1]));
        out_l.push(f);
    }
    let mut out_g: Vec<Option<Func>> = vec![None; levels];
    out_g[levels - 1] = Some(out_l[levels - 1].clone());
    for j in (0..levels - 1).rev() {
        let next = out_g[j + 1].clone().expect("the coarser level is built");
        let f = Func::new(&format!("out{j}"));
        f.define(&[&x, &y], upsample(&format!("out{j}"), &[&x, &y], &|xx, yy| next.at([xx, yy])) + out_l[j].at([x.expr(), y.expr()]));
        out_g[j] = Some(f);
    }
    let out0 = out_g[0].clone().expect("level 0 is built");
    let eps = 0.01f32;
    let color =
        (out0.at([x.expr(), y.expr()]) * (floating.at([x.expr(), y.expr(), c.expr()]) + eps)) / (gray.at([x.expr(), y.expr()]) + eps);
    let output = Func::new("output");
    output.define(&[&x, &y, &c], cast(Type::u16(), clamp(color, 0.0f32, 1.0f32) * 65535.0f32));
    let pipeline = Pipeline::new(&[&output]).expect("the local Laplacian is well formed");

    let lanes = host.natural_lanes(ScalarType::F32);
    let mut expert = Schedule::new();
    expert.func("remap").compute_root();
    let strips = |s: &mut Schedule, f: &str| {
        s.func(f).compute_root().split("y", "yo", "yi", 8).parallel("yo").vectorize_by("x", lanes);
    };
    strips(&mut expert, "gray");
    for j in 0..levels {
        strips(&mut expert, &format!("g{j}"));
        if j > 0 {
            strips(&mut expert, &format!("in{j}"));
        }
        if j < levels - 1 {
            strips(&mut expert, &format!("out{j}"));
        }
    }
    expert.func("output").reorder(&["x", "c", "y"]).split("y", "yo", "yi", 8).parallel("yo").vectorize_by("x", lanes);
    let image = vec![(0, w), (0, h), (0, 3)];
    App {
        name: "local_laplacian",
        pipeline,
        expert: Some(expert),
        inputs: vec![("input".into(), image.clone())],
        output: image,
        params: vec![("levels", levels as i64)],
    }
}
