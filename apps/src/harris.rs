//! Harris corner response of an f32 RGB image (x, y, c): luminance
//! `gray`, Sobel-like gradients `Ix`, `Iy` (taps scaled by 1/12), their
//! products summed over 3x3 boxes (`Sxx`, `Syy`, `Sxy`, rows top to
//! bottom, left to right), and `det - 0.04 trace^2` of the structure
//! tensor. No boundary condition: as in the paper's estimates, the output
//! starts 3 pixels inside the input and stops 3 short of its far edges.
//!
//! Expert schedule: strips of 32 rows in parallel; `gray`, `Ix` and `Iy`
//! line-buffered per strip (each slides down the strip), the products and
//! box sums inlined into the output; all vectorized.

use crate::{idioms, pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::ScalarType;
use compiler::lang::{Func, ImageParam, Pipeline, Var};
use compiler::schedule::Schedule;
use compiler::target::Target;

/// The harris app at `size` for `host`: a 1536x2560 RGB input (48x44 small).
pub fn app(size: Size, host: &Target) -> App {
    // The small output is taller than one strip (32 rows): the strips shift
    // inwards and must stay within the input.
    let (w, h) = pick(size, (1536, 2560), (48, 44));
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::F32, 3);
    let channel = |k: i64| input.at([x.expr(), y.expr(), Expr::i32(k)]);
    let gray = Func::new("gray");
    gray.define(&[&x, &y], channel(0) * 0.299f32 + channel(1) * 0.587f32 + channel(2) * 0.114f32);
    let g = |dx: i32, dy: i32| gray.at([&x + dx, &y + dy]);
    let iy = Func::new("Iy");
    iy.define(
        &[&x, &y],
        g(-1, -1) * (-1.0f32 / 12.0)
            + g(-1, 1) * (1.0f32 / 12.0)
            + g(0, -1) * (-2.0f32 / 12.0)
            + g(0, 1) * (2.0f32 / 12.0)
            + g(1, -1) * (-1.0f32 / 12.0)
            + g(1, 1) * (1.0f32 / 12.0),
    );
    let ix = Func::new("Ix");
    ix.define(
        &[&x, &y],
        g(-1, -1) * (-1.0f32 / 12.0)
            + g(1, -1) * (1.0f32 / 12.0)
            + g(-1, 0) * (-2.0f32 / 12.0)
            + g(1, 0) * (2.0f32 / 12.0)
            + g(-1, 1) * (-1.0f32 / 12.0)
            + g(1, 1) * (1.0f32 / 12.0),
    );
    let product = |name: &str, a: &Func, b: &Func| {
        let f = Func::new(name);
        f.define(&[&x, &y], a.at([x.expr(), y.expr()]) * b.at([x.expr(), y.expr()]));
        f
    };
    let (ixx, iyy, ixy) = (product("Ixx", &ix, &ix), product("Iyy", &iy, &iy), product("Ixy", &ix, &iy));
    let box_sum = |name: &str, f: &Func| {
        let s = Func::new(name);
        let taps = (-1..=1).flat_map(|dy| (-1..=1).map(move |dx| (dx, dy)));
        s.define(&[&x, &y], taps.map(|(dx, dy)| f.at([&x + dx, &y + dy])).reduce(|a, b| a + b).expect("nine taps"));
        s
    };
    let (sxx, syy, sxy) = (box_sum("Sxx", &ixx), box_sum("Syy", &iyy), box_sum("Sxy", &ixy));
    let at = |f: &Func| f.at([x.expr(), y.expr()]);
    let det = at(&sxx) * at(&syy) - at(&sxy) * at(&sxy);
    let trace = at(&sxx) + at(&syy);
    let output = Func::new("output");
    output.define(&[&x, &y], det - trace.clone() * trace * 0.04f32);
    let pipeline = Pipeline::new(&[&output]).expect("harris is well formed");

    let mut expert = Schedule::new();
    idioms::line_buffered(&mut expert, "output", &["gray", "Ix", "Iy"], 32, host.natural_lanes(ScalarType::F32));
    App {
        name: "harris",
        pipeline,
        expert: Some(expert),
        inputs: vec![("input".into(), vec![(0, w), (0, h), (0, 3)])],
        output: vec![(3, w - 6), (3, h - 6)],
        params: vec![],
    }
}
