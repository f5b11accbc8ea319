//! The store's records of a pipeline and its schedules: content hashes and
//! per-stage feature matrices in the featurizer's layouts (rows in the
//! DAG's stage order; a stage a schedule does not place has a row of
//! zeros, as the trainer reads it).

use crate::sampling::SampledSchedule;
use crate::Workload;
use data::{Features, PipelineRecord, ScheduleRecord};
use featurizer::{Dag, Layout, PipelineFeatures, PIPELINE_LAYOUT, SCHEDULE_LAYOUT};
use search::featurize::StageFeatures;
use trainer::dataset::store_layout;

/// `rows` as a feature matrix of `layout`.
fn matrix(layout: &Layout, rows: Vec<Vec<f32>>) -> Features {
    Features { layout: store_layout(layout), stages: rows.len() as u32, values: rows.into_iter().flatten().collect() }
}

/// The pipeline's record: the hash of its definition, how to rebuild it,
/// its features per stage.
pub fn pipeline_record(dag: &Dag, workload: &Workload) -> PipelineRecord {
    PipelineRecord { hash: proto::definition_hash(&workload.pipeline), source: workload.source.clone(), features: pipeline_matrix(dag) }
}

/// The pipeline features of the DAG's stages.
pub fn pipeline_matrix(dag: &Dag) -> Features {
    matrix(&PIPELINE_LAYOUT, dag.stages.iter().map(|s| PipelineFeatures::of(dag, s).to_vec()).collect())
}

/// A sampled schedule's record.
pub fn schedule_record(dag: &Dag, sampled: &SampledSchedule) -> ScheduleRecord {
    ScheduleRecord { hash: sampled.hash.clone(), source: sampled.text.clone(), features: schedule_matrix(dag, &sampled.features) }
}

/// A schedule's features, a row per stage of the DAG.
pub fn schedule_matrix(dag: &Dag, features: &StageFeatures) -> Features {
    let mut rows = vec![vec![0.0f32; SCHEDULE_LAYOUT.id().len]; dag.stages.len()];
    for (stage, f) in features.iter() {
        if let Some(row) = rows.get_mut(stage.index()) {
            *row = f.to_array().iter().map(|&v| v as f32).collect();
        }
    }
    matrix(&SCHEDULE_LAYOUT, rows)
}
