//! The learned model behind the search's [`CostModel`] trait: the
//! pipeline's inputs are computed once per pipeline, and each batch of
//! candidates is priced in forward passes without gradients, of at most
//! `MAX_ROWS_PER_PASS` rows each.
//!
//! A batch covers the stages any of its candidates has placed; each
//! candidate's cost lists the stages it has placed (the others cost nothing
//! yet: the search treats them optimistically). Candidates costed before a
//! pipeline is set, or when libtorch fails, get an infinite cost, so they
//! never win.

use crate::inputs::{PipelineInputs, ScheduleRow};
use crate::network::CostNetwork;
use crate::train::to_f64s;
use crate::trust::disagreement;
use crate::weights::{WeightsError, WeightsFile};
use featurizer::schedule_features::SCHEDULE_FEATURES;
use featurizer::{Dag, StageIdx};
use search::cost_model::Cost;
use search::featurize::StageFeatures;
use search::CostModel;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Mutex;

/// A cost model of trained weights.
pub struct LearnedModel {
    version: String,
    /// libtorch tensors are not `Sync`: one batch at a time.
    state: Mutex<State>,
}

struct State {
    network: CostNetwork,
    pipeline: Option<PipelineInputs>,
}

impl LearnedModel {
    /// A model of `network`, reported under the weights label `version`.
    pub fn new(network: CostNetwork, version: &str) -> LearnedModel {
        LearnedModel { version: version.to_string(), state: Mutex::new(State { network, pipeline: None }) }
    }

    /// The model of a weights file's bytes (layouts and shape checked).
    pub fn from_bytes(bytes: &[u8]) -> Result<LearnedModel, WeightsError> {
        Self::from_file(&WeightsFile::decode(bytes)?)
    }

    /// The model of the weights file at `path`.
    pub fn load(path: &Path) -> Result<LearnedModel, WeightsError> {
        Self::from_file(&WeightsFile::read(path)?)
    }

    fn from_file(file: &WeightsFile) -> Result<LearnedModel, WeightsError> {
        Ok(LearnedModel::new(file.to_network()?, &file.header.version))
    }

    /// The weights label.
    pub fn version(&self) -> &str {
        &self.version
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves the state whole.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn unpriced(batch: &[&StageFeatures]) -> Vec<Cost> {
    batch.iter().map(|f| Cost::of_stages(f.keys().map(|s| (s, f64::INFINITY)).collect())).collect()
}

impl CostModel for LearnedModel {
    fn name(&self) -> String {
        format!("learned (weights {})", self.version)
    }

    fn set_pipeline(&mut self, dag: &Dag) {
        self.state().pipeline = Some(PipelineInputs::of(dag));
    }

    fn evaluate(&self, batch: &[&StageFeatures]) -> Vec<Cost> {
        let state = self.state();
        let Some(pipeline) = &state.pipeline else {
            return unpriced(batch);
        };
        let candidates = (MAX_ROWS_PER_PASS / pipeline.stages().max(1)).max(1);
        batch.chunks(candidates).flat_map(|chunk| evaluate_chunk(&state.network, pipeline, chunk)).collect()
    }
}

/// The most rows (a candidate's stage) one forward pass takes: a search's
/// batch of thousands of candidates in one pass made tensors of hundreds of
/// megabytes, which the allocator mapped and unmapped anew at every batch
/// (page faults took half of nl_means' search); passes of this many rows
/// keep them to a few megabytes, reused: nl_means' search evaluates a
/// candidate in 67 us instead of 118 (2026-12-06, EPYC Zen 4; 4096 rows:
/// 80-92 us, 256: 70-72). Each row's cost is the same in any pass (the
/// network prices a stage from its own row and its pipeline's).
const MAX_ROWS_PER_PASS: usize = 1024;

/// The costs of one chunk of a batch, in one forward pass.
fn evaluate_chunk(network: &CostNetwork, pipeline: &PipelineInputs, batch: &[&StageFeatures]) -> Vec<Cost> {
    let placed: BTreeSet<StageIdx> = batch.iter().flat_map(|f| f.keys()).collect();
    if placed.is_empty() {
        return batch.iter().map(|_| Cost::of_stages(vec![])).collect();
    }
    let stages: Vec<usize> = placed.iter().map(|s| s.index()).filter(|&s| s < pipeline.stages()).collect();
    if stages.len() != placed.len() {
        return unpriced(batch);
    }
    let unplaced = [0.0; SCHEDULE_FEATURES];
    let all_rows: Vec<ScheduleRow> =
        batch.iter().flat_map(|f| placed.iter().map(move |s| f.get(s).map_or(unplaced, |f| f.to_array().map(|v| v as f32)))).collect();
    let rows: Vec<&ScheduleRow> = all_rows.iter().collect();
    let input = pipeline.network_input(&stages, &rows);
    let output = tch::no_grad(|| network.forward(&input));
    let (Ok(seconds), Ok(member_seconds)) = (to_f64s(&output.per_stage), to_f64s(&output.member_per_stage)) else {
        return unpriced(batch);
    };
    let members = member_seconds.len() / seconds.len().max(1);
    batch
        .iter()
        .enumerate()
        .zip(seconds.chunks_exact(stages.len()))
        .map(|((i, features), row)| {
            let own: Vec<bool> = placed.iter().map(|s| features.contains_key(s)).collect();
            let per_stage: Vec<(StageIdx, f64)> =
                placed.iter().zip(row).zip(&own).filter(|(_, &o)| o).map(|((&s, &v), _)| (s, v)).collect();
            let member_totals = (0..members).map(|m| {
                let at = (m * batch.len() + i) * stages.len();
                member_seconds[at..at + stages.len()].iter().zip(&own).filter(|(_, &o)| o).map(|(v, _)| v).sum::<f64>()
            });
            Cost { disagreement: disagreement(member_totals), ..Cost::of_stages(per_stage) }
        })
        .collect()
}
