//! Issue 13's register-blocked matmul (`apps::matmul::register_blocked`:
//! the 1024 x 1024 f32 product as Halide's `apps/linear_algebra` writes it,
//! `B` packed per panel of output columns, the products summed per register
//! tile) timed alone. Checks the product exactly (the inputs are small
//! multiples of powers of two, so every partial sum is exact in f32
//! whatever the order) on every 37th row, then prints the best of 10 runs
//! in the fast float mode (multiply-adds fuse).
//!
//! ```sh
//! cargo run --release -p benchmark --example matmul_register_blocked
//! VECTORS=2 ROWS=8 cargo run --release -p benchmark --example matmul_register_blocked
//! ```
//!
//! `VECTORS` (default 2) is the tile's width in vectors, `ROWS` (default 8)
//! its height: `VECTORS * ROWS` accumulators. `n` must be a multiple of
//! both, times the vector width. `bench/halide/matmul_vs_openblas.sh` runs it
//! beside OpenBLAS sgemm.

use anyhow::{Context, Result};
use codegen::{compile_with, CompileOptions};
use compiler::exec::buffer::Buffer;
use compiler::ir::types::ScalarType;
use compiler::ir::value::Scalar;
use compiler::target::Target;
use std::collections::BTreeMap;
use std::time::Instant;

fn knob(name: &str, default: i64) -> i64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() -> Result<()> {
    let n = 1024;
    let lanes = Target::host().natural_lanes(ScalarType::F32);
    let (vectors, rows) = (knob("VECTORS", 2), knob("ROWS", 8));
    let (pipeline, s) = apps::matmul::register_blocked(n, vectors, rows, lanes);
    let compiled = compile_with(&compiler::lower(&pipeline, &s)?, &CompileOptions { fast_float: true, ..Default::default() })?;

    let square = [(0, n), (0, n)];
    let a_value = |c: &[i64]| ((c[0] * 7 + c[1] * 3) % 17) as f64 / 16.0;
    let b_value = |c: &[i64]| ((c[0] * 5 + c[1] * 11) % 13) as f64 / 8.0;
    let mut ab = Buffer::new("A", ScalarType::F32, &square)?;
    ab.fill(|c| Scalar::Float(a_value(c)));
    let mut bb = Buffer::new("B", ScalarType::F32, &square)?;
    bb.fill(|c| Scalar::Float(b_value(c)));
    let inputs = BTreeMap::from([("A".to_string(), ab), ("B".to_string(), bb)]);
    let regions = [("C", square.to_vec())];
    let product = compiled.run(&inputs, &BTreeMap::new(), &regions).context("running the matrix multiply")?;
    for row in (0..n).step_by(37) {
        for col in 0..n {
            let expected: f64 = (0..n).map(|k| a_value(&[k, row]) * b_value(&[col, k])).sum();
            let got = product["C"].get(&[col, row])?.as_f64();
            anyhow::ensure!(got == expected, "C({col}, {row}) is {got}, the product is {expected}");
        }
    }
    let mut best = f64::MAX;
    for _ in 0..10 {
        let started = Instant::now();
        let out = compiled.run(&inputs, &BTreeMap::new(), &regions).context("running the matrix multiply")?;
        best = best.min(started.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(out);
    }
    println!("register-blocked matmul, {n}x{n} f32, {vectors} vectors x {rows} rows of {lanes} lanes: best of 10 {best:.2} ms");
    Ok(())
}
