//! Measures the learned model's inference cost per candidate: a batch of
//! candidates of a random pipeline, evaluated as the search does (one
//! `CostModel::evaluate` call) whose rows the model has not priced before,
//! timed over many repetitions.
//!
//! `cargo run --release -p trainer --example inference_speed -- [stages] [batch] [torch threads] [members]`
//! (defaults 10, 64, 1, 1).

use anyhow::{bail, Context, Result};
use compiler::Target;
use featurizer::Dag;
use random_pipelines::{generate, GeneratorParams};
use search::beam::beam_search;
use search::featurize::StageFeatures;
use search::{BeamOptions, CostModel, RandomModel};
use std::time::{Duration, Instant};
use trainer::{CostNetwork, LearnedModel};

fn arg(i: usize, default: usize) -> Result<usize> {
    std::env::args().nth(i).map_or(Ok(default), |a| a.parse().with_context(|| format!("argument {i}: {a:?} is not a count")))
}

/// A random pipeline whose DAG has `stages` stages (or the closest found).
fn pipeline_with_stages(stages: usize) -> Result<Dag> {
    let mut closest: Option<Dag> = None;
    for max_stages in 2..=stages {
        for seed in 0..20 {
            let p = generate(&GeneratorParams { seed, max_stages, input_size: (1024, 1024, 3), ..Default::default() })?;
            let dag = Dag::new(&p.pipeline, &Target { vector_bytes: 32, threads: 16 })?;
            let distance = |d: &Dag| d.stages.len().abs_diff(stages);
            if closest.as_ref().is_none_or(|c| distance(&dag) < distance(c)) {
                closest = Some(dag);
            }
            if closest.as_ref().is_some_and(|c| distance(c) == 0) {
                return closest.context("a pipeline");
            }
        }
    }
    closest.context("no pipeline generated")
}

fn main() -> Result<()> {
    let (stages, batch, threads, members) = (arg(1, 10)?, arg(2, 64)?, arg(3, 1)?, arg(4, 1)?);
    tch::set_num_threads(threads as i32);
    let dag = pipeline_with_stages(stages)?;
    let mut candidates: Vec<StageFeatures> = vec![];
    for seed in 0.. {
        let options = BeamOptions { beam: 8, passes: 1, seed, budget: Duration::from_secs(30), ..BeamOptions::default() };
        candidates.extend(beam_search(&dag, &RandomModel::new(seed), &options).complete.iter().map(|s| (*s.features).clone()));
        if candidates.len() >= batch || seed > 100 {
            break;
        }
    }
    if candidates.is_empty() {
        bail!("the search found no candidates");
    }
    let batch_features: Vec<&StageFeatures> = candidates.iter().cycle().take(batch).collect();
    let placed: usize = batch_features.iter().map(|f| f.len()).sum();
    let mut model = LearnedModel::new(CostNetwork::random(members, 0), "random");
    model.set_pipeline(&dag);
    for _ in 0..20 {
        model.evaluate(&batch_features);
    }
    let repetitions = 500;
    let mut elapsed = Duration::ZERO;
    for _ in 0..repetitions {
        // The model remembers the rows it priced: setting the pipeline again
        // (not timed) makes every row of the batch new.
        model.set_pipeline(&dag);
        let start = Instant::now();
        model.evaluate(&batch_features);
        elapsed += start.elapsed();
    }
    let per_batch = elapsed.as_secs_f64() / repetitions as f64;
    println!(
        "{} stages ({:.1} placed per candidate), batch of {batch}, {members} member(s), {threads} torch thread(s): {:.1} µs per batch, {:.2} µs per candidate",
        dag.stages.len(),
        placed as f64 / batch as f64,
        per_batch * 1e6,
        per_batch * 1e6 / batch as f64
    );
    Ok(())
}
