//! The `Agent` service on an ephemeral loopback port over a real SQLite
//! file, called by a real tonic client: authentication (nothing reaches the
//! store without a valid token), status codes naming the field, leases and
//! sessions that survive a server restart, and reports stored once.

use agent_protocol::ToWire;
use data::{HostFingerprint, SamplingSettings, Store, WorkCounts};
use proto::v1::agent_client::AgentClient;
mod common;
#[path = "common/server.rs"]
mod server;

use common::{authorized, synthetic_report};
use proto::v1;
use server::{channel, serve_on_loopback};
use service::Running;
use service::{AgentSettings, SchedulerSettings, ServerConfig, WorkSource};
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;
use tonic::transport::Channel;
use tonic::{Code, Request};

const SECRET: &str = "test-secret";

/// How often the test servers reread sessions and agent tokens.
const REFRESH: Duration = Duration::from_millis(200);

/// A server on `127.0.0.1:0` over the store at `db`, handing out seeds
/// 0..3 of round 4; shut down when dropped.
async fn start(db: &Path, lease: Duration) -> Running {
    start_expiring(db, lease, service::agent::DEFAULT_SESSION_TTL).await
}

/// [`start`] with sessions that expire after `session_ttl` unused.
async fn start_expiring(db: &Path, lease: Duration, session_ttl: Duration) -> Running {
    let agents = AgentSettings {
        session_ttl,
        refresh: REFRESH,
        secret: SECRET.into(),
        lease,
        max_attempts: 3,
        retry_after: Duration::from_millis(100),
        work: WorkSource {
            round: 4,
            seeds: 0..3,
            max_stages: Some(3),
            image_side: Some(64),
            sampling: SamplingSettings { schedules: 2, beam: 2, random_dropout: 50, budget_ms: 100, sliding: true },
        },
    };
    let config = ServerConfig {
        settings: SchedulerSettings::new("test-host".into()),
        store: Some(Store::open(db).unwrap()),
        max_concurrent: 1,
        agents: Some(agents),
        retrainer: None,
        tls: None,
    };
    serve_on_loopback(config).await
}

async fn client(addr: SocketAddr) -> AgentClient<Channel> {
    AgentClient::new(channel(addr).await)
}

fn registration(name: &str) -> v1::RegisterRequest {
    v1::RegisterRequest {
        host: Some(HostFingerprint::detect().unwrap().to_wire()),
        agent_name: name.into(),
        capabilities: Some(v1::Capabilities { gpu_devices: vec![], target: None }),
    }
}

async fn register(c: &mut AgentClient<Channel>, name: &str) -> v1::RegisterReply {
    c.register(authorized(registration(name), SECRET)).await.unwrap().into_inner()
}

/// What the store holds, read through a connection of its own.
fn contents(db: &Path) -> (data::Summary, WorkCounts) {
    let store = Store::open(db).unwrap();
    (store.summary().unwrap(), store.work_counts(3).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_without_a_valid_token_are_unauthenticated_and_the_store_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.sqlite");
    let server = start(&db, Duration::from_secs(60)).await;
    let mut c = client(server.addr).await;
    let session = register(&mut c, "a").await;
    let item = c.lease_work(authorized(v1::LeaseWorkRequest {}, &session.session_token)).await.unwrap().into_inner().item.unwrap();
    let before = contents(&db);

    let no_token = c.report_samples(Request::new(synthetic_report(&item))).await.unwrap_err();
    assert_eq!(no_token.code(), Code::Unauthenticated, "{no_token:?}");
    for token in ["bogus", SECRET, &session.session_token[1..]] {
        let status = c.report_samples(authorized(synthetic_report(&item), token)).await.unwrap_err();
        assert_eq!(status.code(), Code::Unauthenticated, "token {token}: {status:?}");
        let status = c.lease_work(authorized(v1::LeaseWorkRequest {}, token)).await.unwrap_err();
        assert_eq!(status.code(), Code::Unauthenticated);
    }
    for secret in [None, Some("wrong"), Some(session.session_token.as_str())] {
        let r = match secret {
            Some(s) => authorized(registration("b"), s),
            None => Request::new(registration("b")),
        };
        assert_eq!(c.register(r).await.unwrap_err().code(), Code::Unauthenticated, "secret {secret:?}");
    }
    assert_eq!(contents(&db), before, "refused calls leave the store as it was");

    let stored = c.report_samples(authorized(synthetic_report(&item), &session.session_token)).await.unwrap().into_inner();
    assert_eq!((stored.inserted, stored.duplicates, stored.already_done), (2, 0, false));
    assert_eq!(contents(&db).0.samples, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_calls_get_status_codes_that_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.sqlite");
    let server = start(&db, Duration::from_secs(60)).await;
    let mut c = client(server.addr).await;

    let mut nameless = registration("");
    let status = c.register(authorized(nameless.clone(), SECRET)).await.unwrap_err();
    assert_eq!((status.code(), status.message()), (Code::InvalidArgument, "agent_name: missing"));
    nameless.agent_name = "a".into();
    nameless.host = None;
    let status = c.register(authorized(nameless, SECRET)).await.unwrap_err();
    assert_eq!((status.code(), status.message()), (Code::InvalidArgument, "host: missing"));

    let token = register(&mut c, "a").await.session_token;
    let other = register(&mut c, "b").await.session_token;
    let item = c.lease_work(authorized(v1::LeaseWorkRequest {}, &token)).await.unwrap().into_inner().item.unwrap();
    assert_eq!((item.work_id.as_str(), item.round, item.attempt), ("round4/seed0", 4, 1));
    let generator = item.generator.unwrap();
    assert_eq!((generator.seed, generator.max_stages, generator.width, generator.height), (0, 3, 64, 64));
    let sampling = item.sampling.unwrap();
    assert_eq!((sampling.schedules, sampling.sliding), (2, true));
    assert_eq!(item.weights_version, None, "no promoted weights: the analytical model");

    let mut bad = synthetic_report(&item);
    bad.samples[1].features.as_mut().unwrap().values.push(3.0);
    let status = c.report_samples(authorized(bad, &token)).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(status.message().starts_with("samples[1].features:"), "{}", status.message());
    let unknown = v1::WorkItem { work_id: "round4/seed99".into(), ..item.clone() };
    let status = c.report_samples(authorized(synthetic_report(&unknown), &token)).await.unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    let status = c.report_samples(authorized(synthetic_report(&item), &other)).await.unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition, "never leased to b: {status:?}");
    let status = c.fetch_weights(authorized(v1::FetchWeightsRequest { version: None, host_key: String::new() }, &token)).await.unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    let status =
        c.fetch_weights(authorized(v1::FetchWeightsRequest { version: Some(5), host_key: String::new() }, &token)).await.unwrap_err();
    assert_eq!((status.code(), status.message()), (Code::NotFound, "no weights version 5"));
    // Timings for no tuning's item, a work id that is not one, no token.
    let timings = |work_id: &str| v1::ReportTimingsRequest { work_id: work_id.into(), timings: vec![] };
    let status = c.report_timings(authorized(timings("tune/abc/timing1"), &token)).await.unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    assert!(status.message().contains("tune/abc/timing1"), "{}", status.message());
    let status = c.report_timings(authorized(timings("t\n1"), &token)).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let status = c.report_timings(authorized(timings(&"w".repeat(1 << 20)), &token)).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let status = c.report_timings(Request::new(timings("tune/abc/timing1"))).await.unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
    assert_eq!(contents(&db).0.samples, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_and_leases_survive_a_restart_and_a_report_is_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.sqlite");
    let lease = Duration::from_millis(1500);
    let server = start(&db, lease).await;
    let mut c = client(server.addr).await;
    let a = register(&mut c, "a").await;
    assert_eq!((a.lease_ms, a.heartbeat_interval_ms), (1500, 500));
    let b = register(&mut c, "b").await.session_token;
    let lease_for = |token: String| {
        let mut c = c.clone();
        async move { c.lease_work(authorized(v1::LeaseWorkRequest {}, &token)).await.unwrap().into_inner() }
    };
    let first = lease_for(a.session_token.clone()).await.item.unwrap();
    for _ in 1..3 {
        lease_for(b.clone()).await.item.unwrap();
    }
    let none = lease_for(b.clone()).await;
    assert!(none.item.is_none() && none.retry_after_ms == 100 && !none.drained, "{none:?}");
    drop(server);

    // A new server on the same file: the tokens still work, the leases still hold.
    let server = start(&db, lease).await;
    let mut c = client(server.addr).await;
    let heartbeat =
        |token: &str, ids: &[&str]| authorized(v1::HeartbeatRequest { work_ids: ids.iter().map(|s| s.to_string()).collect() }, token);
    let renewed = c.heartbeat(heartbeat(&a.session_token, &[&first.work_id])).await.unwrap().into_inner();
    assert_eq!(renewed.renewed.len(), 1, "{renewed:?}");
    assert!(renewed.renewed[0].expires_unix_ms > first.lease_expires_unix_ms);
    assert!(c.lease_work(authorized(v1::LeaseWorkRequest {}, &b)).await.unwrap().into_inner().item.is_none());

    // a stops heartbeating: its lease expires and b gets the item.
    tokio::time::sleep(lease + Duration::from_millis(100)).await;
    let again = c.lease_work(authorized(v1::LeaseWorkRequest {}, &b)).await.unwrap().into_inner().item.unwrap();
    assert_eq!((again.work_id.as_str(), again.attempt), (first.work_id.as_str(), 2));
    let lost = c.heartbeat(heartbeat(&a.session_token, &[&first.work_id])).await.unwrap().into_inner();
    assert_eq!(lost.lost, std::slice::from_ref(&first.work_id));

    // a's late report is stored; b's and a's retry store nothing.
    let late = c.report_samples(authorized(synthetic_report(&first), &a.session_token)).await.unwrap().into_inner();
    assert_eq!((late.inserted, late.already_done), (2, false));
    let mut b_report = synthetic_report(&first);
    b_report.samples[0].hash = "another-schedule".into();
    let second = c.report_samples(authorized(b_report, &b)).await.unwrap().into_inner();
    assert_eq!((second.inserted, second.duplicates, second.already_done), (0, 2, true));
    let retry = c.report_samples(authorized(synthetic_report(&first), &a.session_token)).await.unwrap().into_inner();
    assert!(retry.already_done);
    let (summary, counts) = contents(&db);
    assert_eq!((summary.reports, summary.samples, summary.schedules), (1, 2, 2));
    assert_eq!((counts.done, counts.waiting), (1, 2), "b's other two leases lapsed too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fingerprint_that_would_not_read_back_is_refused_at_register() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.sqlite");
    let server = start(&db, Duration::from_secs(60)).await;
    let mut c = client(server.addr).await;
    let before = contents(&db);
    for isa in [vec!["avx2 fma".to_string()], vec!["fma".into(), "avx2".into()], vec!["a,b".into()]] {
        let mut r = registration("a");
        r.host.as_mut().unwrap().isa_features = isa.clone();
        let status = c.register(authorized(r, SECRET)).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{isa:?}: {status:?}");
        assert!(status.message().contains("isa_features"), "{}", status.message());
    }
    let mut r = registration("a");
    r.host.as_mut().unwrap().cpu_model = "EPYC\nisa=avx512f".into();
    assert_eq!(c.register(authorized(r, SECRET)).await.unwrap_err().code(), Code::InvalidArgument);
    let status = c.register(authorized(registration(&"n".repeat(4 << 20)), SECRET)).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().len() < 1024);
    assert_eq!(contents(&db), before, "nothing of a refused registration is stored");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_with_implausible_numbers_or_another_items_pipeline_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.sqlite");
    let server = start(&db, Duration::from_secs(60)).await;
    let mut c = client(server.addr).await;
    let token = register(&mut c, "a").await.session_token;
    let lease = |c: &mut AgentClient<Channel>| {
        let mut c = c.clone();
        let token = token.clone();
        async move { c.lease_work(authorized(v1::LeaseWorkRequest {}, &token)).await.unwrap().into_inner().item.unwrap() }
    };
    let (first, second) = (lease(&mut c).await, lease(&mut c).await);
    let refused = |report: v1::ReportSamplesRequest| {
        let mut c = c.clone();
        let token = token.clone();
        async move { c.report_samples(authorized(report, &token)).await.unwrap_err() }
    };
    let mut bad = synthetic_report(&first);
    bad.samples[0].compile_time_s = Some(-5.0);
    assert!(refused(bad).await.message().contains("compile_time_s"));
    let mut bad = synthetic_report(&first);
    bad.samples[0].outcome = Some(v1::schedule_sample::Outcome::Runtime(v1::Runtime { min_s: 1e-300, median_s: 1e300, samples: u32::MAX }));
    assert!(refused(bad).await.message().starts_with("samples[0].runtime:"));
    let mut bad = synthetic_report(&first);
    bad.samples[1].features.as_mut().unwrap().values[0] = f32::NAN;
    assert!(refused(bad).await.message().starts_with("samples[1].features:"));
    let mut other = synthetic_report(&first);
    other.pipeline_hash = synthetic_report(&second).pipeline_hash;
    let status = refused(other).await;
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(status.message().contains("not the hash of the pipeline the work item names"), "{}", status.message());
    assert_eq!(contents(&db).0.samples, 0);
    let stored = c.report_samples(authorized(synthetic_report(&first), &token)).await.unwrap().into_inner();
    assert_eq!(stored.inserted, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_is_replaced_by_registering_again_and_expires_unused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.sqlite");
    let ttl = Duration::from_secs(1);
    let server = start_expiring(&db, Duration::from_secs(60), ttl).await;
    let mut c = client(server.addr).await;
    let first = register(&mut c, "a").await.session_token;
    let second = register(&mut c, "a").await.session_token;
    let lease = |token: &str| authorized(v1::LeaseWorkRequest {}, token);
    assert_eq!(c.lease_work(lease(&first)).await.unwrap_err().code(), Code::Unauthenticated);
    c.lease_work(lease(&second)).await.unwrap();
    for i in 0..20 {
        register(&mut c, &format!("agent-{i}")).await;
    }
    assert_eq!(Store::open(&db).unwrap().agent_sessions().unwrap().len(), 21, "one session per agent");
    tokio::time::sleep(ttl + Duration::from_millis(500)).await;
    let status = c.lease_work(lease(&second)).await.unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated);
    assert!(status.message().contains("expired"), "{}", status.message());
    drop(server);
    // A restarted server drops the sessions unused longer than their lifetime.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let server = start_expiring(&db, Duration::from_secs(60), ttl).await;
    let status = client(server.addr).await.lease_work(lease(&second)).await.unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated, "the restarted server serves");
    assert!(Store::open(&db).unwrap().agent_sessions().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedule_call_does_not_wait_for_agent_traffic_on_the_store() {
    // A writer outside the server holds the file's write lock, so an agent's
    // report waits inside the server's store connection (up to its busy
    // timeout); a Schedule call chooses its model meanwhile, through a
    // connection of its own, and answers within its budget.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.sqlite");
    let server = start(&db, Duration::from_secs(60)).await;
    let mut c = client(server.addr).await;
    let token = register(&mut c, "a").await.session_token;
    let item = c.lease_work(authorized(v1::LeaseWorkRequest {}, &token)).await.unwrap().into_inner().item.unwrap();
    let writer = rusqlite::Connection::open(&db).unwrap();
    writer.execute_batch("BEGIN IMMEDIATE").unwrap();
    let report = {
        let (mut c, report) = (c.clone(), authorized(synthetic_report(&item), &token));
        tokio::spawn(async move { c.report_samples(report).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{}", server.addr)).unwrap().connect().await.unwrap();
    let mut scheduler = proto::v1::scheduler_client::SchedulerClient::new(channel);
    let pipeline = random_pipelines::generate(&random_pipelines::GeneratorParams {
        seed: 3,
        max_stages: 3,
        input_size: (64, 64, 3),
        ..Default::default()
    })
    .unwrap()
    .pipeline;
    let request = v1::ScheduleRequest {
        pipeline: Some(v1::Pipeline::try_from(&pipeline).unwrap()),
        budget_ms: 100,
        beam: 4,
        top_k: 1,
        ..Default::default()
    };
    let started = std::time::Instant::now();
    let reply = scheduler.schedule(request).await.unwrap().into_inner();
    let took = started.elapsed();
    assert!(!report.is_finished(), "the report still waits for the store");
    assert!(took < Duration::from_millis(150), "the Schedule call waited {took:?} for the store");
    assert!(reply.model.contains("analytical"), "{}", reply.model);
    writer.execute_batch("ROLLBACK").unwrap();
    assert_eq!(report.await.unwrap().unwrap().into_inner().inserted, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_token_registers_its_agent_until_it_is_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.sqlite");
    let token = Store::open(&db).unwrap().issue_agent_token("node-7").unwrap();
    let server = start(&db, Duration::from_secs(60)).await;
    let mut c = client(server.addr).await;
    let session = c.register(authorized(registration("node-7"), &token)).await.unwrap().into_inner().session_token;
    let status = c.register(authorized(registration("node-8"), &token)).await.unwrap_err();
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
    assert!(status.message().contains("node-7"), "{}", status.message());
    c.lease_work(authorized(v1::LeaseWorkRequest {}, &session)).await.unwrap();

    // Revoked by an operator through the store: the session ends, and the
    // token registers no more.
    assert_eq!(Store::open(&db).unwrap().revoke_agent_token("node-7").unwrap(), 1);
    tokio::time::sleep(REFRESH * 3).await;
    let status = c.lease_work(authorized(v1::LeaseWorkRequest {}, &session)).await.unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
    let status = c.register(authorized(registration("node-7"), &token)).await.unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");

    // A token issued while the server runs registers once it is reread.
    let fresh = Store::open(&db).unwrap().issue_agent_token("node-8").unwrap();
    tokio::time::sleep(REFRESH * 3).await;
    c.register(authorized(registration("node-8"), &fresh)).await.unwrap();
}
