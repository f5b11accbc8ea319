//! Shared by the tests: small random pipelines, candidate schedules for
//! them sampled by the search under its random model, and synthetic
//! runtimes from the analytical model.
//!
//! Each test binary uses a part of this module.
#![allow(dead_code)]

use compiler::Target;
use featurizer::Dag;
use random_pipelines::{generate, GeneratorParams, RandomPipeline};
use search::beam::beam_search;
use search::featurize::StageFeatures;
use search::{Analytical, BeamOptions, CostModel, Machine, RandomModel};
use std::collections::HashSet;
use std::time::Duration;
use trainer::{schedule_rows, PipelineInputs, PipelineSamples, ScheduleSample};

/// A fixed target, so results do not depend on the host.
pub fn target() -> Target {
    Target { vector_bytes: 32, threads: 8 }
}

pub fn pipeline(seed: u64, max_stages: usize) -> RandomPipeline {
    generate(&GeneratorParams { seed, max_stages, input_size: (64, 48, 3), ..Default::default() }).expect("a random pipeline")
}

pub fn dag(p: &RandomPipeline) -> Dag {
    Dag::new(&p.pipeline, &target()).expect("a DAG")
}

/// Up to `count` distinct complete candidates for `dag`, from searches
/// ranked at random (each search seed gives a few).
pub fn candidates(dag: &Dag, count: usize) -> Vec<StageFeatures> {
    let mut seen = HashSet::new();
    let mut out = vec![];
    for seed in 0..4 * count as u64 {
        let model = RandomModel::new(seed);
        let options = BeamOptions { beam: 4, passes: 1, seed, budget: Duration::from_secs(10), ..BeamOptions::default() };
        for state in beam_search(dag, &model, &options).complete {
            if out.len() < count && seen.insert(state.hash) {
                out.push((*state.features).clone());
            }
        }
        if out.len() == count {
            break;
        }
    }
    out
}

/// Candidates of pipeline `seed` with the analytical model's predictions
/// as their runtimes: a smooth, known function of the features.
pub fn synthetic_samples(seed: u64, max_stages: usize, count: usize) -> PipelineSamples {
    let dag = dag(&pipeline(seed, max_stages));
    let schedules = candidates(&dag, count);
    let mut analytical = Analytical::new(Machine::typical(target().threads));
    analytical.set_pipeline(&dag);
    let refs: Vec<&StageFeatures> = schedules.iter().collect();
    let costs = analytical.evaluate(&refs);
    PipelineSamples {
        pipeline: PipelineInputs::of(&dag),
        schedules: schedules
            .iter()
            .zip(costs)
            .map(|(f, c)| ScheduleSample { stages: schedule_rows(dag.stages.len(), f), runtime_seconds: c.total })
            .collect(),
    }
}
