//! What the differential suites share: the seeds' generator parameters and
//! output windows, the interpreter under a step budget, and the bit-exact
//! comparison against the reference evaluator.

#![allow(dead_code)]

use compiler::exec::buffer::Buffer;
use compiler::exec::interpret::{run_with_options, InterpretError, Options};
use compiler::exec::realize::{bind_arguments, take_outputs, BoundArguments};
use compiler::ir::stmt::Stmt;
use random_pipelines::{GeneratorParams, RandomPipeline};
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

/// Drops every estimate of `p`, so that random schedules are drawn without
/// redraws for legality at the estimates.
pub fn without_estimates(p: &mut compiler::PipelineDef) {
    p.funcs.iter_mut().for_each(|f| f.estimates.iter_mut().for_each(|e| *e = None));
    p.inputs.iter_mut().for_each(|i| i.estimates.iter_mut().for_each(|e| *e = None));
}

/// The generator's parameters for `seed`.
pub fn params(seed: u64, vocabulary: u32) -> GeneratorParams {
    GeneratorParams { seed, max_stages: 6 + (seed % 3) as usize, input_size: (24, 20, 3), vocabulary }
}

/// An 8x8x8 window, sometimes past the input's edges (every point is
/// computable: inputs are read through boundary conditions). No extent is
/// below the largest random split factor (8): a split of an output
/// dimension that shifts inwards or rounds up needs that much room.
pub fn region(seed: u64) -> Vec<(i64, i64)> {
    vec![((seed % 13) as i64 - 3, 8), ((seed % 17) as i64 - 2, 8), (0, 8)]
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
