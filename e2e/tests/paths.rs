//! The same pipeline reaches the autoscheduler by different paths: built
//! in process (`bench`, `autoschedule`), read back from JSON (the training
//! store, `tune`), converted to the wire and back (the `Schedule` and `Tune`
//! RPCs). The featurizer, and so the search, sees the same pipeline by every
//! path (an app shares subexpressions in memory that the other paths copy).

use compiler::{PipelineDef, Target};
use featurizer::{Dag, PipelineFeatures};

fn features(p: &PipelineDef) -> Vec<Vec<f32>> {
    let dag = Dag::new(p, &Target::host()).expect("analysable");
    dag.stages.iter().map(|s| PipelineFeatures::of(&dag, s).to_vec()).collect()
}

#[test]
fn every_path_gives_the_same_features() {
    let mut differ = vec![];
    for name in apps::names_in(apps::Set::Apps) {
        let app = apps::build(name, apps::Size::Paper, &Target::host()).unwrap();
        let p = app.pipeline_estimated_as_run();
        let json: PipelineDef = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        let wire = PipelineDef::try_from(&proto::v1::Pipeline::try_from(&p).unwrap()).unwrap();
        let direct = features(&p);
        if direct != features(&json) || direct != features(&wire) {
            differ.push(name);
        }
    }
    assert!(differ.is_empty(), "{differ:?}");
}
