//! How fast generated code reads its inputs in the shapes code generation
//! treats apart (see `emit/memory.rs`), for 32-, 16- and 8-bit inputs: a
//! vectorized sum over a window of `stride` columns, each output column
//! reading from `stride * x` (a pooling: dense at stride 1, dense loads and
//! shuffles at strides 2 to 8, a scalar load per lane beyond), and a copy of `input(x /
//! factor)` (an upsampling: dense loads and a shuffle per remainder up to a
//! factor of 8, a gather beyond). Each pipeline is compiled once and
//! checked against the reference evaluator; only its runs are timed.
//!
//! `cargo bench -p codegen --bench reads` (`-- pooling` or `-- upsampling`
//! for one group)

use codegen::timing::pattern_input;
use compiler::exec::buffer::Buffer;
use compiler::exec::realize::{bind_arguments, BoundArguments};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::ops::cast;
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::lower::lower;
use compiler::schedule::Schedule;
use criterion::{criterion_group, criterion_main, Criterion};
use std::collections::BTreeMap;

/// Output columns and rows of every case.
const WIDTH: i64 = 1024;
const HEIGHT: i64 = 64;

/// `out(x, y) = sum over r < stride of input(stride * x + r, y)`, summed in
/// `sum`, its pure and update definitions vectorized by `lanes` along x
/// (the window loop outside the vector loop); and its input.
fn pooling(input_type: ScalarType, sum: Type, stride: i32, lanes: i64) -> (compiler::lang::pipeline::PipelineDef, Schedule, Buffer) {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", input_type, 2);
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(stride.into()))]);
    let out = Func::new("out");
    out.define(&[&x, &y], Expr::int(0, sum));
    out.update([x.expr(), y.expr()], out.at([x.expr(), y.expr()]) + cast(sum, input.at([&x * stride + r.x().expr(), y.expr()])));
    let mut s = Schedule::new();
    s.func("out").vectorize_by("x", lanes);
    s.func("out").update(0).split("x", "xo", "xi", lanes).reorder(&["xi", "r.x", "xo", "y"]).vectorize("xi");
    let columns = i64::from(stride) * (WIDTH + 1);
    let buffer = pattern_input("input", input_type, &[(0, columns), (0, HEIGHT)]).expect("a small input");
    (Pipeline::new(&[&out]).expect("a valid pipeline"), s, buffer)
}

/// The input types of the cases, with each one's sum type and vector width.
fn cases() -> [(ScalarType, Type, i64); 3] {
    [
        (ScalarType::F32, Type::f32(), 16),
        (ScalarType::U16, Type::scalar(ScalarType::U32), 16),
        (ScalarType::U8, Type::scalar(ScalarType::U16), 32),
    ]
}

/// `out(x, y) = input(x / factor + 1, y)`, vectorized by `lanes` along x;
/// and its input.
fn upsampling(input_type: ScalarType, factor: i32, lanes: i64) -> (compiler::lang::pipeline::PipelineDef, Schedule, Buffer) {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", input_type, 2);
    let out = Func::new("out");
    out.define(&[&x, &y], input.at([x.expr() / factor + 1, y.expr()]));
    let mut s = Schedule::new();
    s.func("out").vectorize_by("x", lanes);
    let columns = WIDTH / i64::from(factor) + 2;
    let buffer = pattern_input("input", input_type, &[(0, columns), (0, HEIGHT)]).expect("a small input");
    (Pipeline::new(&[&out]).expect("a valid pipeline"), s, buffer)
}

/// Adds the timing of `p` under `schedule` over the cases' output region
/// to `group` as `name`, after checking its output against the reference.
fn bench_case(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: String,
    (p, schedule, input): (compiler::lang::pipeline::PipelineDef, Schedule, Buffer),
) {
    let compiled = codegen::compile(&lower(&p, &schedule).expect("lowers")).expect("compiles");
    let inputs = BTreeMap::from([("input".to_string(), input)]);
    let region = vec![(0, WIDTH), (0, HEIGHT)];
    let regions = [("out", region.clone())];
    let got = compiled.run(&inputs, &BTreeMap::new(), &regions).expect("runs").remove("out").expect("an output");
    let expected = compiler::exec::reference::realize(&p, &inputs, &BTreeMap::new(), "out", &region).expect("evaluates");
    assert_eq!(got, expected, "{name}");
    let BoundArguments { mut buffers, scalars } = bind_arguments(&p, &inputs, &BTreeMap::new(), &regions).expect("binds");
    group.bench_function(name, |b| b.iter(|| compiled.run_on(&mut buffers, &scalars).expect("runs")));
}

fn strided_reads(c: &mut Criterion) {
    let mut group = c.benchmark_group("pooling");
    for (input_type, sum, lanes) in cases() {
        for stride in [1, 2, 4, 8, 9] {
            bench_case(&mut group, format!("{input_type:?}/stride {stride}/{lanes} lanes"), pooling(input_type, sum, stride, lanes));
        }
    }
    group.finish();
}

fn upsampled_reads(c: &mut Criterion) {
    let mut group = c.benchmark_group("upsampling");
    for (input_type, _, lanes) in cases() {
        for factor in [2, 4, 5, 8, 9] {
            bench_case(&mut group, format!("{input_type:?}/factor {factor}/{lanes} lanes"), upsampling(input_type, factor, lanes));
        }
    }
    group.finish();
}

criterion_group!(benches, strided_reads, upsampled_reads);
criterion_main!(benches);
