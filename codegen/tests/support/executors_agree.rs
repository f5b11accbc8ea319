//! What both edge-case suites share: `wrap` for their models, and the
//! check they end with: a one-dimensional pipeline's
//! output `out`, under the serial schedule and vectorized by 8, lowered in
//! checked mode, is what the reference evaluator computes, on the IR
//! interpreter and through the JIT (shared by `bitwise_edges.rs` and
//! `intrinsic_edges.rs`).

use codegen::compile;
use compiler::exec::buffer::Buffer;
use compiler::ir::types::ScalarType;
use compiler::lang::pipeline::PipelineDef;
use compiler::lower::{lower_with, LowerOptions};
use compiler::schedule::Schedule;
use std::collections::BTreeMap;

/// Asserts that the interpreter and the JIT give `reference` for `out`
/// over `region`; `what` names the case in a failure.
pub fn assert_executors_agree(p: &PipelineDef, inputs: &BTreeMap<String, Buffer>, region: &[(i64, i64)], reference: &Buffer, what: &str) {
    let mut vectorized = Schedule::new();
    vectorized.func("out").vectorize_by("x", 8);
    for s in [Schedule::new(), vectorized] {
        let lowered = lower_with(p, &s, &LowerOptions::checked()).unwrap();
        let regions = [("out", region.to_vec())];
        let interpreted = compiler::exec::realize::realize(&lowered, inputs, &BTreeMap::new(), &regions).unwrap();
        assert_eq!(&interpreted["out"], reference, "interpreter: {what}\n{s}");
        let jit = compile(&lowered).unwrap().run(inputs, &BTreeMap::new(), &regions).unwrap();
        assert_eq!(&jit["out"], reference, "JIT: {what}\n{s}");
    }
}

/// `v` wrapped to `t`.
pub fn wrap(v: i128, t: ScalarType) -> i128 {
    let bits = t.bits();
    let m = v & ((1i128 << bits) - 1);
    if t.is_signed_int() && m >> (bits - 1) == 1 {
        m - (1i128 << bits)
    } else {
        m
    }
}
