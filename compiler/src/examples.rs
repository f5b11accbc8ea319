//! Small pipelines written in the language, shared by the compiler's demo,
//! the apps catalog, the guides and the tests.

use crate::ir::types::ScalarType;
use crate::lang::pipeline::PipelineDef;
use crate::lang::{Func, ImageParam, Pipeline, Var};

/// The 3x3 box blur of u16 images, separated: `blur_x` averages three
/// horizontal neighbours of `input`, `blur_y` three vertical neighbours of
/// `blur_x`; estimated at 1536x2560.
///
/// ```
/// let blur = compiler::examples::blur();
/// assert_eq!(blur.outputs[0].as_ref(), "blur_y");
/// ```
pub fn blur() -> PipelineDef {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::U16, 2);
    let blur_x = Func::new("blur_x");
    blur_x.define(&[&x, &y], (input.at([&x - 1, y.expr()]) + input.at([x.expr(), y.expr()]) + input.at([&x + 1, y.expr()])) / 3);
    let blur_y = Func::new("blur_y");
    blur_y.define(&[&x, &y], (blur_x.at([x.expr(), &y - 1]) + blur_x.at([x.expr(), y.expr()]) + blur_x.at([x.expr(), &y + 1])) / 3);
    blur_y.set_estimate(0, 0, 1536).set_estimate(1, 0, 2560);
    input.set_estimate(0, -1, 1538).set_estimate(1, -1, 2562);
    Pipeline::new(&[&blur_y]).expect("the blur is well formed")
}
