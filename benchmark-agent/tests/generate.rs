//! The local data-generation loop end to end: random pipelines, sampled
//! schedules timed in the real isolated runner (`hl-runner`, built with the
//! workspace), reports in a real SQLite store.

use benchmark_agent::{generate, GenerateOptions, SamplingOptions, Workload};
use codegen::runner::{Runner, RunnerOptions};
use data::{HostFingerprint, Store};
use featurizer::{Dag, PipelineFeatures, PIPELINE_LAYOUT, SCHEDULE_LAYOUT};
use search::{Analytical, Machine};
use std::time::Duration;
use trainer::dataset::store_layout;

fn options(first_seed: u64, pipelines: u64) -> GenerateOptions {
    GenerateOptions {
        first_seed,
        pipelines,
        round: 0,
        agent: "test".into(),
        sampling: SamplingOptions { schedules: 4, budget: Duration::from_millis(200), ..SamplingOptions::default() },
        app: None,
        timing_passes: 2,
    }
}

#[test]
fn generated_samples_are_timed_stored_with_their_features_and_never_twice() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("train.sqlite")).unwrap();
    let target = compiler::Target::host();
    let mut model = Analytical::new(Machine::typical(target.threads));
    let mut runner = Runner::new(RunnerOptions { timeout: Duration::from_secs(30), ..RunnerOptions::beside_current_exe() });
    let stats = generate(&mut store, &mut model, &mut runner, &options(7, 2), |_| {}).unwrap();
    assert_eq!(stats.pipelines + stats.unusable, 2);
    assert!(stats.measured >= 4, "{stats:?}");
    assert!(stats.failed.is_empty(), "a sampled schedule failed: {stats:?}");

    let host = HostFingerprint::detect().unwrap().key();
    let training = store.samples_for_training(&host, store_layout(&PIPELINE_LAYOUT), store_layout(&SCHEDULE_LAYOUT)).unwrap();
    assert_eq!(training.len() as u64, stats.pipelines);
    let measured: usize = training.iter().map(|p| p.samples.len()).sum();
    assert_eq!(measured as u64, stats.measured);
    for p in &training {
        // The stored pipeline features are those of the rebuilt pipeline.
        let seed = match store.pipelines().unwrap().into_iter().find(|i| i.hash == p.pipeline_hash).unwrap().source {
            data::PipelineSource::Generated { seed, .. } => seed,
            other => panic!("unexpected source {other:?}"),
        };
        let workload = Workload::random(seed).unwrap();
        let dag = Dag::new(&workload.pipeline, &target).unwrap();
        assert_eq!(p.features.stages as usize, dag.stages.len());
        for (s, stage) in dag.stages.iter().enumerate() {
            assert_eq!(p.features.stage(s as u32).unwrap(), PipelineFeatures::of(&dag, stage).to_vec().as_slice());
        }
        for sample in &p.samples {
            assert_eq!(sample.features.stages as usize, dag.stages.len());
            assert!(sample.runtime.min_s > 0.0 && sample.runtime.min_s <= sample.runtime.median_s, "{:?}", sample.runtime);
            assert!(sample.features.values.iter().any(|&v| v > 0.0), "a schedule with no features");
        }
    }

    // Running the same work again stores nothing new.
    let again = generate(&mut store, &mut model, &mut runner, &options(7, 2), |_| {}).unwrap();
    assert_eq!(again.skipped, stats.pipelines);
    assert_eq!(again.measured, 0);
    assert_eq!(store.summary().unwrap().samples, stats.measured + stats.failed.values().sum::<u64>());
}

#[test]
fn bootstrapping_samples_each_round_with_the_weights_the_previous_one_promoted() {
    tch::set_num_threads(1);
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("train.sqlite")).unwrap();
    let mut runner = Runner::new(RunnerOptions { timeout: Duration::from_secs(30), ..RunnerOptions::beside_current_exe() });
    // Six pipelines cannot show one model better than another: the first
    // weights are promoted unconditionally so that round 1 samples with them.
    let retrain = trainer::RetrainOptions {
        epochs: 3,
        held_out_percent: 50,
        torch_threads: Some(1),
        first_promotion: trainer::FirstPromotion::Unconditional,
        ..trainer::RetrainOptions::for_host()
    };
    let rounds = benchmark_agent::bootstrap::bootstrap(&mut store, None, &mut runner, &options(100, 6), &retrain, 0, 2, |_, _| {
        Ok::<_, benchmark_agent::AgentError>(true)
    })
    .unwrap();
    assert_eq!(rounds.len(), 2);
    assert!(rounds[0].sampled_with.starts_with("analytical"), "{}", rounds[0].sampled_with);
    assert!(rounds[0].promoted, "the first weights are promoted: {}", rounds[0].reason);
    assert_eq!(
        rounds[1].sampled_with,
        format!(
            "learned weights v{}, promoted for host {}",
            rounds[0].version.expect("round 0 retrained"),
            HostFingerprint::detect().unwrap().key()
        )
    );
    assert!(rounds[1].samples_in_store > rounds[0].samples_in_store);
    assert_eq!(rounds[1].generated.pipelines + rounds[1].generated.unusable, 6, "round 1 works on new seeds");
}
