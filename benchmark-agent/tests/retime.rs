//! Timing a store's schedules again: a generated report gets a twin under
//! the retiming's tag with a new sample of each of its schedules, the
//! trainer reads those new samples with the stored features, and a second
//! run times nothing twice.

use benchmark_agent::generate::work_id;
use benchmark_agent::retime::{retime, retimed_work_id, RetimeOptions};
use benchmark_agent::{generate, GenerateOptions, SamplingOptions};
use codegen::runner::{Runner, RunnerOptions};
use data::{HostFingerprint, Store};
use featurizer::{PIPELINE_LAYOUT, SCHEDULE_LAYOUT};
use search::{Analytical, Machine};
use std::collections::HashMap;
use std::time::Duration;
use trainer::dataset::store_layout;

#[test]
fn retimed_schedules_train_with_their_new_times_and_stored_features() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("train.sqlite")).unwrap();
    let target = compiler::Target::host();
    let mut model = Analytical::new(Machine::typical(target.threads));
    let mut runner = Runner::new(RunnerOptions { timeout: Duration::from_secs(30), ..RunnerOptions::beside_current_exe() });
    let generating = GenerateOptions {
        first_seed: 7,
        pipelines: 1,
        round: 0,
        agent: "test".into(),
        sampling: SamplingOptions { schedules: 4, budget: Duration::from_millis(200), ..SamplingOptions::default() },
        app: None,
        timing_passes: 1,
    };
    let generated = generate(&mut store, &mut model, &mut runner, &generating, |_| {}).unwrap();
    assert_eq!(generated.pipelines, 1, "{generated:?}");
    let host = HostFingerprint::detect().unwrap().key();
    let training =
        |store: &Store| store.samples_for_training(&host, store_layout(&PIPELINE_LAYOUT), store_layout(&SCHEDULE_LAYOUT)).unwrap();
    let before = training(&store);

    // Seed 8 was never generated: nothing to time again.
    let options = RetimeOptions { first_seed: 7, pipelines: 2, round: 0, agent: "test".into(), tag: "again".into(), timing_passes: 1 };
    let stats = retime(&mut store, &mut runner, &options, |_| {}).unwrap();
    assert_eq!((stats.timed.pipelines, stats.timed.skipped, stats.missing, stats.timed.unusable), (1, 0, 1, 0), "{stats:?}");
    assert_eq!(stats.timed.measured, generated.measured, "{stats:?}");
    assert!(stats.timed.failed.is_empty(), "{stats:?}");

    let retimed = store.report_runtimes(&retimed_work_id("again", &work_id("test", 0, None, 7)), &host).unwrap();
    let new_times: HashMap<&str, f64> = retimed.iter().map(|(hash, _, s)| (hash.as_str(), *s)).collect();
    let after = training(&store);
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].pipeline_hash, before[0].pipeline_hash);
    assert_eq!(after[0].samples.len(), before[0].samples.len(), "each schedule once, as its newest sample");
    for (old, new) in before[0].samples.iter().zip(&after[0].samples) {
        assert_eq!(old.schedule_hash, new.schedule_hash);
        assert_eq!(old.features, new.features);
        assert_eq!(new.runtime.min_s, new_times[new.schedule_hash.as_str()]);
    }

    let again = retime(&mut store, &mut runner, &options, |_| {}).unwrap();
    assert_eq!((again.timed.pipelines, again.timed.skipped, again.missing, again.timed.measured), (0, 1, 1, 0), "{again:?}");
}
