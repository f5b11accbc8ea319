//! Why a search falls back is data that names the Func at fault: a Func
//! read along a row scaled by a param slides at the param's estimate,
//! where the search prices it, but not in the compiled code (the compiler
//! cannot prove that a region scaled by an unknown moves forwards), so
//! every nested candidate that stores it outside its compute loop is
//! mispriced; a model that favours such line buffers above all ranks only
//! those first, and the answer is the flat search's, its reason naming
//! the Func.

use compiler::{Func, ImageParam, Param, Pipeline, PipelineDef, ScalarType, Target, Type, Var};
use featurizer::Dag;
use search::cost_model::Cost;
use search::featurize::StageFeatures;
use search::{autoschedule, Analytical, BeamOptions, CostModel, Machine, Reason, Rejection};
use std::time::Duration;

/// `out(x, y)` sums `f` over three rows from `y * s`; the param `s` is
/// estimated at 1.
fn scaled_rows() -> PipelineDef {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    input.set_estimate(0, 0, 64).set_estimate(1, 0, 66);
    let s = Param::new("s", Type::i32());
    s.set_estimate(1.0);
    let f = Func::new("f");
    f.define(&[&x, &y], input.at([x.expr(), y.expr()]) * 2.0f32);
    let out = Func::new("out");
    let row = |k: i32| f.at([x.expr(), y.expr() * s.expr() + k]);
    out.define(&[&x, &y], row(0) + row(1) + row(2));
    out.set_estimate(0, 0, 64).set_estimate(1, 0, 64);
    Pipeline::new(&[&out]).expect("the pipeline checks")
}

/// The analytical model, with every candidate that line-buffers a Func
/// priced at a thousandth.
struct FavouringLineBuffers(Analytical);

impl CostModel for FavouringLineBuffers {
    fn name(&self) -> String {
        "analytical, favouring line buffers".to_string()
    }

    fn set_pipeline(&mut self, dag: &Dag) {
        self.0.set_pipeline(dag);
    }

    fn evaluate(&self, batch: &[&StageFeatures]) -> Vec<Cost> {
        let mut costs = self.0.evaluate(batch);
        for (cost, features) in costs.iter_mut().zip(batch) {
            if features.shared().any(|(_, f)| f.num_realizations < f.num_productions) {
                cost.total *= 1e-3;
                cost.per_stage.iter_mut().for_each(|(_, seconds)| *seconds *= 1e-3);
            }
        }
        costs
    }
}

#[test]
fn a_flat_fallback_names_the_mispriced_func() {
    let p = scaled_rows();
    let target = Target { threads: 8, ..Target::host() };
    let mut model = FavouringLineBuffers(Analytical::new(Machine::typical(target.threads)));
    let options = BeamOptions { beam: 8, passes: 1, budget: Duration::from_secs(20), sliding: true, ..BeamOptions::default() };
    let result = autoschedule(&p, &target, &mut model, &options, 0).expect("a schedule").answer().expect("not abandoned");
    let Reason::FlatFallback { nested } = &result.reason else { panic!("not a flat fallback: {}\n{}", result.reason, result.schedule) };
    let Rejection::Mispriced(mispricing) = nested else { panic!("not mispriced: {nested}") };
    assert_eq!(mispricing.func(), "f", "{mispricing:?}");
    assert_eq!(nested.func(), Some("f"));
    let why = result.reason.to_string();
    for part in ["no candidate with nested Funcs ran at the estimates as priced", "Func f", "Funcs are inlined or at the root"] {
        assert!(why.contains(part), "{part:?} missing from: {why}");
    }
    assert!(!result.schedule.funcs.values().any(|f| f.stored_outside_compute()), "{}", result.schedule);
    compiler::check_at_estimates(&p, &result.schedule, &Default::default()).expect("runs at the estimates");
}

/// `chain{k}(x, y)` adds `chain{k-1}(x, y)` to itself: a chain of `levels`
/// Funcs whose definitions, inlined into one another, double in size at
/// every level.
fn doubling_chain(levels: usize) -> PipelineDef {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    input.set_estimate(0, 0, 256).set_estimate(1, 0, 256);
    let mut previous = Func::new("chain0");
    previous.define(&[&x, &y], input.at([x.expr(), y.expr()]) * 2.0f32);
    for k in 1..=levels {
        let f = Func::new(&format!("chain{k}"));
        let at = previous.at([x.expr(), y.expr()]);
        f.define(&[&x, &y], at.clone() + at);
        previous = f;
    }
    previous.set_estimate(0, 0, 256).set_estimate(1, 0, 256);
    Pipeline::new(&[&previous]).expect("the pipeline checks")
}

/// Whatever the search ranks first, a pipeline whose Funcs all at the root
/// run is answered: here the flat search's best candidates inline most of
/// a doubling chain and fail the inlining limit, and the answer is every
/// Func at the root, checked, its reason naming the Func at fault.
#[test]
fn candidates_that_fail_the_inlining_limit_give_way_to_every_func_at_the_root() {
    let p = doubling_chain(24);
    let target = Target { threads: 2, ..Target::host() };
    let mut model = Analytical::new(Machine::typical(target.threads));
    for nested in [false, true] {
        let options = BeamOptions { beam: 4, passes: 1, nested, budget: Duration::from_secs(20), ..BeamOptions::default() };
        let result = autoschedule(&p, &target, &mut model, &options, 0).expect("a schedule").answer().expect("not abandoned");
        let Reason::RootAfterFailures { flat: Rejection::Failed(error), checked: true, .. } = &result.reason else {
            panic!("not every Func at the root after failures: {}\n{}", result.reason, result.schedule)
        };
        assert!(error.to_string().contains("the limit is"), "{error}");
        assert!(result.reason.to_string().contains("checked to run at the estimates"), "{}", result.reason);
        assert!(result.schedule.funcs.values().all(|f| f.compute == compiler::LoopLevel::Root), "{}", result.schedule);
        compiler::check_at_estimates(&p, &result.schedule, &Default::default()).expect("runs at the estimates");
    }
}
