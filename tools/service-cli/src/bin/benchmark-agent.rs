//! `benchmark-agent --server http://HOST:PORT [--name NAME]`: the networked
//! benchmark agent. Registers with a scheduling server (the shared secret
//! from `--token` or `SCHEDULER_AGENT_TOKEN`), then leases work items,
//! times their sampled schedules in the isolated runner (`hl-runner`, beside
//! this executable) and reports them, until SIGTERM or ctrl-c (the current
//! timing finishes and what was measured is reported) or, with
//! `--exit-when-drained`, until the server has no work left. Reports wait
//! in a spool on disk until acknowledged (`--spool`), so a killed agent's
//! measured samples are sent by its next run.

use anyhow::{Context, Result};
use benchmark_agent::remote::{run, Backoff, RemoteOptions};
use clap::Parser;
use codegen::runner::{Runner, RunnerOptions};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The environment variable that may hold the shared secret.
const TOKEN_ENV: &str = "SCHEDULER_AGENT_TOKEN";

#[derive(Parser)]
#[command(about = "Lease work from a scheduling server, time sampled schedules, report them")]
struct Args {
    /// The scheduling server.
    #[arg(long, default_value = "http://127.0.0.1:50051")]
    server: String,
    /// The CA certificate (PEM) to trust for an https:// server (default:
    /// the system's roots).
    #[arg(long)]
    tls_ca: Option<PathBuf>,
    /// The shared secret (else $SCHEDULER_AGENT_TOKEN).
    #[arg(long)]
    token: Option<String>,
    /// This agent's name (the same name on the same host is the same agent).
    #[arg(long, default_value = "agent")]
    name: String,
    /// Timing passes over each batch (the best time over the passes is kept).
    #[arg(long, default_value_t = 2)]
    timing_passes: usize,
    /// Leave once the server's queue is drained.
    #[arg(long)]
    exit_when_drained: bool,
    /// The longest wait between retries while the server is unreachable, in seconds.
    #[arg(long, default_value_t = 30.0)]
    max_backoff_secs: f64,
    /// Longest a schedule's compile and timing may take, in seconds.
    #[arg(long, default_value_t = 30)]
    schedule_timeout_secs: u64,
    /// Where reports wait until the server acknowledges them (else
    /// `$HALIDE_RS_CACHE/agent-spool/NAME`, the cache defaulting to
    /// `~/.cache/halide-rs`); an agent of the same name sends what it
    /// finds there first.
    #[arg(long)]
    spool: Option<PathBuf>,
}

/// The spool folder of the agent `name` when none is given.
fn default_spool(name: &str) -> Result<PathBuf> {
    let cache = match std::env::var_os("HALIDE_RS_CACHE") {
        Some(cache) => PathBuf::from(cache),
        None => PathBuf::from(std::env::var_os("HOME").context("no --spool, $HALIDE_RS_CACHE or $HOME")?).join(".cache/halide-rs"),
    };
    Ok(cache.join("agent-spool").join(name))
}

/// Raises `stop` on the first SIGTERM or ctrl-c.
fn stop_on_signal(stop: Arc<AtomicBool>) -> Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).context("listening for SIGTERM")?;
    tokio::spawn(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        tracing::info!("stopping: the current timing finishes and what was measured is reported");
        stop.store(true, Ordering::Relaxed);
    });
    Ok(())
}

#[tokio::main]
async fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    tch::set_num_threads(1);
    let args = Args::parse();
    let secret =
        args.token.or_else(|| std::env::var(TOKEN_ENV).ok()).with_context(|| format!("no shared secret: --token or ${TOKEN_ENV}"))?;
    let spool = match args.spool {
        Some(dir) => dir,
        None => default_spool(&args.name)?,
    };
    let options = RemoteOptions {
        spool,
        server: args.server,
        tls_ca: args.tls_ca,
        secret,
        name: args.name,
        timing_passes: args.timing_passes,
        backoff: Backoff {
            initial: Duration::from_millis(100),
            max: Duration::try_from_secs_f64(args.max_backoff_secs).context("--max-backoff-secs")?,
        },
        exit_when_drained: args.exit_when_drained,
        call_timeout: Duration::from_secs(60),
    };
    let stop = Arc::new(AtomicBool::new(false));
    stop_on_signal(stop.clone())?;
    let runner =
        Runner::new(RunnerOptions { timeout: Duration::from_secs(args.schedule_timeout_secs), ..RunnerOptions::beside_current_exe() });
    let stats = run(&options, runner, stop).await?;
    println!(
        "{} items reported ({} samples stored, {} already done by another agent), {} unusable, {} leases lost; {} reports sent from the spool ({} refused)",
        stats.reported, stats.inserted, stats.already_done, stats.unusable, stats.lost_leases, stats.resent, stats.rejected
    );
    Ok(())
}
