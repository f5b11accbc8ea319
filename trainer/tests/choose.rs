//! Which model a search uses: explicit weights, else the store's promoted
//! weights for the host, else the analytical model; and it says which.

use data::{NewWeights, Store};
use featurizer::{PIPELINE_LAYOUT, SCHEDULE_LAYOUT};
use trainer::{choose_model, store_layout, ChooseError, CostNetwork, WeightsFile};

fn weights_blob() -> Vec<u8> {
    WeightsFile::of(&CostNetwork::random(1, 3), "test").encode()
}

#[test]
fn the_promoted_weights_of_the_host_are_used_else_the_analytical_model() {
    tch::set_num_threads(1);
    let mut store = Store::open_in_memory().unwrap();
    let chosen = choose_model(None, Some(&store), "host-a", 2).unwrap();
    assert_eq!(chosen.why, "analytical (no promoted weights for host host-a)");
    assert_eq!(chosen.model.name(), "analytical");

    let version = store
        .insert_weights(&NewWeights {
            parent: None,
            blob: weights_blob(),
            pipeline_layout: store_layout(&PIPELINE_LAYOUT),
            schedule_layout: store_layout(&SCHEDULE_LAYOUT),
            training_set: "test".into(),
            metrics: serde_json::json!({}),
            host_key: Some("host-a".into()),
        })
        .unwrap();
    store.promote(version).unwrap();
    let chosen = choose_model(None, Some(&store), "host-a", 2).unwrap();
    assert_eq!(chosen.why, format!("learned weights v{version}, promoted for host host-a"));
    assert!(chosen.model.name().starts_with("learned"), "{}", chosen.model.name());
    let other = choose_model(None, Some(&store), "host-b", 2).unwrap();
    assert!(other.why.starts_with("analytical"), "weights are per host: {}", other.why);
}

#[test]
fn unusable_weights_are_an_error_not_a_silent_fallback() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.weights");
    std::fs::write(&path, b"not weights").unwrap();
    match choose_model(Some(&path), None, "host-a", 2) {
        Err(ChooseError::File { path: p, .. }) => assert!(p.ends_with("broken.weights")),
        other => panic!("expected a file error, got {:?}", other.map(|c| c.why)),
    }
}
