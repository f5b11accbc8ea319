//! Featurizing a real store again: schedules recorded with features of
//! another (older) layout get today's features, found from their text
//! alone, equal to what sampling computed; a second pass adds nothing and
//! checks every matrix it finds stored. Matrices of the previous version of
//! today's layout are carried over where probes reproduce them, and
//! replayed where they do not.

use benchmark_agent::records::{pipeline_record, schedule_record};
use benchmark_agent::relayout::{relayout, Carry};
use benchmark_agent::{sample_schedules, SamplingOptions, Workload};
use data::{Features, HostFingerprint, LayoutId, Outcome, Report, Runtime, SampleRecord, Store};
use featurizer::{Dag, PIPELINE_LAYOUT, SCHEDULE_LAYOUT};
use search::{Analytical, Machine};
use std::collections::BTreeMap;
use std::time::Duration;
use trainer::dataset::store_layout;

/// `f` as if recorded under an older layout of one more feature.
fn older(f: &Features) -> Features {
    let len = f.layout.len as usize;
    let layout = LayoutId { version: f.layout.version - 1, names_hash: f.layout.names_hash ^ 1, len: f.layout.len + 1 };
    Features { layout, stages: f.stages, values: f.values.chunks(len).flat_map(|row| row.iter().copied().chain([0.0])).collect() }
}

/// `f` as if recorded under the previous version of its layout (the same
/// names).
fn previous_version(f: &Features) -> Features {
    Features { layout: LayoutId { version: f.layout.version - 1, ..f.layout }, ..f.clone() }
}

/// A store of two random pipelines' sampled schedules, their pipeline and
/// schedule features recorded as `recorded` makes them; the schedules'
/// features in today's layout by hash.
fn store_recorded_as(
    dir: &std::path::Path,
    target: &compiler::Target,
    recorded: impl Fn(&Features) -> Features,
) -> (Store, HostFingerprint, BTreeMap<String, Features>) {
    let mut store = Store::open(dir.join("train.sqlite")).unwrap();
    let host = HostFingerprint::detect().unwrap();
    let mut expected = BTreeMap::new();
    for seed in [5u64, 12] {
        let workload = Workload::random(seed).unwrap();
        let dag = Dag::new(&workload.pipeline, target).unwrap();
        let mut model = Analytical::new(Machine::typical(target.threads));
        let sampling = SamplingOptions { schedules: 6, budget: Duration::from_millis(500), sliding: true, ..SamplingOptions::default() };
        let sampled = sample_schedules(&workload.pipeline, target, &mut model, &sampling, seed).unwrap();
        let mut pipeline = pipeline_record(&dag, &workload);
        pipeline.features = recorded(&pipeline.features);
        let records: Vec<_> = sampled.iter().map(|s| schedule_record(&dag, s)).collect();
        for r in &records {
            expected.insert(r.hash.clone(), r.features.clone());
        }
        let schedules = records.into_iter().map(|r| data::ScheduleRecord { features: recorded(&r.features), ..r }).collect();
        // The times play no part here.
        let samples = sampled
            .iter()
            .map(|s| SampleRecord {
                schedule_hash: s.hash.clone(),
                compile_time_s: None,
                outcome: Outcome::Measured(Runtime { min_s: 1e-3, median_s: 1e-3, samples: 1 }),
            })
            .collect();
        let report =
            Report { work_id: format!("seed {seed}"), host: host.clone(), agent: "test".into(), round: 0, pipeline, schedules, samples };
        store.record_report(&report).unwrap();
    }
    (store, host, expected)
}

fn today() -> LayoutId {
    store_layout(&SCHEDULE_LAYOUT)
}

fn training(store: &Store, host: &HostFingerprint) -> Vec<data::ScheduleSample> {
    store.samples_for_training(&host.key(), store_layout(&PIPELINE_LAYOUT), today()).unwrap().into_iter().flat_map(|p| p.samples).collect()
}

#[test]
fn a_store_recorded_in_an_older_layout_gets_todays_features_from_the_schedules_text() {
    let dir = tempfile::tempdir().unwrap();
    let target = compiler::Target::host();
    let (mut store, host, expected) = store_recorded_as(dir.path(), &target, older);
    assert!(training(&store, &host).is_empty(), "nothing is stored in today's layout yet");

    let first = relayout(&mut store, &target, None, |_| {}).unwrap();
    assert_eq!((first.pipelines, first.unbuildable, first.schedules), (2, 0, expected.len()));
    assert!(first.replayed * 10 >= first.schedules * 9, "{first:?}");
    assert_eq!((first.compared, first.added, first.carried), (0, first.replayed, 0), "{first:?}");
    let stored = training(&store, &host);
    assert_eq!(stored.len(), first.replayed);
    for s in &stored {
        assert_eq!(&s.features, &expected[&s.schedule_hash], "schedule {}", s.schedule_hash);
    }

    let second = relayout(&mut store, &target, None, |_| {}).unwrap();
    assert_eq!((second.replayed, second.compared, second.identical, second.added), (first.replayed, first.replayed, first.replayed, 0));
}

#[test]
fn matrices_of_an_earlier_version_are_carried_over_where_the_probes_reproduce_them() {
    let dir = tempfile::tempdir().unwrap();
    let target = compiler::Target::host();
    let (mut store, host, expected) = store_recorded_as(dir.path(), &target, previous_version);
    let carry = Carry::from_version(today().version - 1);
    let stats = relayout(&mut store, &target, Some(carry), |_| {}).unwrap();
    assert_eq!((stats.changed, stats.carried, stats.added), (0, expected.len(), expected.len()), "{stats:?}");
    let stored = training(&store, &host);
    assert_eq!(stored.len(), expected.len(), "every schedule, those no nest of today's search spells too");
    for s in &stored {
        assert_eq!(&s.features, &expected[&s.schedule_hash], "schedule {}", s.schedule_hash);
    }

    // Where the earlier matrices are not what today's featurizer computes
    // (here: every value doubled), nothing is carried: every schedule is
    // replayed.
    let dir = tempfile::tempdir().unwrap();
    let doubled = |f: &Features| Features { values: f.values.iter().map(|v| 2.0 * v + 1.0).collect(), ..previous_version(f) };
    let (mut store, host, expected) = store_recorded_as(dir.path(), &target, doubled);
    let stats = relayout(&mut store, &target, Some(carry), |_| {}).unwrap();
    assert_eq!((stats.changed, stats.carried, stats.added), (2, 0, stats.replayed), "{stats:?}");
    for s in &training(&store, &host) {
        assert_eq!(&s.features, &expected[&s.schedule_hash], "schedule {}", s.schedule_hash);
    }
}
