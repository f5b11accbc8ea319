//! The `Agent` service on an ephemeral loopback port over a real SQLite
//! file, called by a real tonic client: authentication (nothing reaches the
//! store without a valid token), status codes naming the field, leases and
//! sessions that survive a server restart, and reports stored once.

use data::{HostFingerprint, SamplingSettings, Store, WorkCounts};
use proto::v1::agent_client::AgentClient;
mod common;

use common::synthetic_report;
use proto::v1;
use service::{serve, AgentSettings, SchedulerSettings, ServerConfig, WorkSource};
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;
use tonic::transport::Channel;
use tonic::{Code, Request};

const SECRET: &str = "test-secret";

/// A server on `127.0.0.1:0` over the store at `db`, handing out seeds
/// 0..3 of round 4; shut down when dropped.
struct TestServer {
    addr: SocketAddr,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

async fn start(db: &Path, lease: Duration) -> TestServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let agents = AgentSettings {
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
    };
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        serve(listener, config, async {
            let _ = rx.await;
        })
        .await
        .unwrap()
    });
    TestServer { addr, _shutdown: tx }
}

async fn client(addr: SocketAddr) -> AgentClient<Channel> {
    let endpoint = tonic::transport::Endpoint::from_shared(format!("http://{addr}")).unwrap();
    for _ in 0..50 {
        if let Ok(c) = endpoint.connect().await {
            return AgentClient::new(c);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the server at {addr} does not accept connections")
}

/// `message` with `authorization: Bearer <token>`.
fn authorized<T>(message: T, token: &str) -> Request<T> {
    let mut r = Request::new(message);
    r.metadata_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
    r
}

fn registration(name: &str) -> v1::RegisterRequest {
    v1::RegisterRequest {
        host: Some((&HostFingerprint::detect().unwrap()).into()),
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
    let work_id =
        c.lease_work(authorized(v1::LeaseWorkRequest {}, &session.session_token)).await.unwrap().into_inner().item.unwrap().work_id;
    let before = contents(&db);

    let no_token = c.report_samples(Request::new(synthetic_report(&work_id))).await.unwrap_err();
    assert_eq!(no_token.code(), Code::Unauthenticated, "{no_token:?}");
    for token in ["bogus", SECRET, &session.session_token[1..]] {
        let status = c.report_samples(authorized(synthetic_report(&work_id), token)).await.unwrap_err();
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

    let stored = c.report_samples(authorized(synthetic_report(&work_id), &session.session_token)).await.unwrap().into_inner();
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

    let mut bad = synthetic_report(&item.work_id);
    bad.samples[1].features.as_mut().unwrap().values.push(3.0);
    let status = c.report_samples(authorized(bad, &token)).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(status.message().starts_with("samples[1].features:"), "{}", status.message());
    let status = c.report_samples(authorized(synthetic_report("round4/seed99"), &token)).await.unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    let status = c.report_samples(authorized(synthetic_report(&item.work_id), &other)).await.unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition, "never leased to b: {status:?}");
    let status = c.fetch_weights(authorized(v1::FetchWeightsRequest { version: None, host_key: String::new() }, &token)).await.unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    let status =
        c.fetch_weights(authorized(v1::FetchWeightsRequest { version: Some(5), host_key: String::new() }, &token)).await.unwrap_err();
    assert_eq!((status.code(), status.message()), (Code::NotFound, "no weights version 5"));
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
    let late = c.report_samples(authorized(synthetic_report(&first.work_id), &a.session_token)).await.unwrap().into_inner();
    assert_eq!((late.inserted, late.already_done), (2, false));
    let mut b_report = synthetic_report(&first.work_id);
    b_report.samples[0].hash = "another-schedule".into();
    let second = c.report_samples(authorized(b_report, &b)).await.unwrap().into_inner();
    assert_eq!((second.inserted, second.duplicates, second.already_done), (0, 2, true));
    let retry = c.report_samples(authorized(synthetic_report(&first.work_id), &a.session_token)).await.unwrap().into_inner();
    assert!(retry.already_done);
    let (summary, counts) = contents(&db);
    assert_eq!((summary.reports, summary.samples, summary.schedules), (1, 2, 2));
    assert_eq!((counts.done, counts.waiting), (1, 2), "b's other two leases lapsed too");
}
