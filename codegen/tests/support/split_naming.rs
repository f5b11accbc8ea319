//! The pipeline and schedule of the same-name split defect (shared by the
//! regression test and `examples/split_naming.rs`):
//! `f(x, y) = 0; f(x, y) += input(clamp(x + r, 0, 1023), clamp(y, 0, 255))`
//! over r in [0, 3), `out(x, y) = f(x, y)`, tiled 64x3 with `f` computed
//! per tile, unrolled and vectorized.

use compiler::ir::types::ScalarType;
use compiler::lang::ops::clamp;
use compiler::lang::pipeline::PipelineDef;
use compiler::schedule::Schedule;
use compiler::{Func, ImageParam, Pipeline, RDom, Var};

pub fn pipeline() -> PipelineDef {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let f = Func::new("f");
    f.define(&[&x, &y], 0.0f32);
    let r = RDom::new("r", &[(0.into(), 3.into())]);
    f.update([x.expr(), y.expr()], f.at([x.expr(), y.expr()]) + input.at([clamp(&x + r.x(), 0, 1023), clamp(&y, 0, 255)]));
    let out = Func::new("out");
    out.define(&[&x, &y], f.at([x.expr(), y.expr()]));
    Pipeline::new(&[&out]).expect("a valid pipeline")
}

/// The schedule, with `outer_x`, `outer_y` as the names of the outer loops
/// of the splits (`x`, `y`: Halide's usual naming; or fresh names).
pub fn schedule(outer_x: &str, outer_y: &str) -> Schedule {
    let text = format!(
        "out.split(x, {outer_x}, xi, 64)\n\
         out.split(y, {outer_y}, yi, 3)\n\
         out.reorder(xi, yi, {outer_x}, {outer_y})\n\
         f.compute_at(out, {outer_x})\n\
         f.split(x, {outer_x}, xi, 16, round_up)\n\
         f.reorder(xi, {outer_x}, y)\n\
         f.unroll({outer_x}, 4)\n\
         f.unroll(y, 3)\n\
         f.vectorize(xi)\n\
         f.update(0).split(x, {outer_x}, xi, 16, round_up)\n\
         f.update(0).reorder(xi, {outer_x}, y, r.x)\n\
         f.update(0).unroll({outer_x}, 4)\n\
         f.update(0).unroll(y, 3)\n\
         f.update(0).vectorize(xi)\n"
    );
    text.parse().unwrap_or_else(|e| panic!("{e}\n{text}"))
}
