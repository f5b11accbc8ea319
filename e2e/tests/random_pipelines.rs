//! Random pipelines get schedules that pass the legality check, compile,
//! run and compute exactly what the reference evaluator computes at their
//! estimated size (and slide every Func they store outside its compute
//! loop), and the search is deterministic.
//!
//! `AUTOSCHEDULE_SEEDS=N` checks seeds `first..first+N` (default 24),
//! `AUTOSCHEDULE_FIRST=K` starts at seed K. The schedules of random costs
//! (the search ranking with [`RandomModel`], as data generation samples
//! them: register tiles, nested placements and tilings the analytical
//! model would pass over) are checked the same way, `AUTOSCHEDULE_RANDOM=M`
//! of them a seed (default 2) for the first 8 seeds unless
//! `AUTOSCHEDULE_RANDOM_SEEDS` says how many.

use compiler::exec::buffer::Buffer;
use compiler::{LowerOptions, Target};
use random_pipelines::{generate, GeneratorParams, RandomPipeline};
use search::{autoschedule, Analytical, BeamOptions, CostModel, Machine, RandomModel};
use std::collections::BTreeMap;
use std::time::Duration;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn pipeline(seed: u64) -> RandomPipeline {
    generate(&GeneratorParams { seed, max_stages: 6 + (seed % 3) as usize, input_size: (24, 20, 3), ..Default::default() })
        .expect("generates")
}

fn search_options(budget_ms: u64) -> BeamOptions {
    BeamOptions { beam: 8, passes: 2, budget: Duration::from_millis(budget_ms), sliding: true, ..BeamOptions::default() }
}

fn schedule_text(p: &RandomPipeline, target: &Target, budget_ms: u64) -> String {
    let mut model = Analytical::new(Machine::typical(target.threads));
    autoschedule(&p.pipeline, target, &mut model, &search_options(budget_ms), 0)
        .expect("a schedule")
        .answer()
        .expect("not abandoned")
        .schedule
        .to_string()
}

/// Checks one seed's schedule as `model` ranks the search's candidates:
/// whether its code keeps accumulators in registers
/// (`compiler::lower`'s register accumulators pass), or a description of
/// the failure.
fn check(seed: u64, model: &mut dyn CostModel) -> Result<bool, String> {
    let p = pipeline(seed);
    let target = Target::host();
    let result = match autoschedule(&p.pipeline, &target, model, &search_options(1000), 0) {
        Ok(r) => r.answer().expect("not abandoned"),
        Err(e) => return Err(format!("seed {seed}: no schedule ({}): {e}", model.name())),
    };
    let s = &result.schedule;
    let lowered = match compiler::lower_with(&p.pipeline, s, &LowerOptions::checked()) {
        Ok(l) => l,
        Err(e) => return Err(format!("seed {seed}: does not lower: {e}\n{s}")),
    };
    // The search returns no Func stored outside its compute loop that the
    // compiler does not slide (its check turns such candidates away).
    let unslid = s.funcs.iter().find(|(name, f)| f.stored_outside_compute() && !lowered.sliding.contains(name));
    if let Some((name, _)) = unslid {
        return Err(format!("seed {seed}: {name} is stored outside its compute loop but does not slide\n{s}"));
    }
    let compiled = match codegen::compile(&lowered) {
        Ok(c) => c,
        Err(e) => return Err(format!("seed {seed}: does not compile: {e}\n{s}")),
    };
    let inputs: BTreeMap<String, Buffer> = p.make_inputs();
    let scalars = BTreeMap::new();
    let regions = [(p.output.as_str(), p.output_region.clone())];
    let got = match compiled.run(&inputs, &scalars, &regions) {
        Ok(mut out) => out.remove(&p.output).expect("the output"),
        Err(e) => return Err(format!("seed {seed}: run failed: {e}\n{s}")),
    };
    let want = compiler::exec::reference::realize(&p.pipeline, &inputs, &scalars, &p.output, &p.output_region).expect("the reference");
    for c in want.coordinates() {
        if !want.get(&c).unwrap().bit_eq(got.get(&c).unwrap()) {
            return Err(format!("seed {seed}: differs at {c:?}\n{s}"));
        }
    }
    Ok(lowered.stmt.to_string().contains(".accumulators"))
}

#[test]
fn random_pipelines_get_schedules_that_compute_the_algorithm() {
    let first = env("AUTOSCHEDULE_FIRST", 0);
    let count = env("AUTOSCHEDULE_SEEDS", 24);
    let target = Target::host();
    let failures: Vec<String> =
        (first..first + count).filter_map(|seed| check(seed, &mut Analytical::new(Machine::typical(target.threads))).err()).collect();
    eprintln!("{count} seeds from {first}: {} failures", failures.len());
    assert!(failures.is_empty(), "{} failures; the first:\n{}", failures.len(), failures[0]);
}

#[test]
fn schedules_of_random_costs_compute_the_algorithm() {
    let first = env("AUTOSCHEDULE_FIRST", 0);
    let count = env("AUTOSCHEDULE_RANDOM_SEEDS", 8);
    let per_seed = env("AUTOSCHEDULE_RANDOM", 2);
    let results: Vec<Result<bool, String>> = (first..first + count)
        .flat_map(|seed| (0..per_seed).map(move |k| (seed, k)))
        .map(|(seed, k)| check(seed, &mut RandomModel::new(seed * 1_000 + k)))
        .collect();
    let promoted = results.iter().filter(|r| matches!(r, Ok(true))).count();
    let failures: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    eprintln!(
        "{count} seeds from {first}, {per_seed} schedules of random costs each ({promoted} with register accumulators): {} failures",
        failures.len()
    );
    assert!(failures.is_empty(), "{} failures; the first:\n{}", failures.len(), failures[0]);
}

#[test]
fn the_same_request_gives_the_same_schedule_at_any_thread_count() {
    let target = Target { vector_bytes: 32, threads: 8 };
    for seed in [3, 11] {
        let p = pipeline(seed);
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(|| schedule_text(&p, &target, 60_000));
        let two = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap().install(|| schedule_text(&p, &target, 60_000));
        let again = schedule_text(&p, &target, 60_000);
        assert_eq!(one, two, "seed {seed}: 1 and 2 threads differ");
        assert_eq!(one, again, "seed {seed}: two runs differ");
    }
}

/// What a strict budget answers when no check finishes in time, every Func
/// at the root ([`search::beam::all_at_root`]), needs no check: it runs at
/// the estimates for every random pipeline.
#[test]
fn every_func_at_the_root_runs_at_the_estimates() {
    let first = env("AUTOSCHEDULE_FIRST", 0);
    let target = Target::host();
    for seed in first..first + 4 * env("AUTOSCHEDULE_SEEDS", 24) {
        let p = pipeline(seed);
        let dag = featurizer::Dag::new(&p.pipeline, &target).expect("the DAG");
        let mut model = Analytical::new(Machine::typical(target.threads));
        search::CostModel::set_pipeline(&mut model, &dag);
        let roots = search::beam::all_at_root(&dag, &model);
        let schedule = search::apply::to_schedule(&dag, &roots.root);
        if let Err(e) = compiler::check_at_estimates(&p.pipeline, &schedule, &Default::default()) {
            panic!("seed {seed}: {e}\n{schedule}");
        }
    }
}

/// A deep copy of a loop nest with nothing memoized or inherited: every
/// region worked out again.
fn fresh_copy(node: &search::loop_nest::LoopNest) -> search::loop_nest::LoopNest {
    let children = node.children.iter().map(|c| std::sync::Arc::new(fresh_copy(c))).collect();
    search::loop_nest::LoopNest { children, ..node.clone() }
}

/// Featurizing a successor with its parent's chains gives exactly the
/// features featurizing it from scratch gives, along random decision paths
/// (nested placements included) of random pipelines and of the pyramids,
/// and those of a fresh copy of it, which keeps no region from its parent.
#[test]
fn features_reused_from_the_parent_equal_features_from_scratch() {
    use rand::{Rng, SeedableRng};
    use search::expand::{children, decision_order, Placements};
    use search::featurize::{featurize, featurize_reusing};
    use std::sync::Arc;
    let target = Target::host();
    let mut pipelines: Vec<compiler::PipelineDef> = (0..12).map(|seed| pipeline(seed).pipeline).collect();
    for name in ["local_laplacian", "interpolate"] {
        pipelines.push(apps::build(name, apps::Size::Small, &target).expect("builds").pipeline_estimated_as_run());
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut compared = 0;
    for p in &pipelines {
        let dag = featurizer::Dag::new(p, &target).expect("a DAG");
        let order = decision_order(&dag);
        for _ in 0..3 {
            let mut root = Arc::new(search::loop_nest::LoopNest::root());
            let (mut features, mut chains) = featurize_reusing(&dag, &root, None);
            for d in 0..2 * order.len() {
                let options = children(&dag, &root, &order, d, Placements::ALL);
                for child in &options {
                    let (reused, _) = featurize_reusing(&dag, child, Some((&features, &chains)));
                    assert_eq!(reused, featurize(&dag, child), "decision {d}");
                    assert_eq!(reused, featurize(&dag, &fresh_copy(child)), "decision {d}: regions kept from the parent");
                    compared += 1;
                }
                root = options[rng.random_range(0..options.len())].clone();
                (features, chains) = featurize_reusing(&dag, &root, Some((&features, &chains)));
            }
        }
    }
    assert!(compared > 1000, "{compared}");
}
