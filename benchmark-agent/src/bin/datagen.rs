//! `datagen`: the local data-generation loop, without a server. Samples
//! schedules of random pipelines, times them in the isolated runner
//! (`hl-runner`, beside this executable) and records them in the training
//! store.

use anyhow::{Context, Result};
use benchmark_agent::{generate, GenerateOptions, SamplingOptions};
use clap::{Parser, Subcommand};
use codegen::runner::{Runner, RunnerOptions};
use data::Store;
use search::{Analytical, CostModel, Machine};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser)]
#[command(about = "Generate training data: time sampled schedules of random pipelines into the store")]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Sample, time and record the pipelines of a range of seeds.
    Generate {
        /// The training store (created if missing).
        #[arg(long)]
        db: PathBuf,
        #[arg(long, default_value_t = 0)]
        first_seed: u64,
        #[arg(long, default_value_t = 10)]
        pipelines: u64,
        /// Schedules sampled per pipeline.
        #[arg(long, default_value_t = 32)]
        schedules: usize,
        /// The bootstrap round recorded with the samples.
        #[arg(long, default_value_t = 0)]
        round: u32,
        #[arg(long, default_value = "local")]
        agent: String,
        /// Rank with these weights (a trainer weights file); default: the
        /// store's promoted weights for this host, else the analytical model.
        #[arg(long)]
        weights: Option<PathBuf>,
        /// Autotune this app (at the paper size) instead of random pipelines:
        /// each "pipeline" is then one batch of the app's schedules.
        #[arg(long)]
        app: Option<String>,
    },
}

fn main() -> Result<()> {
    tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::from_default_env()).with_writer(std::io::stderr).init();
    match Args::parse().command {
        Command::Generate { db, first_seed, pipelines, schedules, round, agent, weights, app } => {
            let app = match app {
                Some(name) => Some(
                    apps::build(&name, apps::Size::Paper, &compiler::Target::host()).with_context(|| format!("no app called {name}"))?,
                ),
                None => None,
            };
            let mut store = Store::open(&db).with_context(|| format!("opening {}", db.display()))?;
            let mut model = model(&store, weights.as_deref())?;
            println!("ranking with the {} model", model.name());
            let mut runner = Runner::new(RunnerOptions { timeout: Duration::from_secs(30), ..RunnerOptions::beside_current_exe() });
            let options = GenerateOptions {
                first_seed,
                pipelines,
                round,
                agent,
                sampling: SamplingOptions { schedules, ..SamplingOptions::default() },
                app,
            };
            let bar = indicatif::ProgressBar::new(pipelines);
            bar.set_style(indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} pipelines {msg} [{elapsed}]")?);
            let stats = generate(&mut store, model.as_mut(), &mut runner, &options, |s| {
                bar.set_position(s.pipelines + s.skipped + s.unusable);
                bar.set_message(format!("{} timed, {:.0}/h", s.measured, s.samples_per_hour()));
            })?;
            bar.finish();
            println!(
                "{} pipelines ({} already stored, {} unusable), {} samples timed, failures {:?}, {:.1} s: {:.0} timed samples per hour",
                stats.pipelines,
                stats.skipped,
                stats.unusable,
                stats.measured,
                stats.failed,
                stats.wall_seconds,
                stats.samples_per_hour()
            );
        }
    }
    Ok(())
}

/// The model that ranks the samples.
fn model(store: &Store, weights: Option<&std::path::Path>) -> Result<Box<dyn CostModel>> {
    if let Some(path) = weights {
        return Ok(Box::new(trainer::LearnedModel::load(path).with_context(|| format!("loading {}", path.display()))?));
    }
    let host = data::HostFingerprint::detect()?.key();
    if let Some(w) = store.promoted_weights(Some(&host))? {
        let model =
            trainer::LearnedModel::from_bytes(&w.blob).with_context(|| format!("the store's promoted weights v{}", w.info.version))?;
        return Ok(Box::new(model));
    }
    Ok(Box::new(Analytical::new(Machine::typical(compiler::Target::host().threads))))
}
