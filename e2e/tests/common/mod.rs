//! What the app suites share: the host, the search's options, a schedule
//! from the analytical model, and a check of a schedule against the naive
//! one.

#![allow(dead_code)]

use compiler::{PipelineDef, Schedule, Target};
use search::{autoschedule, Analytical, BeamOptions, Machine, Searched};
use std::time::Duration;

pub fn target() -> Target {
    Target::host()
}

pub fn options(beam: usize, budget_ms: u64) -> BeamOptions {
    BeamOptions { beam, passes: 2, budget: Duration::from_millis(budget_ms), ..BeamOptions::default() }
}

pub fn schedule_for(p: &PipelineDef, beam: usize, budget_ms: u64) -> Schedule {
    let mut model = Analytical::new(Machine::typical(target().threads));
    match autoschedule(p, &target(), &mut model, &options(beam, budget_ms), 2) {
        Ok(Searched::Answered(a)) => a.schedule,
        Ok(Searched::Abandoned) => panic!("abandoned, with no abandon flag"),
        Err(e) => panic!("no schedule: {e}"),
    }
}

/// Runs `app` (small size) under the naive schedule and `schedule`,
/// lowered in checked mode, and compares the outputs bit for bit (the
/// naive schedule matches the reference evaluator: `benchmark/tests/reference.rs`).
pub fn check(app: &apps::App, schedule: &Schedule) {
    let schedules = [("naive", benchmark::naive_schedule(&app.pipeline)), ("auto", schedule.clone())];
    if let Err(e) = benchmark::measure(app, &schedules, &benchmark::SamplingOptions::once()) {
        panic!("{}: {e}\n{schedule}", app.name);
    }
}
