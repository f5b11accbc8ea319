//! The server on an ephemeral loopback port in the test process, called by
//! a real tonic client: schedules that parse, check at the estimates and
//! carry the client's fingerprint; determinism; errors; budgets and
//! deadlines; concurrency and back-pressure; graceful shutdown; health;
//! reflection; mutated requests; an app's served schedule timed beside its
//! naive and expert schedules, by the library and by `schedule-client`.

#[path = "../../proto/tests/common/mutate.rs"]
mod mutate;
#[path = "common/raw.rs"]
mod raw;
#[path = "common/server.rs"]
mod server;

use compiler::schedule::legality::{check_at_estimates, Limits};
use compiler::schedule::text::parse_schedule;
use compiler::{PipelineDef, Schedule};
use mutate::mutate;
use prost::Message;
use proto::v1::scheduler_client::SchedulerClient;
use proto::v1::{self, ScheduleReply, ScheduleRequest};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use random_pipelines::{generate, GeneratorParams};
use raw::call_raw;
use server::{channel, serve_on_loopback};
use service::scheduler::DEFAULT_MAX_IN_FLIGHT;
use service::Running;
use service::{serve, SchedulerSettings, ServerConfig};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tonic::transport::Channel;
use tonic::{Code, Status};

async fn start(max_concurrent: usize) -> Running {
    start_with(max_concurrent, None).await
}

async fn start_with(max_concurrent: usize, store: Option<data::Store>) -> Running {
    start_admitting(max_concurrent, store, DEFAULT_MAX_IN_FLIGHT).await
}

/// A scheduling server's configuration for the tests: no agents.
fn config(max_concurrent: usize, store: Option<data::Store>, max_in_flight: usize) -> ServerConfig {
    let settings = SchedulerSettings { max_in_flight, ..SchedulerSettings::new("test-host".into()) };
    ServerConfig { settings, store, max_concurrent, agents: None, retrainer: None, tls: None }
}

/// A server with `max_concurrent` search slots admitting at most
/// `max_in_flight` calls at once.
async fn start_admitting(max_concurrent: usize, store: Option<data::Store>, max_in_flight: usize) -> Running {
    serve_on_loopback(config(max_concurrent, store, max_in_flight)).await
}

/// A server on a runtime of its own, apart from the test's clients; it
/// stops when dropped.
struct Apart {
    addr: SocketAddr,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// A server with `max_concurrent` search slots on a runtime of its own
/// (two workers, as a server process of its own would have), so that the
/// calling test's clients do not share its async workers.
fn start_apart(max_concurrent: usize) -> Apart {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let config = config(max_concurrent, None, DEFAULT_MAX_IN_FLIGHT);
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            serve(listener, config, async {
                let _ = rx.await;
            })
            .await
            .unwrap()
        })
    });
    Apart { addr, _stop: tx }
}

async fn client(addr: SocketAddr) -> SchedulerClient<Channel> {
    SchedulerClient::new(channel(addr).await).max_decoding_message_size(service::MAX_MESSAGE_BYTES)
}

fn pipeline(seed: u64, stages: usize, side: i64) -> PipelineDef {
    generate(&GeneratorParams { seed, max_stages: stages, input_size: (side, side, 3), ..Default::default() }).unwrap().pipeline
}

fn request(p: &PipelineDef, budget_ms: u64, beam: u32) -> ScheduleRequest {
    ScheduleRequest {
        pipeline: Some(v1::Pipeline::try_from(p).unwrap()),
        target: None,
        budget_ms,
        beam,
        seed: 1,
        weights_version: None,
        top_k: 2,
        sliding: false,
    }
}

async fn call(c: &mut SchedulerClient<Channel>, r: ScheduleRequest, deadline: Duration) -> Result<ScheduleReply, Status> {
    let mut r = tonic::Request::new(r);
    r.set_timeout(deadline);
    c.schedule(r).await.map(|r| r.into_inner())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedule_parses_checks_and_carries_the_clients_fingerprint() {
    let server = start(2).await;
    let mut c = client(server.addr).await;
    let p = pipeline(3, 4, 64);
    let reply = call(&mut c, request(&p, 2000, 8), Duration::from_secs(30)).await.unwrap();
    let parsed = parse_schedule(&reply.schedule_text).unwrap();
    let structured = Schedule::try_from(reply.schedule.as_ref().unwrap()).unwrap();
    assert_eq!(parsed, structured);
    check_at_estimates(&p, &structured, &Limits::default()).unwrap();
    assert_eq!(reply.pipeline_fingerprint, proto::fingerprint(&p).unwrap().0.to_vec());
    assert!(reply.predicted_seconds > 0.0 && !reply.per_stage.is_empty());
    assert!(reply.model.starts_with("analytical"), "{}", reply.model);
    assert_eq!(reply.disagreement, None, "the analytical model is not an ensemble");
    // Why the schedule is this one goes as data, and in words unless it is
    // the search's best.
    let kind = reply.reason.as_ref().map_or(v1::ReasonKind::Unspecified, |r| r.kind());
    assert_ne!(kind, v1::ReasonKind::Unspecified);
    assert_eq!(reply.fallback.is_empty(), kind == v1::ReasonKind::Searched, "{kind:?}: {}", reply.fallback);
    for a in &reply.alternatives {
        assert_eq!(parse_schedule(&a.schedule_text).unwrap(), Schedule::try_from(a.schedule.as_ref().unwrap()).unwrap());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_request_gives_the_same_schedule() {
    let server = start(2).await;
    let mut c = client(server.addr).await;
    let p = pipeline(11, 5, 64);
    let a = call(&mut c, request(&p, 20_000, 8), Duration::from_secs(60)).await.unwrap();
    let b = call(&mut c, request(&p, 20_000, 8), Duration::from_secs(60)).await.unwrap();
    let (sa, sb) = (a.stats.unwrap(), b.stats.unwrap());
    assert!(!sa.hit_deadline && !sb.hit_deadline, "the searches must complete for the schedules to be comparable");
    assert_eq!(a.schedule_text, b.schedule_text);
    assert_eq!(a.predicted_seconds, b.predicted_seconds);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_are_invalid_argument_or_failed_precondition() {
    let server = start(2).await;
    let mut c = client(server.addr).await;
    let p = pipeline(5, 4, 64);
    let mut r = request(&p, 100, 8);
    let wire = r.pipeline.as_mut().unwrap();
    let caller = wire.funcs.last().unwrap().name.clone();
    let ty = wire.funcs.last().unwrap().r#type;
    wire.funcs.last_mut().unwrap().value = Some(v1::Expr {
        node: Some(v1::expr::Node::Call(v1::Call {
            target: Some(v1::call::Target::Func("ghost".into())),
            args: vec![],
            r#type: ty,
            value_index: 0,
        })),
    });
    let status = call(&mut c, r, Duration::from_secs(10)).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("ghost") && status.message().contains(&caller), "{}", status.message());

    let status = call(&mut c, ScheduleRequest { pipeline: None, ..request(&p, 100, 8) }, Duration::from_secs(10)).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);

    let weights = ScheduleRequest { weights_version: Some(3), ..request(&p, 100, 8) };
    let status = call(&mut c, weights, Duration::from_secs(10)).await.unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    assert!(status.message().contains("--db"), "{}", status.message());
}

fn insert_weights(store: &mut data::Store, blob: Vec<u8>) -> u32 {
    use featurizer::{PIPELINE_LAYOUT, SCHEDULE_LAYOUT};
    store
        .insert_weights(&data::NewWeights {
            parent: None,
            blob,
            pipeline_layout: trainer::store_layout(&PIPELINE_LAYOUT),
            schedule_layout: trainer::store_layout(&SCHEDULE_LAYOUT),
            training_set: "test".into(),
            metrics: serde_json::json!({}),
            host_key: Some("test-host".into()),
        })
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn weights_come_from_the_store() {
    let mut store = data::Store::open_in_memory().unwrap();
    let learned = insert_weights(&mut store, trainer::WeightsFile::of(&trainer::CostNetwork::random(1, 3), "test").encode());
    let broken = insert_weights(&mut store, b"not weights".to_vec());
    let server = start_with(1, Some(store)).await;
    let mut c = client(server.addr).await;
    let p = pipeline(5, 3, 64);
    let reply = call(&mut c, request(&p, 100, 8), Duration::from_secs(10)).await.unwrap();
    assert_eq!(reply.model, "analytical (no promoted weights for host test-host)");
    let reply =
        call(&mut c, ScheduleRequest { weights_version: Some(learned), ..request(&p, 100, 8) }, Duration::from_secs(10)).await.unwrap();
    assert_eq!(reply.model, format!("learned weights v{learned}, as requested"));
    parse_schedule(&reply.schedule_text).unwrap();
    let status =
        call(&mut c, ScheduleRequest { weights_version: Some(broken), ..request(&p, 100, 8) }, Duration::from_secs(10)).await.unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    assert!(status.message().contains(&format!("weights v{broken} cannot be used")), "{}", status.message());
    let status =
        call(&mut c, ScheduleRequest { weights_version: Some(99), ..request(&p, 100, 8) }, Duration::from_secs(10)).await.unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    assert!(status.message().contains("v99"), "{}", status.message());
}

/// A pipeline large enough that a search uses its whole budget.
fn large() -> PipelineDef {
    pipeline(21, 12, 512)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100ms_budget_is_answered_within_budget_and_margin() {
    // The margin: the greedy completion of the best state, the legality
    // checks (lowering up to three candidates) and the transport. Measured
    // here on a 12-stage 512x512 pipeline: 140-330 ms over the budget on a
    // 2-core machine busy with other work; the margin is 1.5 times the worst.
    // Printed so CI logs show it.
    const MARGIN: Duration = Duration::from_millis(500);
    let server = start(2).await;
    let mut c = client(server.addr).await;
    let p = large();
    let mut worst = Duration::ZERO;
    for _ in 0..5 {
        let started = Instant::now();
        let reply = call(&mut c, request(&p, 100, 32), Duration::from_secs(30)).await.unwrap();
        let took = started.elapsed();
        let stats = reply.stats.unwrap();
        println!(
            "budget 100 ms: answered in {:.1} ms (search {:.1} ms, legality checks {:.1} ms, deadline hit: {})",
            took.as_secs_f64() * 1e3,
            stats.wall_ms,
            stats.legality_check_ms,
            stats.hit_deadline
        );
        worst = worst.max(took);
    }
    println!("worst overshoot of the 100 ms budget: {:.1} ms", worst.as_secs_f64() * 1e3 - 100.0);
    assert!(worst < Duration::from_millis(100) + MARGIN, "{worst:?}");

    // A budget larger than the deadline allows is clamped to it.
    let started = Instant::now();
    let reply = call(&mut c, request(&p, 30_000, 32), Duration::from_secs(1)).await.unwrap();
    let took = started.elapsed();
    println!("budget 30 s, deadline 1 s: answered in {:.1} ms with budget {} ms", took.as_secs_f64() * 1e3, reply.budget_ms);
    assert!(reply.budget_ms < 500 && took < Duration::from_secs(1), "{took:?}");
}

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_concurrent_calls_are_all_answered() {
    let server = start(4).await;
    let channel = channel(server.addr).await;
    let started = Instant::now();
    let calls: Vec<_> = (0..16)
        .map(|i| {
            let mut c = SchedulerClient::new(channel.clone());
            let p = pipeline(100 + i, 6, 128);
            tokio::spawn(async move { call(&mut c, request(&p, 100, 16), Duration::from_secs(60)).await })
        })
        .collect();
    for (i, handle) in calls.into_iter().enumerate() {
        let reply = handle.await.unwrap().unwrap_or_else(|s| panic!("call {i}: {s:?}"));
        assert!(!reply.schedule_text.is_empty());
    }
    println!(
        "16 concurrent calls (4 slots, 100 ms budgets) answered in {:.0} ms; peak RSS of the test process {} KiB",
        started.elapsed().as_secs_f64() * 1e3,
        peak_rss_kib()
    );
}

/// Calls that run at once in `concurrent_calls_with_200ms_budgets_are_answered_within_budget_and_slack`.
fn concurrent_calls() -> u64 {
    std::env::var("CONCURRENT_CALLS").ok().and_then(|v| v.parse().ok()).unwrap_or(16)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_with_200ms_budgets_are_answered_within_budget_and_slack() {
    // `CONCURRENT_CALLS` (default 16; the README's figure is 64) calls at
    // once on small random pipelines, against a server with as many search
    // slots as the host has cores (the server's default) on a runtime of
    // its own, the requests encoded before the clock starts. The budget
    // counts from each call's arrival and binds the answer (no legality
    // check runs past it); the calls whose slot does not come in time
    // answer with their early answer (every Func at the root). Measured on
    // a 2-core machine: 2026-11-25, a slot per call: 64 calls answered in
    // at most 415 ms; 2026-11-27, with the early answer, niced search
    // threads and abandoned searches: 194-223 ms; later that day, on a
    // host with more steal time, with the slots apart from admission:
    // 278-313 ms (the previous build, alternated: 238-511 ms). The slack is
    // more than twice the worst. Each reply also says when the server had
    // it ready (`answered_after_ms`, from the call's arrival, as the
    // budget counts): the latest of those is printed beside the clients'
    // worst (on a 2-core EPYC, 31 runs of 64 calls: 164-181 ms at the
    // server, every call within its budget; 174-226 ms at the clients).
    const BUDGET_MS: u64 = 200;
    const SLACK: Duration = Duration::from_millis(1000);
    let n = concurrent_calls();
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let server = start_apart(cores);
    let channel = channel(server.addr).await;
    let requests: Vec<_> = (0..n).map(|i| request(&pipeline(200 + i, 4, 128), BUDGET_MS, 8)).collect();
    let calls: Vec<_> = requests
        .into_iter()
        .map(|r| {
            let mut c = SchedulerClient::new(channel.clone());
            tokio::spawn(async move {
                let started = Instant::now();
                let reply = call(&mut c, r, Duration::from_secs(30)).await;
                (reply, started.elapsed())
            })
        })
        .collect();
    let mut took = Vec::new();
    let mut at_server = Vec::new();
    let mut searched = 0;
    for (i, handle) in calls.into_iter().enumerate() {
        let (reply, elapsed) = handle.await.unwrap();
        let reply = reply.unwrap_or_else(|s| panic!("call {i}: {s:?}"));
        assert!(!reply.schedule_text.is_empty() && reply.budget_ms == BUDGET_MS);
        let kind = reply.reason.as_ref().map(|r| r.kind());
        let at_root = [v1::ReasonKind::RootUnchecked, v1::ReasonKind::EarlyAnswerAtDeadline, v1::ReasonKind::NoSearchSlot];
        assert!(kind.is_some_and(|k| k != v1::ReasonKind::Unspecified), "call {i}: {:?}", reply.reason);
        assert_eq!(reply.fallback.contains("every Func at the root"), kind.is_some_and(|k| at_root.contains(&k)), "{}", reply.fallback);
        searched += usize::from(!kind.is_some_and(|k| at_root.contains(&k)));
        took.push(elapsed);
        at_server.push(Duration::from_secs_f64(reply.answered_after_ms / 1e3));
    }
    took.sort();
    at_server.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let budget = Duration::from_millis(BUDGET_MS);
    println!(
        "{n} concurrent calls, {BUDGET_MS} ms budgets, {cores} search slots: answered in {:.0} ms median, {:.0} ms worst \
         (at the server, from each call's arrival: {:.0} ms worst, {} of {n} within the budget), {searched} by a search \
         (the others with every Func at the root); peak RSS of the test process (server and clients) {} KiB",
        ms(took[took.len() / 2]),
        ms(took[took.len() - 1]),
        ms(at_server[at_server.len() - 1]),
        at_server.iter().filter(|&&t| t <= budget).count(),
        peak_rss_kib()
    );
    assert!(took[took.len() - 1] < budget + SLACK, "{took:?}");
    assert!(at_server[at_server.len() - 1] < budget + SLACK, "{at_server:?}");
}

/// A call with a `budget_ms` budget on [`large`] in flight on `server`,
/// 200 ms in, and a channel for another call.
async fn busy(server: &Running, budget_ms: u64) -> (tokio::task::JoinHandle<Result<ScheduleReply, Status>>, Channel) {
    let channel = channel(server.addr).await;
    let mut first = SchedulerClient::new(channel.clone());
    let r = request(&large(), budget_ms, 32);
    let busy = tokio::spawn(async move { call(&mut first, r, Duration::from_secs(30)).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    (busy, channel)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_finds_every_slot_busy_answers_in_time_with_every_func_at_the_root() {
    let server = start(1).await;
    let (busy, channel) = busy(&server, 2000).await;
    let mut second = SchedulerClient::new(channel);
    let started = Instant::now();
    // The slot frees only when the first call's 2 s search ends; this
    // call's 100 ms budget is answered long before.
    let reply = call(&mut second, request(&pipeline(5, 3, 64), 100, 8), Duration::from_secs(2)).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
    assert_eq!(reply.reason.as_ref().map(|r| r.kind()), Some(v1::ReasonKind::NoSearchSlot), "{:?}", reply.reason);
    assert!(reply.fallback.starts_with("every search slot was busy"), "{}", reply.fallback);
    check_at_estimates(&pipeline(5, 3, 64), &parse_schedule(&reply.schedule_text).unwrap(), &Limits::default()).unwrap();
    busy.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_beyond_the_admission_limit_is_resource_exhausted_at_once() {
    let server = start_admitting(1, None, 1).await;
    let (busy, channel) = busy(&server, 1000).await;
    let mut second = SchedulerClient::new(channel);
    let started = Instant::now();
    let status = call(&mut second, request(&pipeline(5, 3, 64), 5000, 8), Duration::from_secs(10)).await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert!(status.message().contains("1 calls in flight"), "{status:?}");
    assert!(started.elapsed() < Duration::from_secs(2), "refused at once, not after waiting: {:?}", started.elapsed());
    busy.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_the_call_in_flight_finish() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let config = ServerConfig {
        settings: SchedulerSettings::new("test-host".into()),
        store: None,
        max_concurrent: 1,
        agents: None,
        retrainer: None,
        tls: None,
    };
    let serving = tokio::spawn(serve(listener, config, async {
        let _ = stopped.await;
    }));
    let mut c = client(addr).await;
    let p = large();
    let in_flight = tokio::spawn(async move { call(&mut c, request(&p, 1000, 32), Duration::from_secs(30)).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.send(()).unwrap();
    let reply = in_flight.await.unwrap().expect("the call in flight is answered");
    assert!(!reply.schedule_text.is_empty());
    tokio::time::timeout(Duration::from_secs(10), serving).await.expect("the server stops").unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apps_served_schedule_computes_what_naive_and_expert_compute() {
    let server = start(2).await;
    let mut c = client(server.addr).await;
    let app = client::AppRequest::new("unsharp", apps::Size::Small, &compiler::Target::host()).unwrap();
    let reply = call(&mut c, request(&app.pipeline, 500, 8), Duration::from_secs(30)).await.unwrap();
    let schedule = app.schedule_of(&reply).unwrap();
    let rows = tokio::task::spawn_blocking(move || app.time_beside_baselines(schedule, &benchmark::SamplingOptions::once()))
        .await
        .unwrap()
        .unwrap();
    let names: Vec<_> = rows.iter().map(|r| r.schedule.as_str()).collect();
    assert_eq!(names, ["naive", "expert", client::SERVED]);
    assert!(rows.iter().all(|r| r.samples == 1 && r.min_ms > 0.0), "{rows:?}");
}

/// The Funcs `schedule` stores outside the loop computing them.
fn line_buffered(schedule: &Schedule) -> Vec<String> {
    schedule.funcs.iter().filter(|(_, f)| f.stored_outside_compute()).map(|(name, _)| name.to_string()).collect()
}

/// A five-row column sum over a costly producer on a 4096 x 4096 image:
/// recomputing the producer per row costs five times its work, storing it
/// whole a trip through memory, so a line buffer is the model's choice at
/// every vector width (checked at 8 and 16 f32 lanes).
fn column_over_a_costly_producer() -> PipelineDef {
    use compiler::lang::ops::{cos, sin};
    use compiler::{Func, ImageParam, Pipeline, ScalarType, Var};
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    input.set_estimate(0, 0, 4096).set_estimate(1, 0, 4100);
    let costly = Func::new("costly");
    let mut value = input.at([x.expr(), y.expr()]);
    for _ in 0..3 {
        value = sin(value.clone()) * cos(value);
    }
    costly.define(&[&x, &y], value);
    let column = Func::new("column");
    let sum = (1..5).fold(costly.at([x.expr(), y.expr()]), |sum, k| sum + costly.at([x.expr(), &y + k]));
    column.define(&[&x, &y], sum);
    column.set_estimate(0, 0, 4096).set_estimate(1, 0, 4096);
    Pipeline::new(&[&column]).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_for_sliding_placements_gets_line_buffers_the_compiler_slides() {
    let server = start(2).await;
    let mut c = client(server.addr).await;
    let pipeline = column_over_a_costly_producer();
    let sent = client::AppRequest::of_pipeline(pipeline.clone()).unwrap();
    let plain = call(&mut c, request(&pipeline, 2000, 8), Duration::from_secs(30)).await.unwrap();
    assert_eq!(line_buffered(&sent.schedule_of(&plain).unwrap()), Vec::<String>::new());
    let sliding = call(&mut c, ScheduleRequest { sliding: true, ..request(&pipeline, 2000, 8) }, Duration::from_secs(30)).await.unwrap();
    let schedule = sent.schedule_of(&sliding).unwrap();
    let buffered = line_buffered(&schedule);
    assert_eq!(buffered, ["costly"], "no line buffer in\n{}", sliding.schedule_text);
    let lowered = compiler::lower(&pipeline, &schedule).unwrap();
    assert!(lowered.sliding.iter().any(|s| &**s == "costly"), "costly stored outside, {:?} slid", lowered.sliding);
}

/// A server given a weights file ranks with it every call that names no
/// weights version, and says so; one naming a version still needs a store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_weights_file_given_to_the_server_ranks_the_calls() {
    let weights = concat!(env!("CARGO_MANIFEST_DIR"), "/../trainer/assets/epyc-7cd6cd16125da94a.weights");
    let mut config = config(1, None, DEFAULT_MAX_IN_FLIGHT);
    config.settings.weights = Some(weights.into());
    let server = serve_on_loopback(config).await;
    let mut c = client(server.addr).await;
    let reply = call(&mut c, request(&pipeline(5, 3, 96), 300, 8), Duration::from_secs(30)).await.unwrap();
    assert!(reply.model.starts_with("learned weights") && reply.model.contains("epyc-7cd6cd16125da94a.weights"), "{}", reply.model);
    // The shipped weights are an ensemble: the reply says how far its
    // members disagree on the pick.
    assert!(reply.disagreement.is_some_and(|d| d.is_finite() && d > 0.0), "{:?}", reply.disagreement);
    let versioned = ScheduleRequest { weights_version: Some(1), ..request(&pipeline(5, 3, 96), 300, 8) };
    let status = call(&mut c, versioned, Duration::from_secs(30)).await.unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_reports_serving() {
    use tonic_health::pb::health_client::HealthClient;
    use tonic_health::pb::{health_check_response::ServingStatus, HealthCheckRequest};
    let server = start(1).await;
    let mut health = HealthClient::new(channel(server.addr).await);
    for service in ["", proto::SCHEDULER_SERVICE] {
        let reply = health.check(HealthCheckRequest { service: service.into() }).await.unwrap().into_inner();
        assert_eq!(reply.status, ServingStatus::Serving as i32, "{service:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_lists_the_scheduler_and_describes_it() {
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    let server = start(1).await;
    let mut reflection = ServerReflectionClient::new(channel(server.addr).await);
    let ask = |m: MessageRequest| ServerReflectionRequest { host: String::new(), message_request: Some(m) };
    let requests =
        vec![ask(MessageRequest::ListServices(String::new())), ask(MessageRequest::FileContainingSymbol(proto::SCHEDULER_SERVICE.into()))];
    let mut replies = reflection.server_reflection_info(tokio_stream::iter(requests)).await.unwrap().into_inner();
    let Some(MessageResponse::ListServicesResponse(list)) = replies.message().await.unwrap().unwrap().message_response else {
        panic!("not a service list")
    };
    let names: Vec<_> = list.service.iter().map(|s| s.name.as_str()).collect();
    assert!(names.contains(&proto::SCHEDULER_SERVICE) && names.contains(&"grpc.health.v1.Health"), "{names:?}");
    let Some(MessageResponse::FileDescriptorResponse(files)) = replies.message().await.unwrap().unwrap().message_response else {
        panic!("no descriptor")
    };
    assert!(!files.file_descriptor_proto.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutated_requests_get_a_status_or_a_schedule_and_the_server_survives() {
    // `FUZZ_REQUESTS` (default 1,000; the README's figure is 10,000)
    // mutated encodings of a valid request, sent as raw bytes: the ones
    // that do not decode are refused by tonic's decoder (INTERNAL, as gRPC
    // prescribes for parse errors), the others by our conversion or
    // answered. The server stays healthy.
    use tonic_health::pb::health_client::HealthClient;
    use tonic_health::pb::{health_check_response::ServingStatus, HealthCheckRequest};
    let requests: usize = std::env::var("FUZZ_REQUESTS").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    let server = start(2).await;
    let channel = channel(server.addr).await;
    let p = pipeline(9, 4, 64);
    let valid = request(&p, 10, 4).encode_to_vec();
    assert!(call_raw(&channel, valid.clone(), Duration::from_secs(10)).await.is_ok());
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let mut codes = std::collections::BTreeMap::<String, usize>::new();
    let started = Instant::now();
    for _ in 0..requests {
        let code = match call_raw(&channel, mutate(&valid, &mut rng), Duration::from_secs(2)).await {
            Ok(_) => Code::Ok,
            Err(s) => {
                assert!(
                    matches!(
                        s.code(),
                        Code::Internal | Code::InvalidArgument | Code::FailedPrecondition | Code::DeadlineExceeded | Code::NotFound
                    ),
                    "{s:?}"
                );
                // INTERNAL is a decode failure (gRPC's rule) or a bug.
                assert!(s.code() != Code::Internal || s.message().contains("decode"), "{s:?}");
                s.code()
            }
        };
        *codes.entry(format!("{code:?}")).or_default() += 1;
    }
    println!("{requests} mutated requests in {:.1} s: {codes:?}", started.elapsed().as_secs_f64());
    let count = |code: &str| codes.get(code).copied().unwrap_or(0);
    let refused = requests - count("Ok") - count("Internal");
    assert!(count("Internal") > 0 && refused > 0 && count("Ok") > 0);
    let mut health = HealthClient::new(channel.clone());
    let status = health.check(HealthCheckRequest { service: String::new() }).await.unwrap().into_inner().status;
    assert_eq!(status, ServingStatus::Serving as i32);
    let reply = call(&mut client(server.addr).await, request(&p, 100, 8), Duration::from_secs(30)).await.unwrap();
    assert_eq!(reply.pipeline_fingerprint, proto::fingerprint(&p).unwrap().0.to_vec());
}
