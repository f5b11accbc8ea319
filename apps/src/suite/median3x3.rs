//! 3x3 median of an 8-bit grayscale image, as OpenCV's `medianBlur` with
//! `ksize = 3` computes it (replicated borders) and as Halide users write
//! it, with a min/max sorting network instead of a sort: each column of
//! three is sorted (`min_y`, `mid_y`, `max_y`), then the median of the nine
//! is the median of the largest of the three minima, the median of the
//! three middles and the smallest of the three maxima (Paeth's network).
//! `median3(a, b, c) = max(min(a, b), min(max(a, b), c))`.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::ScalarType;
use compiler::lang::boundary::repeat_edge;
use compiler::lang::ops::{max, min};
use compiler::lang::{Func, ImageParam, Pipeline, Var};
use compiler::target::Target;

/// The median of three values by compare-exchanges.
fn median3(a: Expr, b: Expr, c: Expr) -> Expr {
    max(min(a.clone(), b.clone()), min(max(a, b), c))
}

/// The 3x3 median pipeline at `size`: a 1920x1080 image (37x29 small).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h) = pick(size, (1920, 1080), (37, 29));
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::U8, 2);
    let clamped = repeat_edge(&input);
    let at = |f: &Func, dx: i32, dy: i32| f.at([&x + dx, &y + dy]);
    // Each column of three sorted: its minimum, middle and maximum.
    let (above, here, below) = (at(&clamped, 0, -1), at(&clamped, 0, 0), at(&clamped, 0, 1));
    let min_y = Func::new("min_y");
    min_y.define(&[&x, &y], min(min(above.clone(), here.clone()), below.clone()));
    let mid_y = Func::new("mid_y");
    mid_y.define(&[&x, &y], median3(above.clone(), here.clone(), below.clone()));
    let max_y = Func::new("max_y");
    max_y.define(&[&x, &y], max(max(above, here), below));
    // Across the three columns: the largest minimum, the middle middle, the
    // smallest maximum; their median is the median of the nine.
    let max_of_min = Func::new("max_of_min");
    max_of_min.define(&[&x, &y], max(max(at(&min_y, -1, 0), at(&min_y, 0, 0)), at(&min_y, 1, 0)));
    let mid_of_mid = Func::new("mid_of_mid");
    mid_of_mid.define(&[&x, &y], median3(at(&mid_y, -1, 0), at(&mid_y, 0, 0), at(&mid_y, 1, 0)));
    let min_of_max = Func::new("min_of_max");
    min_of_max.define(&[&x, &y], min(min(at(&max_y, -1, 0), at(&max_y, 0, 0)), at(&max_y, 1, 0)));
    let output = Func::new("output");
    output.define(&[&x, &y], median3(at(&max_of_min, 0, 0), at(&mid_of_mid, 0, 0), at(&min_of_max, 0, 0)));
    let pipeline = Pipeline::new(&[&output]).expect("median3x3 is well formed");
    let image = vec![(0, w), (0, h)];
    App { name: "median3x3", pipeline, expert: None, inputs: vec![("input".into(), image.clone())], output: image, params: vec![] }
}
