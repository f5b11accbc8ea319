//! Every app gets a schedule that runs at its estimates and computes, at
//! the test size, exactly what the reference evaluator computes.

mod common;

use apps::Size;
use common::{check, schedule_for, target};

#[test]
fn every_app_gets_a_schedule_that_computes_the_algorithm() {
    for name in apps::names() {
        let app = apps::build(name, Size::Small, &target()).unwrap();
        let schedule = schedule_for(&app.pipeline_estimated_as_run(), 4, 2000);
        check(&app, &schedule);
    }
}
