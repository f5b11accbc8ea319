//! The isolated runner: schedules are measured in a warm child process; a
//! schedule that crashes, hangs or exhausts memory is classified, the
//! parent is unharmed and the next request gets a fresh child.

use codegen::runner::{Fault, Outcome, RunRequest, Runner, RunnerOptions};
use codegen::timing::Sampling;
use compiler::error::ScheduleErrorKind;
use compiler::ir::types::ScalarType;
use compiler::lang::pipeline::PipelineDef;
use compiler::lang::{Func, ImageParam, Pipeline, Var};
use compiler::schedule::{Schedule, TailStrategy};
use std::collections::HashSet;
use std::time::{Duration, Instant};

fn options() -> RunnerOptions {
    RunnerOptions {
        program: env!("CARGO_BIN_EXE_hl-runner").into(),
        timeout: Duration::from_secs(20),
        memory_limit: Some(2 << 30),
        cache_capacity: 16,
    }
}

/// The demo blur over a 64x48 output, once, checked against the reference.
fn request(schedule: Schedule) -> RunRequest {
    RunRequest {
        pipeline: compiler::examples::blur(),
        schedule,
        inputs: vec![("input".into(), vec![(-1, 66), (-1, 50)])],
        params: vec![],
        output: vec![(0, 64), (0, 48)],
        sampling: Sampling::once(),
        check_accesses: true,
        verify: true,
        fault: None,
    }
}

fn with_fault(fault: Fault) -> RunRequest {
    RunRequest { fault: Some(fault), ..request(Schedule::new()) }
}

fn is_measured(o: &Outcome) -> bool {
    matches!(o, Outcome::Measured { samples: 1, .. })
}

#[test]
fn a_legal_schedule_is_measured_and_an_illegal_one_classified() {
    let mut runner = Runner::new(options());
    let measured = runner.run(&request(codegen::demo::blur_schedule()));
    assert!(is_measured(&measured), "{measured:?}");
    let mut bad = Schedule::new();
    bad.func("blur_y").split("z", "zo", "zi", 4);
    match runner.run(&request(bad)) {
        Outcome::Illegal { kind: Some(ScheduleErrorKind::NoSuchLoop), message } => assert!(message.contains("no loop z"), "{message}"),
        other => panic!("expected an illegal schedule, got {other:?}"),
    }
    assert_eq!(runner.children_started(), 1, "one warm child served both");
}

#[test]
fn a_crash_is_classified_and_the_next_request_gets_a_new_child() {
    let mut runner = Runner::new(options());
    assert_eq!(runner.run(&with_fault(Fault::Segfault)), Outcome::Crash { signal: Some(libc::SIGSEGV) });
    let after = runner.run(&request(codegen::demo::blur_schedule()));
    assert!(is_measured(&after), "{after:?}");
    assert_eq!(runner.children_started(), 2);
}

#[test]
fn a_hang_times_out_and_the_child_is_replaced() {
    let mut runner = Runner::new(RunnerOptions { timeout: Duration::from_secs(2), ..options() });
    let started = std::time::Instant::now();
    assert_eq!(runner.run(&with_fault(Fault::Hang)), Outcome::Timeout);
    assert!(started.elapsed() < Duration::from_secs(10));
    let after = runner.run(&request(Schedule::new()));
    assert!(is_measured(&after), "{after:?}");
    assert_eq!(runner.children_started(), 2);
}

#[test]
fn exhausting_memory_under_the_limit_is_classified() {
    let mut runner = Runner::new(RunnerOptions { memory_limit: Some(1 << 30), ..options() });
    assert_eq!(runner.run(&with_fault(Fault::ExhaustMemory)), Outcome::OutOfMemory);
    let after = runner.run(&request(Schedule::new()));
    assert!(is_measured(&after), "{after:?}");
}

/// `out(x, y) = input(x, y) * 3 + input(x + 1, y)`: one stage.
fn small_pipeline() -> PipelineDef {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::U16, 2);
    let out = Func::new("out");
    out.define(&[&x, &y], input.at([x.expr(), y.expr()]) * 3 + input.at([&x + 1, y.expr()]));
    Pipeline::new(&[&out]).expect("well formed")
}

/// The small pipeline over a 32x64 output, once.
fn small_request(schedule: Schedule) -> RunRequest {
    RunRequest {
        pipeline: small_pipeline(),
        inputs: vec![("input".into(), vec![(0, 33), (0, 64)])],
        output: vec![(0, 32), (0, 64)],
        ..request(schedule)
    }
}

/// The `k`-th of 1,008 distinct legal schedules of the small pipeline: the
/// rows per strip, the strip loop's tail strategy, the vector width and
/// whether strips run in parallel.
fn distinct_schedule(k: i64) -> Schedule {
    let rows = 1 + k % 63;
    let tail = [TailStrategy::ShiftInwards, TailStrategy::GuardWithIf][((k / 63) % 2) as usize];
    let width = [1, 2, 4, 8][((k / 126) % 4) as usize];
    let parallel = (k / 504) % 2 == 1;
    let mut s = Schedule::new();
    s.func("out").split_with("y", "yo", "yi", rows, tail);
    if width > 1 {
        s.func("out").vectorize_by("x", width);
    }
    if parallel {
        s.func("out").parallel("yo");
    }
    s
}

/// A bound on the warm child's peak resident set (it holds LLVM, 16
/// compiled pipelines and small buffers).
const PEAK_RSS_BOUND: u64 = 256 << 20;

/// Distinct schedules (`RUNNER_SCHEDULES`, default 1,000) through one warm
/// child whose compile cache holds 16: every one is compiled and measured,
/// the child is never restarted, its peak resident set stays under
/// [`PEAK_RSS_BOUND`] and grows by at most a quarter after the first fifth
/// of the run.
#[test]
fn many_distinct_schedules_run_through_one_warm_child() {
    let count: i64 = std::env::var("RUNNER_SCHEDULES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    let checkpoint = (count / 5).max(1);
    let started = Instant::now();
    let mut runner = Runner::new(options());
    let mut peak_at_checkpoint = None;
    let mut seen = HashSet::new();
    for k in 0..count {
        let schedule = distinct_schedule(k);
        assert!(seen.insert(schedule.to_string()), "schedule {k} repeats an earlier one");
        let mut r = small_request(schedule);
        r.verify = k % 50 == 0;
        let outcome = runner.run(&r);
        assert!(is_measured(&outcome), "schedule {k}: {outcome:?}");
        if k + 1 == checkpoint {
            peak_at_checkpoint = runner.child_peak_rss();
        }
    }
    assert_eq!(runner.children_started(), 1);
    let peak = runner.child_peak_rss().expect("the child's peak resident set is reported");
    let mib = |bytes: u64| bytes as f64 / f64::from(1 << 20);
    let early = peak_at_checkpoint.expect("the child's peak resident set is reported");
    eprintln!(
        "{count} distinct schedules through one child in {:.1} s: peak RSS {:.1} MiB after {checkpoint}, {:.1} MiB after all",
        started.elapsed().as_secs_f64(),
        mib(early),
        mib(peak)
    );
    assert!(peak < PEAK_RSS_BOUND, "the child's peak RSS {:.1} MiB exceeds {:.1} MiB", mib(peak), mib(PEAK_RSS_BOUND));
    assert!(peak <= early + early / 4, "the child's memory keeps growing: {:.1} MiB -> {:.1} MiB", mib(early), mib(peak));
}

/// A Tuple output (one buffer per value) is measured and each of its
/// buffers verified against the reference in the child.
#[test]
fn a_tuple_output_is_measured_and_verified() {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::U16, 2);
    let out = Func::new("out");
    let px = input.at([x.expr(), y.expr()]);
    out.define_tuple(&[&x, &y], [px.clone() * 3, compiler::lang::ops::cast(compiler::Type::f32(), px)]);
    let mut schedule = Schedule::new();
    schedule.func("out").vectorize_by("x", 8).parallel("y");
    let request = RunRequest { pipeline: Pipeline::new(&[&out]).expect("well formed"), ..small_request(schedule) };
    let mut runner = Runner::new(options());
    let outcome = runner.run(&request);
    assert!(is_measured(&outcome), "{outcome:?}");
}
