//! The store's behaviour through its public API, on real SQLite files.

use data::{FailureClass, Features, LayoutId, NewWeights, Outcome, ReportOutcome, Runtime, Store, StoreError};
use test_support::reports::{host, report, PIPELINE_LAYOUT, SCHEDULE_LAYOUT, STAGES};

fn temp_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("train.sqlite")).unwrap();
    (dir, store)
}

#[test]
fn a_report_written_twice_is_stored_once() {
    let (_dir, mut store) = temp_store();
    let h = host("cpu-a");
    let r = report("w1", &h, 7, 6, 0);
    assert_eq!(store.record_report(&r).unwrap(), ReportOutcome { inserted: 6, duplicates: 0 });
    let before = store.summary().unwrap();
    assert_eq!(store.record_report(&r).unwrap(), ReportOutcome { inserted: 0, duplicates: 6 });
    assert_eq!(store.summary().unwrap(), before);
    assert_eq!((before.hosts, before.pipelines, before.schedules, before.reports, before.samples), (1, 1, 6, 1, 6));
    assert_eq!(store.export_rows().unwrap().len(), 6);

    // The same work on another host is another report; another work id on the same host too.
    store.record_report(&report("w1", &host("cpu-b"), 7, 6, 0)).unwrap();
    assert_eq!(store.record_report(&report("w2", &h, 7, 6, 1)).unwrap().inserted, 6);
    let s = store.summary().unwrap();
    assert_eq!((s.hosts, s.pipelines, s.schedules, s.reports, s.samples), (2, 1, 6, 3, 18));
    assert_eq!(s.samples_per_round, [(0, 12), (1, 6)]);
    assert_eq!(s.samples_per_outcome, [("ok".to_string(), 12), ("timeout".to_string(), 6)]);
    assert_eq!(store.latest_round().unwrap(), Some(1));
    assert!(store.has_report("w2", &h.key()).unwrap());
    assert!(!store.has_report("w3", &h.key()).unwrap());
}

#[test]
fn a_bad_report_stores_nothing() {
    let (_dir, mut store) = temp_store();
    let h = host("cpu-a");
    let mut r = report("w1", &h, 1, 3, 0);
    r.samples[1].schedule_hash = "nowhere".into();
    assert!(matches!(store.record_report(&r), Err(StoreError::UnknownSchedule { .. })));
    let mut r = report("w1", &h, 1, 3, 0);
    r.schedules[2].features.values.pop();
    assert!(matches!(store.record_report(&r), Err(StoreError::FeatureShape { .. })));
    assert_eq!(store.summary().unwrap().samples, 0);
    assert_eq!(store.summary().unwrap().pipelines, 0);

    store.record_report(&report("w1", &h, 1, 3, 0)).unwrap();
    let err = store.record_report(&report("w1", &h, 2, 3, 0)).unwrap_err();
    assert!(matches!(err, StoreError::ReportConflict { .. }), "{err}");
    assert_eq!(store.summary().unwrap().pipelines, 1);
}

#[test]
fn training_samples_come_back_grouped_by_pipeline_in_their_layout() {
    let (_dir, mut store) = temp_store();
    let (a, b) = (host("cpu-a"), host("cpu-b"));
    store.record_report(&report("w1", &a, 1, 4, 0)).unwrap();
    store.record_report(&report("w2", &a, 2, 3, 1)).unwrap();
    store.record_report(&report("w3", &b, 3, 3, 1)).unwrap();
    store.record_report(&report("w4", &a, 1, 5, 2)).unwrap();

    let got = store.samples_for_training(&a.key(), PIPELINE_LAYOUT, SCHEDULE_LAYOUT).unwrap();
    let shape: Vec<(&str, usize)> = got.iter().map(|p| (p.pipeline_hash.as_str(), p.samples.len())).collect();
    // Pipeline 1: schedules 0, 1, 3 of w1 and 0, 1, 3, 4 of w4 (every third fails; w4 is another
    // round, so its timings of w1's schedules supersede none); pipeline 2: 0, 1.
    assert_eq!(shape, [("p1", 7), ("p2", 2)]);
    let p1 = &got[0];
    assert_eq!(p1.features, report("w1", &a, 1, 4, 0).pipeline.features);
    let original = report("w4", &a, 1, 5, 2);
    let last = p1.samples.last().unwrap();
    assert_eq!(last.schedule_hash, "s1-4");
    assert_eq!(last.round, 2);
    assert_eq!(last.features, original.schedules[4].features);
    assert_eq!(Some(&last.features.values[..]).map(|v| v.len()), Some((STAGES * SCHEDULE_LAYOUT.len) as usize));
    assert_eq!(last.features.stage(STAGES - 1).unwrap(), &original.schedules[4].features.values[(2 * SCHEDULE_LAYOUT.len) as usize..]);
    assert!(last.features.stage(STAGES).is_none());
    assert_eq!(Outcome::Measured(last.runtime), original.samples[4].outcome);

    let other_layout = LayoutId { version: SCHEDULE_LAYOUT.version + 1, ..SCHEDULE_LAYOUT };
    assert!(store.samples_for_training(&a.key(), PIPELINE_LAYOUT, other_layout).unwrap().is_empty());
    assert!(store.samples_for_training("no-such-host", PIPELINE_LAYOUT, SCHEDULE_LAYOUT).unwrap().is_empty());

    let pipelines = store.pipelines().unwrap();
    assert_eq!(
        pipelines.iter().map(|p| (p.hash.as_str(), p.schedules, p.samples)).collect::<Vec<_>>(),
        [("p1", 5, 9), ("p2", 3, 3), ("p3", 3, 3)]
    );
    assert_eq!(pipelines[0].source, report("w1", &a, 1, 4, 0).pipeline.source);
}

#[test]
fn a_schedule_timed_again_in_its_round_trains_with_its_newest_sample_on_its_host() {
    let (_dir, mut store) = temp_store();
    let (a, b) = (host("cpu-a"), host("cpu-b"));
    store.record_report(&report("first", &a, 1, 4, 0)).unwrap();
    // Timed again on host a: schedule 0 twice as slow, schedule 1 now fails, 3 unchanged; 2 fails in both.
    let mut again = report("again/first", &a, 1, 4, 0);
    again.samples[0].outcome = Outcome::Measured(Runtime { min_s: 2e-3, median_s: 2.2e-3, samples: 10 });
    again.samples[1].outcome = Outcome::Failed(FailureClass::CompileError);
    store.record_report(&again).unwrap();
    // Host b's timing of the same schedules supersedes nothing of host a's, nor does a later round's.
    store.record_report(&report("other host", &b, 1, 4, 0)).unwrap();
    store.record_report(&report("next round", &a, 1, 1, 1)).unwrap();
    assert_eq!(store.report_pipeline("again/first", &a.key()).unwrap().map(|(hash, _)| hash).as_deref(), Some("p1"));
    assert_eq!(store.report_pipeline("again/first", &b.key()).unwrap(), None);

    let got = store.samples_for_training(&a.key(), PIPELINE_LAYOUT, SCHEDULE_LAYOUT).unwrap();
    let times: Vec<(&str, f64)> = got[0].samples.iter().map(|s| (s.schedule_hash.as_str(), s.runtime.min_s)).collect();
    assert_eq!(times, [("s1-0", 2e-3), ("s1-3", 4e-3), ("s1-0", 1e-3)]);
    let other = store.samples_for_training(&b.key(), PIPELINE_LAYOUT, SCHEDULE_LAYOUT).unwrap();
    assert_eq!(other[0].samples.len(), 3, "host b keeps its own samples of schedules 0, 1 and 3");
}

#[test]
fn weights_are_promoted_one_per_host_and_roll_back_to_their_parent() {
    let (_dir, mut store) = temp_store();
    let new = |parent, host_key: Option<&str>| NewWeights {
        parent,
        blob: vec![1, 2, 3, parent.unwrap_or(0) as u8],
        pipeline_layout: PIPELINE_LAYOUT,
        schedule_layout: SCHEDULE_LAYOUT,
        training_set: "rounds 0..=1".into(),
        metrics: serde_json::json!({"held_out_kendall_tau": 0.71}),
        host_key: host_key.map(str::to_string),
    };
    assert!(store.promoted_weights(None).unwrap().is_none());
    let v1 = store.insert_weights(&new(None, None)).unwrap();
    let v2 = store.insert_weights(&new(Some(v1), None)).unwrap();
    let v3 = store.insert_weights(&new(Some(v2), Some("h1"))).unwrap();
    assert!(matches!(store.insert_weights(&new(Some(99), None)), Err(StoreError::UnknownWeights(99))));

    store.promote(v1).unwrap();
    store.promote(v2).unwrap();
    store.promote(v3).unwrap();
    assert_eq!(store.promoted_weights(None).unwrap().unwrap().info.version, v2);
    let w3 = store.promoted_weights(Some("h1")).unwrap().unwrap();
    assert_eq!((w3.info.version, w3.info.parent, w3.blob.as_slice()), (v3, Some(v2), &[1, 2, 3, v2 as u8][..]));
    assert_eq!(w3.info.pipeline_layout, PIPELINE_LAYOUT);
    assert_eq!(w3.info.schedule_layout, SCHEDULE_LAYOUT);
    assert_eq!(w3.info.metrics["held_out_kendall_tau"], 0.71);
    assert_eq!(store.weights_list().unwrap().iter().filter(|w| w.promoted).count(), 2);
    let v4 = store.insert_weights(&new(None, Some("h0"))).unwrap();
    store.promote(v4).unwrap();
    let every: Vec<(Option<String>, u32)> =
        store.promoted_weights_of_every_host().unwrap().into_iter().map(|w| (w.info.host_key, w.info.version)).collect();
    assert_eq!(every, [(Some("h0".to_string()), v4), (Some("h1".to_string()), v3)], "by key, the weights for any host left out");

    assert_eq!(store.rollback(None).unwrap(), v1);
    assert_eq!(store.promoted_weights(None).unwrap().unwrap().info.version, v1);
    assert!(matches!(store.rollback(None), Err(StoreError::NoParent(v)) if v == v1));
    assert!(matches!(store.rollback(Some("h2")), Err(StoreError::NoPromotedWeights(_))));
    assert!(matches!(store.promote(42), Err(StoreError::UnknownWeights(42))));
    assert!(matches!(store.weights(42), Err(StoreError::UnknownWeights(42))));
}

#[test]
fn the_csv_export_has_one_row_per_sample() {
    let (dir, mut store) = temp_store();
    let h = host("cpu-a");
    store.record_report(&report("w1", &h, 1, 3, 4)).unwrap();
    let path = dir.path().join("out.csv");
    assert_eq!(store.export_csv(std::fs::File::create(&path).unwrap()).unwrap(), 3);
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0], data::EXPORT_COLUMNS.join(","));
    assert!(lines[3].contains(",timeout,4,agent-1,w1,"), "{}", lines[3]);
    assert!(lines[1].starts_with(&format!("{},cpu-a,p1,s1-0,0.1,0.001,", h.key())), "{}", lines[1]);
}

#[test]
fn an_in_memory_store_works_like_a_file() {
    let mut store = Store::open_in_memory().unwrap();
    assert_eq!(store.schema_version().unwrap(), data::SCHEMA_VERSION);
    let key = store.upsert_host(&host("cpu-a")).unwrap();
    assert_eq!(key, host("cpu-a").key());
    store.upsert_host(&host("cpu-a")).unwrap();
    assert_eq!(store.summary().unwrap().hosts, 1);
    assert_eq!(store.integrity_check().unwrap(), ["ok"]);
    let mut csv = Vec::new();
    assert_eq!(store.export_csv(&mut csv).unwrap(), 0);
    assert_eq!(String::from_utf8(csv).unwrap(), data::EXPORT_COLUMNS.join(",") + "\n");
}

#[test]
fn features_of_a_new_layout_are_added_beside_the_old_once() {
    let (_dir, mut store) = temp_store();
    store.record_report(&report("w1", &host("cpu"), 7, 4, 0)).unwrap();
    let new = LayoutId { version: SCHEDULE_LAYOUT.version + 1, names_hash: 42, len: 2 };
    let matrix = |layout: LayoutId, v: f32| Features { layout, stages: STAGES, values: vec![v; (STAGES * layout.len) as usize] };

    let old = store.schedules_of("p7", SCHEDULE_LAYOUT).unwrap();
    assert_eq!(old.len(), 4);
    assert!(old.iter().all(|s| s.features.is_some()));
    assert_eq!(old[1].source, "out.split(y, yo, yi, 2)");
    assert!(store.schedules_of("p7", new).unwrap().iter().all(|s| s.features.is_none()));

    let pipeline_layout = LayoutId { version: PIPELINE_LAYOUT.version + 1, names_hash: 43, len: 1 };
    let given = vec![("s7-0".to_string(), matrix(new, 1.0)), ("s7-2".to_string(), matrix(new, 2.0))];
    assert_eq!(store.add_features("p7", &matrix(pipeline_layout, 0.5), &given).unwrap(), 2);
    // Added again, or with other values: the stored matrices stay as they are.
    let again = vec![("s7-0".to_string(), matrix(new, 9.0))];
    assert_eq!(store.add_features("p7", &matrix(pipeline_layout, 9.0), &again).unwrap(), 0);
    let now = store.schedules_of("p7", new).unwrap();
    assert_eq!(now.iter().map(|s| s.features.as_ref().map(|f| f.values[0])).collect::<Vec<_>>(), [Some(1.0), None, Some(2.0), None]);
    // The old layout's features are untouched; training in the new layout
    // finds the measured samples that have both matrices (s7-2 failed).
    assert!(store.schedules_of("p7", SCHEDULE_LAYOUT).unwrap().iter().all(|s| s.features.is_some()));
    let training = store.samples_for_training(&host("cpu").key(), pipeline_layout, new).unwrap();
    assert_eq!(training[0].samples.iter().map(|s| s.schedule_hash.as_str()).collect::<Vec<_>>(), ["s7-0"]);

    // Unknown owners and misshapen matrices are refused, naming them; nothing is stored.
    let err = store.add_features("p8", &matrix(pipeline_layout, 0.5), &[]).unwrap_err();
    assert!(err.to_string().contains("p8"), "{err}");
    let err = store.add_features("p7", &matrix(pipeline_layout, 0.5), &[("s9".into(), matrix(new, 1.0))]).unwrap_err();
    assert!(err.to_string().contains("s9"), "{err}");
    let short = Features { values: vec![1.0], ..matrix(new, 1.0) };
    let err = store.add_features("p7", &matrix(pipeline_layout, 0.5), &[("s7-1".into(), short)]).unwrap_err();
    assert!(err.to_string().contains("s7-1"), "{err}");
    assert!(store.schedules_of("p7", new).unwrap()[1].features.is_none());
}
