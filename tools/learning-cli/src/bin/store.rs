//! `store`: inspect a training store (counts, CSV export, weights versions),
//! issue and revoke per-agent tokens, and show this machine's hardware
//! fingerprint as a store would record it.

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use data::{detect_gpu_devices, HostFingerprint, Store};

#[derive(Parser)]
#[command(about = "Inspect the SQLite training store")]
struct Cli {
    /// The store's file.
    #[arg(long, default_value = "training.sqlite")]
    db: PathBuf,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Counts of hosts, pipelines, schedules, samples and weights; samples per host, round and outcome; the agents' work queue.
    Summary {
        /// Leases an item gets before it is given up on (the server's `--max-attempts`).
        #[arg(long, default_value_t = 3)]
        max_attempts: u32,
    },
    /// One CSV row per sample.
    Export {
        #[arg(long)]
        csv: PathBuf,
    },
    /// Every weights version with its parent, promotion and held-out metrics.
    Weights,
    /// `PRAGMA integrity_check`; fails unless the file is sound.
    Check,
    /// Per-agent tokens: a token lets one agent name register with the
    /// server instead of the shared secret, until it is revoked.
    #[command(subcommand)]
    AgentToken(TokenCommand),
    /// This machine's fingerprint (the canonical text its key hashes), its key, and the GPUs an agent would report (opens no store).
    Host,
}

#[derive(Subcommand)]
enum TokenCommand {
    /// Issue a token for an agent name and print it (once: the store keeps
    /// only its hash); a token issued for the name before is replaced and
    /// the agent's sessions end.
    Issue { name: String },
    /// Revoke the token of an agent name and end the agent's sessions (the
    /// server notices within its refresh interval).
    Revoke { name: String },
    /// Every token's name, issue time and revocation.
    List,
}

fn main() -> Result<()> {
    // Piped into `head` and the like: end quietly when the reader goes.
    sigpipe::reset();
    let cli = Cli::parse();
    let open = || Store::open(&cli.db).with_context(|| format!("opening {}", cli.db.display()));
    match cli.command {
        Command::Host => {
            let host = HostFingerprint::detect()?;
            print!("{}", host.canonical());
            println!("key={}", host.key());
            let gpus = detect_gpu_devices();
            println!("gpu_devices={}", if gpus.is_empty() { "none".to_string() } else { gpus.join("; ") });
        }
        Command::Summary { max_attempts } => {
            let store = open()?;
            let s = store.summary()?;
            println!("schema version {}", store.schema_version()?);
            println!(
                "{} hosts, {} pipelines, {} schedules, {} reports, {} samples, {} weights versions",
                s.hosts, s.pipelines, s.schedules, s.reports, s.samples, s.weights
            );
            println!("samples per host:");
            for (key, model, n) in &s.samples_per_host {
                println!("  {key}  {n:>8}  {model}");
            }
            println!("samples per round:");
            for (round, n) in &s.samples_per_round {
                println!("  {round:>4}  {n:>8}");
            }
            println!("samples per outcome:");
            for (outcome, n) in &s.samples_per_outcome {
                println!("  {outcome:<14}{n:>8}");
            }
            let q = store.work_counts(max_attempts)?;
            if q.waiting + q.leased + q.done + q.exhausted > 0 {
                println!(
                    "work queue: {} waiting, {} leased, {} done, {} given up after {max_attempts} leases; {} leased more than once",
                    q.waiting, q.leased, q.done, q.exhausted, q.reissued
                );
            }
        }
        Command::Export { csv } => {
            let store = open()?;
            let file = File::create(&csv).with_context(|| format!("creating {}", csv.display()))?;
            let n = store.export_csv(BufWriter::new(file))?;
            println!("{n} samples written to {}", csv.display());
        }
        Command::Weights => {
            println!("{:>7} {:>7} {:>8} {:>16}  {:<20} metrics", "version", "parent", "promoted", "host", "created");
            for w in open()?.weights_list()? {
                println!(
                    "{:>7} {:>7} {:>8} {:>16}  {:<20} {}",
                    w.version,
                    w.parent.map_or("-".to_string(), |p| p.to_string()),
                    if w.promoted { "yes" } else { "" },
                    w.host_key.as_deref().unwrap_or("any"),
                    w.created_at,
                    w.metrics
                );
            }
        }
        Command::AgentToken(TokenCommand::Issue { name }) => println!("{}", open()?.issue_agent_token(&name)?),
        Command::AgentToken(TokenCommand::Revoke { name }) => {
            let ended = open()?.revoke_agent_token(&name)?;
            println!("revoked the token of {name}; {ended} session(s) ended");
        }
        Command::AgentToken(TokenCommand::List) => {
            for t in open()?.agent_tokens()? {
                let revoked = t.revoked_at.map_or("live".to_string(), |at| format!("revoked at {at}"));
                println!("{:<32} issued at {:<12} {revoked}", t.name, t.issued_at);
            }
        }
        Command::Check => {
            let problems = open()?.integrity_check()?;
            if problems != ["ok"] {
                anyhow::bail!("integrity check failed:\n{}", problems.join("\n"));
            }
            println!("ok");
        }
    }
    Ok(())
}
