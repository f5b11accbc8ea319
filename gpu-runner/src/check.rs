//! The GPU check on a GPU host: cases made where LLVM is (a random
//! pipeline's seed and output window, or one of the twelve apps at a size,
//! with its [`GpuProgram`]), run here on the GPU and compared bit for bit
//! with the reference evaluator, computed here on the CPU from the
//! pipeline rebuilt (the generator and the catalog are deterministic) with
//! its inputs: a case carries no pixels, and a program that does not
//! compute its source's pipeline fails. An app is run three times and its
//! best kernel time kept.

use crate::program::{run, Device, GpuProgram, RunError};
use apps::Size;
use compiler::exec::reference;
use compiler::ir::value::Scalar;
use compiler::target::Target;
use random_pipelines::cases::pipeline;
use random_pipelines::VOCABULARY;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a case computes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Source {
    /// A random pipeline of the GPU differential suite.
    Random {
        /// Its seed (in the current vocabulary).
        seed: u64,
        /// Which of the seed's GPU schedules.
        schedule: usize,
        /// The output window.
        region: Vec<(i64, i64)>,
    },
    /// One of the twelve apps under its GPU expert schedule.
    App {
        /// The app.
        name: String,
        /// At which size.
        size: Size,
    },
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Random { seed, schedule, .. } => write!(f, "seed {seed} schedule {schedule}"),
            Source::App { name, size } => write!(f, "{name} ({})", if *size == Size::Paper { "paper size" } else { "small" }),
        }
    }
}

/// One case of the check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckCase {
    /// What it computes.
    pub source: Source,
    /// The pipeline under its schedule, compiled.
    pub program: GpuProgram,
    /// The [`digest`] of the expected output, where it was computed when
    /// the case was made (by the CPU code generator, which computes what
    /// the reference computes): at sizes where the reference evaluator
    /// would take minutes. Otherwise the reference runs here.
    pub expected_digest: Option<u64>,
}

/// A digest of a buffer's bytes (FNV-1a, 64 bits).
pub fn digest(b: &compiler::exec::buffer::Buffer) -> u64 {
    b.bytes().iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3))
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

/// Runs `case` on the devices `open` makes (one per run) and compares it
/// with the reference.
pub fn check_case(case: &CheckCase, open: &mut dyn FnMut() -> Result<Box<dyn Device>, RunError>) -> Outcome {
    let failed = |e: RunError| Outcome::Failed { kind: kind_of(&e).to_string(), message: e.to_string() };
    let (pipeline, inputs, output, region, runs) = match &case.source {
        Source::Random { seed, region, .. } => match pipeline(*seed, VOCABULARY) {
            Ok(p) => {
                let inputs = p.make_inputs();
                (p.pipeline, inputs, p.output, region.clone(), 1)
            }
            Err(e) => return Outcome::Failed { kind: "Source".into(), message: e.to_string() },
        },
        Source::App { name, size } => {
            let Some(app) = apps::build(name, *size, &Target::host()) else {
                return Outcome::Failed { kind: "Source".into(), message: format!("no app {name}") };
            };
            let inputs = match app.pattern_inputs() {
                Ok(i) => i,
                Err(e) => return Outcome::Failed { kind: "Source".into(), message: e.to_string() },
            };
            let output = app.output_name().to_string();
            (app.pipeline, inputs, output, app.output, 3)
        }
    };
    let regions = [(output.as_str(), region.clone())];
    let (mut best, mut launches, mut got) = (f64::INFINITY, 0, None);
    for _ in 0..runs {
        let mut device = match open() {
            Ok(d) => d,
            Err(e) => return failed(e),
        };
        match run(&case.program, device.as_mut(), &inputs, &BTreeMap::new(), &regions) {
            Ok((out, timings)) => {
                best = best.min(timings.kernel_seconds * 1e3);
                launches = timings.launches;
                got = Some(out);
            }
            Err(e) => return failed(e),
        }
    }
    let Some(got) = got.and_then(|mut out| out.remove(&output)) else {
        return Outcome::Mismatch(format!("the program has no output {output}"));
    };
    if let Some(expected) = case.expected_digest {
        return match digest(&got) {
            d if d == expected => Outcome::Agreed { launches, kernel_ms: best },
            d => Outcome::Mismatch(format!("the output's digest is {d:016x}, not the expected {expected:016x}")),
        };
    }
    let want = match reference::realize(&pipeline, &inputs, &BTreeMap::<String, Scalar>::new(), &output, &region) {
        Ok(w) => w,
        Err(e) => return Outcome::Failed { kind: "Reference".into(), message: e.to_string() },
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
    Outcome::Agreed { launches, kernel_ms: best }
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
