//! The learned model behind the search's [`CostModel`] trait: the
//! pipeline's inputs are computed once per pipeline, and each batch of
//! candidates is priced in forward passes without gradients, of at most
//! `MAX_ROWS_PER_PASS` rows each.
//!
//! The network prices each stage from its own row of schedule features and
//! its pipeline's features alone, and a candidate's cost is the sum over the
//! stages it has placed (the others cost nothing yet: the search treats
//! them optimistically). A child differs from its parent in the rows of a
//! few stages, so each distinct row is priced once per pipeline and
//! remembered ([`Priced`]): a batch runs the network only on the rows no
//! earlier batch had. Candidates costed before a pipeline is set, or when
//! libtorch fails, get an infinite cost, so they never win.

use crate::inputs::{PipelineInputs, ScheduleRow};
use crate::network::CostNetwork;
use crate::train::to_f64s;
use crate::trust::disagreement;
use crate::weights::{WeightsError, WeightsFile};
use featurizer::schedule_features::SCHEDULE_FEATURES;
use featurizer::{Dag, StageIdx};
use fnv::FnvHashMap;
use search::cost_model::Cost;
use search::featurize::StageFeatures;
use search::CostModel;
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
    /// The rows of this pipeline priced so far.
    priced: FnvHashMap<RowKey, Priced>,
    /// Rows the network priced since the pipeline was set.
    rows_priced: usize,
}

/// A stage's row: the stage and its features' bits.
type RowKey = (u32, [u32; SCHEDULE_FEATURES]);

/// What the network predicts for one stage's row: the members' mean and
/// each member's prediction, in seconds.
struct Priced {
    seconds: f64,
    members: Box<[f64]>,
}

/// The most rows remembered per pipeline (about 40 MB with a 15-member
/// ensemble); past it the memory starts over.
const MAX_PRICED_ROWS: usize = 1 << 17;

impl LearnedModel {
    /// A model of `network`, reported under the weights label `version`.
    pub fn new(network: CostNetwork, version: &str) -> LearnedModel {
        LearnedModel {
            version: version.to_string(),
            state: Mutex::new(State { network, pipeline: None, priced: FnvHashMap::default(), rows_priced: 0 }),
        }
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

    /// The stage rows the network has priced since the pipeline was set
    /// (each distinct row once, unless the memory of rows started over).
    pub fn rows_priced(&self) -> usize {
        self.state().rows_priced
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
        let mut state = self.state();
        state.pipeline = Some(PipelineInputs::of(dag));
        state.priced.clear();
        state.rows_priced = 0;
    }

    fn evaluate(&self, batch: &[&StageFeatures]) -> Vec<Cost> {
        let mut guard = self.state();
        let state = &mut *guard;
        let Some(pipeline) = &state.pipeline else {
            return unpriced(batch);
        };
        let keyed: Vec<Vec<(StageIdx, RowKey)>> =
            batch.iter().map(|f| f.iter().map(|(s, f)| (s, row_key(s, f.to_array()))).collect()).collect();
        if keyed.iter().flatten().any(|(s, _)| s.index() >= pipeline.stages()) {
            return unpriced(batch);
        }
        let mut missing = unpriced_rows(&keyed, &state.priced);
        if state.priced.len() + missing.len() > MAX_PRICED_ROWS {
            state.priced.clear();
            missing = unpriced_rows(&keyed, &state.priced);
        }
        for chunk in missing.chunks(MAX_ROWS_PER_PASS) {
            let Some(priced) = price_rows(&state.network, pipeline, chunk) else {
                return unpriced(batch);
            };
            state.priced.extend(chunk.iter().copied().zip(priced));
            state.rows_priced += chunk.len();
        }
        keyed
            .iter()
            .map(|rows| {
                let priced: Vec<&Priced> = rows.iter().map(|(_, k)| &state.priced[k]).collect();
                let per_stage = rows.iter().zip(&priced).map(|((s, _), p)| (*s, p.seconds)).collect();
                let members = priced.first().map_or(0, |p| p.members.len());
                let member_totals = (0..members).map(|m| priced.iter().map(|p| p.members[m]).sum::<f64>());
                Cost { disagreement: disagreement(member_totals), ..Cost::of_stages(per_stage) }
            })
            .collect()
    }
}

/// The distinct rows of `keyed` not in `priced`, in the order met.
fn unpriced_rows(keyed: &[Vec<(StageIdx, RowKey)>], priced: &FnvHashMap<RowKey, Priced>) -> Vec<RowKey> {
    let mut met = fnv::FnvHashSet::default();
    keyed.iter().flatten().map(|(_, k)| *k).filter(|k| !priced.contains_key(k) && met.insert(*k)).collect()
}

/// The memory's key of stage `s`'s row `features`.
fn row_key(s: StageIdx, features: [f64; SCHEDULE_FEATURES]) -> RowKey {
    (s.index() as u32, features.map(|v| (v as f32).to_bits()))
}

/// The most rows (a stage's schedule features) one forward pass takes: a
/// search's batch in one pass made tensors of hundreds of megabytes, which
/// the allocator mapped and unmapped anew at every batch (page faults took
/// half of nl_means' search); passes of at most this many rows keep them to
/// a few megabytes, reused. Each row's cost is the same in any pass (the
/// network prices a stage from its own row and its pipeline's).
const MAX_ROWS_PER_PASS: usize = 1024;

/// The predictions for `rows`, in one forward pass (`None` when libtorch
/// fails).
fn price_rows(network: &CostNetwork, pipeline: &PipelineInputs, rows: &[RowKey]) -> Option<Vec<Priced>> {
    let stages: Vec<usize> = rows.iter().map(|(s, _)| *s as usize).collect();
    let values: Vec<ScheduleRow> = rows.iter().map(|(_, bits)| bits.map(f32::from_bits)).collect();
    let refs: Vec<&ScheduleRow> = values.iter().collect();
    // One candidate whose stages are the rows: each row is priced alone.
    let input = pipeline.network_input(&stages, &refs);
    let output = tch::no_grad(|| network.forward(&input));
    let (Ok(seconds), Ok(member_seconds)) = (to_f64s(&output.per_stage), to_f64s(&output.member_per_stage)) else {
        return None;
    };
    let members = member_seconds.len() / seconds.len().max(1);
    Some(
        seconds
            .iter()
            .enumerate()
            .map(|(i, &seconds)| Priced { seconds, members: (0..members).map(|m| member_seconds[m * rows.len() + i]).collect() })
            .collect(),
    )
}
