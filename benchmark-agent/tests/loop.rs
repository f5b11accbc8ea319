//! The bootstrap loop end to end on loopback: a real scheduling server
//! over a real SQLite file, retraining in the loop (libtorch) after a few
//! samples, three networked agents timing real schedules in the isolated
//! runner, two rounds of work (round 1 queued once round 0 is done and a
//! version was promoted). Every sample is stored once, the server trained
//! and promoted weights, round 1's leases carried them, the agents fetched
//! them, and a `Schedule` call naming no weights ranks with them.

use benchmark_agent::remote::{run, Backoff, RemoteOptions};
use codegen::runner::{Runner, RunnerOptions};
use data::{HostFingerprint, SamplingSettings, Store};
use proto::v1::scheduler_client::SchedulerClient;
use service::{serve, AgentSettings, RetrainSettings, Retrainer, SchedulerSettings, ServerConfig, WorkSource};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const SECRET: &str = "loop-test-secret";
const ITEMS_PER_ROUND: u64 = 6;

/// Round `round`'s seeds: 3-stage pipelines of 64x64 pixels, 3 schedules each.
fn work(round: u32) -> WorkSource {
    let first = u64::from(round) * ITEMS_PER_ROUND;
    WorkSource {
        round,
        seeds: first..first + ITEMS_PER_ROUND,
        max_stages: Some(3),
        image_side: Some(64),
        sampling: SamplingSettings { schedules: 3, beam: 4, random_dropout: 50, budget_ms: 100, sliding: false },
    }
}

/// Polls `check` every 100 ms until it holds (at most `limit`; the
/// failure then shows `state`).
async fn wait_until(what: &str, limit: Duration, mut check: impl FnMut() -> bool, state: impl Fn() -> String) {
    let started = Instant::now();
    while !check() {
        assert!(started.elapsed() < limit, "timed out after {limit:?} waiting for {what}; {}", state());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn round_done(db: &Path, round: u32) -> bool {
    let items = Store::open(db).unwrap().work_items(round).unwrap();
    items.len() as u64 == ITEMS_PER_ROUND && items.iter().all(|i| i.done)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_retraining_and_two_rounds_store_every_sample_once_and_round_one_uses_the_promoted_weights() {
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.sqlite");
    let host_key = HostFingerprint::detect().unwrap().key();
    let store = Store::open(&db).unwrap();
    // A handful of samples cannot show one model better than another: the
    // first weights are promoted unconditionally so that round 1 uses them.
    let options = trainer::RetrainOptions {
        epochs: 10,
        held_out_percent: 50,
        torch_threads: Some(1),
        first_promotion: trainer::FirstPromotion::Unconditional,
        ..trainer::RetrainOptions::for_host()
    };
    // Every report starts a retraining (or one right after the running
    // one), so the last one of round 0 trains on all its samples: with a
    // threshold of 6, a round whose probes gave only 11 distinct schedules
    // (their count varies with timing) left 5 samples waiting for ever
    // after a first retraining that had no held-out pipeline.
    let retrainer = Retrainer::new(RetrainSettings { after_samples: 1, options }, &store).unwrap();
    let agents = AgentSettings {
        session_ttl: service::agent::DEFAULT_SESSION_TTL,
        refresh: service::agent::DEFAULT_REFRESH,
        secret: SECRET.into(),
        lease: Duration::from_secs(30),
        max_attempts: 3,
        retry_after: Duration::from_millis(200),
        work: work(0),
    };
    let config = ServerConfig {
        settings: SchedulerSettings::new(host_key.clone()),
        store: Some(store),
        max_concurrent: 1,
        agents: Some(agents),
        retrainer: Some(retrainer.clone()),
        tls: None,
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (shutdown, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(listener, config, async {
        let _ = stopped.await;
    }));

    let stop = Arc::new(AtomicBool::new(false));
    let agents: Vec<_> = (0..3)
        .map(|i| {
            let options = RemoteOptions {
                server: format!("http://{addr}"),
                tls_ca: None,
                secret: SECRET.into(),
                name: format!("agent-{i}"),
                timing_passes: 1,
                backoff: Backoff { initial: Duration::from_millis(50), max: Duration::from_millis(400) },
                exit_when_drained: false,
                call_timeout: Duration::from_secs(30),
                spool: dir.path().join(format!("spool-{i}")),
            };
            let runner = Runner::new(RunnerOptions { timeout: Duration::from_secs(30), ..RunnerOptions::beside_current_exe() });
            let stop = stop.clone();
            tokio::spawn(async move { run(&options, runner, stop).await.unwrap() })
        })
        .collect();

    let state = || {
        let summary = Store::open(&db).unwrap().summary().unwrap();
        format!("store: {summary:?}; retrainings: {:?}", retrainer.history())
    };
    wait_until(
        "round 0 and a promoted version",
        Duration::from_secs(120),
        || round_done(&db, 0) && !retrainer.is_running() && retrainer.history().iter().any(|r| matches!(r.result, Ok((_, true)))),
        state,
    )
    .await;
    let promoted_before_round_1 = Store::open(&db).unwrap().promoted_weights(Some(&host_key)).unwrap().unwrap().info.version;
    println!("round 0 done after {:.1} s; promoted v{promoted_before_round_1}", started.elapsed().as_secs_f64());
    Store::open(&db).unwrap().enqueue_work(&work(1).items()).unwrap();
    wait_until("round 1", Duration::from_secs(120), || round_done(&db, 1), state).await;
    stop.store(true, Ordering::Relaxed);
    let mut stats = Vec::new();
    for agent in agents {
        stats.push(agent.await.unwrap());
    }
    // The last report may have started a retraining: let it end (the
    // agents have stopped, so no other follows).
    wait_until("the last retraining", Duration::from_secs(120), || !retrainer.is_running(), state).await;

    // Every sample stored once, from the agents' acknowledged reports.
    let store = Store::open(&db).unwrap();
    let summary = store.summary().unwrap();
    let items = 2 * ITEMS_PER_ROUND;
    assert_eq!((summary.reports, summary.pipelines), (items, items), "{summary:?}");
    for p in store.pipelines().unwrap() {
        assert!(p.schedules > 0 && p.samples == p.schedules, "pipeline {}: {} schedules, {} samples", p.hash, p.schedules, p.samples);
    }
    assert_eq!(summary.samples, stats.iter().map(|s| s.inserted).sum::<u64>(), "{stats:?}");
    assert_eq!(stats.iter().map(|s| s.reported).sum::<u64>(), items, "{stats:?}");
    assert!(stats.iter().all(|s| s.already_done == 0 && s.unusable == 0), "{stats:?}");

    // Weights were trained and promoted in the loop; round 1's leases carried
    // promoted versions (the one promoted before it was queued, or a later
    // one), and the agents fetched them.
    let history = retrainer.history();
    println!("retrainings: {history:?}");
    let promoted: Vec<u32> = history
        .iter()
        .filter_map(|r| match r.result {
            Ok((version, true)) => Some(version),
            _ => None,
        })
        .collect();
    assert!(history.iter().all(|r| r.host_key == host_key));
    let fetched: Vec<u32> = stats.iter().flat_map(|s| s.weights_fetched.iter().copied()).collect();
    for item in store.work_items(1).unwrap() {
        let version = item.weights_version.unwrap_or_else(|| panic!("{} was leased without weights", item.work_id));
        assert!(promoted.contains(&version) && version >= promoted_before_round_1, "{item:?}, promoted {promoted:?}");
        assert!(fetched.contains(&version), "{item:?}: the agents fetched {fetched:?}");
    }

    // A Schedule call naming no weights ranks with the newest promoted ones, no restart needed.
    let newest = store.promoted_weights(Some(&host_key)).unwrap().unwrap().info.version;
    let pipeline = random_pipelines::generate(&random_pipelines::GeneratorParams {
        seed: 99,
        max_stages: 3,
        input_size: (64, 64, 3),
        ..Default::default()
    })
    .unwrap()
    .pipeline;
    let request = proto::v1::ScheduleRequest {
        pipeline: Some(proto::v1::Pipeline::try_from(&pipeline).unwrap()),
        target: None,
        budget_ms: 100,
        beam: 4,
        seed: 1,
        weights_version: None,
        top_k: 0,
        sliding: false,
    };
    let mut client = SchedulerClient::connect(format!("http://{addr}")).await.unwrap();
    let reply = client.schedule(request).await.unwrap().into_inner();
    assert_eq!(reply.model, format!("learned weights v{newest}, promoted for host {host_key}"));

    shutdown.send(()).unwrap();
    server.await.unwrap().unwrap();
    println!(
        "2 rounds of {ITEMS_PER_ROUND} items, {} samples, {} retrainings (promoted {promoted:?}), fetched {fetched:?}, in {:.1} s",
        summary.samples,
        history.len(),
        started.elapsed().as_secs_f64()
    );
}
