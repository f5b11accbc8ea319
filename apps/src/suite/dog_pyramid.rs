//! SIFT's difference-of-Gaussians scale space (Lowe 2004) of an f32
//! grayscale image: two octaves of five Gaussian levels (two intervals
//! per octave, so the scale grows by sqrt(2) from level to level, from
//! sigma 1.6 over an input assumed blurred by 0.5), each level blurred
//! from the previous one by the incremental sigma (separable, along x
//! then y, normalized taps out to 3 sigma, computed once in f64 and
//! rounded to f32); the second octave starts from the first octave's
//! level 2 (twice the base sigma) keeping every second pixel. The output
//! is the DoG stack (x, y, s): the four differences of adjacent levels of
//! the first octave (s = 0..3), then those of the second octave (s = 4..7)
//! at its own resolution in the top-left quarter, zero elsewhere.
//! Repeat-edge boundary.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::ScalarType;
use compiler::lang::boundary::repeat_edge;
use compiler::lang::ops::{min, select, CompareExt};
use compiler::lang::{Func, ImageParam, Pipeline, Var};
use compiler::target::Target;

/// Levels per octave.
const LEVELS: usize = 5;
/// Octaves.
const OCTAVES: usize = 2;

/// The sigma of the blur that takes each level from the one before (level
/// 0 from the input, assumed blurred by 0.5).
fn increments() -> Vec<f64> {
    let k = 2f64.sqrt();
    let mut sigma = 1.6f64;
    let mut incs = vec![(sigma * sigma - 0.25).sqrt()];
    for _ in 1..LEVELS {
        let next = sigma * k;
        incs.push((next * next - sigma * sigma).sqrt());
        sigma = next;
    }
    incs
}

/// The normalized Gaussian taps of `sigma`, from -radius to radius
/// (radius = ceil(3 sigma)), summed and divided in f64, rounded to f32.
fn taps(sigma: f64) -> Vec<f32> {
    let radius = (3.0 * sigma).ceil() as i32;
    let raw: Vec<f64> = (-radius..=radius).map(|i| (-((i * i) as f64) / (2.0 * sigma * sigma)).exp()).collect();
    let total: f64 = raw.iter().sum();
    raw.iter().map(|v| (v / total) as f32).collect()
}

/// `source` blurred by `sigma`: along x (the Func `{name}_x`), then y.
fn blur(source: &Func, sigma: f64, name: &str, x: &Var, y: &Var) -> Func {
    let weights = taps(sigma);
    let radius = (weights.len() / 2) as i32;
    let along = |f: &Func, horizontal: bool| {
        weights
            .iter()
            .zip(-radius..)
            .map(|(&w, i)| if horizontal { f.at([x + i, y.expr()]) * w } else { f.at([x.expr(), y + i]) * w })
            .reduce(|a, b| a + b)
            .expect("at least one tap")
    };
    let bx = Func::new(&format!("{name}_x"));
    bx.define(&[x, y], along(source, true));
    let g = Func::new(name);
    g.define(&[x, y], along(&bx, false));
    g
}

/// The DoG scale space at `size`: a 1920x1080 image (small: 48x32).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h) = pick(size, (1920, 1080), (48, 32));
    let (x, y, s) = (Var::new("x"), Var::new("y"), Var::new("s"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let incs = increments();
    let mut dogs: Vec<Func> = vec![];
    let mut base = repeat_edge(&input);
    for o in 0..OCTAVES {
        let mut gauss: Vec<Func> = vec![];
        if o == 0 {
            gauss.push(blur(&base, incs[0], "gauss0_0", &x, &y));
        } else {
            let g = Func::new(&format!("gauss{o}_0"));
            g.define(&[&x, &y], base.at([&x * 2, &y * 2]));
            gauss.push(g);
        }
        for (l, &inc) in incs.iter().enumerate().skip(1) {
            let next = blur(&gauss[l - 1], inc, &format!("gauss{o}_{l}"), &x, &y);
            gauss.push(next);
        }
        for l in 0..LEVELS - 1 {
            let dog = Func::new(&format!("dog{o}_{l}"));
            dog.define(&[&x, &y], gauss[l + 1].at([x.expr(), y.expr()]) - gauss[l].at([x.expr(), y.expr()]));
            dogs.push(dog);
        }
        base = gauss[2].clone();
    }
    // The stack: octave 0's levels, then octave 1's in the top-left quarter.
    let (w1, h1) = (w as i32 / 2, h as i32 / 2);
    let inside = x.lt(w1) & y.lt(h1);
    let coarse = [min(&x, w1 - 1), min(&y, h1 - 1)];
    let per_level = LEVELS - 1;
    let value = dogs.iter().enumerate().rev().fold(Expr::float(0.0, compiler::ir::types::Type::f32()), |rest, (i, dog)| {
        let here = if i < per_level { dog.at([x.expr(), y.expr()]) } else { select(inside.clone(), dog.at(coarse.clone()), 0.0f32) };
        if i == dogs.len() - 1 {
            here
        } else {
            select(s.eq_(i as i32), here, rest)
        }
    });
    let output = Func::new("output");
    output.define(&[&x, &y, &s], value);
    let pipeline = Pipeline::new(&[&output]).expect("dog_pyramid is well formed");
    App {
        name: "dog_pyramid",
        pipeline,
        expert: None,
        inputs: vec![("input".into(), vec![(0, w), (0, h)])],
        output: vec![(0, w), (0, h), (0, (OCTAVES * per_level) as i64)],
        params: vec![],
    }
}
