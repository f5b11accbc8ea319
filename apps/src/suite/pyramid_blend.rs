//! Pyramid blending of two f32 RGB images (x, y, c) under an f32 mask
//! (x, y), from PolyMage's pyramid blending benchmark (Burt and Adelson's
//! multiresolution spline): 4-level Gaussian pyramids of both images and
//! of the mask (the 5-tap [1 4 6 4 1]/16 filter along x then y, keeping
//! every second pixel), Laplacian pyramids of the images (each level minus
//! the expansion of the next: even pixels [1 6 1]/8, odd pixels [1 1]/2 of
//! the coarser level, along x then y), each level of the two blended by
//! the mask's level (`mask * img1 + (1 - mask) * img2`), and the blended
//! pyramid collapsed from the coarsest level up (each level plus the
//! expansion of the one below), clamped to [0, 1]. Repeat-edge boundary
//! on the inputs.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::ScalarType;
use compiler::lang::boundary::repeat_edge;
use compiler::lang::ops::{clamp, select, CompareExt};
use compiler::lang::{Func, ImageParam, Pipeline, Var};
use compiler::target::Target;

/// The pyramids' depth.
const LEVELS: usize = 4;

/// The Funcs' pure variables: x, y, and c for the images.
struct Dims<'a> {
    x: &'a Var,
    y: &'a Var,
    rest: Vec<&'a Var>,
}

impl Dims<'_> {
    fn vars(&self) -> Vec<&Var> {
        [self.x, self.y].into_iter().chain(self.rest.iter().copied()).collect()
    }
    /// `f` at `(x, y)` and the other variables unchanged.
    fn at(&self, f: &Func, x: Expr, y: Expr) -> Expr {
        f.at([x, y].into_iter().chain(self.rest.iter().map(|v| v.expr())))
    }
    /// `f` filtered by [1 4 6 4 1]/16 along x (or y) at twice the coordinate.
    fn down(&self, f: &Func, name: &str, along_x: bool) -> Func {
        let tap = |d: i32| {
            let (x, y) = if along_x { (self.x * 2 + d, self.y.expr()) } else { (self.x.expr(), self.y * 2 + d) };
            self.at(f, x, y)
        };
        let g = Func::new(name);
        g.define(&self.vars(), (tap(-2) + tap(-1) * 4.0f32 + tap(0) * 6.0f32 + tap(1) * 4.0f32 + tap(2)) * 0.0625f32);
        g
    }
    /// The expansion of `f` by 2 along x (or y): [1 6 1]/8 at even
    /// coordinates, [1 1]/2 at odd ones.
    fn up(&self, f: &Func, along_x: bool) -> Expr {
        let v = if along_x { self.x } else { self.y };
        let tap = |d: i32| {
            let (x, y) = if along_x { (self.x / 2 + d, self.y.expr()) } else { (self.x.expr(), self.y / 2 + d) };
            self.at(f, x, y)
        };
        select((v % 2).eq_(0), (tap(-1) + tap(0) * 6.0f32 + tap(1)) * 0.125f32, (tap(0) + tap(1)) * 0.5f32)
    }
    /// `f` expanded by 2 along x (the Func `name`) and then along y.
    fn expand(&self, f: &Func, name: &str) -> Expr {
        let ux = Func::new(name);
        ux.define(&self.vars(), self.up(f, true));
        self.up(&ux, false)
    }
    /// The Gaussian pyramid of `base`, its levels named `{prefix}_gauss{l}`.
    fn gaussian(&self, base: Func, prefix: &str) -> Vec<Func> {
        let mut levels = vec![base];
        for l in 1..LEVELS {
            let dx = self.down(&levels[l - 1], &format!("{prefix}_downx{l}"), true);
            levels.push(self.down(&dx, &format!("{prefix}_gauss{l}"), false));
        }
        levels
    }
    /// The Laplacian pyramid of the Gaussian pyramid `gauss`.
    fn laplacian(&self, gauss: &[Func], prefix: &str) -> Vec<Func> {
        let mut levels: Vec<Func> = (0..LEVELS - 1)
            .map(|l| {
                let up = self.expand(&gauss[l + 1], &format!("{prefix}_upx{l}"));
                let lap = Func::new(&format!("{prefix}_lap{l}"));
                lap.define(&self.vars(), self.at(&gauss[l], self.x.expr(), self.y.expr()) - up);
                lap
            })
            .collect();
        levels.push(gauss[LEVELS - 1].clone());
        levels
    }
}

/// The pyramid blend at `size`: two 2048x2048 RGB images and a mask (small:
/// 48x40).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h) = pick(size, (2048, 2048), (48, 40));
    let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
    let img1 = ImageParam::new("img1", ScalarType::F32, 3);
    let img2 = ImageParam::new("img2", ScalarType::F32, 3);
    let mask = ImageParam::new("mask", ScalarType::F32, 2);
    let rgb = Dims { x: &x, y: &y, rest: vec![&c] };
    let gray = Dims { x: &x, y: &y, rest: vec![] };
    let lap1 = rgb.laplacian(&rgb.gaussian(repeat_edge(&img1), "img1"), "img1");
    let lap2 = rgb.laplacian(&rgb.gaussian(repeat_edge(&img2), "img2"), "img2");
    let weights = gray.gaussian(repeat_edge(&mask), "mask");
    let here = || [x.expr(), y.expr(), c.expr()];
    let blend: Vec<Func> = (0..LEVELS)
        .map(|l| {
            let m = weights[l].at([x.expr(), y.expr()]);
            let b = Func::new(&format!("blend{l}"));
            b.define(&[&x, &y, &c], lap1[l].at(here()) * m.clone() + lap2[l].at(here()) * (1.0f32 - m));
            b
        })
        .collect();
    let mut collapsed = blend[LEVELS - 1].clone();
    for l in (0..LEVELS - 1).rev() {
        let up = rgb.expand(&collapsed, &format!("collapse_upx{l}"));
        let f = Func::new(&format!("collapse{l}"));
        f.define(&[&x, &y, &c], blend[l].at(here()) + up);
        collapsed = f;
    }
    let output = Func::new("output");
    output.define(&[&x, &y, &c], clamp(collapsed.at(here()), 0.0f32, 1.0f32));
    let pipeline = Pipeline::new(&[&output]).expect("pyramid_blend is well formed");
    let image = vec![(0, w), (0, h), (0, 3)];
    App {
        name: "pyramid_blend",
        pipeline,
        expert: None,
        inputs: vec![("img1".into(), image.clone()), ("img2".into(), image.clone()), ("mask".into(), vec![(0, w), (0, h)])],
        output: image,
        params: vec![],
    }
}
