//! Every app gets a legal schedule within any budget, and the search's
//! choices for the apps' shapes (register tiles of reductions, scattering
//! stores, pyramids' allocations). That the schedules compute what the
//! algorithm computes, compiled, is in the `e2e` crate's `apps` suite.

use apps::Size;
use compiler::Target;
use search::{autoschedule, Analytical, BeamOptions, Machine, Reason, Rejection, Searched};
use std::time::Duration;

fn target() -> Target {
    Target::host()
}

fn options(beam: usize, budget_ms: u64) -> BeamOptions {
    BeamOptions { beam, passes: 2, budget: Duration::from_millis(budget_ms), ..BeamOptions::default() }
}

/// The search stops at its deadline and completes its best state without
/// evaluating more; the legality check (which lowers the pipeline) comes
/// on top. At the small size, so that lowering is quick: at the paper
/// size, lowering local_laplacian for the check alone takes minutes.
#[test]
fn a_tiny_budget_still_gives_a_legal_schedule_for_every_app() {
    for name in apps::names() {
        let app = apps::build(name, Size::Small, &target()).unwrap();
        let p = app.pipeline_estimated_as_run();
        let mut model = Analytical::new(Machine::typical(target().threads));
        let result = autoschedule(&p, &target(), &mut model, &options(32, 10), 0)
            .unwrap_or_else(|e| panic!("{name}: no schedule under a 10 ms budget: {e}"))
            .answer()
            .expect("not abandoned");
        compiler::check_at_estimates(&p, &result.schedule, &compiler::schedule::legality::Limits::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        eprintln!(
            "{name}: search {:.1} ms (deadline reached: {}), legality check {:.1} ms",
            result.stats.wall_seconds * 1e3,
            result.stats.hit_deadline,
            result.check_seconds * 1e3
        );
        assert!(result.stats.wall_seconds < 0.5, "{name}: the search ran {:.3} s past a 10 ms budget", result.stats.wall_seconds);
    }
}

/// A matrix multiply's reduction runs in register tiles: the update's rows
/// are unrolled inside its reduction loop, so each vector of `B` loaded
/// serves several rows, and the schedule still runs at the estimates.
#[test]
fn reductions_are_tiled_for_registers() {
    let app = apps::build("matmul", Size::Paper, &target()).unwrap();
    let mut model = Analytical::new(Machine::typical(target().threads));
    let result = autoschedule(&app.pipeline, &target(), &mut model, &options(8, 5000), 0).unwrap().answer().expect("not abandoned");
    let text = result.schedule.to_string();
    let unrolled = text.lines().find(|l| l.starts_with("C.update(0).unroll(")).unwrap_or_else(|| panic!("no unrolled rows:\n{text}"));
    let row = unrolled.trim_start_matches("C.update(0).unroll(").trim_end_matches(')');
    let reorder = text.lines().find(|l| l.starts_with("C.update(0).reorder(")).expect("the update is reordered");
    assert!(reorder.find(row) < reorder.find("r.x"), "the unrolled rows run inside the reduction loop: {reorder}");
    let update = result.features.iter().find(|(s, _)| s.index() == 1).map(|(_, f)| f).expect("the update has features");
    assert!(update.unrolled_loop_extent > 1.0, "{update:?}");
    assert!(update.vector_loads_per_vector < 1.0, "B's vector loads are shared by the rows: {update:?}");
}

/// bilateral_grid's histogram update stores each pixel's contribution to a
/// cell chosen by the pixel's value: a vector of it scatters; matmul's
/// update stores densely.
#[test]
fn stores_know_whether_they_scatter() {
    let app = apps::build("bilateral_grid", Size::Paper, &target()).unwrap();
    let dag = featurizer::Dag::new(&app.pipeline, &target()).unwrap();
    let update = dag.stages.iter().find(|s| s.index == 1).expect("the histogram has an update");
    let x = update.loops.iter().position(|l| l.pure_dim == Some(0)).expect("a loop over x");
    assert!(update.scatters_along(x));
    let matmul = apps::build("matmul", Size::Paper, &target()).unwrap();
    let dag = featurizer::Dag::new(&matmul.pipeline, &target()).unwrap();
    let update = &dag.stages[1];
    assert!(!update.scatters_along(update.loops.iter().position(|l| l.pure_dim == Some(0)).unwrap()));
}

/// The pyramids at the paper size: whatever the search returns, the lowered
/// code allocates for no Func much more than the cost model priced (nests
/// whose compiler bounds grow level after level are not returned as priced).
#[test]
fn pyramids_allocate_what_the_model_priced() {
    for name in ["interpolate", "local_laplacian"] {
        let app = apps::build(name, Size::Paper, &target()).unwrap();
        let p = app.pipeline_estimated_as_run();
        let mut model = Analytical::new(Machine::typical(target().threads));
        let result = autoschedule(&p, &target(), &mut model, &options(32, 1500), 0)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .answer()
            .expect("not abandoned");
        let checked = compiler::check_at_estimates(&p, &result.schedule, &compiler::schedule::legality::Limits::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let dag = featurizer::Dag::new(&p, &target()).unwrap();
        for (func, bytes) in &checked.allocations {
            let node = dag.node_by_name(func).unwrap_or_else(|| panic!("{name}: no node {func}"));
            let priced = node.stages.first().and_then(|s| result.features.get(s)).map_or(0.0, |f| f.bytes_at_realization);
            assert!(
                *bytes as f64 <= 4.0 * priced + 65536.0,
                "{name}: Func {func} allocates {bytes} bytes, priced {priced:.0} ({})\n{}",
                result.reason,
                result.schedule
            );
        }
    }
}

/// A budget too small for any check to finish (lowering interpolate's
/// nests at the paper size takes seconds): every check stops at its
/// deadline, and the answer is still a legal schedule, from the flat
/// search's best candidate checked once more past the budget (at least
/// `BeamOptions::past_budget_check`).
#[test]
fn checks_that_outlast_the_budget_still_give_a_legal_schedule() {
    let app = apps::build("interpolate", Size::Paper, &target()).unwrap();
    let p = app.pipeline_estimated_as_run();
    let mut model = Analytical::new(Machine::typical(target().threads));
    let result = autoschedule(&p, &target(), &mut model, &options(8, 1), 0).expect("a schedule").answer().expect("not abandoned");
    assert!(matches!(&result.reason, Reason::FlatFallback { nested: Rejection::TimedOut { .. } }), "{}", result.reason);
    compiler::check_at_estimates(&p, &result.schedule, &compiler::schedule::legality::Limits::default()).expect("runs at the estimates");
}

/// The same under a strict budget, as the server runs it: the answer comes
/// within the budget and a margin (no check runs past it), and is every
/// Func at the root, untiled (vectorized where a vector fits), which runs
/// at the estimates unchecked.
#[test]
fn a_strict_budget_answers_every_func_at_the_root_when_no_check_finishes() {
    let app = apps::build("interpolate", Size::Paper, &target()).unwrap();
    let p = app.pipeline_estimated_as_run();
    let mut model = Analytical::new(Machine::typical(target().threads));
    let strict = BeamOptions { strict_budget: true, ..options(8, 1) };
    let started = std::time::Instant::now();
    let result = autoschedule(&p, &target(), &mut model, &strict, 0).expect("a schedule").answer().expect("not abandoned");
    let took = started.elapsed();
    assert!(matches!(&result.reason, Reason::RootUnchecked { timed_out: 1.., .. }), "{}", result.reason);
    assert!(result.reason.to_string().contains("every Func at the root"), "{}", result.reason);
    let text = compiler::schedule::text::schedule_to_text(&result.schedule);
    let untiled = |l: &str| ["compute_root()", "split(", "reorder(", "vectorize("].iter().any(|d| l.contains(d)) && !l.contains("_l1");
    assert!(text.lines().all(untiled), "{text}");
    assert!(result.predicted_seconds > 0.0 && !result.per_stage.is_empty());
    // Generous for a loaded CI machine: without the strict budget this
    // call takes seconds (one check of interpolate's nest at paper size).
    assert!(took < Duration::from_millis(500), "{took:?}");
    compiler::check_at_estimates(&p, &result.schedule, &compiler::schedule::legality::Limits::default()).expect("runs at the estimates");
}

/// Not under a strict budget, the one check past the budget is bounded
/// too: a candidate that would lower for minutes (some do) gives way to
/// every Func at the root once that check runs out of its time as well
/// (here 1 ms, where interpolate's nest takes seconds).
#[test]
fn the_check_past_the_budget_gives_way_to_every_func_at_the_root_when_it_runs_out() {
    let app = apps::build("interpolate", Size::Paper, &target()).unwrap();
    let p = app.pipeline_estimated_as_run();
    let mut model = Analytical::new(Machine::typical(target().threads));
    let bounded = BeamOptions { past_budget_check: Duration::from_millis(1), ..options(8, 1) };
    let started = std::time::Instant::now();
    let result = autoschedule(&p, &target(), &mut model, &bounded, 0).expect("a schedule").answer().expect("not abandoned");
    let took = started.elapsed();
    // One timed-out check of the nested search's and of the flat search's,
    // and the one past the budget.
    assert!(matches!(&result.reason, Reason::RootUnchecked { timed_out: 2.., .. }), "{}", result.reason);
    assert!(took < Duration::from_millis(500), "{took:?}");
    compiler::check_at_estimates(&p, &result.schedule, &compiler::schedule::legality::Limits::default()).expect("runs at the estimates");
}

/// A search whose caller raises its abandon flag stops at its next step
/// and says so, whatever budget it had left; the answer a server keeps
/// ready meanwhile (`at_root`) runs at the estimates unchecked.
#[test]
fn an_abandoned_search_stops_and_the_early_answer_runs_at_the_estimates() {
    let app = apps::build("local_laplacian", Size::Paper, &target()).unwrap();
    let p = app.pipeline_estimated_as_run();
    let mut model = Analytical::new(Machine::typical(target().threads));
    let early = search::at_root(&p, &target(), &mut model, Reason::EarlyAnswerAtDeadline).expect("a root schedule");
    assert_eq!(early.reason, Reason::EarlyAnswerAtDeadline);
    assert!(early.predicted_seconds > 0.0 && !early.per_stage.is_empty());
    compiler::check_at_estimates(&p, &early.schedule, &compiler::schedule::legality::Limits::default()).expect("runs at the estimates");

    let abandon = search::Abandon::new();
    let long =
        BeamOptions { beam: 64, passes: 5, budget: Duration::from_secs(120), abandon: Some(abandon.clone()), ..BeamOptions::default() };
    let raiser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        abandon.raise();
    });
    let started = std::time::Instant::now();
    let outcome = autoschedule(&p, &target(), &mut model, &long, 2);
    let took = started.elapsed();
    raiser.join().unwrap();
    assert!(matches!(outcome, Ok(Searched::Abandoned)), "{:?}", outcome.map(|s| s.answer().map(|a| a.reason)));
    // Generous for a loaded CI machine: the search alone runs for minutes.
    assert!(took < Duration::from_secs(20), "{took:?}");
}
