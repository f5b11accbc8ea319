//! `schedule-client (--random SEED | --app NAME | --file PIPELINE.json)
//! [--run] [--server URL] [--budget-ms N] ...`: sends the random pipeline of
//! a seed, an app's pipeline with the estimates it runs at, or a pipeline of
//! the user's own, to a scheduling server and prints the reply: the
//! schedule's text, predicted runtime, per-stage costs, alternatives, model,
//! statistics, and whether the reply's pipeline fingerprint matches the one
//! computed here. With `--run`, the pipeline is then compiled with the LLVM
//! JIT and timed under the served schedule beside its naive schedule (and an
//! app's expert one), outputs compared ([`client`]).

use anyhow::Context;
use benchmark::{BenchRow, SamplingOptions};
use clap::Parser;
use client::AppRequest;
use proto::v1::scheduler_client::SchedulerClient;
use proto::v1::{self, ScheduleReply, ScheduleRequest};
use random_pipelines::{generate, GeneratorParams};
use std::time::Duration;

#[derive(Parser)]
#[command(about = "Ask a scheduling server for a schedule of a random pipeline, an app or a pipeline of your own, and time it")]
struct Args {
    /// The server's address.
    #[arg(long, default_value = "http://127.0.0.1:50051")]
    server: String,
    /// The CA certificate (PEM) to trust for an https:// server (default:
    /// the system's roots).
    #[arg(long)]
    tls_ca: Option<std::path::PathBuf>,
    /// Seed of the random pipeline to schedule.
    #[arg(long, required_unless_present_any = ["app", "file"], conflicts_with_all = ["app", "file"])]
    random: Option<u64>,
    /// A pipeline of your own as JSON (a serialized `PipelineDef` with
    /// estimates), run at its estimates with `--run`.
    #[arg(long, conflicts_with = "app")]
    file: Option<std::path::PathBuf>,
    /// An app to schedule (`apps::names`), sent with the estimates it runs at.
    #[arg(long)]
    app: Option<String>,
    /// The app's size: `paper` or `small`.
    #[arg(long, default_value = "paper", requires = "app")]
    app_size: apps::Size,
    /// Compile and time the app or file's pipeline under the served
    /// schedule beside its naive schedule (and an app's expert one), outputs
    /// checked to agree.
    #[arg(long)]
    run: bool,
    /// Stages of the random pipeline (at least 2).
    #[arg(long, default_value_t = 6)]
    stages: usize,
    /// Width and height of its input and output.
    #[arg(long, default_value_t = 512)]
    size: i64,
    #[arg(long, default_value_t = 1000)]
    budget_ms: u64,
    /// The call's deadline (grpc-timeout).
    #[arg(long, default_value_t = 10_000)]
    deadline_ms: u64,
    #[arg(long, default_value_t = 0)]
    beam: u32,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[arg(long, default_value_t = 2)]
    top_k: u32,
    /// Let the search offer sliding placements (line buffers).
    #[arg(long)]
    sliding: bool,
    /// A weights version of the server's training store.
    #[arg(long)]
    weights_version: Option<u32>,
}

fn print(reply: &ScheduleReply, expected: &proto::Fingerprint) {
    println!("{}", reply.schedule_text.trim_end());
    println!("\npredicted: {:.6} ms   model: {}", reply.predicted_seconds * 1e3, reply.model);
    if let Some(d) = reply.disagreement {
        println!("the ensemble's members disagree by {d:.3} (standard deviation of the logarithms of their predictions)");
    }
    for s in &reply.per_stage {
        println!("  {:>10.6} ms  {} stage {}", s.seconds * 1e3, s.func, s.stage);
    }
    for (i, a) in reply.alternatives.iter().enumerate() {
        println!("alternative {}: {:.6} ms\n{}", i + 1, a.predicted_seconds * 1e3, a.schedule_text.trim_end());
    }
    if let Some(st) = &reply.stats {
        println!(
            "search: {} states generated, {} evaluated, {} passes{}, {:.1} ms (budget {} ms{}), legality checks {:.1} ms; \
             answered {:.1} ms after the call arrived",
            st.states_generated,
            st.states_evaluated,
            st.passes_completed,
            if st.quick_pass_completed { " after the quick one" } else { "" },
            st.wall_ms,
            reply.budget_ms,
            if st.hit_deadline { ", deadline hit" } else { "" },
            st.legality_check_ms,
            reply.answered_after_ms
        );
    }
    if let Some(reason) = &reply.reason {
        println!("answer: {}", reason_line(reason));
    }
    if !reply.fallback.is_empty() {
        println!("fallback: {}", reply.fallback);
    }
    let matches = reply.pipeline_fingerprint == expected.0;
    println!("pipeline fingerprint {expected}: {}", if matches { "matches" } else { "DOES NOT MATCH the reply's" });
}

/// A reply's reason as data, on one line: its kind, and the cause and
/// Func of each rejection (the reply's `fallback` says it in words).
fn reason_line(reason: &v1::Reason) -> String {
    let words = |name: &str, prefix: &str| name.trim_start_matches(prefix).to_lowercase().replace('_', " ");
    let mut line = words(reason.kind().as_str_name(), "REASON_KIND_");
    let rejections = [("nested candidates", &reason.nested), ("flat candidates", &reason.flat), ("picked", &reason.last_resort_mispriced)];
    for (what, rejection) in rejections {
        if let Some(r) = rejection {
            line += &format!("; {what}: {}", words(r.cause().as_str_name(), "REJECTION_CAUSE_"));
            if !r.func.is_empty() {
                line += &format!(", Func {}", r.func);
            }
            if r.timed_out > 0 {
                line += &format!(", {} checks out of time", r.timed_out);
            }
        }
    }
    if reason.timed_out > 0 {
        line += &format!("; {} checks out of time", reason.timed_out);
    }
    if reason.last_resort() == v1::LastResortPick::CheckedPastBudget {
        line += "; picked: checked past the budget";
    }
    line
}

fn print_timings(rows: &[BenchRow], predicted_seconds: f64) {
    println!(
        "\nmeasured with the LLVM JIT on {} threads (best of the samples; the outputs are identical):",
        codegen::runtime::num_threads()
    );
    println!("  {:<8} {:>10} {:>10} {:>8} {:>11}", "schedule", "min ms", "median ms", "samples", "compile ms");
    for r in rows {
        println!("  {:<8} {:>10.3} {:>10.3} {:>8} {:>11.1}", r.schedule, r.min_ms, r.median_ms, r.samples, r.compile_ms);
    }
    let row = |name: &str| rows.iter().find(|r| r.schedule == name);
    if let (Some(naive), Some(served)) = (row("naive"), row(client::SERVED)) {
        let expert = row("expert").map(|e| format!(", {:.2}x the expert's time", served.min_ms / e.min_ms)).unwrap_or_default();
        println!(
            "served: predicted {:.3} ms, measured {:.3} ms; {:.2}x faster than naive{expert}",
            predicted_seconds * 1e3,
            served.min_ms,
            naive.min_ms / served.min_ms,
        );
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let request = match (&args.app, &args.file) {
        (Some(name), _) => Some(AppRequest::new(name, args.app_size, &compiler::Target::host())?),
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            let pipeline = serde_json::from_str(&text).with_context(|| format!("reading the pipeline in {}", path.display()))?;
            Some(AppRequest::of_pipeline(pipeline)?)
        }
        (None, None) => None,
    };
    let (pipeline, expected) = match (&request, args.random) {
        (Some(request), _) => (proto::v1::Pipeline::try_from(&request.pipeline)?, request.fingerprint),
        (None, Some(seed)) => {
            if args.run {
                anyhow::bail!("--run times an app or a file's pipeline, not a random one");
            }
            let generated =
                generate(&GeneratorParams { seed, max_stages: args.stages, input_size: (args.size, args.size, 3), ..Default::default() })?;
            (proto::v1::Pipeline::try_from(&generated.pipeline)?, proto::fingerprint(&generated.pipeline)?)
        }
        (None, None) => anyhow::bail!("--random SEED, --app NAME or --file PIPELINE.json"),
    };
    let endpoint = proto::transport::endpoint(&args.server, args.tls_ca.as_deref())?;
    let mut client = SchedulerClient::new(endpoint.connect().await.with_context(|| format!("connecting to {}", args.server))?);
    let mut call = tonic::Request::new(ScheduleRequest {
        pipeline: Some(pipeline),
        target: None,
        budget_ms: args.budget_ms,
        beam: args.beam,
        seed: args.seed,
        weights_version: args.weights_version,
        top_k: args.top_k,
        sliding: args.sliding,
    });
    call.set_timeout(Duration::from_millis(args.deadline_ms));
    let reply = client.schedule(call).await.map_err(|s| anyhow::anyhow!("{:?}: {}", s.code(), s.message()))?.into_inner();
    print(&reply, &expected);
    if let (Some(request), true) = (&request, args.run) {
        let schedule = request.schedule_of(&reply)?;
        let rows = request.time_beside_baselines(schedule, &SamplingOptions::default()).context("timing the schedules")?;
        print_timings(&rows, reply.predicted_seconds);
    }
    Ok(())
}
