//! `scheduler-server --listen 127.0.0.1:50051 [--db FILE] [--max-concurrent N]`:
//! serves the `Scheduler` RPC, gRPC health and reflection until SIGTERM or
//! ctrl-c (in-flight calls finish first). Logs go to stderr (`RUST_LOG`
//! filters them; `info` by default).

use anyhow::Context;
use clap::Parser;
use service::{serve, SchedulerSettings, ServerConfig};
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Parser)]
#[command(about = "The scheduling service: Schedule, gRPC health and reflection")]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:50051")]
    listen: SocketAddr,
    /// Training store to take cost-model weights from.
    #[arg(long)]
    db: Option<PathBuf>,
    /// Searches that may run at once (default: the number of cores).
    #[arg(long)]
    max_concurrent: Option<usize>,
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
    let max_concurrent = args.max_concurrent.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let listener = tokio::net::TcpListener::bind(args.listen).await.with_context(|| format!("binding {}", args.listen))?;
    tracing::info!(address = %listener.local_addr()?, host_key, max_concurrent, store = ?args.db, "serving");
    let config = ServerConfig { settings: SchedulerSettings::new(host_key), store, max_concurrent };
    serve(listener, config, shutdown_signal()).await?;
    Ok(())
}
