//! Matrix multiply of f32 `n x n` matrices (1024 at the paper's size):
//! `C(x, y) = sum_r A(r, y) * B(x, r)`, a pure zero and an update over the
//! reduction domain `r`, summed in order of `r`.
//!
//! Expert schedule: the update in register tiles of one vector by 8 rows,
//! the reduction inside the tile's columns and rows, rows of tiles in
//! parallel. The tiles round up (as Halide's update loops do by default),
//! so `n` is a multiple of 8 and of the f32 vector width.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::pipeline::PipelineDef;
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::schedule::{Schedule, TailStrategy};
use compiler::target::Target;

/// The matmul app at `size` for `host`: 1024x1024 matrices (64x64 small).
pub fn app(size: Size, host: &Target) -> App {
    let n = pick(size, 1024, 64);
    let (x, y) = (Var::new("x"), Var::new("y"));
    let a = ImageParam::new("A", ScalarType::F32, 2);
    let b = ImageParam::new("B", ScalarType::F32, 2);
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(n))]);
    let c = Func::new("C");
    c.define(&[&x, &y], Expr::float(0.0, Type::f32()));
    c.update([x.expr(), y.expr()], c.at([x.expr(), y.expr()]) + a.at([r.x().expr(), y.expr()]) * b.at([x.expr(), r.x().expr()]));
    let pipeline = Pipeline::new(&[&c]).expect("the matrix multiply is well formed");

    let lanes = host.natural_lanes(ScalarType::F32);
    let mut expert = Schedule::new();
    expert.func("C").vectorize_by("x", lanes);
    expert
        .func("C")
        .update(0)
        .split_with("x", "xo", "xi", lanes, TailStrategy::RoundUp)
        .split_with("y", "yo", "yi", 8, TailStrategy::RoundUp)
        .reorder(&["xi", "yi", "r.x", "xo", "yo"])
        .vectorize("xi")
        .unroll("yi")
        .parallel("yo");
    let square = vec![(0, n), (0, n)];
    App {
        name: "matmul",
        pipeline,
        expert: Some(expert),
        inputs: vec![("A".into(), square.clone()), ("B".into(), square.clone())],
        output: square,
        params: vec![],
    }
}

/// The same product written as Halide's `apps/linear_algebra` writes it,
/// with its register-blocked schedule (`examples/matmul_register_blocked.rs`
/// times it beside OpenBLAS): `B` copied into a packing Func `packed`, one
/// panel of `vectors * lanes` output columns at a time (computed per panel,
/// so the kernel reads it contiguously), the products summed in a Func
/// `prod` computed per register tile of `vectors` vectors by `rows` rows
/// (its accumulators stay in registers), panels the outer parallel loop
/// and strips of `rows` rows inside, so that a packed panel stays in cache
/// while every strip uses it. `n` must be a multiple of the tile's sides.
pub fn register_blocked(n: i64, vectors: i64, rows: i64, lanes: i64) -> (PipelineDef, Schedule) {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let a = ImageParam::new("A", ScalarType::F32, 2);
    let b = ImageParam::new("B", ScalarType::F32, 2);
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(n))]);
    let packed = Func::new("packed");
    packed.define(&[&x, &y], b.at([x.expr(), y.expr()]));
    let prod = Func::new("prod");
    prod.define(&[&x, &y], Expr::float(0.0, Type::f32()));
    prod.update([x.expr(), y.expr()], prod.at([x.expr(), y.expr()]) + a.at([r.x().expr(), y.expr()]) * packed.at([x.expr(), r.x().expr()]));
    let c = Func::new("C");
    c.define(&[&x, &y], prod.at([x.expr(), y.expr()]));
    let pipeline = Pipeline::new(&[&c]).expect("the matrix multiply is well formed");

    let mut s = Schedule::new();
    s.func("C")
        .split_with("x", "xo", "xi", lanes * vectors, TailStrategy::RoundUp)
        .split_with("y", "yo", "yi", rows, TailStrategy::RoundUp)
        .reorder(&["xi", "yi", "yo", "xo"])
        .vectorize_by("xi", lanes)
        .parallel("xo");
    s.func("packed").compute_at("C", "xo").vectorize_by("x", lanes);
    s.func("prod").compute_at("C", "yo").vectorize_by("x", lanes);
    s.func("prod")
        .update(0)
        .split_with("x", "xv", "xl", lanes, TailStrategy::RoundUp)
        .reorder(&["xl", "xv", "y", "r.x"])
        .vectorize("xl")
        .unroll("xv")
        .unroll("y");
    (pipeline, s)
}
