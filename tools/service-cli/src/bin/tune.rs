//! `tune (--app NAME | --file PIPELINE.json | --random SEED) [--budget-s N]
//! (--server URL | --db STORE)`: tunes one pipeline on a machine (search,
//! time the candidates, fine-tune the model on what was measured, search
//! again, until the budget is spent) and prints each round as it ends, then
//! the fastest schedule measured beside the one-shot answer. With
//! `--server`, a scheduling server does it (the `Tune` RPC) for its host or
//! `--host KEY`, timing on an agent of that host;
//! with `--db`, this process does it on this machine, recording the samples
//! in the store ([`benchmark_agent::tune`]).

use anyhow::{bail, Context};
use benchmark_agent::tune::{tune, TuneOn, TuneOptions};
use clap::Parser;
use client::AppRequest;
use codegen::runner::{Runner, RunnerOptions};
use proto::v1::scheduler_client::SchedulerClient;
use proto::v1::{tune_progress, TuneRequest, TuneRound};
use std::sync::Mutex;
use std::time::Duration;

#[derive(Parser)]
#[command(about = "Tune one pipeline on a machine: search, time, fine-tune, search again, until the budget is spent")]
struct Args {
    /// An app (`apps::names`), at the estimates it runs at.
    #[arg(long, required_unless_present_any = ["file", "random"], conflicts_with_all = ["file", "random"])]
    app: Option<String>,
    /// The app's size: `paper` or `small`.
    #[arg(long, default_value = "paper", requires = "app")]
    app_size: apps::Size,
    /// A pipeline of your own as JSON (a serialized `PipelineDef` with estimates).
    #[arg(long, conflicts_with = "random")]
    file: Option<std::path::PathBuf>,
    /// The random pipeline of a seed, sized for training.
    #[arg(long)]
    random: Option<u64>,
    /// Wall time for the whole tuning, in seconds.
    #[arg(long, default_value_t = 60)]
    budget_s: u64,
    /// Schedules sampled and timed each round.
    #[arg(long, default_value_t = 8)]
    candidates: u32,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Tune on this scheduling server's host (the `Tune` RPC).
    #[arg(long, required_unless_present = "db", conflicts_with = "db")]
    server: Option<String>,
    /// With `--server`: tune for this host (its key), timing the candidates
    /// on one of its benchmark agents that asks the server for work
    /// (default: the server's own host, on one of its agents if one asks,
    /// else in the server's isolated runner).
    #[arg(long, requires = "server")]
    host: Option<String>,
    /// The CA certificate (PEM) to trust for an https:// server.
    #[arg(long, requires = "server")]
    tls_ca: Option<std::path::PathBuf>,
    /// Tune on this machine, recording the samples in this training store (created if missing).
    #[arg(long)]
    db: Option<std::path::PathBuf>,
    /// With `--db`: never start from another host's weights (see `autoschedule --no-nearest-host`).
    #[arg(long, requires = "db")]
    no_nearest_host: bool,
}

/// Seconds in milliseconds, to four significant digits (the smallest
/// pipelines run in microseconds).
fn ms(seconds: f64) -> String {
    let ms = seconds * 1e3;
    let decimals = if ms > 0.0 { (3 - ms.log10().floor() as i32).clamp(1, 9) as usize } else { 3 };
    format!("{ms:.decimals$} ms")
}

fn print_round(r: &TuneRound) {
    let best = r.best_seconds.map_or("none yet".to_string(), ms);
    println!(
        "round {}: {} timed ({} failed), fastest so far {best}, {:.1} s in; model: {}",
        r.round,
        r.timed,
        r.failed,
        r.elapsed_ms / 1e3,
        r.model
    );
}

fn print_result(text: &str, measured: Option<f64>, one_shot: Option<f64>, samples: u64, rounds: usize) {
    println!("\n{}", text.trim_end());
    match (measured, one_shot) {
        (Some(m), Some(o)) => println!(
            "\ntuned: {}, measured beside the one-shot answer's {} ({:.2}x its speed); {rounds} rounds, {samples} samples stored",
            ms(m),
            ms(o),
            o / m
        ),
        _ => println!("\ntuned: no time measured for the answer; {rounds} rounds, {samples} samples stored"),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::from_default_env()).with_writer(std::io::stderr).init();
    let args = Args::parse();
    let pipeline = match (&args.app, &args.file, args.random) {
        (Some(name), _, _) => AppRequest::new(name, args.app_size, &compiler::Target::host())?.pipeline,
        (None, Some(path), _) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            serde_json::from_str(&text).with_context(|| format!("reading the pipeline in {}", path.display()))?
        }
        (None, None, Some(seed)) => benchmark_agent::Workload::random(seed)?.pipeline,
        (None, None, None) => bail!("--app NAME, --file PIPELINE.json or --random SEED"),
    };
    let budget = Duration::from_secs(args.budget_s);
    if let Some(server) = &args.server {
        let endpoint = proto::transport::endpoint(server, args.tls_ca.as_deref())?;
        let mut client = SchedulerClient::new(endpoint.connect().await.with_context(|| format!("connecting to {server}"))?);
        let mut call = tonic::Request::new(TuneRequest {
            pipeline: Some(proto::v1::Pipeline::try_from(&pipeline)?),
            target: args.host.clone().map(|host_key| proto::v1::Target { host_key, ..Default::default() }),
            budget_ms: budget.as_millis() as u64,
            search_budget_ms: 0,
            candidates: args.candidates,
            seed: args.seed,
        });
        call.set_timeout(budget + Duration::from_secs(30));
        let status = |s: tonic::Status| anyhow::anyhow!("{:?}: {}", s.code(), s.message());
        let mut stream = client.tune(call).await.map_err(status)?.into_inner();
        while let Some(progress) = stream.message().await.map_err(status)? {
            match progress.event {
                Some(tune_progress::Event::Round(r)) => print_round(&r),
                Some(tune_progress::Event::Result(r)) => {
                    print_result(&r.schedule_text, r.measured_seconds, r.one_shot_seconds, r.samples_stored, r.history.len());
                    let expected = proto::fingerprint(&pipeline)?;
                    let matches = r.pipeline_fingerprint == expected.0;
                    println!(
                        "timed on {}; pipeline fingerprint {expected}: {}",
                        r.timed_on,
                        if matches { "matches" } else { "DOES NOT MATCH" }
                    );
                    return Ok(());
                }
                None => {}
            }
        }
        bail!("the server ended the stream without a result");
    }
    let db = args.db.as_ref().context("--server or --db")?;
    let store = data::Store::open(db).with_context(|| format!("opening {}", db.display()))?;
    let host_key = data::HostFingerprint::detect()?.key();
    let nearest = (!args.no_nearest_host).then(trainer::Zoo::shipped);
    let start = trainer::choose_network(None, Some(&store), &host_key, nearest)?;
    println!("tuning from the {} model", start.why);
    let app = apps::App::at_estimates(pipeline).context("timing the pipeline at its estimates")?;
    let workload = benchmark_agent::Workload::from_app(&app);
    let mut options = TuneOptions::within(budget);
    options.sampling.schedules = args.candidates.clamp(1, service::tuning::MAX_CANDIDATES) as usize;
    options.search.seed = args.seed;
    let mut runner = Runner::new(RunnerOptions { timeout: Duration::from_secs(30), ..RunnerOptions::beside_current_exe() });
    let store = Mutex::new(store);
    let tuned = tokio::task::block_in_place(|| {
        let on = TuneOn::this_machine(&mut runner)?;
        tune(&store, on, &workload, start, &options, &|| false, |r| print_round(&service::tuning::round_to_wire(r)))
    })?;
    let text = compiler::schedule::text::schedule_to_text(&tuned.best);
    print_result(&text, tuned.best_seconds, tuned.one_shot_seconds, tuned.samples_stored, tuned.rounds.len());
    Ok(())
}
