//! The forward two-level 2D Haar wavelet transform of an f32 grayscale
//! image, from Halide's `apps/wavelet` (its `haar_x`: the sum and the
//! difference of each pair of pixels, halved, as two bands of a 3D Func)
//! applied along x and then along y, and again to the low-low band. The
//! output is the packed (Mallat) layout of the image's size: the second
//! level's four bands (low-low, high-low, low-high, high-high) in the
//! top-left quarter's quarters, the first level's three detail bands in
//! the other quarters.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::ScalarType;
use compiler::lang::ops::{select, CompareExt};
use compiler::lang::{Func, ImageParam, Pipeline, Var};
use compiler::target::Target;

/// One level: `haar_x{level}(x, y, c)` pairs columns (c = 0 their mean, 1
/// half their difference), `haar_y{level}(x, y, band)` pairs rows of band
/// `band % 2` of it (`band / 2` = 0 the mean, 1 half the difference).
fn level(source: impl Fn(Expr, Expr) -> Expr, l: usize, x: &Var, y: &Var, c: &Var) -> Func {
    let haar_x = Func::new(&format!("haar_x{l}"));
    let (even, odd) = (source(x * 2, y.expr()), source(x * 2 + 1, y.expr()));
    haar_x.define(&[x, y, c], select(c.eq_(0), even.clone() + odd.clone(), even - odd) * 0.5f32);
    let haar_y = Func::new(&format!("haar_y{l}"));
    let row = |dy: i32| haar_x.at([x.expr(), y * 2 + dy, c % 2]);
    haar_y.define(&[x, y, c], select((c / 2).eq_(0), row(0) + row(1), row(0) - row(1)) * 0.5f32);
    haar_y
}

/// The Haar transform at `size`: a 1920x1080 image (40x28 small).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h) = pick(size, (1920, 1080), (40, 28));
    let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let first = level(|x, y| input.at([x, y]), 1, &x, &y, &c);
    let second = level(|x, y| first.at([x, y, Expr::i32(0)]), 2, &x, &y, &c);
    // Which band of a level a point of the packed layout holds, and where
    // in it: the quarter of the level's extent it lies in.
    let (w1, h1, w2, h2) = (w as i32 / 2, h as i32 / 2, w as i32 / 4, h as i32 / 4);
    let band = |bw: i32, bh: i32| select(x.ge(bw), 1, 0) + select(y.ge(bh), 2, 0);
    let output = Func::new("output");
    output.define(
        &[&x, &y],
        select(x.lt(w1) & y.lt(h1), second.at([&x % w2, &y % h2, band(w2, h2)]), first.at([&x % w1, &y % h1, band(w1, h1)])),
    );
    let pipeline = Pipeline::new(&[&output]).expect("wavelet_haar is well formed");
    let image = vec![(0, w), (0, h)];
    App { name: "wavelet_haar", pipeline, expert: None, inputs: vec![("input".into(), image.clone())], output: image, params: vec![] }
}
