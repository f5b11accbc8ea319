//! A chain of 5x5 box stencils over an f32 image (32 stages at the paper's
//! size): `s0` reads the input, `s{k}` reads `s{k-1}`; each stage sums its
//! window row by row, left to right, and scales by 1/25. No boundary
//! condition: the input covers the output plus two pixels per stage on
//! each side.
//!
//! Expert schedule: the stages in groups of 8; the last stage of each
//! group computed at root in parallel strips of rows, the others
//! line-buffered per strip (each slides down the strip behind the next),
//! all vectorized. Strips are tall (128 rows) because each one first
//! computes the rows its group needs above it. Groups keep the line
//! buffers few and the compile fast: lowering a window chain costs more
//! than linearly in its length.

use crate::{idioms, pick, App, Size};
use compiler::ir::types::ScalarType;
use compiler::lang::pipeline::PipelineDef;
use compiler::lang::{Func, ImageParam, Pipeline, Var};
use compiler::schedule::Schedule;
use compiler::target::Target;

/// A chain of `stages` box stencils of radius `radius` (window side
/// `2 radius + 1`), the output `s{stages-1}`.
pub fn chain(stages: usize, radius: i32) -> PipelineDef {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let side = 2 * radius + 1;
    let mut funcs: Vec<Func> = vec![];
    for k in 0..stages.max(1) {
        let f = Func::new(&format!("s{k}"));
        let at = |dx: i32, dy: i32| match funcs.last() {
            Some(prev) => prev.at([&x + dx, &y + dy]),
            None => input.at([&x + dx, &y + dy]),
        };
        let window = (-radius..=radius).flat_map(|dy| (-radius..=radius).map(move |dx| (dx, dy)));
        let sum = window.map(|(dx, dy)| at(dx, dy)).reduce(|a, b| a + b).expect("a window has points");
        f.define(&[&x, &y], sum * (1.0f32 / (side * side) as f32));
        funcs.push(f);
    }
    Pipeline::new(&[funcs.last().expect("one stage at least")]).expect("the chain is well formed")
}

/// Stages per line-buffered group of the expert schedule.
const GROUP: usize = 8;

/// The stencil_chain app at `size` for `host`: 32 stages, a 1536x2560 output (small: 6 stages, 64x48).
pub fn app(size: Size, host: &Target) -> App {
    let (w, h, stages, strip) = pick(size, (1536, 2560, 32, 128), (64, 48, 6, 16));
    let pipeline = chain(stages, 2);
    let names: Vec<&str> = pipeline.funcs.iter().map(|f| &*f.name).collect();
    let mut expert = Schedule::new();
    // Groups end at the output and every GROUP stages before it.
    for group in names.rchunks(GROUP) {
        let (last, producers) = group.split_last().expect("chunks are not empty");
        expert.func(last).compute_root();
        idioms::line_buffered(&mut expert, last, producers, strip, host.natural_lanes(ScalarType::F32));
    }
    let m = 2 * stages as i64;
    App {
        name: "stencil_chain",
        pipeline,
        expert: Some(expert),
        inputs: vec![("input".into(), vec![(-m, w + 2 * m), (-m, h + 2 * m)])],
        output: vec![(0, w), (0, h)],
        params: vec![],
    }
}
