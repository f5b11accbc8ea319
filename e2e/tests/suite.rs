//! The suite's pipelines, both halves, at their test sizes: the schedules
//! the analytical model and a random model pick compute the algorithm.
//! (Correctness only: the held-out half is never timed outside its report.)
//! In a binary of its own, so that no other test loads the machine while
//! its searches run: under load a search's legality checks reach their
//! deadlines and the schedules differ. (One run that shared the cores once
//! spent over 9 minutes and 3 GB lowering one candidate, when chains of
//! clamped reads lowered in time exponential in their length; see
//! docs/notebook/suite.md and compiler/tests/lowering_scale.rs.)

mod common;

use apps::Size;
use common::{check, options, schedule_for, target};
use search::{autoschedule, Searched};

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
