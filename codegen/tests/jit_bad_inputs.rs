//! Compiled pipelines given bad arguments return clear errors, never crash:
//! inputs too small for the region the output needs, wrong element types or
//! dimensionality, missing inputs or params, zero-sized and huge regions.

#[path = "../../compiler/tests/common/mod.rs"]
mod common;

use codegen::{compile, compile_with, CompileOptions, CompiledPipeline, RunError};
use compiler::exec::buffer::Buffer;
use compiler::exec::realize::RealizeError;
use compiler::ir::types::ScalarType;
use compiler::ir::value::Scalar;
use compiler::lower::lower;
use compiler::schedule::Schedule;
use std::collections::BTreeMap;

fn blur_compiled() -> (common::Case, CompiledPipeline) {
    let case = common::blur();
    let mut s = Schedule::new();
    s.func("blur_y").split("y", "yo", "yi", 4).parallel("yo").vectorize_by("x", 8);
    s.func("blur_x").store_at("blur_y", "yo").compute_at("blur_y", "yi").vectorize_by("x", 8);
    let compiled = compile_with(&lower(&case.pipeline, &s).unwrap(), &CompileOptions { keep_text: true, ..Default::default() }).unwrap();
    (case, compiled)
}

fn inputs_with(buffer: Buffer) -> BTreeMap<String, Buffer> {
    BTreeMap::from([("input".to_string(), buffer)])
}

fn run(c: &CompiledPipeline, inputs: &BTreeMap<String, Buffer>, region: Vec<(i64, i64)>) -> Result<Buffer, RunError> {
    c.run(inputs, &BTreeMap::new(), &[("blur_y", region)]).map(|mut o| o.remove("blur_y").unwrap())
}

#[test]
fn an_input_too_small_for_the_region_names_the_buffer_and_dimension() {
    let (_, c) = blur_compiled();
    let small = Buffer::new("input", ScalarType::U16, &[(0, 10), (0, 10)]).unwrap();
    let err = run(&c, &inputs_with(small), vec![(0, 10), (0, 10)]).unwrap_err();
    let RunError::Arguments(RealizeError::BufferTooSmall { buffer, dim: 0, needed_min: -1, min: 0, max: 9, .. }) = &err else {
        panic!("expected the concrete ranges of dimension 0, got {err:?}")
    };
    assert_eq!(buffer, "input");
    let msg = err.to_string();
    assert!(msg.contains("buffer input is too small: the pipeline reads [-1, ") && msg.contains("but the buffer holds [0, 9]"), "{msg}");
    // Big enough: runs, and agrees with the reference.
    let big = Buffer::new("input", ScalarType::U16, &[(-1, 12), (-1, 12)]).unwrap();
    let out = run(&c, &inputs_with(big.clone()), vec![(0, 10), (0, 10)]).unwrap();
    let case = common::blur();
    let expected =
        compiler::exec::reference::realize(&case.pipeline, &inputs_with(big), &BTreeMap::new(), "blur_y", &[(0, 10), (0, 10)]).unwrap();
    assert_eq!(out, expected);
}

#[test]
fn wrong_types_dimensions_and_missing_arguments_are_named() {
    let (case, c) = blur_compiled();
    let wrong_type = Buffer::new("input", ScalarType::F32, &[(-1, 12), (-1, 12)]).unwrap();
    let err = run(&c, &inputs_with(wrong_type), vec![(0, 10), (0, 10)]).unwrap_err();
    assert!(matches!(&err, RunError::Arguments(RealizeError::InputType { name, .. }) if name == "input"), "{err:?}");
    assert!(err.to_string().contains("f32") && err.to_string().contains("u16"), "{err}");
    let wrong_dims = Buffer::new("input", ScalarType::U16, &[(-1, 12)]).unwrap();
    let err = run(&c, &inputs_with(wrong_dims), vec![(0, 10), (0, 10)]).unwrap_err();
    assert!(matches!(err, RunError::Arguments(RealizeError::InputDimensions { .. })), "{err:?}");
    let err = run(&c, &BTreeMap::new(), vec![(0, 10), (0, 10)]).unwrap_err();
    assert!(err.to_string().contains("input input was not given"), "{err}");
    let err = c.run(&case.inputs, &BTreeMap::new(), &[("nope", vec![(0, 1), (0, 1)])]).unwrap_err();
    assert!(err.to_string().contains("nope is not an output"), "{err}");
    let err = run(&c, &case.inputs, vec![(0, 10)]).unwrap_err();
    assert!(matches!(err, RunError::Arguments(RealizeError::RegionDimensions { .. })), "{err:?}");
    // A missing param of a pipeline that has one.
    let lut = common::params_and_lut();
    let compiled = compile(&lower(&lut.pipeline, &Schedule::new()).unwrap()).unwrap();
    let err = compiled.run(&lut.inputs, &BTreeMap::new(), &[(&lut.output, lut.region.clone())]).unwrap_err();
    assert!(err.to_string().contains("param gain was not given"), "{err}");
    let params = BTreeMap::from([("gain".to_string(), Scalar::Int(37))]);
    assert!(compiled.run(&lut.inputs, &params, &[(&lut.output, lut.region.clone())]).is_ok());
}

#[test]
fn zero_sized_and_huge_regions() {
    let (case, c) = blur_compiled();
    // Nothing to compute: no error, an empty output.
    let out = run(&c, &case.inputs, vec![(0, 0), (0, 10)]).unwrap();
    assert!(out.is_empty());
    // An output too large to allocate is refused before running.
    let err = run(&c, &case.inputs, vec![(0, 1 << 40), (0, 1 << 40)]).unwrap_err();
    assert!(matches!(err, RunError::Arguments(RealizeError::Buffer(_))), "{err:?}");
    // Coordinates beyond the 32-bit index type are refused, not wrapped.
    let far = Buffer::new("input", ScalarType::U16, &[(i64::from(i32::MAX) + 10, 4), (0, 4)]).unwrap();
    let err = run(&c, &inputs_with(far), vec![(0, 1), (0, 1)]).unwrap_err();
    assert!(matches!(err, RunError::FieldOverflow { .. }), "{err:?}");
}

#[test]
fn compiled_code_reports_its_host_and_can_be_inspected() {
    let (_, c) = blur_compiled();
    let text = c.text.as_ref().expect("kept");
    assert!(text.llvm_ir.contains("define i32 @pipeline"), "the optimized module has the entry function");
    assert!(text.llvm_ir.contains("hl_parallel_for"), "the parallel loop calls the runtime");
    assert!(text.llvm_ir.contains("<8 x i16>") || text.llvm_ir.contains("x i16>"), "vector code is emitted as LLVM vectors");
    assert!(!text.assembly.is_empty());
    assert!(codegen::runtime::num_threads() >= 1);
}

#[test]
fn strides_the_code_cannot_honour_are_refused() {
    let (case, c) = blur_compiled();
    // Strides that reach past the data would read out of bounds.
    let mut wild = case.inputs["input"].clone();
    wild.dims[1].stride *= 4;
    let err = run(&c, &inputs_with(wild), vec![(0, 10), (0, 10)]).unwrap_err();
    assert!(matches!(&err, RunError::Arguments(RealizeError::Buffer(compiler::exec::buffer::BufferError::Layout { .. }))), "{err:?}");
    // A transposed view is addressable, but not dense in dimension 0.
    let mut transposed = Buffer::new("input", ScalarType::U16, &[(-1, 12), (-1, 12)]).unwrap();
    transposed.dims.swap(0, 1);
    let err = run(&c, &inputs_with(transposed), vec![(0, 10), (0, 10)]).unwrap_err();
    let RunError::AssertionFailed(msg) = &err else { panic!("expected an assertion, got {err:?}") };
    assert!(msg.contains("buffer input must be dense in dimension 0"), "{msg}");
}

/// An intermediate Func whose realization has more than 2^31 - 1 elements
/// is refused by name when the pipeline runs: its size and indices are
/// 32-bit and would wrap (65,935 x 65,935 elements here wrap to 52 million,
/// which allocates, and the indices past 2^31 would then write outside the
/// allocation).
#[test]
fn an_intermediate_too_large_for_32_bit_indices_is_refused_by_name() {
    use compiler::{Expr, Func, Pipeline, Type, Var};
    let (x, y) = (Var::new("x"), Var::new("y"));
    let sums = Func::new("sums");
    sums.define(&[&x, &y], compiler::lang::ops::cast(Type::f32(), x.expr() + y.expr()));
    let out = Func::new("out");
    out.define(&[&x, &y], sums.at([&x * 66, &y * 66]) + Expr::float(1.0, Type::f32()));
    let p = Pipeline::new(&[&out]).unwrap();
    let mut s = Schedule::new();
    s.func("sums").compute_root();
    let c = compile(&lower(&p, &s).unwrap()).unwrap();
    let err = c.run(&BTreeMap::new(), &BTreeMap::new(), &[("out", vec![(0, 1000), (0, 1000)])]).unwrap_err();
    let RunError::AssertionFailed(message) = &err else { panic!("expected the allocation refused, got {err:?}") };
    assert!(message.contains("Func sums needs more than 2^31 - 1 elements"), "{message}");
    // Small enough: runs.
    let out = c.run(&BTreeMap::new(), &BTreeMap::new(), &[("out", vec![(0, 100), (0, 100)])]).unwrap();
    assert_eq!(out["out"].get(&[99, 99]).unwrap(), Scalar::Float(f64::from(99.0f32 * 66.0 * 2.0 + 1.0)));
}
