//! Every app gets a schedule that runs at its estimates and computes, at
//! the test size, exactly what the reference evaluator computes.

use apps::Size;
use compiler::{PipelineDef, Schedule, Target};
use search::{autoschedule, Analytical, BeamOptions, Machine, Searched};
use std::time::Duration;

fn target() -> Target {
    Target::host()
}

fn options(beam: usize, budget_ms: u64) -> BeamOptions {
    BeamOptions { beam, passes: 2, budget: Duration::from_millis(budget_ms), ..BeamOptions::default() }
}

fn schedule_for(p: &PipelineDef, beam: usize, budget_ms: u64) -> Schedule {
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
fn check(app: &apps::App, schedule: &Schedule) {
    let schedules = [("naive", benchmark::naive_schedule(&app.pipeline)), ("auto", schedule.clone())];
    if let Err(e) = benchmark::measure(app, &schedules, &benchmark::SamplingOptions::once()) {
        panic!("{e}\n{schedule}");
    }
}

#[test]
fn every_app_gets_a_schedule_that_computes_the_algorithm() {
    for name in apps::names() {
        let app = apps::build(name, Size::Small, &target()).unwrap();
        let schedule = schedule_for(&app.pipeline_estimated_as_run(), 4, 2000);
        check(&app, &schedule);
    }
}

/// The suite's pipelines, both halves, at their test sizes: the schedules
/// the analytical model and a random model pick compute the algorithm.
/// (Correctness only: the held-out half is never timed outside its report.)
/// The budget is far above what the passes take, so that every pass
/// finishes and the schedules do not depend on the machine's load.
#[test]
fn every_suite_pipeline_gets_schedules_that_compute_the_algorithm() {
    let names: Vec<&str> = apps::names_in(apps::Set::Development).chain(apps::names_in(apps::Set::HeldOut)).collect();
    for (seed, name) in names.into_iter().enumerate() {
        eprintln!("{name}");
        let app = apps::build(name, Size::Small, &target()).unwrap();
        let p = app.pipeline_estimated_as_run();
        check(&app, &schedule_for(&p, 4, 30_000));
        let mut random = search::RandomModel::new(seed as u64);
        let schedule = match autoschedule(&p, &target(), &mut random, &options(4, 30_000), 2) {
            Ok(Searched::Answered(a)) => a.schedule,
            other => panic!("{name}: {other:?}"),
        };
        check(&app, &schedule);
    }
}
