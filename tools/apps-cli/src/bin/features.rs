//! `features`: prints the autoscheduler's view of an app or of a random
//! pipeline: the DAG (regions at the estimates, loops, edges with their
//! load Jacobians) and each stage's non-zero pipeline features. For
//! debugging a cost model: which number is wrong, and why.

use anyhow::{bail, Context, Result};
use clap::Parser;
use compiler::{PipelineDef, Target};
use featurizer::pipeline_features::pipeline_feature_names;
use featurizer::{Dag, PipelineFeatures};

#[derive(Parser)]
#[command(about = "Print the DAG and pipeline features of an app or a random pipeline")]
struct Args {
    /// An app (blur, harris, ...).
    #[arg(long, conflicts_with = "random")]
    app: Option<String>,
    /// A random pipeline's seed.
    #[arg(long)]
    random: Option<u64>,
    /// Stages of the random pipeline.
    #[arg(long, default_value_t = 8)]
    max_stages: usize,
}

fn main() -> Result<()> {
    // Piped into `head` and the like: end quietly when the reader goes.
    sigpipe::reset();
    let args = Args::parse();
    let target = Target::host();
    let pipeline: PipelineDef = match (&args.app, args.random) {
        (Some(name), _) => apps::build(name, apps::Size::Paper, &target).with_context(|| format!("no app called {name}"))?.pipeline,
        (None, Some(seed)) => {
            let params = random_pipelines::GeneratorParams { seed, max_stages: args.max_stages, ..Default::default() };
            random_pipelines::generate(&params)?.pipeline
        }
        (None, None) => bail!("give --app NAME or --random SEED"),
    };
    let dag = Dag::new(&pipeline, &target)?;
    println!("target: {} vector bytes, {} threads\n", target.vector_bytes, target.threads);
    print!("{dag}");
    let names = pipeline_feature_names();
    for stage in &dag.stages {
        let features = PipelineFeatures::of(&dag, stage);
        let nonzero: Vec<String> =
            features.to_vec().iter().zip(&names).filter(|(v, _)| **v != 0.0).map(|(v, n)| format!("{n}={v}")).collect();
        println!("\n{} stage {}: {}", dag.node(stage.node).name, stage.index, nonzero.join(" "));
    }
    Ok(())
}
