//! A raw camera pipeline: a u16 Bayer mosaic (GRBG, 10-bit values) in,
//! an 8-bit RGB image (x, y, c) out. Steps: the raw image is shifted so the
//! output starts 16 columns and 12 rows into it; hot pixels are suppressed
//! (each value clamped to the largest of its four same-colour neighbours);
//! the mosaic is demosaiced bilinearly (each missing colour the mean of
//! the nearest sites that have it: left/right, up/down, or the four
//! diagonals or the four sides), in i32; a fixed 3x4 colour matrix (in
//! 1/256 units) corrects the colour; a 1024-entry tone curve (`curve`,
//! gamma 2 blended with an S-curve, computed once) maps each channel to 8
//! bits; and a 3x3 unsharp mask sharpens the result.
//!
//! Expert schedule: the curve at root; the output in parallel strips of
//! 32 rows, vectorized; the denoised mosaic, the demosaiced and the curved
//! image computed per strip, vectorized; the colour correction inlined.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::ops::{cast, clamp, max, min, select, sqrt, CompareExt};
use compiler::lang::{Func, ImageParam, Pipeline, Var};
use compiler::schedule::Schedule;
use compiler::target::Target;

/// The colour matrix: row c gives output channel c as `m0 r + m1 g + m2 b
/// + m3`, in units of 1/256.
const MATRIX: [[i32; 4]; 3] = [[400, -96, -48, -200], [-64, 360, -40, -200], [-16, -112, 384, -200]];

/// The camera_pipe app at `size` for `host`: a 2560x1920 RGB output (64x48 small).
pub fn app(size: Size, host: &Target) -> App {
    let (w, h) = pick(size, (2560, 1920), (64, 48));
    let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
    let input = ImageParam::new("input", ScalarType::U16, 2);
    let shifted = Func::new("shifted");
    shifted.define(&[&x, &y], input.at([&x + 16, &y + 12]));
    let s = |dx: i32, dy: i32| shifted.at([&x + dx, &y + dy]);
    let denoised = Func::new("denoised");
    denoised.define(&[&x, &y], min(s(0, 0), max(max(s(-2, 0), s(2, 0)), max(s(0, -2), s(0, 2)))));

    let d = |dx: i32, dy: i32| cast(Type::i32(), denoised.at([&x + dx, &y + dy]));
    let sides = (d(-1, 0) + d(1, 0) + d(0, -1) + d(0, 1)) / 4;
    let horizontal = (d(-1, 0) + d(1, 0)) / 2;
    let vertical = (d(0, -1) + d(0, 1)) / 2;
    let diagonals = (d(-1, -1) + d(1, -1) + d(-1, 1) + d(1, 1)) / 4;
    // GRBG: green where x and y have the same parity, red at (odd, even),
    // blue at (even, odd).
    let green_site = ((&x + &y) % 2).eq_(0);
    let red_row = (&y % 2).eq_(0);
    let green = select(green_site.clone(), d(0, 0), sides);
    let red = select(
        green_site.clone(),
        select(red_row.clone(), horizontal.clone(), vertical.clone()),
        select(red_row.clone(), d(0, 0), diagonals.clone()),
    );
    let blue = select(green_site, select(red_row.clone(), vertical, horizontal), select(red_row, diagonals, d(0, 0)));
    let demosaiced = Func::new("demosaiced");
    demosaiced.define(&[&x, &y, &c], select(c.eq_(0), red, select(c.eq_(1), green, blue)));

    let channel = |k: i64| demosaiced.at([x.expr(), y.expr(), Expr::i32(k)]);
    let row = |i: usize| {
        Expr::i32(MATRIX[i][0] as i64) * channel(0)
            + Expr::i32(MATRIX[i][1] as i64) * channel(1)
            + Expr::i32(MATRIX[i][2] as i64) * channel(2)
            + MATRIX[i][3]
    };
    let corrected = Func::new("corrected");
    corrected.define(&[&x, &y, &c], select(c.eq_(0), row(0), select(c.eq_(1), row(1), row(2))) / 256);

    let curve = Func::new("curve");
    let f = cast(Type::f32(), x.expr()) / 1023.0f32;
    let g = sqrt(f);
    let s_curve = g.clone() * g.clone() * (3.0f32 - g.clone() * 2.0f32);
    curve.define(&[&x], cast(Type::u8(), clamp((g + s_curve) * 0.5f32 * 255.0f32 + 0.5f32, 0.0f32, 255.0f32)));
    let curved = Func::new("curved");
    curved.define(&[&x, &y, &c], curve.at([clamp(corrected.at([x.expr(), y.expr(), c.expr()]), 0, 1023)]));

    let k = |dx: i32, dy: i32| cast(Type::i32(), curved.at([&x + dx, &y + dy, c.expr()]));
    let blurred = (k(-1, -1) + k(0, -1) * 2 + k(1, -1) + k(-1, 0) * 2 + k(0, 0) * 4 + k(1, 0) * 2 + k(-1, 1) + k(0, 1) * 2 + k(1, 1)) / 16;
    let output = Func::new("processed");
    output.define(&[&x, &y, &c], cast(Type::u8(), clamp(k(0, 0) * 2 - blurred, 0, 255)));
    let pipeline = Pipeline::new(&[&output]).expect("the camera pipe is well formed");

    let lanes = host.natural_lanes(ScalarType::I32);
    let mut expert = Schedule::new();
    expert.func("curve").compute_root();
    expert.func("processed").reorder(&["x", "c", "y"]).split("y", "yo", "yi", 32).parallel("yo").vectorize_by("x", lanes);
    expert.func("denoised").compute_at("processed", "yo").vectorize_by("x", lanes);
    for f in ["demosaiced", "curved"] {
        expert.func(f).compute_at("processed", "yo").reorder(&["x", "c", "y"]).vectorize_by("x", lanes);
    }
    App {
        name: "camera_pipe",
        pipeline,
        expert: Some(expert),
        inputs: vec![("input".into(), vec![(0, w + 32), (0, h + 48)])],
        output: vec![(0, w), (0, h), (0, 3)],
        params: vec![],
    }
}
