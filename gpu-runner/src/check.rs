//! The GPU differential check on a GPU host: cases made where LLVM is (a
//! random pipeline's seed, its output window and its [`GpuProgram`]), run
//! here on the GPU and compared bit for bit with the reference evaluator,
//! computed here on the CPU from the seed's pipeline, regenerated (the
//! generator is deterministic), with its inputs: a case carries no pixels,
//! and a program that does not compute its seed's pipeline fails.

use crate::program::{run, Device, GpuProgram, RunError};
use compiler::exec::reference;
use compiler::ir::value::Scalar;
use random_pipelines::cases::pipeline;
use random_pipelines::VOCABULARY;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One case of the check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckCase {
    /// The random pipeline's seed (in the current vocabulary).
    pub seed: u64,
    /// Which of the seed's GPU schedules.
    pub schedule: usize,
    /// The output window.
    pub region: Vec<(i64, i64)>,
    /// The pipeline under that schedule, compiled.
    pub program: GpuProgram,
}

impl CheckCase {
    /// A case from its JSON text. Statements nest deeper than JSON
    /// parsers allow by default: the depth is unbounded, and the parse
    /// runs on a large stack.
    pub fn from_json(text: &str) -> Result<CheckCase, serde_json::Error> {
        compiler::stack::on_large_stack(|| {
            let mut de = serde_json::Deserializer::from_str(text);
            de.disable_recursion_limit();
            CheckCase::deserialize(&mut de)
        })
    }
}

/// How a case came out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Outcome {
    /// The GPU computed what the reference computes.
    Agreed {
        /// Kernels launched.
        launches: usize,
        /// Their time on the device, in milliseconds.
        kernel_ms: f64,
    },
    /// The GPU computed something else: where, first.
    Mismatch(String),
    /// The run failed: the error, by kind and in words.
    Failed {
        /// The kind (`IllegalAddress`, `Timeout`, ...).
        kind: String,
        /// The error's message.
        message: String,
    },
}

/// Runs `case` on `device` and compares it with the reference.
pub fn check_case(case: &CheckCase, device: &mut dyn Device) -> Outcome {
    let failed = |e: RunError| Outcome::Failed { kind: kind_of(&e).to_string(), message: e.to_string() };
    let p = match pipeline(case.seed, VOCABULARY) {
        Ok(p) => p,
        Err(e) => return Outcome::Failed { kind: "Generation".into(), message: e.to_string() },
    };
    let inputs = p.make_inputs();
    let regions = [(p.output.as_str(), case.region.clone())];
    let (mut out, timings) = match run(&case.program, device, &inputs, &BTreeMap::new(), &regions) {
        Ok(r) => r,
        Err(e) => return failed(e),
    };
    let want = match reference::realize(&p.pipeline, &inputs, &BTreeMap::<String, Scalar>::new(), &p.output, &case.region) {
        Ok(w) => w,
        Err(e) => return Outcome::Failed { kind: "Reference".into(), message: e.to_string() },
    };
    let Some(got) = out.remove(&p.output) else {
        return Outcome::Mismatch(format!("the program has no output {}", p.output));
    };
    for c in want.coordinates() {
        let (w, g) = (want.get(&c).expect("in the window"), got.get(&c));
        let Ok(g) = g else {
            return Outcome::Mismatch(format!("at {c:?}: the program's output does not cover the window"));
        };
        if !w.bit_eq(g) {
            return Outcome::Mismatch(format!("at {c:?}: expected {w:?}, got {g:?}"));
        }
    }
    Outcome::Agreed { launches: timings.launches, kernel_ms: timings.kernel_seconds * 1e3 }
}

/// The kind of a run error, as a word.
pub fn kind_of(e: &RunError) -> &'static str {
    match e {
        RunError::NoDevice(_) => "NoDevice",
        RunError::Host(_) => "Host",
        RunError::Arguments(_) => "Arguments",
        RunError::Load(_) => "Load",
        RunError::Assertion { .. } => "Assertion",
        RunError::IllegalAddress { .. } => "IllegalAddress",
        RunError::OutOfMemory(_) => "OutOfMemory",
        RunError::Timeout { .. } => "Timeout",
        RunError::LaunchFailed { .. } => "LaunchFailed",
    }
}
