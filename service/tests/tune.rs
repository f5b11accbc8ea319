//! The `Tune` RPC on loopback: a server with a training store tunes a
//! small pipeline in its own isolated runner, streaming its rounds before
//! the result; the answer runs at the estimates, is measured no slower than
//! the one-shot answer timed beside it, and its samples are in the store as
//! reports (`tune_on_agent.rs`: on an agent of the target's host); a client
//! that goes away stops the tuning; refusals (no pipeline, no store, a host
//! with no agent, a budget too small, a second tuning at once) come with
//! their codes.

#[path = "common/server.rs"]
mod server;

use compiler::schedule::legality::{check_at_estimates, Limits};
use compiler::schedule::text::parse_schedule;
use proto::v1::scheduler_client::SchedulerClient;
use proto::v1::{tune_progress, Target, TuneRequest, TuneResult, TuneRound};
use server::{channel, serve_on_loopback};
use service::{Running, SchedulerSettings, ServerConfig};
use std::time::{Duration, Instant};
use tonic::Code;

async fn start(store: Option<data::Store>) -> Running {
    let settings = SchedulerSettings::new("test-host".into());
    serve_on_loopback(ServerConfig { settings, store, max_concurrent: 1, agents: None, retrainer: None, tls: None }).await
}

fn request(budget_ms: u64) -> TuneRequest {
    TuneRequest {
        pipeline: Some(proto::v1::Pipeline::try_from(&compiler::examples::blur()).unwrap()),
        target: None,
        budget_ms,
        search_budget_ms: 200,
        candidates: 4,
        seed: 0,
    }
}

/// The stream's rounds and its result.
async fn tuned(client: &mut SchedulerClient<tonic::transport::Channel>, request: TuneRequest) -> (Vec<TuneRound>, TuneResult) {
    let mut stream = client.tune(request).await.expect("the tuning starts").into_inner();
    let mut rounds = vec![];
    while let Some(progress) = stream.message().await.expect("the stream goes on") {
        match progress.event.expect("an event") {
            tune_progress::Event::Round(r) => rounds.push(r),
            tune_progress::Event::Result(r) => {
                assert!(stream.message().await.expect("the stream ends").is_none(), "nothing after the result");
                return (rounds, r);
            }
        }
    }
    panic!("the stream ended without a result after {} rounds", rounds.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_pipeline_is_tuned_on_the_servers_host_and_its_samples_stored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    let server = start(Some(data::Store::open(&path).unwrap())).await;
    let mut client = SchedulerClient::new(channel(server.addr).await);
    let began = Instant::now();
    let (rounds, result) = tuned(&mut client, request(6000)).await;
    let took = began.elapsed();
    assert!(took < Duration::from_secs(6 + 10), "a 6 s tuning took {took:?}");

    assert!(rounds.len() >= 2, "round 0 and at least one more: {rounds:?}");
    assert!(rounds.iter().enumerate().all(|(k, r)| r.round as usize == k), "{rounds:?}");
    assert_eq!(rounds, result.history);
    let (measured, one_shot) =
        (result.measured_seconds.expect("the answer was timed"), result.one_shot_seconds.expect("so was the one-shot answer"));
    assert!(measured <= one_shot, "the answer ({measured} s) is no slower than the one-shot answer ({one_shot} s) beside it");

    let pipeline = compiler::examples::blur();
    let schedule = parse_schedule(&result.schedule_text).expect("the answer parses");
    check_at_estimates(&pipeline, &schedule, &Limits::default()).expect("the answer runs at the estimates");
    assert_eq!(result.pipeline_fingerprint, proto::fingerprint(&pipeline).unwrap().0.to_vec());
    assert!(result.model.starts_with("analytical"), "{}", result.model);

    assert!(result.samples_stored > 0);
    let store = data::Store::open(&path).unwrap();
    let samples: u64 = store.summary().unwrap().samples;
    assert_eq!(samples, result.samples_stored, "every sample the tuning timed after round 0 is in the store");
    let hash = &store.pipelines().unwrap()[0].hash;
    let host = data::HostFingerprint::detect().unwrap().key();
    let id = format!("tune/tune/{}/round1", &hash[..16]);
    assert!(store.has_report(&id, &host).unwrap(), "round 1's report {id}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_tuning_waits_for_the_first_and_a_client_that_goes_away_stops_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(Some(data::Store::open(dir.path().join("store.sqlite")).unwrap())).await;
    let mut client = SchedulerClient::new(channel(server.addr).await);
    let first = client.tune(request(60_000)).await.expect("the first tuning starts").into_inner();
    let busy = client.tune(request(5000)).await.expect_err("refused while the first runs");
    assert_eq!(busy.code(), Code::ResourceExhausted, "{busy:?}");
    assert!(busy.message().contains("a tuning is running"), "{}", busy.message());

    drop(first);
    let began = Instant::now();
    loop {
        match client.tune(request(2000)).await {
            Ok(_) => break,
            Err(e) if e.code() == Code::ResourceExhausted && began.elapsed() < Duration::from_secs(15) => {
                tokio::time::sleep(Duration::from_millis(200)).await
            }
            Err(e) => panic!("the first tuning (60 s) did not stop when its client went away: {e:?} after {:?}", began.elapsed()),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tunings_that_cannot_run_are_refused_with_their_codes() {
    let dir = tempfile::tempdir().unwrap();
    let with_store = start(Some(data::Store::open(dir.path().join("store.sqlite")).unwrap())).await;
    let without = start(None).await;
    let mut client = SchedulerClient::new(channel(with_store.addr).await);
    let refused = |request: TuneRequest| {
        let mut client = client.clone();
        async move { client.tune(request).await.expect_err("refused") }
    };

    let e = refused(TuneRequest { pipeline: None, ..request(5000) }).await;
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    let e = refused(request(500)).await;
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(e.message().contains("at least 2 s"), "{}", e.message());
    let elsewhere: Target = proto::target::target_to_wire(&compiler::Target::host(), "another-host");
    let e = refused(TuneRequest { target: Some(elsewhere), ..request(5000) }).await;
    assert_eq!(e.code(), Code::FailedPrecondition, "{e:?}");
    assert!(e.message().contains("another-host"), "{}", e.message());
    let mut short = tonic::Request::new(request(5000));
    short.set_timeout(Duration::from_millis(1500));
    let e = client.tune(short).await.expect_err("refused");
    assert_eq!(e.code(), Code::DeadlineExceeded, "{e:?}");

    let mut no_store = SchedulerClient::new(channel(without.addr).await);
    let e = no_store.tune(request(5000)).await.expect_err("refused");
    assert_eq!(e.code(), Code::FailedPrecondition, "{e:?}");
    assert!(e.message().contains("--db"), "{}", e.message());
}
