//! The 3x3 box blur of u16 images, separated: `blur_x` averages three
//! horizontal neighbours of the input, `blur_y` three vertical neighbours of
//! `blur_x` (the algorithm of the compiler's demo). No boundary condition:
//! the input covers the output plus one pixel on each side.
//!
//! Expert schedule: strips of 32 rows in parallel, `blur_x` line-buffered
//! per strip, both vectorized.

use crate::{idioms, pick, App, Size};
use compiler::ir::types::ScalarType;
use compiler::schedule::Schedule;
use compiler::target::Target;

/// The blur app at `size` for `host`: a 1536x2560 output (70x45 small).
pub fn app(size: Size, host: &Target) -> App {
    let (w, h) = pick(size, (1536, 2560), (70, 45));
    let mut expert = Schedule::new();
    idioms::line_buffered(&mut expert, "blur_y", &["blur_x"], 32, host.natural_lanes(ScalarType::U16));
    App {
        name: "blur",
        pipeline: compiler::examples::blur(),
        expert: Some(expert),
        inputs: vec![("input".into(), vec![(-1, w + 2), (-1, h + 2)])],
        output: vec![(0, w), (0, h)],
        params: vec![],
    }
}
