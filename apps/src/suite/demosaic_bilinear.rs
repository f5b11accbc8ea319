//! Bilinear demosaicking of an RGGB Bayer mosaic (u16, 10-bit values) into
//! a u16 RGB image (x, y, c), the textbook interpolation (as OpenCV's
//! `COLOR_BayerRG2RGB` computes it): each pixel keeps the colour it
//! sampled and takes each missing one as the rounded mean of its nearest
//! samples of that colour: the four sides for green at red and blue
//! sites, the four diagonals for red at blue sites and blue at red sites,
//! the two horizontal or two vertical neighbours for red and blue at
//! green sites. The mosaic is mirrored about its edges (a mirror keeps
//! the colour pattern), in u32 arithmetic.

use crate::{pick, App, Size};
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::boundary::mirror_interior;
use compiler::lang::ops::{cast, select, CompareExt};
use compiler::lang::{Func, ImageParam, Pipeline, Var};
use compiler::target::Target;

/// The demosaic at `size`: a 2592x1944 mosaic (5 megapixels; small 36x28).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h) = pick(size, (2592, 1944), (36, 28));
    let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
    let raw = ImageParam::new("raw", ScalarType::U16, 2);
    let mirrored = mirror_interior(&raw);
    let d = |dx: i32, dy: i32| cast(Type::u32(), mirrored.at([&x + dx, &y + dy]));
    let mean = |name: &str, taps: &[(i32, i32)]| {
        let f = Func::new(name);
        let n = taps.len() as i32;
        let total = taps.iter().map(|&(dx, dy)| d(dx, dy)).reduce(|a, b| a + b).expect("taps");
        f.define(&[&x, &y], (total + n / 2) / n);
        f
    };
    let sides = mean("sides", &[(-1, 0), (1, 0), (0, -1), (0, 1)]);
    let diagonals = mean("diagonals", &[(-1, -1), (1, -1), (-1, 1), (1, 1)]);
    let horizontal = mean("horizontal", &[(-1, 0), (1, 0)]);
    let vertical = mean("vertical", &[(0, -1), (0, 1)]);
    let xy = || [x.expr(), y.expr()];
    let (even_x, even_y) = ((&x % 2).eq_(0), (&y % 2).eq_(0));
    // By site: red (even x, even y), green on a red row (odd x, even y),
    // green on a blue row (even x, odd y), blue (odd x, odd y).
    let by_site = |name: &str, red: [compiler::ir::expr::Expr; 4]| {
        let [r, gr, gb, b] = red;
        let f = Func::new(name);
        f.define(&[&x, &y], select(even_y.clone(), select(even_x.clone(), r, gr), select(even_x.clone(), gb, b)));
        f
    };
    let red = by_site("red", [d(0, 0), horizontal.at(xy()), vertical.at(xy()), diagonals.at(xy())]);
    let green = by_site("green", [sides.at(xy()), d(0, 0), d(0, 0), sides.at(xy())]);
    let blue = by_site("blue", [diagonals.at(xy()), vertical.at(xy()), horizontal.at(xy()), d(0, 0)]);
    let output = Func::new("output");
    output.define(&[&x, &y, &c], cast(Type::u16(), select(c.eq_(0), red.at(xy()), select(c.eq_(1), green.at(xy()), blue.at(xy())))));
    let pipeline = Pipeline::new(&[&output]).expect("demosaic_bilinear is well formed");
    App {
        name: "demosaic_bilinear",
        pipeline,
        expert: None,
        inputs: vec![("raw".into(), vec![(0, w), (0, h)])],
        output: vec![(0, w), (0, h), (0, 3)],
        params: vec![],
    }
}
