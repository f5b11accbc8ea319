//! `scheduler-server --listen 127.0.0.1:50051 [--db FILE] [--weights FILE] [--max-concurrent N]
//! [--max-in-flight N] [--tls-cert PEM --tls-key PEM | --plaintext]
//! [--agent-token SECRET --seeds N ...] [--retrain-after N ...]`: serves the
//! `Scheduler` RPC, gRPC health and reflection, and with a shared secret for
//! agents (`--agent-token` or `SCHEDULER_AGENT_TOKEN`) and a store the
//! `Agent` service, which hands out the seeds of one round and, with
//! `--retrain-after`, retrains a host's model after that many new samples;
//! until SIGTERM or ctrl-c (in-flight calls finish first). Over TLS with
//! a certificate and key; in plain text only on a loopback address or with
//! `--plaintext` (the agents' secret and session tokens cross the network). Logs go to stderr (`RUST_LOG` filters them; `info` by
//! default).

use anyhow::Context;
use clap::Parser;
use data::SamplingSettings;
use service::{serve, AgentSettings, RetrainSettings, Retrainer, SchedulerSettings, ServerConfig, WorkSource};
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The search allocates and frees many small loop nests and feature maps
/// from several threads: mimalloc does that faster than glibc's malloc.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The environment variable that may hold the agents' shared secret.
const TOKEN_ENV: &str = "SCHEDULER_AGENT_TOKEN";

#[derive(Parser)]
#[command(about = "The scheduling service: Schedule, gRPC health and reflection")]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:50051")]
    listen: SocketAddr,
    /// Training store to take cost-model weights from.
    #[arg(long)]
    db: Option<PathBuf>,
    /// Rank every call that names no weights version with this weights
    /// file (a `trainer` weights file), in place of the store's promoted
    /// weights; checked at start.
    #[arg(long)]
    weights: Option<PathBuf>,
    /// Never rank with (or retrain from) another host's weights: a host
    /// with no promoted weights of its own is ranked with the analytical
    /// model (and trained from scratch), not with the nearest known host's
    /// (the shipped weights and the store's of other hosts).
    #[arg(long)]
    no_nearest_host: bool,
    /// Searches that may run at once (default: the number of cores).
    #[arg(long)]
    max_concurrent: Option<usize>,
    /// Calls admitted at once (searching, waiting for a search slot or
    /// replying); more are refused at once with RESOURCE_EXHAUSTED.
    #[arg(long, default_value_t = service::scheduler::DEFAULT_MAX_IN_FLIGHT as u64, value_parser = clap::value_parser!(u64).range(1..))]
    max_in_flight: u64,
    /// Serve over TLS with this certificate chain (PEM, leaf first).
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Serve in plain text on an address other than loopback (the agents'
    /// secret and tokens then cross the network in clear).
    #[arg(long, conflicts_with = "tls_cert")]
    plaintext: bool,
    #[command(flatten)]
    agents: AgentArgs,
    #[command(flatten)]
    retraining: RetrainArgs,
}

/// Retraining in the loop.
#[derive(clap::Args)]
struct RetrainArgs {
    /// Retrain a host's cost model after this many new samples of it
    /// (default: never). Needs the agent service.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    retrain_after: Option<u64>,
    /// Epochs of each retraining.
    #[arg(long, default_value_t = 50)]
    retrain_epochs: usize,
    /// Share of the pipelines held out to judge new weights, in percent.
    #[arg(long, default_value_t = trainer::dataset::DEFAULT_HELD_OUT_PERCENT, value_parser = clap::value_parser!(u32).range(1..100))]
    held_out_percent: u32,
    /// Threads libtorch trains (and ranks) with.
    #[arg(long, default_value_t = 1)]
    torch_threads: i32,
}

impl RetrainArgs {
    /// Retraining starts from the host's promoted weights, else from the
    /// nearest host's of `zoo`.
    fn settings(&self, nearest: Option<std::sync::Arc<trainer::Zoo>>) -> Option<RetrainSettings> {
        let after_samples = self.retrain_after?;
        let options = trainer::RetrainOptions {
            start: nearest.map_or(trainer::Start::Promoted, trainer::Start::PromotedElseNearest),
            epochs: self.retrain_epochs,
            held_out_percent: self.held_out_percent,
            torch_threads: Some(self.torch_threads),
            ..trainer::RetrainOptions::for_host()
        };
        Some(RetrainSettings { after_samples, options })
    }
}

/// The agent service: its secret, its work and its leases.
#[derive(clap::Args)]
struct AgentArgs {
    /// The shared secret agents register with (else $SCHEDULER_AGENT_TOKEN;
    /// neither: no agent service). Needs --db.
    #[arg(long)]
    agent_token: Option<String>,
    /// The bootstrap round of the work handed out.
    #[arg(long, default_value_t = 0)]
    round: u32,
    #[arg(long, default_value_t = 0)]
    first_seed: u64,
    /// Seeds (work items, one pipeline each) from --first-seed.
    #[arg(long, default_value_t = 100)]
    seeds: u64,
    /// Most stages of each random pipeline (default: drawn from the seed, 3 to 14).
    #[arg(long)]
    max_stages: Option<usize>,
    /// Side of each random pipeline's image (default: drawn from the seed, 96 to 640).
    #[arg(long)]
    image_side: Option<i64>,
    /// Schedules sampled per pipeline.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..))]
    schedules: u32,
    /// Beam of the deterministic search.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..))]
    beam: u32,
    /// Dropout of the random probes (percent chance to survive a pass).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    dropout: u32,
    /// Budget of the deterministic search, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    sampling_budget_ms: u64,
    /// Have the agents sample sliding placements (line buffers) too.
    #[arg(long)]
    sampling_sliding: bool,
    /// How long a lease lasts without a heartbeat, in seconds.
    #[arg(long, default_value_t = 60.0)]
    lease_secs: f64,
    /// Leases an item gets before it is given up on.
    #[arg(long, default_value_t = 3)]
    max_attempts: u32,
    /// How long an agent's session may go unused before it expires, in seconds.
    #[arg(long, default_value_t = service::agent::DEFAULT_SESSION_TTL.as_secs())]
    session_ttl_secs: u64,
}

impl AgentArgs {
    /// The agent service's settings, if it has a secret.
    fn settings(self) -> anyhow::Result<Option<AgentSettings>> {
        let Some(secret) = self.agent_token.or_else(|| std::env::var(TOKEN_ENV).ok()).filter(|s| !s.is_empty()) else {
            return Ok(None);
        };
        let lease = Duration::try_from_secs_f64(self.lease_secs).context("--lease-secs")?;
        Ok(Some(AgentSettings {
            secret,
            lease,
            max_attempts: self.max_attempts,
            retry_after: Duration::from_secs(1),
            session_ttl: Duration::from_secs(self.session_ttl_secs),
            refresh: service::agent::DEFAULT_REFRESH,
            work: WorkSource {
                round: self.round,
                seeds: self.first_seed..self.first_seed + self.seeds,
                max_stages: self.max_stages,
                image_side: self.image_side,
                sampling: SamplingSettings {
                    schedules: self.schedules,
                    beam: self.beam,
                    random_dropout: self.dropout,
                    budget_ms: self.sampling_budget_ms,
                    sliding: self.sampling_sliding,
                },
            },
        }))
    }
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = ctrl_c => {}
                _ = term.recv() => {}
            }
        }
        Err(e) => {
            tracing::warn!("cannot listen for SIGTERM ({e}); ctrl-c only");
            let _ = ctrl_c.await;
        }
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let host_key = data::HostFingerprint::detect().context("detecting this host's fingerprint")?.key();
    let store = args
        .db
        .as_deref()
        .map(|p| data::Store::open(p).with_context(|| format!("opening the training store {}", p.display())))
        .transpose()?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(service::tls_identity(cert, key)?),
        _ => None,
    };
    anyhow::ensure!(
        tls.is_some() || args.plaintext || args.listen.ip().is_loopback(),
        "refusing to serve in plain text on {}: give --tls-cert and --tls-key, or --plaintext to accept it",
        args.listen
    );
    let max_concurrent = args.max_concurrent.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let agents = args.agents.settings()?;
    anyhow::ensure!(agents.is_none() || store.is_some(), "the agent service (--agent-token or ${TOKEN_ENV}) needs a training store (--db)");
    tracing::info!(agents = agents.is_some(), "agent service");
    let nearest = (!args.no_nearest_host).then(|| std::sync::Arc::new(trainer::Zoo::shipped().clone()));
    let retrainer = match (args.retraining.settings(nearest.clone()), &store) {
        (Some(settings), Some(store)) => {
            anyhow::ensure!(agents.is_some(), "--retrain-after needs the agent service (--agent-token or ${TOKEN_ENV})");
            tracing::info!(after_samples = settings.after_samples, epochs = settings.options.epochs, "retraining in the loop");
            Some(Retrainer::new(settings, store)?)
        }
        (Some(_), None) => anyhow::bail!("--retrain-after needs a training store (--db)"),
        (None, _) => None,
    };
    if let Some(path) = &args.weights {
        let chosen =
            trainer::choose_network(Some(path), None, &host_key, None).with_context(|| format!("the weights {}", path.display()))?;
        tracing::info!(weights = %chosen.why, "ranking calls that name no weights version");
    }
    let settings = SchedulerSettings {
        max_in_flight: args.max_in_flight as usize,
        weights: args.weights.clone(),
        nearest,
        ..SchedulerSettings::new(host_key)
    };
    let tls_on = tls.is_some();
    let config = ServerConfig { settings, store, max_concurrent, agents, retrainer, tls };
    // Bound once the configuration is known to be whole: a server that logs
    // its address is one that serves.
    let listener = tokio::net::TcpListener::bind(args.listen).await.with_context(|| format!("binding {}", args.listen))?;
    tracing::info!(address = %listener.local_addr()?, host_key = %config.settings.host_key, max_concurrent, store = ?args.db, tls = tls_on, "serving");
    serve(listener, config, shutdown_signal()).await?;
    Ok(())
}
