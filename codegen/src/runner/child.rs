//! The runner child's side: reads [`RunRequest`] frames from stdin and
//! answers each with an [`Outcome`] frame on stdout.
//! Compiled pipelines go through a bounded [`JitCache`], so a child that
//! runs thousands of distinct schedules keeps bounded memory.

use super::protocol::{read_frame, write_frame, Fault, Outcome, RunRequest};
use crate::timing::{pattern_input, time_compiled};
use crate::{JitCache, RunError};
use compiler::error::{LowerError, UserError};
use compiler::exec::realize::{bind_arguments, BoundArguments};
use compiler::ir::value::Scalar;
use compiler::lower::{lower_with, LowerOptions};
use std::collections::BTreeMap;
use std::time::Instant;

/// Serves requests until stdin closes. `memory_limit` (bytes) caps the
/// child's address space, so that exhausting memory fails an allocation
/// instead of taking the machine down.
pub fn serve(memory_limit: Option<u64>, cache_capacity: usize) -> std::io::Result<()> {
    if let Some(limit) = memory_limit {
        let limit = libc::rlimit { rlim_cur: limit as libc::rlim_t, rlim_max: limit as libc::rlim_t };
        // SAFETY: setrlimit reads the struct it is given.
        if unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    let cache = JitCache::new(cache_capacity);
    let (mut stdin, mut stdout) = (std::io::stdin().lock(), std::io::stdout().lock());
    while let Some(request) = read_frame::<RunRequest>(&mut stdin)? {
        write_frame(&mut stdout, &handle(&request, &cache))?;
    }
    Ok(())
}

fn inject(fault: Fault) {
    match fault {
        // The default action (the Rust runtime handles SIGSEGV to report
        // stack overflows), then the signal: the child dies as generated
        // code that faults would. SAFETY: neither call has memory-safety
        // preconditions.
        Fault::Segfault => unsafe {
            libc::signal(libc::SIGSEGV, libc::SIG_DFL);
            libc::raise(libc::SIGSEGV);
        },
        Fault::Hang => loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        },
        Fault::ExhaustMemory => {
            let mut hoard: Vec<Vec<u8>> = vec![];
            loop {
                hoard.push(vec![1u8; 64 << 20]);
            }
        }
    }
}

fn handle(r: &RunRequest, cache: &JitCache) -> Outcome {
    if let Some(fault) = r.fault {
        inject(fault);
    }
    let options = LowerOptions { check_accesses: r.check_accesses, ..LowerOptions::default() };
    let lowered = match lower_with(&r.pipeline, &r.schedule, &options) {
        Ok(l) => l,
        Err(LowerError::User(UserError::Schedule(e))) => return Outcome::Illegal { kind: Some(e.kind()), message: e.to_string() },
        Err(LowerError::User(e)) => return Outcome::Illegal { kind: None, message: e.to_string() },
        Err(e) => return Outcome::CompileError { message: e.to_string() },
    };
    let started = Instant::now();
    let compiled = match cache.get_or_compile(&lowered) {
        Ok(c) => c,
        Err(e) => return Outcome::CompileError { message: e.to_string() },
    };
    let compile_ms = started.elapsed().as_secs_f64() * 1e3;
    let mut inputs = BTreeMap::new();
    for input in &r.pipeline.inputs {
        let Some((_, region)) = r.inputs.iter().find(|(n, _)| *n == *input.name) else {
            return Outcome::RunFailed { message: format!("no region given for input {}", input.name) };
        };
        match pattern_input(&input.name, input.ty, region) {
            Ok(b) => inputs.insert(input.name.to_string(), b),
            Err(e) => return Outcome::RunFailed { message: e.to_string() },
        };
    }
    let params: BTreeMap<String, Scalar> = r
        .params
        .iter()
        .map(|(name, v)| {
            let is_float = r.pipeline.param(name).is_some_and(|p| p.ty.is_float());
            (name.clone(), if is_float { Scalar::Float(*v) } else { Scalar::Int(*v as i64) })
        })
        .collect();
    let Some(output) = r.pipeline.outputs.first().cloned() else {
        return Outcome::RunFailed { message: "the pipeline has no output".into() };
    };
    let regions = [(&*output, r.output.clone())];
    let BoundArguments { mut buffers, scalars } = match bind_arguments(&r.pipeline, &inputs, &params, &regions) {
        Ok(b) => b,
        Err(e) => return Outcome::RunFailed { message: e.to_string() },
    };
    let timing = match time_compiled(&compiled, &mut buffers, &scalars, &r.sampling) {
        Ok(t) => t,
        Err(RunError::AllocationFailed) => return Outcome::OutOfMemory,
        Err(e) => return Outcome::RunFailed { message: e.to_string() },
    };
    if r.verify {
        // One buffer per value of a Tuple output, each checked.
        match compiler::exec::reference::realize_values(&r.pipeline, &inputs, &params, &output, &r.output) {
            Ok(expected) => {
                if let Some(differs) = expected.iter().find(|e| buffers.get(&*e.name) != Some(*e)) {
                    return Outcome::OutputMismatch { message: format!("{} differs from the reference evaluator's", differs.name) };
                }
            }
            Err(e) => return Outcome::RunFailed { message: format!("the reference evaluator failed: {e}") },
        }
    }
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    Outcome::Measured { compile_ms, min_ms: ms(timing.min), median_ms: ms(timing.median), samples: timing.samples }
}
