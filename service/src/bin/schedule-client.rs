//! `schedule-client --random SEED [--server URL] [--budget-ms N] ...`:
//! sends the random pipeline of a seed to a scheduling server and prints
//! the reply: the schedule's text, predicted runtime, per-stage costs,
//! alternatives, model, statistics, and whether the reply's pipeline
//! fingerprint matches the one computed here.

use anyhow::Context;
use clap::Parser;
use proto::v1::scheduler_client::SchedulerClient;
use proto::v1::{ScheduleReply, ScheduleRequest};
use random_pipelines::{generate, GeneratorParams};
use std::time::Duration;

#[derive(Parser)]
#[command(about = "Ask a scheduling server for a schedule of a random pipeline")]
struct Args {
    /// The server's address.
    #[arg(long, default_value = "http://127.0.0.1:50051")]
    server: String,
    /// Seed of the random pipeline to schedule.
    #[arg(long)]
    random: u64,
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
    /// A weights version of the server's training store.
    #[arg(long)]
    weights_version: Option<u32>,
}

fn print(reply: &ScheduleReply, expected: &proto::Fingerprint) {
    println!("{}", reply.schedule_text.trim_end());
    println!("\npredicted: {:.6} ms   model: {}", reply.predicted_seconds * 1e3, reply.model);
    for s in &reply.per_stage {
        println!("  {:>10.6} ms  {} stage {}", s.seconds * 1e3, s.func, s.stage);
    }
    for (i, a) in reply.alternatives.iter().enumerate() {
        println!("alternative {}: {:.6} ms\n{}", i + 1, a.predicted_seconds * 1e3, a.schedule_text.trim_end());
    }
    if let Some(st) = &reply.stats {
        println!(
            "search: {} states generated, {} evaluated, {} passes, {:.1} ms (budget {} ms{}), legality checks {:.1} ms",
            st.states_generated,
            st.states_evaluated,
            st.passes_completed,
            st.wall_ms,
            reply.budget_ms,
            if st.hit_deadline { ", deadline hit" } else { "" },
            st.legality_check_ms
        );
    }
    if !reply.fallback.is_empty() {
        println!("fallback: {}", reply.fallback);
    }
    let matches = reply.pipeline_fingerprint == expected.0;
    println!("pipeline fingerprint {expected}: {}", if matches { "matches" } else { "DOES NOT MATCH the reply's" });
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let generated = generate(&GeneratorParams { seed: args.random, max_stages: args.stages, input_size: (args.size, args.size, 3) })?;
    let expected = proto::fingerprint(&generated.pipeline)?;
    let pipeline = proto::v1::Pipeline::try_from(&generated.pipeline)?;
    let mut client = SchedulerClient::connect(args.server.clone()).await.with_context(|| format!("connecting to {}", args.server))?;
    let mut request = tonic::Request::new(ScheduleRequest {
        pipeline: Some(pipeline),
        target: None,
        budget_ms: args.budget_ms,
        beam: args.beam,
        seed: args.seed,
        weights_version: args.weights_version,
        top_k: args.top_k,
    });
    request.set_timeout(Duration::from_millis(args.deadline_ms));
    let reply = client.schedule(request).await.map_err(|s| anyhow::anyhow!("{:?}: {}", s.code(), s.message()))?.into_inner();
    print(&reply, &expected);
    Ok(())
}
