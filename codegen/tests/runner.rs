//! The isolated runner: schedules are measured in a warm child process; a
//! schedule that crashes, hangs or exhausts memory is classified, the
//! parent is unharmed and the next request gets a fresh child.

use codegen::runner::{Fault, Outcome, RunRequest, Runner, RunnerOptions};
use codegen::timing::Sampling;
use compiler::error::ScheduleErrorKind;
use compiler::schedule::Schedule;
use std::time::Duration;

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
        pipeline: codegen::demo::blur_pipeline(),
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

/// The `k`-th of 1,152 distinct legal schedules of the blur: the rows per
/// strip, the vector width, whether strips run in parallel, and where
/// `blur_x` is computed.
fn distinct_schedule(k: i64) -> Schedule {
    let rows = 1 + k % 48;
    let width = [2, 4, 8, 16][((k / 48) % 4) as usize];
    let parallel = (k / 192) % 2 == 1;
    let mut s = Schedule::new();
    s.func("blur_y").split("y", "yo", "yi", rows).vectorize_by("x", width);
    if parallel {
        s.func("blur_y").parallel("yo");
    }
    match (k / 384) % 3 {
        0 => {}
        1 => {
            s.func("blur_x").compute_root();
        }
        _ => {
            s.func("blur_x").compute_at("blur_y", "yo");
        }
    }
    s
}

/// The peak resident set of process `pid`, in KiB.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Distinct schedules (`RUNNER_SCHEDULES`, default 200) through one warm
/// child whose compile cache holds 16: every one is measured, the child
/// is never restarted, and its memory stays bounded.
#[test]
fn many_distinct_schedules_run_through_one_warm_child() {
    let count: i64 = std::env::var("RUNNER_SCHEDULES").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let mut runner = Runner::new(options());
    let mut peak_after_warmup = None;
    for k in 0..count {
        let s = distinct_schedule(k);
        let mut r = request(s);
        r.verify = k % 50 == 0;
        let outcome = runner.run(&r);
        assert!(is_measured(&outcome), "schedule {k}: {outcome:?}");
        if k == 32 {
            peak_after_warmup = runner.child_id().and_then(peak_rss_kib);
        }
    }
    assert_eq!(runner.children_started(), 1);
    if let (Some(early), Some(last)) = (peak_after_warmup, runner.child_id().and_then(peak_rss_kib)) {
        eprintln!("{count} schedules through one child: peak RSS {early} KiB after 32, {last} KiB after all");
        assert!(last < early * 2 + 64 * 1024, "the child's memory keeps growing: {early} KiB -> {last} KiB");
    }
}
