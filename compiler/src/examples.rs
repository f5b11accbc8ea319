//! Small pipelines written in the language, shared by the compiler's demo,
//! the apps catalog, the guides and the tests (and the blur's GPU
//! schedule, shared by the GPU path's tests).

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

/// A GPU schedule of [`blur`], as Halide's CUDA schedules write one:
/// `blur_y` in tiles of 16x8 threads, one block each; per tile, `blur_x`
/// staged in the block's shared memory and computed by the same threads,
/// 4 of its 10 rows at a time.
///
/// ```
/// let l = compiler::lower_gpu(&compiler::examples::blur(), &compiler::examples::blur_gpu_schedule(), &compiler::GpuTarget::sm_90())?;
/// assert_eq!(l.kernels[0].threads, [16, 8]);
/// # Ok::<(), compiler::LowerError>(())
/// ```
pub fn blur_gpu_schedule() -> crate::schedule::Schedule {
    let mut s = crate::schedule::Schedule::new();
    s.func("blur_y").gpu_tile("x", "y", "xo", "yo", "xi", "yi", 16, 8);
    s.func("blur_x")
        .compute_at("blur_y", "xo")
        .split("x", "xo", "xi", 16)
        .split("y", "yo", "yi", 4)
        .reorder(&["xi", "yi", "xo", "yo"])
        .gpu_threads("xi")
        .gpu_threads("yi");
    s
}

/// Resampling by float factors, as users write it: `f(x, y)` reads `input`
/// at `x * 1.5` and `g(x, y)` reads `f` at `x * 0.75`, each coordinate
/// computed in f32 and truncated to i32; estimated at `width` x `height`
/// (the input at the width it reads).
///
/// ```
/// let p = compiler::examples::resampling(64, 16);
/// assert_eq!(p.outputs[0].as_ref(), "g");
/// ```
pub fn resampling(width: i64, height: i64) -> PipelineDef {
    use crate::ir::types::Type;
    use crate::lang::ops::cast;
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::U16, 2);
    let f = Func::new("f");
    f.define(&[&x, &y], input.at([cast(Type::i32(), cast(Type::f32(), x.expr()) * 1.5f32), y.expr()]) + 1);
    let g = Func::new("g");
    g.define(&[&x, &y], f.at([cast(Type::i32(), cast(Type::f32(), x.expr()) * 0.75f32), y.expr()]) * 2);
    g.set_estimate(0, 0, width).set_estimate(1, 0, height);
    input.set_estimate(0, 0, width * 3 / 2 + 2).set_estimate(1, 0, height);
    Pipeline::new(&[&g]).expect("the resampling is well formed")
}
