//! Autotuning one app end to end: its schedules sampled and timed in the
//! real isolated runner into a real SQLite store, a real network
//! fine-tuned on them, each round's pick timed beside the expert schedule.

use benchmark_agent::autotune::{autotune, AutotuneOptions};
use benchmark_agent::{generate as generate_samples, GenerateOptions, SamplingOptions};
use codegen::runner::{Runner, RunnerOptions};
use data::{HostFingerprint, Store};
use search::{Analytical, BeamOptions, Machine};
use std::time::Duration;
use trainer::dataset::load;
use trainer::{choose_network, TrainOptions};

fn options() -> AutotuneOptions {
    AutotuneOptions {
        app: apps::build("blur", apps::Size::Small, &compiler::Target::host()).unwrap(),
        rounds: 2,
        batches: 1,
        sampling: SamplingOptions { schedules: 4, budget: Duration::from_millis(200), ..SamplingOptions::default() },
        timing_passes: 1,
        pick_timing_passes: 2,
        agent: "test".into(),
        epochs: 5,
        train: TrainOptions { learning_rate: 1e-3, ranking_weight: 100.0, ..TrainOptions::default() },
        members: 1,
        rehearsal: vec![],
        search: BeamOptions { budget: Duration::from_millis(500), ..BeamOptions::default() },
    }
}

#[test]
fn autotuning_fine_tunes_on_the_apps_samples_resumes_to_the_same_weights_and_can_rehearse_other_pipelines() {
    tch::set_num_threads(1);
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("train.sqlite")).unwrap();
    let mut runner = Runner::new(RunnerOptions { timeout: Duration::from_secs(30), ..RunnerOptions::beside_current_exe() });
    let host = HostFingerprint::detect().unwrap().key();
    let start = choose_network(None, Some(&store), &host, None).unwrap();
    let first = autotune(&mut store, &mut runner, start, &options(), |_| {}).unwrap();

    let rounds = &first.rounds;
    assert_eq!(rounds.len(), 3, "round 0 and two rounds");
    assert!(rounds[0].model.starts_with("analytical"), "{}", rounds[0].model);
    assert_eq!((rounds[0].timed, rounds[0].app_samples), (0, 0), "round 0 samples nothing");
    for r in rounds {
        assert!(r.pick_seconds.is_some_and(|s| s > 0.0) && r.expert_seconds.is_some_and(|s| s > 0.0), "{r:?}");
        assert_eq!(r.failed, 0, "{r:?}");
    }
    assert!(rounds[1].timed >= 2, "{:?}", rounds[1]);
    assert_eq!(rounds[1].app_samples as u64, rounds[1].timed, "every timed sample of the app is read back for training");
    assert_eq!(rounds[2].app_samples as u64, rounds[1].timed + rounds[2].timed);
    assert!(rounds[1].model.starts_with("fine-tuned on blur through round 1"), "{}", rounds[1].model);
    assert!(rounds[0].sampler_pairwise.is_none());
    assert!(rounds[1..].iter().all(|r| r.sampler_pairwise.is_some_and(|a| (0.0..=1.0).contains(&a))), "{rounds:?}");
    assert!(rounds[2].best_sampled_seconds <= rounds[1].best_sampled_seconds, "the best sample so far never gets slower");
    assert_eq!(rounds[0].best_seconds, rounds[0].pick_seconds, "round 0's answer is its pick");
    for (before, after) in rounds.iter().zip(&rounds[1..]) {
        let fastest = [before.best_seconds, after.best_sampled_seconds, after.pick_seconds].into_iter().flatten().min_by(f64::total_cmp);
        assert_eq!(after.best_seconds, fastest, "the answer is the fastest measured so far: {after:?}");
    }
    assert_eq!(
        first.first_round_beating_the_expert(),
        rounds.iter().find(|r| r.expert_seconds.unwrap() > r.pick_seconds.unwrap()).map(|r| r.round)
    );
    let (text, seconds) = first.best.clone().expect("a fastest schedule");
    assert_eq!(Some(seconds), rounds[2].best_seconds);
    assert!(text.parse::<compiler::Schedule>().is_ok(), "the fastest schedule's text reads back:\n{text}");
    assert_eq!(
        first.first_round_autotuned_beyond_the_expert(),
        rounds.iter().find(|r| r.best_seconds.unwrap() < r.expert_seconds.unwrap()).map(|r| r.round)
    );
    let tuned = first.network.expect("a fine-tuned network");

    // Again on the same store: every batch is stored already, and the
    // rounds fine-tune on the same samples to the same weights.
    let start = choose_network(None, Some(&store), &host, None).unwrap();
    let second = autotune(&mut store, &mut runner, start, &options(), |_| {}).unwrap();
    assert!(second.rounds.iter().all(|r| r.timed == 0), "no batch timed twice");
    assert_eq!(second.rounds.iter().map(|r| r.app_samples).collect::<Vec<_>>(), rounds.iter().map(|r| r.app_samples).collect::<Vec<_>>());
    assert_eq!(second.network.expect("a fine-tuned network").values(), tuned.values());

    // Rehearsing random pipelines' samples trains on the same app samples
    // to other weights.
    let mut random = Store::open(dir.path().join("random.sqlite")).unwrap();
    let generate = GenerateOptions {
        first_seed: 3,
        pipelines: 2,
        round: 0,
        agent: "test".into(),
        sampling: options().sampling,
        timing_passes: 1,
        app: None,
    };
    generate_samples(&mut random, &mut Analytical::new(Machine::typical(2)), &mut runner, &generate, |_| {}).unwrap();
    let rehearsal: Vec<_> = load(&random, &host, &compiler::Target::host(), 0).unwrap().train.into_iter().map(|p| p.samples).collect();
    assert!(!rehearsal.is_empty());
    let start = choose_network(None, Some(&store), &host, None).unwrap();
    let rehearsed = autotune(&mut store, &mut runner, start, &AutotuneOptions { rehearsal, ..options() }, |_| {}).unwrap();
    assert!(rehearsed.rounds.iter().all(|r| r.timed == 0), "the same app samples");
    assert_ne!(rehearsed.network.expect("a fine-tuned network").values(), tuned.values());
}
