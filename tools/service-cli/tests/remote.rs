//! Networked agents against a real scheduling server on loopback, over a
//! real SQLite file, timing real schedules in the isolated runner: a lease
//! that expires is re-issued and the late report plus the next holder's
//! leave one set of samples; several agents drain a queue with every sample
//! stored once; an agent killed mid-work loses nothing; an agent started
//! before its server retries until it is up; SIGTERM reports what was
//! measured; an agent killed while its report waits for a server that is
//! away leaves it in its spool, and its next run sends it; an agent and a
//! scheduling client reach a server over TLS, and plain text does not.

use benchmark_agent::remote::{measure_item, run, Backoff, RemoteOptions, RemoteStats, Session};
use benchmark_agent::spool::Spool;
use codegen::runner::{Runner, RunnerOptions};
use data::{HostFingerprint, SamplingSettings, Store};
use service::{serve, AgentSettings, SchedulerSettings, ServerConfig, WorkSource};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SECRET: &str = "remote-test-secret";

/// A server on `listener` over the store at `db`, handing out `seeds` of
/// round 0 (3-stage pipelines of 64x64 pixels, 3 schedules each); shut
/// down when dropped.
struct TestServer {
    addr: SocketAddr,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

async fn serve_on(
    listener: tokio::net::TcpListener,
    db: &Path,
    lease: Duration,
    seeds: std::ops::Range<u64>,
    budget_ms: u64,
) -> TestServer {
    serve_on_with_tls(listener, db, lease, seeds, budget_ms, None).await
}

/// [`serve_on`], over TLS with `tls` when given.
async fn serve_on_with_tls(
    listener: tokio::net::TcpListener,
    db: &Path,
    lease: Duration,
    seeds: std::ops::Range<u64>,
    budget_ms: u64,
    tls: Option<tonic::transport::Identity>,
) -> TestServer {
    let addr = listener.local_addr().unwrap();
    let agents = AgentSettings {
        session_ttl: service::agent::DEFAULT_SESSION_TTL,
        refresh: service::agent::DEFAULT_REFRESH,
        secret: SECRET.into(),
        lease,
        max_attempts: 5,
        retry_after: Duration::from_millis(100),
        work: WorkSource {
            round: 0,
            seeds,
            max_stages: Some(3),
            image_side: Some(64),
            sampling: SamplingSettings { schedules: 3, beam: 4, random_dropout: 50, budget_ms, sliding: false },
        },
    };
    let config = ServerConfig {
        settings: SchedulerSettings::new("test-host".into()),
        store: Some(Store::open(db).unwrap()),
        max_concurrent: 1,
        agents: Some(agents),
        retrainer: None,
        tls,
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

async fn start(db: &Path, lease: Duration, seeds: std::ops::Range<u64>) -> TestServer {
    serve_on(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(), db, lease, seeds, 100).await
}

fn options(addr: SocketAddr, name: &str, spool: &Path) -> RemoteOptions {
    RemoteOptions {
        spool: spool.to_path_buf(),
        server: format!("http://{addr}"),
        tls_ca: None,
        secret: SECRET.into(),
        name: name.into(),
        timing_passes: 1,
        backoff: Backoff { initial: Duration::from_millis(50), max: Duration::from_millis(400) },
        exit_when_drained: true,
        call_timeout: Duration::from_secs(30),
    }
}

fn runner() -> Runner {
    Runner::new(RunnerOptions { timeout: Duration::from_secs(30), ..RunnerOptions::beside_current_exe() })
}

/// The agent binary, named `name`, against the server at `addr`, with its
/// spool in `spool`, output discarded.
fn spawn_agent(addr: SocketAddr, name: &str, timing_passes: u32, spool: &Path, extra: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_benchmark-agent"))
        .args(["--server", &format!("http://{addr}"), "--token", SECRET, "--name", name])
        .args(["--timing-passes", &timing_passes.to_string()])
        .arg("--spool")
        .arg(spool)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Every stored pipeline has one sample per schedule (none lost, none
/// twice), and there are `items` reports, one per pipeline.
fn assert_each_sample_once(db: &Path, items: u64) -> data::Summary {
    let store = Store::open(db).unwrap();
    let summary = store.summary().unwrap();
    assert_eq!((summary.reports, summary.pipelines), (items, items), "{summary:?}");
    for p in store.pipelines().unwrap() {
        assert!(p.schedules > 0 && p.samples == p.schedules, "pipeline {}: {} schedules, {} samples", p.hash, p.schedules, p.samples);
    }
    assert_eq!(store.work_counts(5).unwrap().done, items);
    summary
}

/// Waits until `check` holds of the store (at most 60 s).
fn wait_for(db: &Path, what: &str, check: impl Fn(&Store) -> bool) {
    let started = Instant::now();
    while !check(&Store::open(db).unwrap()) {
        assert!(started.elapsed() < Duration::from_secs(60), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_lease_is_reissued_and_the_late_report_plus_the_next_leave_one_set_of_samples() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.sqlite");
    let lease = Duration::from_millis(800);
    let server = start(&db, lease, 0..1).await;
    let stop = AtomicBool::new(false);
    let host = HostFingerprint::detect().unwrap();
    let a = Session::register(&options(server.addr, "a", &dir.path().join("spool-a")), &host, &stop).await.unwrap();
    let item_a = a.lease(&stop).await.unwrap().item.unwrap();
    // a neither heartbeats nor reports in time.
    tokio::time::sleep(lease + Duration::from_millis(100)).await;
    let b = Session::register(&options(server.addr, "b", &dir.path().join("spool-b")), &host, &stop).await.unwrap();
    let item_b = b.lease(&stop).await.unwrap().item.unwrap();
    assert_eq!((item_b.work_id.as_str(), item_b.attempt), (item_a.work_id.as_str(), 2));
    let ids = std::slice::from_ref(&item_a.work_id);
    assert_eq!(a.heartbeat(ids).await.unwrap().lost, ids);

    let (result_a, result_b) = tokio::task::spawn_blocking(move || {
        let stop = AtomicBool::new(false);
        let mut runner = runner();
        (measure_item(&item_a, None, &mut runner, 1, &stop).unwrap(), measure_item(&item_b, None, &mut runner, 1, &stop).unwrap())
    })
    .await
    .unwrap();
    assert!(!result_a.samples.is_empty());
    let late = a.report(&result_a).await.unwrap();
    assert_eq!((late.inserted as usize, late.already_done), (result_a.samples.len(), false));
    let next = b.report(&result_b).await.unwrap();
    assert_eq!((next.inserted, next.duplicates as usize, next.already_done), (0, result_b.samples.len(), true));
    let retried = a.report(&result_a).await.unwrap();
    assert!(retried.already_done && retried.inserted == 0);

    let summary = assert_each_sample_once(&db, 1);
    assert_eq!(summary.samples as usize, result_a.samples.len());
    let agents: Vec<String> = Store::open(&db).unwrap().export_rows().unwrap().into_iter().map(|r| r.agent).collect();
    assert!(agents.iter().all(|agent| agent == "a"), "{agents:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_agents_drain_the_queue_and_store_every_sample_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.sqlite");
    let server = start(&db, Duration::from_secs(20), 10..14).await;
    let agents: Vec<_> = (0..3)
        .map(|i| {
            let options = options(server.addr, &format!("agent-{i}"), &dir.path().join(format!("spool-{i}")));
            tokio::spawn(async move { run(&options, runner(), Arc::new(AtomicBool::new(false))).await.unwrap() })
        })
        .collect();
    let mut stats = Vec::new();
    for agent in agents {
        stats.push(agent.await.unwrap());
    }
    let total = |f: fn(&RemoteStats) -> u64| stats.iter().map(f).sum::<u64>();
    assert_eq!(
        (total(|s| s.reported), total(|s| s.already_done), total(|s| s.unusable), total(|s| s.lost_leases)),
        (4, 0, 0, 0),
        "{stats:?}"
    );
    let summary = assert_each_sample_once(&db, 4);
    assert_eq!(summary.samples, total(|s| s.inserted));
    assert_eq!(summary.samples_per_round, [(0, summary.samples)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_killed_mid_work_loses_its_lease_and_no_sample_is_lost_or_stored_twice() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.sqlite");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = serve_on(listener, &db, Duration::from_millis(1500), 20..22, 400).await;
    // The killed agent times each schedule 100 times, so that its first
    // item takes seconds however fast the host: the kill lands while it
    // measures, never after its report.
    let mut killed = spawn_agent(server.addr, "killed", 100, &dir.path().join("spool-killed"), &[]);
    let db_path = db.clone();
    tokio::task::spawn_blocking(move || {
        wait_for(&db_path, "the agent's first lease", |s| {
            let counts = s.work_counts(5).unwrap();
            (counts.leased, counts.done) == (1, 0)
        })
    })
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert_eq!(Store::open(&db).unwrap().work_counts(5).unwrap().done, 0, "the agent was killed before it reported");

    let stats = run(&options(server.addr, "survivor", &dir.path().join("spool-survivor")), runner(), Arc::new(AtomicBool::new(false)))
        .await
        .unwrap();
    assert_eq!((stats.reported, stats.already_done), (2, 0), "{stats:?}");
    assert_each_sample_once(&db, 2);
    let store = Store::open(&db).unwrap();
    assert_eq!(store.work_counts(5).unwrap().reissued, 1, "the killed agent's item was leased again");
    assert!(store.export_rows().unwrap().iter().all(|r| r.agent == "survivor"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_started_before_its_server_retries_until_it_is_up() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.sqlite");
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let spool = dir.path().join("spool");
    let agent =
        tokio::spawn(async move { run(&options(addr, "early", &spool), runner(), Arc::new(AtomicBool::new(false))).await.unwrap() });
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert!(!agent.is_finished());
    let _server = serve_on(tokio::net::TcpListener::bind(addr).await.unwrap(), &db, Duration::from_secs(20), 30..31, 100).await;
    let stats = agent.await.unwrap();
    assert_eq!((stats.reported, stats.unusable), (1, 0), "{stats:?}");
    assert_each_sample_once(&db, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_finishes_the_current_timing_and_reports_what_was_measured() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.sqlite");
    let server = serve_on(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(), &db, Duration::from_secs(20), 40..45, 100).await;
    let mut agent = spawn_agent(server.addr, "terminated", 3, &dir.path().join("spool-terminated"), &[]);
    let db_path = db.clone();
    tokio::task::spawn_blocking(move || wait_for(&db_path, "the first report", |s| s.work_counts(5).unwrap().done == 1)).await.unwrap();
    let term = Command::new("kill").args(["-TERM", &agent.id().to_string()]).status().unwrap();
    assert!(term.success());
    let status = tokio::task::spawn_blocking(move || agent.wait().unwrap()).await.unwrap();
    assert!(status.success(), "{status:?}");
    // The item it held is reported with what was timed (or, if nothing
    // was yet, its lease lapses): either way each sample is stored once.
    let done = Store::open(&db).unwrap().work_counts(5).unwrap().done;
    assert!(done >= 1);
    assert_each_sample_once(&db, done);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_left_in_the_spool_by_a_killed_agent_is_sent_by_its_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.sqlite");
    let spool_dir = dir.path().join("spool");
    let first = start(&db, Duration::from_secs(20), 50..51).await;
    // Four timing passes keep it measuring well past the moment its lease
    // is seen, so that the server is gone before it reports.
    let mut killed = spawn_agent(first.addr, "spooler", 4, &spool_dir, &["--max-backoff-secs", "0.2"]);
    let db_path = db.clone();
    tokio::task::spawn_blocking(move || wait_for(&db_path, "the agent's lease", |s| s.work_counts(5).unwrap().leased == 1)).await.unwrap();
    // The server goes away while the agent measures: its report waits in
    // the spool, retried, until the agent is killed.
    drop(first);
    let spool = Spool::open(&spool_dir).unwrap();
    let started = Instant::now();
    while spool.pending().unwrap().is_empty() {
        assert!(started.elapsed() < Duration::from_secs(60), "nothing was spooled");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert_eq!(Store::open(&db).unwrap().summary().unwrap().samples, 0, "nothing reached the store");
    // A report of an item the server never issued: refused, set aside.
    let mut unknown = spool.pending().unwrap().remove(0).result;
    unknown.work_id = "never-issued".into();
    spool.put(&unknown).unwrap();

    let second = start(&db, Duration::from_secs(20), 50..51).await;
    let stats = run(&options(second.addr, "spooler", &spool_dir), runner(), Arc::new(AtomicBool::new(false))).await.unwrap();
    assert_eq!((stats.resent, stats.rejected, stats.reported, stats.already_done), (1, 1, 1, 0), "{stats:?}");
    assert_each_sample_once(&db, 1);
    assert!(spool.pending().unwrap().is_empty(), "the acknowledged report is gone from the spool");
    let kept: Vec<_> = std::fs::read_dir(&spool_dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(kept.len(), 1, "the refused report is kept aside: {kept:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_and_a_client_reach_a_tls_server_and_plain_text_does_not() {
    use proto::v1::scheduler_client::SchedulerClient;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.sqlite");
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    let (cert_pem, key_pem) = (certified.cert.pem(), certified.signing_key.serialize_pem());
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &cert_pem).unwrap();
    let identity = tonic::transport::Identity::from_pem(&cert_pem, &key_pem);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = serve_on_with_tls(listener, &db, Duration::from_secs(20), 50..51, 100, Some(identity)).await;
    let url = format!("https://127.0.0.1:{}", server.addr.port());

    // The agent registers, leases and heartbeats over TLS.
    let stop = AtomicBool::new(false);
    let options = RemoteOptions { server: url.clone(), tls_ca: Some(ca.clone()), ..options(server.addr, "tls", &dir.path().join("spool")) };
    let session = Session::register(&options, &HostFingerprint::detect().unwrap(), &stop).await.unwrap();
    let item = session.lease(&stop).await.unwrap().item.unwrap();
    assert_eq!(session.heartbeat(std::slice::from_ref(&item.work_id)).await.unwrap().renewed.len(), 1);

    // A scheduling client gets a schedule over TLS.
    let pipeline = random_pipelines::generate(&random_pipelines::GeneratorParams {
        seed: 3,
        max_stages: 3,
        input_size: (64, 64, 3),
        ..Default::default()
    })
    .unwrap()
    .pipeline;
    let request = || proto::v1::ScheduleRequest {
        pipeline: Some(proto::v1::Pipeline::try_from(&pipeline).unwrap()),
        budget_ms: 100,
        beam: 4,
        top_k: 1,
        ..Default::default()
    };
    let channel = proto::transport::endpoint(&url, Some(&ca)).unwrap().connect().await.unwrap();
    let reply = SchedulerClient::new(channel).schedule(request()).await.unwrap().into_inner();
    assert_eq!(reply.pipeline_fingerprint, proto::fingerprint(&pipeline).unwrap().0.to_vec());

    // Plain text to the TLS port gets nothing; nor does TLS that does not trust the certificate.
    let plain = proto::transport::endpoint(&format!("http://{}", server.addr), None).unwrap().connect_lazy();
    assert!(SchedulerClient::new(plain).schedule(request()).await.is_err());
    let untrusted = proto::transport::endpoint(&url, None).unwrap().connect().await;
    assert!(untrusted.is_err(), "a certificate no root vouches for is refused");
    // A CA for a plain-text address is a mistake, said as one.
    let err = proto::transport::endpoint("http://127.0.0.1:1", Some(&ca)).unwrap_err();
    assert!(err.to_string().contains("https://"), "{err}");
}
