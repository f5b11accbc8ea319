//! A pipeline none of whose flat schedules runs at its estimates: a
//! reduction (so it cannot be inlined) whose root allocation exceeds the
//! compiler's limit (and 2^31 elements, which the check must count without
//! wrapping), read at a stride of 64 by the output. When the nested
//! search's checks do not finish within the budget, the flat search has
//! nothing to offer, and the answer is the nested search's best candidate
//! checked past the budget, which runs at the estimates.

use compiler::schedule::legality::Limits;
use compiler::{Expr, Func, ImageParam, Pipeline, PipelineDef, RDom, ScalarType, Target, Var};
use featurizer::Dag;
use search::cost_model::Cost;
use search::featurize::StageFeatures;
use search::{autoschedule, Analytical, BeamOptions, CostModel, LastResortPick, Machine, Reason, Rejection, SearchError};
use std::time::Duration;

/// `sums(x, y)` adds three columns of the input; `out(x, y)` reads it at
/// every 64th point both ways. At the root `sums` covers 64000 x 64000
/// points (16 GB); computed inside the output's loops, 64 bytes a point.
fn strided_reduction() -> PipelineDef {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    input.set_estimate(0, 0, 64_010).set_estimate(1, 0, 64_000);
    let sums = Func::new("sums");
    sums.define(&[&x, &y], Expr::float(0.0, compiler::Type::f32()));
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(3))]);
    sums.update([x.expr(), y.expr()], sums.at([x.expr(), y.expr()]) + input.at([&x + r.x().expr(), y.expr()]));
    let out = Func::new("out");
    out.define(&[&x, &y], sums.at([&x * 64, &y * 64]) * 2.0f32);
    out.set_estimate(0, 0, 1000).set_estimate(1, 0, 1000);
    Pipeline::new(&[&out]).expect("the pipeline checks")
}

fn options(budget_ms: u64) -> BeamOptions {
    BeamOptions { beam: 4, passes: 1, budget: Duration::from_millis(budget_ms), ..BeamOptions::default() }
}

#[test]
fn no_flat_schedule_runs_at_the_estimates() {
    let p = strided_reduction();
    let target = Target::host();
    let mut model = Analytical::new(Machine::typical(target.threads));
    let flat = BeamOptions { nested: false, ..options(10_000) };
    match autoschedule(&p, &target, &mut model, &flat, 0) {
        Err(SearchError::NoLegalSchedule { error, .. }) => {
            assert!(error.to_string().contains("Func sums allocates"), "{error}")
        }
        other => panic!("expected no legal flat schedule, got {:?}", other.map(|s| s.answer().map(|a| a.schedule.to_string()))),
    }
}

/// The analytical model, slowed down on complete candidates so much that
/// a search's last batch outlasts the whole budget: its legality checks
/// then start past their deadline.
struct SlowToFinish {
    model: Analytical,
    stages: usize,
}

impl CostModel for SlowToFinish {
    fn name(&self) -> String {
        "analytical, slow to finish".to_string()
    }

    fn set_pipeline(&mut self, dag: &Dag) {
        self.stages = dag.stages.len();
        self.model.set_pipeline(dag);
    }

    fn evaluate(&self, batch: &[&StageFeatures]) -> Vec<Cost> {
        if batch.iter().any(|f| f.keys().count() == self.stages) {
            std::thread::sleep(Duration::from_millis(300));
        }
        self.model.evaluate(batch)
    }
}

#[test]
fn checks_that_outlast_the_budget_give_the_best_nested_candidate() {
    let p = strided_reduction();
    let target = Target::host();
    let mut model = SlowToFinish { model: Analytical::new(Machine::typical(target.threads)), stages: 0 };
    let result = autoschedule(&p, &target, &mut model, &options(200), 0).expect("a schedule").answer().expect("not abandoned");
    let Reason::LastResort { flat, pick, .. } = &result.reason else { panic!("not the last resort: {}", result.reason) };
    assert_eq!(*pick, LastResortPick::CheckedPastBudget, "{}", result.reason);
    // The flat search's candidates fail on the Func too large to allocate
    // whole: the reason names it as data and in words.
    assert!(matches!(flat, Rejection::Failed(_)) && flat.func() == Some("sums"), "{flat:?}");
    let why = result.reason.to_string();
    for part in ["none with Funcs inlined or at the root ran either", "Func sums allocates", "its check finished past the budget"] {
        assert!(why.contains(part), "{part:?} missing from: {why}");
    }
    assert!(!result.schedule.to_string().contains("sums.compute_root()"), "{}", result.schedule);
    compiler::check_at_estimates(&p, &result.schedule, &Limits::default()).expect("runs at the estimates");
}
