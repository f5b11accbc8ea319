//! The legality check of a candidate with line buffers takes time in
//! proportion to the pipeline. A candidate the search made for optical_flow
//! (sliding placements offered) stores the repeat-edge wrappers of two of
//! its flow fields at the outer parallel loop and computes them per row
//! strip; looking for their windows expanded every let between the compute
//! loop and the Func, each naming the one before several times, and the
//! check ran for 26 s past a deadline of 3 s (no deadline is looked at
//! within one Func's window). The window is now looked for only in required
//! bounds of a bounded size.

use compiler::schedule::legality::Limits;
use compiler::schedule::text::parse_schedule;
use compiler::Target;
use std::time::{Duration, Instant};

#[test]
fn a_line_buffered_optical_flow_candidate_is_checked_in_proportion() {
    let app = apps::build("optical_flow", apps::Size::Paper, &Target::host()).expect("optical_flow is an app");
    let schedule = parse_schedule(include_str!("data/optical_flow_line_buffers.schedule")).unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    let limits = Limits { deadline: Some(started + Duration::from_secs(2)), ..Limits::default() };
    let checked = compiler::check_at_estimates(&app.pipeline, &schedule, &limits);
    let took = started.elapsed();
    // A bound on work, not a timing: the old code took 26 s on a 2-core Xeon
    // whatever the deadline.
    assert!(took < Duration::from_secs(12), "the check took {took:?} against a 2 s deadline: {:?}", checked.map(|_| ()));
}
