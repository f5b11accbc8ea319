//! The `Tune` RPC on loopback with a benchmark agent: a tuning for the
//! agent's host is refused until the agent asks for work, then its
//! candidates are timed on the agent (round 0's, every round's, the last
//! comparison), its answer is no slower than the one-shot answer beside it,
//! and its samples are recorded under the agent's host. (A test binary of
//! its own: the agent's timings would slow the other tunings' tests.)

#[path = "common/server.rs"]
mod server;

use benchmark_agent::remote::{run, Backoff, RemoteOptions};
use codegen::runner::{Runner, RunnerOptions};
use proto::v1::scheduler_client::SchedulerClient;
use proto::v1::{tune_progress, Target, TuneRequest};
use server::{channel, serve_on_loopback};
use service::{AgentSettings, SchedulerSettings, ServerConfig, WorkSource};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tonic::Code;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tuning_for_an_agents_host_is_timed_on_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    // The server calls its own host `test-host`: the agent's host (this
    // machine's key) is another as far as the server knows, so a tuning
    // for it can only be timed on the agent.
    let agents = AgentSettings {
        secret: "tune-secret".into(),
        lease: Duration::from_secs(30),
        max_attempts: 3,
        retry_after: Duration::from_millis(100),
        work: WorkSource {
            round: 0,
            seeds: 0..0,
            max_stages: None,
            image_side: None,
            sampling: data::SamplingSettings { schedules: 2, beam: 2, random_dropout: 50, budget_ms: 100, sliding: false },
        },
        session_ttl: Duration::from_secs(600),
        refresh: Duration::from_secs(10),
    };
    let settings = SchedulerSettings::new("test-host".into());
    let config = ServerConfig {
        settings,
        store: Some(data::Store::open(&path).unwrap()),
        max_concurrent: 1,
        agents: Some(agents),
        retrainer: None,
        tls: None,
    };
    let server = serve_on_loopback(config).await;
    let mut client = SchedulerClient::new(channel(server.addr).await);
    let agent_host = data::HostFingerprint::detect().unwrap().key();
    // A target of the host key alone: that host's own target.
    let for_agent = TuneRequest {
        target: Some(Target { host_key: agent_host.clone(), ..Default::default() }),
        pipeline: Some(proto::v1::Pipeline::try_from(&compiler::examples::blur()).unwrap()),
        budget_ms: 20_000,
        search_budget_ms: 200,
        candidates: 4,
        seed: 0,
    };
    let e = client.tune(for_agent.clone()).await.expect_err("no agent of the host yet");
    assert_eq!(e.code(), Code::FailedPrecondition, "{e:?}");
    assert!(e.message().contains(&agent_host) && e.message().contains("no host"), "{}", e.message());

    let stop = Arc::new(AtomicBool::new(false));
    let options = RemoteOptions {
        server: format!("http://{}", server.addr),
        tls_ca: None,
        secret: "tune-secret".into(),
        name: "tuning-agent".into(),
        timing_passes: 1,
        backoff: Backoff { initial: Duration::from_millis(50), max: Duration::from_millis(400) },
        exit_when_drained: false,
        call_timeout: Duration::from_secs(30),
        spool: dir.path().join("spool"),
    };
    let runner = Runner::new(RunnerOptions { timeout: Duration::from_secs(30), ..RunnerOptions::beside_current_exe() });
    let agent = {
        let stop = stop.clone();
        tokio::spawn(async move { run(&options, runner, stop).await.unwrap() })
    };
    // Once the agent asks for work, tunings for its host are taken.
    let began = Instant::now();
    let (rounds, result) = loop {
        let mut stream = match client.tune(for_agent.clone()).await {
            Ok(stream) => stream.into_inner(),
            Err(e) if e.code() == Code::FailedPrecondition && began.elapsed() < Duration::from_secs(20) => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            Err(e) => panic!("the agent never asked for work: {e:?}"),
        };
        let mut rounds = vec![];
        let mut result = None;
        while let Some(progress) = stream.message().await.expect("the stream goes on") {
            match progress.event.expect("an event") {
                tune_progress::Event::Round(r) => rounds.push(r),
                tune_progress::Event::Result(r) => result = Some(r),
            }
        }
        break (rounds, result.expect("a result"));
    };
    stop.store(true, Ordering::Relaxed);
    let stats = agent.await.unwrap();

    assert!(result.timed_on.contains("an agent of host") && result.timed_on.contains(&agent_host), "{}", result.timed_on);
    assert_eq!(result.host_key, agent_host);
    assert!(rounds.len() >= 2, "round 0 and at least one more: {rounds:?}");
    let (measured, one_shot) =
        (result.measured_seconds.expect("the answer was timed"), result.one_shot_seconds.expect("so was the one-shot answer"));
    assert!(measured <= one_shot, "the answer ({measured} s) is no slower than the one-shot answer ({one_shot} s) beside it");
    assert!(stats.timings_reported >= 2, "round 0 and round 1 at least were timed on the agent: {stats:?}");
    assert_eq!(stats.reported, 0, "no training work was queued");
    let store = data::Store::open(&path).unwrap();
    assert_eq!(store.summary().unwrap().samples, result.samples_stored);
    let hash = &store.pipelines().unwrap()[0].hash;
    assert!(store.has_report(&format!("tune/tune/{}/round1", &hash[..16]), &agent_host).unwrap(), "recorded under the agent's host");
}
