//! Random pipelines under the default schedule, the all-root schedule and
//! random legal schedules, on the IR interpreter and then through the LLVM
//! JIT, must compute exactly what the reference evaluator computes
//! (bit-exact: no schedule reorders float arithmetic). Both run the
//! statement lowered in checked mode (every access asserted).
//!
//! `RANDOM_PIPELINE_SEEDS=N` checks seeds 0..N (default 48);
//! `RANDOM_PIPELINE_FIRST=K` starts at seed K; `RANDOM_PIPELINE_STMT=1`
//! adds the lowered statement to each failure report. For a run under
//! valgrind, `RANDOM_PIPELINE_UNCHECKED=1` lowers without the access checks
//! (so that valgrind sees what compiled code does unguarded) and skips the
//! interpreter.

mod common;

use codegen::compile;
use common::{env, first_mismatch, interpret};
use compiler::error::{LowerError, UserError};
use compiler::exec::interpret::InterpretError;
use compiler::ir::value::Scalar;
use compiler::lower::{lower_with, LowerOptions, Lowered};
use compiler::schedule::random::{random_schedule, RandomScheduleOptions};
use compiler::schedule::{FuncSchedule, LoopLevel, Schedule};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use random_pipelines::cases::{pipeline, region};
use random_pipelines::{RandomPipeline, VOCABULARY};
use std::collections::BTreeMap;

const RANDOM_SCHEDULES: usize = 3;

#[derive(Default)]
struct Stats {
    schedules: usize,
    interpreted: usize,
    interp_skipped: usize,
}

fn all_root(p: &RandomPipeline) -> Schedule {
    let mut s = Schedule::new();
    for f in &p.pipeline.funcs {
        s.funcs.insert(f.name.clone(), FuncSchedule { compute: LoopLevel::Root, ..Default::default() });
    }
    s
}

/// The default schedule (pure Funcs inlined), except that Funcs with
/// updates are computed at root: left at the innermost loop enclosing
/// their uses they rerun their whole reduction per consumer point, which
/// chains of random stages turn into minutes of work. (A Func whose
/// inlining makes an expression too large is computed at root when it is
/// lowered, as in every schedule: [`lower_computing_oversized_at_root`].)
fn default_schedule(p: &RandomPipeline) -> Schedule {
    let mut s = Schedule::new();
    for f in p.pipeline.funcs.iter().filter(|f| !f.updates.is_empty()) {
        s.funcs.insert(f.name.clone(), FuncSchedule { compute: LoopLevel::Root, ..Default::default() });
    }
    s
}

/// Lowers `s`; while lowering refuses an inlined Func's expansion as too
/// large (`UserError::InlinedTooLarge`, the compiler's limit on a
/// definition's size, which names the Func to compute), computes that Func
/// at root instead, as the error advises, and lowers again. Returns the
/// schedule lowered and the result.
fn lower_computing_oversized_at_root(
    p: &RandomPipeline,
    mut s: Schedule,
    options: &LowerOptions,
) -> (Schedule, Result<Lowered, LowerError>) {
    loop {
        let lowered = lower_with(&p.pipeline, &s, options);
        let Err(LowerError::User(UserError::InlinedTooLarge { inlined, .. })) = &lowered else { return (s, lowered) };
        let Some(f) = p.pipeline.func(inlined).filter(|f| s.funcs.get(&f.name).map(|fs| fs.compute.clone()) != Some(LoopLevel::Root))
        else {
            return (s, lowered);
        };
        s.funcs.insert(f.name.clone(), FuncSchedule { compute: LoopLevel::Root, ..Default::default() });
    }
}

/// Checks one seed; returns a description of each failure.
fn check_seed(seed: u64, vocabulary: u32, stats: &mut Stats) -> Vec<String> {
    // The test runs each seed over its own 8x8x8 window, not at the
    // generator's estimates; without estimates, random schedules are drawn
    // as when the seeds below were found (no redraws for legality at the
    // estimates), so those seeds keep reproducing the same schedules.
    let p = match pipeline(seed, vocabulary) {
        Ok(p) => p,
        Err(e) => return vec![format!("seed {seed}: generation failed: {e}")],
    };
    let inputs = p.make_inputs();
    let scalars: BTreeMap<String, Scalar> = BTreeMap::new();
    let region = region(seed);
    let header = || format!("seed {seed}\n{}", p.text());
    let t0 = std::time::Instant::now();
    let expected = match compiler::exec::reference::realize(&p.pipeline, &inputs, &scalars, &p.output, &region) {
        Ok(b) => b,
        Err(e) => return vec![format!("{}reference evaluation failed: {e}", header())],
    };
    let t_ref = t0.elapsed();
    let (mut t_lower, mut t_interp, mut t_jit) = (std::time::Duration::ZERO, std::time::Duration::ZERO, std::time::Duration::ZERO);
    let mut rng = ChaCha8Rng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9) ^ 0xD1FF);
    let options = RandomScheduleOptions::default();
    let mut failures = vec![];
    for k in 0..2 + RANDOM_SCHEDULES {
        let schedule = match k {
            0 => default_schedule(&p),
            1 => all_root(&p),
            _ => random_schedule(&p.pipeline, &mut rng, &options),
        };
        let t = std::time::Instant::now();
        let unchecked = std::env::var("RANDOM_PIPELINE_UNCHECKED").is_ok();
        let options = if unchecked { LowerOptions::default() } else { LowerOptions::checked() };
        let (schedule, lowered) = lower_computing_oversized_at_root(&p, schedule, &options);
        t_lower += t.elapsed();
        let fail = |what: String| format!("{}schedule #{k}:\n{schedule}\n{what}", header());
        stats.schedules += 1;
        let lowered = match lowered {
            Ok(l) => l,
            Err(e) => {
                failures.push(fail(format!("failed to lower: {e}")));
                continue;
            }
        };
        let fail = |what: String| match std::env::var("RANDOM_PIPELINE_STMT") {
            Ok(_) => fail(format!("lowered:\n{}\n{what}", lowered.stmt)),
            Err(_) => fail(what),
        };
        let regions = [(p.output.as_str(), region.clone())];
        // The interpreter runs first: it checks every access, so a sizing
        // error of lowering is reported with the seed and the schedule
        // rather than risked in compiled code. It is orders of magnitude
        // slower than compiled code: schedules that recompute a lot (the
        // default inlines everything) would take minutes there, so it runs
        // under a step budget.
        let t = std::time::Instant::now();
        let interpreted = (!unchecked).then(|| interpret(&p, &lowered.stmt, &inputs, &regions));
        t_interp += t.elapsed();
        match interpreted {
            None => {}
            Some(Err(InterpretError::StepBudgetExceeded { .. })) => stats.interp_skipped += 1,
            Some(Ok(mut out)) => {
                stats.interpreted += 1;
                let got = out.remove(&p.output).expect("the output");
                if let Some(m) = first_mismatch(&expected, &got) {
                    failures.push(fail(format!("interpreter {m}")));
                }
            }
            Some(Err(e)) => {
                stats.interpreted += 1;
                failures.push(fail(format!("interpreter failed: {e}")));
                continue;
            }
        }
        // The JIT runs the same checked statement: an access outside its
        // storage is an assertion failure, not a crash.
        let t = std::time::Instant::now();
        let compiled = match compile(&lowered) {
            Ok(c) => c,
            Err(e) => {
                failures.push(fail(format!("JIT compile failed: {e}")));
                continue;
            }
        };
        let t_run = std::time::Instant::now();
        let run = compiled.run(&inputs, &scalars, &regions);
        let jit_run = t_run.elapsed();
        t_jit += t.elapsed();
        if std::env::var("RANDOM_PIPELINE_VERBOSE").is_ok() {
            eprintln!("seed {seed} schedule #{k}: JIT run {jit_run:.2?}");
        }
        match run {
            Ok(mut out) => {
                let got = out.remove(&p.output).expect("the output");
                if let Some(m) = first_mismatch(&expected, &got) {
                    failures.push(fail(format!("JIT {m}")));
                }
            }
            Err(e) => failures.push(fail(format!("JIT run failed: {e}"))),
        }
    }
    eprintln!(
        "seed {seed}: {} funcs; reference {t_ref:.2?}, lower {t_lower:.2?}, interpreter {t_interp:.2?}, JIT {t_jit:.2?}",
        p.pipeline.funcs.len()
    );
    failures
}

/// Seeds `first..first+count` with `seed % parts == part`.
fn run_part(part: u64, parts: u64) {
    let first = env("RANDOM_PIPELINE_FIRST", 0);
    let count = env("RANDOM_PIPELINE_SEEDS", 48);
    let mut failures = vec![];
    let mut checked = 0;
    let mut stats = Stats::default();
    for seed in (first..first + count).filter(|s| s % parts == part) {
        let f = check_seed(seed, VOCABULARY, &mut stats);
        for fail in &f {
            eprintln!("seed {seed}: {}", fail.lines().last().unwrap_or(""));
        }
        failures.extend(f);
        checked += 1;
    }
    eprintln!(
        "part {part}/{parts}: {checked} seeds, {} schedules (JIT on all, interpreter on {}, skipped on {} slow ones), {} failures",
        stats.schedules,
        stats.interpreted,
        stats.interp_skipped,
        failures.len()
    );
    if !failures.is_empty() {
        panic!("{} failures; the first:\n{}", failures.len(), failures[0]);
    }
}

/// Seeds that once failed: 70086 (a fused loop over two empty dimensions
/// ran a positive trip count and read an empty realization), 70152 (a
/// clamped histogram index over a float-to-u16 cast was called unbounded),
/// 10607 (inlining a chain of stencils grew a 750,000-node expression that
/// overflowed lowering's stack), 60124 (a histogram index clamped to
/// `[0, 11]` over `i32(x / u32(2))` was called unbounded: the simplifier
/// dropped the clamp's lower end, which never binds, and bounds inference
/// did not know what the simplifier knew of the narrowing cast). They were
/// found in the original vocabulary, which rebuilds them.
#[test]
fn seeds_that_once_failed() {
    let mut stats = Stats::default();
    let failures: Vec<String> = [70086, 70152, 10607, 60124].into_iter().flat_map(|seed| check_seed(seed, 1, &mut stats)).collect();
    assert!(failures.is_empty(), "{} failures; the first:\n{}", failures.len(), failures[0]);
}

// Two tests so that both cores work.
#[test]
fn random_pipelines_agree_even_seeds() {
    run_part(0, 2);
}

#[test]
fn random_pipelines_agree_odd_seeds() {
    run_part(1, 2);
}
