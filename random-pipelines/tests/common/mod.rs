//! What the differential suites share beyond their cases
//! ([`random_pipelines::cases`]): the interpreter under a step budget and
//! the bit-exact comparison against the reference evaluator.

#![allow(dead_code)]

use compiler::exec::buffer::Buffer;
use compiler::exec::interpret::{run_with_options, InterpretError, Options};
use compiler::exec::realize::{bind_arguments, take_outputs, BoundArguments};
use compiler::ir::stmt::Stmt;
use random_pipelines::RandomPipeline;
use std::collections::BTreeMap;

/// The value of environment variable `name` as a number, or `default`.
pub fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The interpreter's step budget per schedule
/// (`RANDOM_PIPELINE_INTERP_STEPS`, default 1,000,000).
pub fn interp_steps() -> u64 {
    env("RANDOM_PIPELINE_INTERP_STEPS", 1_000_000)
}

/// Runs `stmt` (lowered from `p`) on the interpreter under a step budget
/// and returns the outputs over `regions`.
pub fn interpret(
    p: &RandomPipeline,
    stmt: &Stmt,
    inputs: &BTreeMap<String, Buffer>,
    regions: &[(&str, Vec<(i64, i64)>)],
) -> Result<BTreeMap<String, Buffer>, InterpretError> {
    let BoundArguments { mut buffers, scalars } =
        bind_arguments(&p.pipeline, inputs, &BTreeMap::new(), regions).expect("the generator's inputs fit its pipeline");
    let options = Options { max_steps: Some(interp_steps()), ..Options::default() };
    run_with_options(stmt, &mut buffers, &scalars, &options)?;
    Ok(take_outputs(&p.pipeline, buffers, regions))
}

/// Where `got` first differs from `want` (bit for bit), if anywhere.
pub fn first_mismatch(want: &Buffer, got: &Buffer) -> Option<String> {
    for c in want.coordinates() {
        let w = want.get(&c).unwrap();
        let g = match got.get(&c) {
            Ok(g) => g,
            Err(e) => return Some(format!("at {c:?}: {e}")),
        };
        if !w.bit_eq(g) {
            return Some(format!("at {c:?}: expected {w:?}, got {g:?}"));
        }
    }
    None
}
