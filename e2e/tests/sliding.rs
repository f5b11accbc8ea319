//! Sliding placements (a Func stored one level outside the loop that
//! computes it): the schedules compute what the algorithm computes, the
//! compiler slides nearly every one the search offers, and the features
//! count a sliding Func's points once per realization.
//!
//! `SLIDING_SEEDS=N` walks random pipelines `first..first+N` (default 24),
//! `SLIDING_FIRST=K` starts at seed K.

use compiler::exec::buffer::Buffer;
use compiler::{Func, ImageParam, LowerOptions, Pipeline, PipelineDef, ScalarType, Target, Var};
use rand::{Rng, SeedableRng};
use random_pipelines::{generate, GeneratorParams};
use search::expand::{children, decision_order, Placements};
use search::featurize::featurize;
use search::loop_nest::LoopNest;
use std::collections::BTreeMap;
use std::sync::Arc;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The Funcs a schedule stores outside their compute level.
fn sliding_funcs(schedule: &compiler::Schedule) -> Vec<String> {
    schedule.funcs.iter().filter(|(_, f)| f.stored_outside_compute()).map(|(n, _)| n.to_string()).collect()
}

/// A random complete nest of `dag`, taking a sliding placement whenever
/// one is offered (else a random successor).
fn random_sliding_nest(dag: &featurizer::Dag, rng: &mut impl Rng) -> Arc<LoopNest> {
    let order = decision_order(dag);
    let mut root = Arc::new(LoopNest::root());
    for d in 0..2 * order.len() {
        let options = children(dag, &root, &order, d, Placements::ALL);
        let sliding: Vec<&Arc<LoopNest>> = options
            .iter()
            .filter(|o| {
                sliding_funcs(&search::apply::to_schedule(dag, o)).len() > sliding_funcs(&search::apply::to_schedule(dag, &root)).len()
            })
            .collect();
        root = if sliding.is_empty() {
            options[rng.random_range(0..options.len())].clone()
        } else {
            sliding[rng.random_range(0..sliding.len())].clone()
        };
    }
    root
}

/// What one schedule did: the Funcs it stores outside their compute loop,
/// and those of them the lowered code does not slide.
struct Checked {
    stored_outside: usize,
    unslid: Vec<String>,
}

/// Lowers, compiles and runs `schedule` at the estimates, checking that it
/// computes what the reference evaluator does; `Ok(None)` when the
/// schedule does not run at the estimates (which the search's own check
/// would reject).
fn check(p: &random_pipelines::RandomPipeline, schedule: &compiler::Schedule, what: &str) -> Result<Option<Checked>, String> {
    if compiler::check_at_estimates(&p.pipeline, schedule, &Default::default()).is_err() {
        return Ok(None);
    }
    let lowered = compiler::lower_with(&p.pipeline, schedule, &LowerOptions::checked())
        .map_err(|e| format!("{what}: does not lower: {e}\n{schedule}"))?;
    let outside = sliding_funcs(schedule);
    let unslid: Vec<String> = outside.iter().filter(|f| !lowered.sliding.iter().any(|s| **s == ***f)).cloned().collect();
    let compiled = codegen::compile(&lowered).map_err(|e| format!("{what}: does not compile: {e}\n{schedule}"))?;
    let inputs: BTreeMap<String, Buffer> = p.make_inputs();
    let regions = [(p.output.as_str(), p.output_region.clone())];
    let mut out = compiled.run(&inputs, &BTreeMap::new(), &regions).map_err(|e| format!("{what}: run failed: {e}\n{schedule}"))?;
    let got = out.remove(&p.output).expect("the output");
    let want =
        compiler::exec::reference::realize(&p.pipeline, &inputs, &BTreeMap::new(), &p.output, &p.output_region).expect("the reference");
    let differing = want.coordinates().find(|c| !want.get(c).unwrap().bit_eq(got.get(c).unwrap()));
    if let Some(c) = differing {
        return Err(format!("{what}: differs at {c:?}\n{schedule}"));
    }
    Ok(Some(Checked { stored_outside: outside.len(), unslid }))
}

/// Random pipelines along decision paths that take every sliding placement
/// offered, on one thread (where a Func may slide inside the output's root
/// loops) and on the host's: every schedule computes the algorithm, and
/// the compiler slides nearly every Func the search predicted it would
/// (the rest, whose windows the compiler cannot prove move forwards, the
/// search's legality check turns away: `random_pipelines.rs`).
#[test]
fn sliding_placements_slide_and_compute_the_algorithm() {
    let first = env("SLIDING_FIRST", 0);
    let count = env("SLIDING_SEEDS", 24);
    let mut failures = vec![];
    let (mut slid, mut unslid) = (0, vec![]);
    for seed in first..first + count {
        let p = generate(&GeneratorParams { seed, max_stages: 6 + (seed % 3) as usize, input_size: (24, 20, 3), ..Default::default() })
            .expect("generates");
        for threads in [1, Target::host().threads.max(2)] {
            let target = Target { threads, ..Target::host() };
            let dag = featurizer::Dag::new(&p.pipeline, &target).expect("a DAG");
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let root = random_sliding_nest(&dag, &mut rng);
            let schedule = search::apply::to_schedule(&dag, &root);
            let what = format!("seed {seed}, {threads} threads");
            match check(&p, &schedule, &what) {
                Ok(Some(c)) => {
                    slid += c.stored_outside - c.unslid.len();
                    unslid.extend(c.unslid.into_iter().map(|f| format!("{what}: {f}")));
                }
                Ok(None) => {}
                Err(failure) => failures.push(failure),
            }
        }
    }
    eprintln!("{count} seeds from {first}: {slid} sliding Funcs, {} not slid {unslid:?}, {} failures", unslid.len(), failures.len());
    let heads: Vec<&str> = failures.iter().filter_map(|f| f.lines().next()).collect();
    assert!(failures.is_empty(), "{} failures:\n{}\nthe first:\n{}", failures.len(), heads.join("\n"), failures[0]);
    assert!(2 * slid >= count as usize, "only {slid} sliding Funcs over {count} seeds");
    assert!(unslid.len() * 20 <= slid, "{} of {} Funcs stored outside do not slide: {unslid:?}", unslid.len(), slid + unslid.len());
}

/// A three-row vertical blur of a horizontal one, one thread: `bx` stored
/// at the root and computed per row of `by` is computed once (its points
/// total its region's, 64 by 66, in one production per row), where computed
/// and stored per row it computes three rows of 64 for each.
#[test]
fn a_line_buffer_computes_each_point_once() {
    let target = Target { vector_bytes: 32, threads: 1 };
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    input.set_estimate(0, 0, 66).set_estimate(1, 0, 66);
    let bx = Func::new("bx");
    bx.define(&[&x, &y], input.at([x.expr(), y.expr()]) + input.at([&x + 1, y.expr()]) + input.at([&x + 2, y.expr()]));
    let by = Func::new("by");
    by.define(&[&x, &y], bx.at([x.expr(), y.expr()]) + bx.at([x.expr(), &y + 1]) + bx.at([x.expr(), &y + 2]));
    by.set_estimate(0, 0, 64).set_estimate(1, 0, 64);
    let p: PipelineDef = Pipeline::new(&[&by]).unwrap();
    let dag = featurizer::Dag::new(&p, &target).unwrap();
    let order = decision_order(&dag);
    // by at the root, as it is; then every placement of bx.
    let root = Arc::new(LoopNest::root());
    let root = children(&dag, &root, &order, 0, Placements::ALL).pop().unwrap();
    let root = children(&dag, &root, &order, 1, Placements::ALL)[0].clone();
    let placements = children(&dag, &root, &order, 2, Placements::ALL);
    let bx_stage = dag.node_by_name("bx").unwrap().stages[0];
    let per_row = |store_outside: bool| {
        placements
            .iter()
            .find(|c| {
                let s = search::apply::to_schedule(&dag, c);
                let Some(f) = s.funcs.get("bx") else { return false };
                let at_y = matches!(&f.compute, compiler::schedule::LoopLevel::At { var, .. } if &**var == "y");
                at_y && f.store.is_some() == store_outside
            })
            .map(|c| featurize(&dag, c).get(&bx_stage).unwrap().clone())
            .unwrap_or_else(|| panic!("no placement of bx per row of by, stored outside: {store_outside}"))
    };
    let (sliding, per_row) = (per_row(true), per_row(false));
    assert_eq!(sliding.num_realizations, 1.0);
    assert_eq!(sliding.num_productions, 64.0);
    assert_eq!(sliding.points_computed_total, 64.0 * 66.0);
    assert_eq!(sliding.points_computed_total, sliding.points_computed_minimum);
    assert_eq!(per_row.num_realizations, per_row.num_productions);
    assert_eq!(per_row.points_computed_total, 64.0 * 64.0 * 3.0);
    assert!(sliding.bytes_at_production < sliding.bytes_at_realization);
}
