//! Featurizing a real store again: schedules recorded with features of
//! another (older) layout get today's features, found from their text
//! alone, equal to what sampling computed; a second pass adds nothing and
//! checks every matrix it finds stored.

use benchmark_agent::records::{pipeline_record, schedule_record};
use benchmark_agent::relayout::relayout;
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

#[test]
fn a_store_recorded_in_an_older_layout_gets_todays_features_from_the_schedules_text() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("train.sqlite")).unwrap();
    let target = compiler::Target::host();
    let host = HostFingerprint::detect().unwrap();
    let mut expected = BTreeMap::new();
    for seed in [5u64, 12] {
        let workload = Workload::random(seed).unwrap();
        let dag = Dag::new(&workload.pipeline, &target).unwrap();
        let mut model = Analytical::new(Machine::typical(target.threads));
        let sampling = SamplingOptions { schedules: 6, budget: Duration::from_millis(500), sliding: true, ..SamplingOptions::default() };
        let sampled = sample_schedules(&workload.pipeline, &target, &mut model, &sampling, seed).unwrap();
        let mut pipeline = pipeline_record(&dag, &workload);
        pipeline.features = older(&pipeline.features);
        let records: Vec<_> = sampled.iter().map(|s| schedule_record(&dag, s)).collect();
        for r in &records {
            expected.insert(r.hash.clone(), r.features.clone());
        }
        let schedules = records.into_iter().map(|r| data::ScheduleRecord { features: older(&r.features), ..r }).collect();
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
    let today = || store_layout(&SCHEDULE_LAYOUT);
    let training = |store: &Store| store.samples_for_training(&host.key(), store_layout(&PIPELINE_LAYOUT), today()).unwrap();
    assert!(training(&store).is_empty(), "nothing is stored in today's layout yet");

    let first = relayout(&mut store, &target, |_| {}).unwrap();
    assert_eq!((first.pipelines, first.unbuildable, first.schedules), (2, 0, expected.len()));
    assert!(first.replayed * 10 >= first.schedules * 9, "{first:?}");
    assert_eq!((first.compared, first.added), (0, first.replayed), "{first:?}");
    let stored: Vec<_> = training(&store).into_iter().flat_map(|p| p.samples).collect();
    assert_eq!(stored.len(), first.replayed);
    for s in &stored {
        assert_eq!(&s.features, &expected[&s.schedule_hash], "schedule {}", s.schedule_hash);
    }

    let second = relayout(&mut store, &target, |_| {}).unwrap();
    assert_eq!((second.replayed, second.compared, second.identical, second.added), (first.replayed, first.replayed, first.replayed, 0));
}
