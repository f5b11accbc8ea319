//! The bilateral grid (Chen et al.) over an f32 grey image: the image,
//! clamped to [0, 1], is splatted into a coarse 3-D grid (8x8 pixel cells
//! by intensity bins of `r_sigma = 0.1`) of (value sum, count) pairs (a
//! data-dependent update over each cell's pixels), the grid is blurred with
//! a 5-tap [1 4 6 4 1] filter along intensity, x and y, and each pixel
//! takes the trilinear interpolation of the blurred grid at its position
//! and intensity; the output is the interpolated sum over the
//! interpolated count. Repeat-edge boundary for the splat.
//!
//! Expert schedule: the histogram computed per row of `blurz` (the
//! intensity blur), the three blurs at root with rows (or intensity
//! planes) in parallel, vectorized along x with both channels of a vector
//! computed together (unrolled); the output in parallel strips,
//! vectorized.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::boundary::repeat_edge;
use compiler::lang::ops::{cast, clamp, select, CompareExt};
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::schedule::Schedule;
use compiler::target::Target;

/// Pixels per grid cell along x and y.
const S_SIGMA: i32 = 8;
/// Intensity per grid bin.
const R_SIGMA: f32 = 0.1;

/// `a + (b - a) t`.
fn lerp(a: Expr, b: Expr, t: Expr) -> Expr {
    a.clone() + (b - a) * t
}

/// The bilateral_grid app at `size` for `host`: a 1536x2560 grey image (40x36 small).
pub fn app(size: Size, host: &Target) -> App {
    let (w, h) = pick(size, (1536, 2560), (40, 36));
    let (x, y, z, c) = (Var::new("x"), Var::new("y"), Var::new("z"), Var::new("c"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let clamped = repeat_edge(&input);

    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(S_SIGMA as i64)), (Expr::i32(0), Expr::i32(S_SIGMA as i64))]);
    let val = clamp(clamped.at([&x * S_SIGMA + r.x().expr() - S_SIGMA / 2, &y * S_SIGMA + r.y().expr() - S_SIGMA / 2]), 0.0f32, 1.0f32);
    let zi = cast(Type::i32(), val.clone() * (1.0f32 / R_SIGMA) + 0.5f32);
    let histogram = Func::new("histogram");
    histogram.define(&[&x, &y, &z, &c], Expr::float(0.0, Type::f32()));
    let at = [x.expr(), y.expr(), zi, c.expr()];
    histogram.update(at.clone(), histogram.at(at) + select(c.eq_(0), val, Expr::float(1.0, Type::f32())));

    let five_tap = |name: &str, f: &Func, shift: &dyn Fn(i32) -> [Expr; 4]| {
        let g = Func::new(name);
        let tap = |d: i32| f.at(shift(d));
        g.define(&[&x, &y, &z, &c], tap(-2) + tap(-1) * 4.0f32 + tap(0) * 6.0f32 + tap(1) * 4.0f32 + tap(2));
        g
    };
    let blurz = five_tap("blurz", &histogram, &|d| [x.expr(), y.expr(), &z + d, c.expr()]);
    let blurx = five_tap("blurx", &blurz, &|d| [&x + d, y.expr(), z.expr(), c.expr()]);
    let blury = five_tap("blury", &blurx, &|d| [x.expr(), &y + d, z.expr(), c.expr()]);

    let v = clamp(input.at([x.expr(), y.expr()]), 0.0f32, 1.0f32);
    let zv = v * (1.0f32 / R_SIGMA);
    let zi = cast(Type::i32(), zv.clone());
    let zf = zv - cast(Type::f32(), zi.clone());
    let xf = cast(Type::f32(), &x % S_SIGMA) * (1.0f32 / S_SIGMA as f32);
    let yf = cast(Type::f32(), &y % S_SIGMA) * (1.0f32 / S_SIGMA as f32);
    let (xi, yi) = (&x / S_SIGMA, &y / S_SIGMA);
    let grid = |dx: i32, dy: i32, dz: i32| blury.at([xi.clone() + dx, yi.clone() + dy, zi.clone() + dz, c.expr()]);
    let plane =
        |dz: i32| lerp(lerp(grid(0, 0, dz), grid(1, 0, dz), xf.clone()), lerp(grid(0, 1, dz), grid(1, 1, dz), xf.clone()), yf.clone());
    let interpolated = Func::new("interpolated");
    interpolated.define(&[&x, &y, &c], lerp(plane(0), plane(1), zf));
    let output = Func::new("bilateral_grid");
    output.define(&[&x, &y], interpolated.at([x.expr(), y.expr(), Expr::i32(0)]) / interpolated.at([x.expr(), y.expr(), Expr::i32(1)]));
    let pipeline = Pipeline::new(&[&output]).expect("the bilateral grid is well formed");

    let lanes = host.natural_lanes(ScalarType::F32);
    let mut expert = Schedule::new();
    expert.func("histogram").compute_at("blurz", "y");
    expert.func("histogram").update(0).reorder(&["c", "r.x", "r.y", "x", "y"]);
    expert.func("blurz").compute_root().reorder(&["x", "c", "z", "y"]).bound("c", 0, 2).unroll("c").parallel("y").vectorize_by("x", lanes);
    for f in ["blurx", "blury"] {
        expert.func(f).compute_root().reorder(&["x", "c", "y", "z"]).bound("c", 0, 2).unroll("c").parallel("z").vectorize_by("x", lanes);
    }
    expert.func("bilateral_grid").split("y", "yo", "yi", 16).parallel("yo").vectorize_by("x", lanes);
    let image = vec![(0, w), (0, h)];
    App {
        name: "bilateral_grid",
        pipeline,
        expert: Some(expert),
        inputs: vec![("input".into(), image.clone())],
        output: image,
        params: vec![],
    }
}
