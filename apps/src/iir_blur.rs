//! A first-order recursive (IIR) blur of an f32 RGB image (x, y, c), four
//! scans in all: down the columns and back up, transposed, then down and
//! up the columns of the transpose (the original rows), transposed back.
//! Each column blur copies its input, then `b(x, y) = (1 - a) b(x, y-1) +
//! a in(x, y)` for `y` from 1 down, and `b(x, y) = (1 - a) b(x, y+1) + a
//! b(x, y)` from the bottom back up, with `a = 0.1`. The scans run over the
//! image's height (then width), so those are part of the algorithm.
//!
//! Expert schedule: each column blur computed at root, its columns in
//! parallel vector strips, each scan stepping down (or up) all the
//! columns of a strip at once; the transposes inlined.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::ScalarType;
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::schedule::Schedule;
use compiler::target::Target;

const ALPHA: f32 = 0.1;

/// Blurs the columns of `input` (of height `height`) down and back up,
/// and transposes the result.
fn blur_columns_transposed(name: &str, input: impl Fn(Expr, Expr, Expr) -> Expr, height: i64) -> Func {
    let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
    let blur = Func::new(name);
    blur.define(&[&x, &y, &c], input(x.expr(), y.expr(), c.expr()));
    let down = RDom::new(&format!("{name}_down"), &[(Expr::i32(1), Expr::i32(height - 1))]);
    let ry = down.x().expr();
    blur.update(
        [x.expr(), ry.clone(), c.expr()],
        blur.at([x.expr(), ry.clone() - 1, c.expr()]) * (1.0 - ALPHA) + input(x.expr(), ry.clone(), c.expr()) * ALPHA,
    );
    let up = RDom::new(&format!("{name}_up"), &[(Expr::i32(1), Expr::i32(height - 1))]);
    let flipped = Expr::i32(height - 1) - up.x().expr();
    blur.update(
        [x.expr(), flipped.clone(), c.expr()],
        blur.at([x.expr(), flipped.clone() + 1, c.expr()]) * (1.0 - ALPHA) + blur.at([x.expr(), flipped, c.expr()]) * ALPHA,
    );
    let transposed = Func::new(&format!("{name}_t"));
    transposed.define(&[&x, &y, &c], blur.at([y.expr(), x.expr(), c.expr()]));
    transposed
}

/// The iir_blur app at `size` for `host`: a 1536x2560 RGB image (40x24 small).
pub fn app(size: Size, host: &Target) -> App {
    let (w, h) = pick(size, (1536, 2560), (40, 24));
    let input = ImageParam::new("input", ScalarType::F32, 3);
    let first = blur_columns_transposed("blur_cols", |x, y, c| input.at([x, y, c]), h);
    let second = blur_columns_transposed("blur_rows", |x, y, c| first.at([x, y, c]), w);
    let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
    let output = Func::new("output");
    output.define(&[&x, &y, &c], second.at([x.expr(), y.expr(), c.expr()]));
    let pipeline = Pipeline::new(&[&output]).expect("the IIR blur is well formed");

    let lanes = host.natural_lanes(ScalarType::F32);
    let mut expert = Schedule::new();
    for f in ["blur_cols", "blur_rows"] {
        expert.func(f).compute_root().split("x", "xo", "xi", lanes).reorder(&["xi", "y", "xo", "c"]).vectorize("xi").parallel("xo");
        for (update, scan) in [(0, "down"), (1, "up")] {
            let scan = format!("{f}_{scan}.x");
            expert.func(f).update(update).split("x", "xo", "xi", lanes).reorder(&["xi", &scan, "xo", "c"]).vectorize("xi").parallel("xo");
        }
    }
    expert.func("output").split("y", "yo", "yi", 8).parallel("yo").vectorize_by("x", lanes);
    let image = vec![(0, w), (0, h), (0, 3)];
    App { name: "iir_blur", pipeline, expert: Some(expert), inputs: vec![("input".into(), image.clone())], output: image, params: vec![] }
}
