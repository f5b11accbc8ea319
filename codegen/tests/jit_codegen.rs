//! The shape of the generated code: what the schedule asks for is what LLVM
//! emits (vector gathers for strided vector reads, scalar loops for a
//! serial scalar schedule), and the results stay those of the reference.

use codegen::{compile_with, CompileOptions};
use compiler::exec::buffer::Buffer;
use compiler::ir::types::ScalarType;
use compiler::ir::value::Scalar;
use compiler::lang::{Func, ImageParam, Pipeline, Var};
use compiler::lower::lower;
use compiler::schedule::Schedule;
use std::collections::BTreeMap;

fn every_other_column() -> (compiler::lang::pipeline::PipelineDef, BTreeMap<String, Buffer>) {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let out = Func::new("out");
    out.define(&[&x, &y], input.at([&x * 2, y.expr()]) + input.at([&x * 2 + 1, y.expr()]) * 0.5f32);
    let mut b = Buffer::new("input", ScalarType::F32, &[(0, 64), (0, 8)]).unwrap();
    b.fill(|c| Scalar::Float((c[0] * 7 + c[1] * 3) as f64 / 16.0));
    (Pipeline::new(&[&out]).unwrap(), BTreeMap::from([("input".to_string(), b)]))
}

fn run_and_check(p: &compiler::lang::pipeline::PipelineDef, inputs: &BTreeMap<String, Buffer>, s: &Schedule) -> String {
    let compiled = compile_with(&lower(p, s).unwrap(), &CompileOptions { keep_text: true }).unwrap();
    let region = vec![(0, 32), (0, 8)];
    let got = compiled.run(inputs, &BTreeMap::new(), &[("out", region.clone())]).unwrap().remove("out").unwrap();
    let expected = compiler::exec::reference::realize(p, inputs, &BTreeMap::new(), "out", &region).unwrap();
    assert_eq!(got, expected);
    compiled.text.as_ref().expect("kept").llvm_ir.clone()
}

#[test]
fn strided_vector_reads_are_gathers() {
    let (p, inputs) = every_other_column();
    let mut s = Schedule::new();
    s.func("out").vectorize_by("x", 8);
    let ir = run_and_check(&p, &inputs, &s);
    assert!(ir.contains("llvm.masked.gather"), "a stride-2 vector read is one gather");
}

#[test]
fn a_serial_scalar_schedule_stays_scalar() {
    let (p, inputs) = every_other_column();
    let ir = run_and_check(&p, &inputs, &Schedule::new());
    assert!(!ir.contains("vector.body") && !ir.contains("x float>"), "LLVM did not vectorize a loop the schedule left scalar");
    assert!(ir.contains("llvm.loop.vectorize.enable"), "loops carry the hint that keeps LLVM's vectorizer off");
}
