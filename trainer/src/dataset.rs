//! Training data from the store: one host's measured samples, each
//! pipeline rebuilt from its stored source and checked against its stored
//! features, split by pipeline into a training and a held-out set.
//!
//! A pipeline is rebuilt (regenerated from its seed and generator
//! parameters, or parsed from its definition), analysed for the training
//! target and featurized again; when its features differ from the stored
//! ones (another featurizer, another vector width) it is skipped with a
//! warning, since its schedule features may no longer mean what the model
//! would read. Pipelines with fewer than two measured samples are skipped:
//! the loss compares schedules of one pipeline.
//!
//! The split is by pipeline, never by sample, and stable across runs and
//! rounds: a pipeline is held out when the FNV-1a hash (64 bits) of its
//! hash string, modulo 100, is below the held-out percentage.

use crate::inputs::{PipelineInputs, PipelineSamples, SampleError, ScheduleRow, ScheduleSample};
use compiler::{PipelineDef, Target};
use data::{HostFingerprint, PipelineSource, Store, StoreError};
use featurizer::pipeline_features::PIPELINE_FEATURES;
use featurizer::schedule_features::SCHEDULE_FEATURES;
use featurizer::{Dag, DagError, Layout, PIPELINE_LAYOUT, SCHEDULE_LAYOUT};
use random_pipelines::{generate, GenError, GeneratorParams};
use std::collections::{BTreeSet, HashMap};
use std::hash::Hasher;
use thiserror::Error;
use tracing::warn;

/// The held-out share of pipelines unless told otherwise, in percent.
pub const DEFAULT_HELD_OUT_PERCENT: u32 = 20;

/// Why training data could not be read.
#[derive(Debug, Error)]
pub enum DatasetError {
    /// Reading the store failed.
    #[error("training store: {0}")]
    Store(#[from] StoreError),
    /// A held-out percentage of 100 or more.
    #[error("the held-out share must be a percentage below 100, not {0}")]
    HeldOutPercent(u32),
    /// A host the store has never met.
    #[error("the store knows no host {0}")]
    UnknownHost(String),
}

/// Why a stored pipeline cannot be rebuilt from its source, or analysed.
#[derive(Debug, Error)]
pub enum RebuildError {
    /// The stored generator parameters do not parse.
    #[error("generator parameters: {0}")]
    GeneratorParams(serde_json::Error),
    /// The stored seed is not the seed in the stored parameters.
    #[error("the source's seed {seed} differs from its parameters' seed {params}")]
    SeedMismatch {
        /// The source's seed.
        seed: u64,
        /// The parameters' seed.
        params: u64,
    },
    /// The generator failed on the parameters.
    #[error(transparent)]
    Generate(#[from] GenError),
    /// The stored definition does not parse.
    #[error("pipeline definition: {0}")]
    Definition(serde_json::Error),
    /// The rebuilt pipeline could not be analysed.
    #[error("analysis: {0}")]
    Analysis(#[from] DagError),
}

/// Why a pipeline's stored samples do not fit it as rebuilt.
#[derive(Debug, Error)]
enum Mismatch {
    #[error("it has stored pipeline features of {stored} stages, the rebuilt pipeline {rebuilt}")]
    PipelineStages { stored: u32, rebuilt: usize },
    #[error("its stored pipeline feature {feature} of stage {stage} is {stored}, the rebuilt pipeline's {rebuilt}")]
    PipelineFeature { feature: usize, stage: usize, stored: f32, rebuilt: f32 },
    #[error("schedule {schedule} has features of {stored} stages, the pipeline {stages}")]
    ScheduleStages { schedule: String, stored: u32, stages: usize },
    #[error("schedule {schedule} has {values} feature values, not {stages} rows")]
    ScheduleRows { schedule: String, values: usize, stages: usize },
    #[error("its samples cannot be trained on: {0}")]
    Untrainable(#[from] SampleError),
}

/// A featurizer layout's identity as the store records it.
pub fn store_layout(layout: &Layout) -> data::LayoutId {
    let id = layout.id();
    data::LayoutId { version: id.version, names_hash: id.names_hash, len: id.len as u32 }
}

/// The machine a host's pipelines are analysed for: its vector width and
/// threads as the store records the host (the trainer need not run on the
/// host whose samples it trains on). This machine is known exactly: its
/// agents analysed for [`Target::host`], whose thread count (what the
/// process may use) can be below the cores its fingerprint lists.
pub fn target_of_host(store: &Store, host_key: &str) -> Result<Target, DatasetError> {
    let host = store.host(host_key)?.ok_or_else(|| DatasetError::UnknownHost(host_key.to_string()))?;
    if HostFingerprint::detect().is_ok_and(|this| this.key() == host_key) {
        return Ok(Target::host());
    }
    Ok(Target::of_isa(&host.isa_features, host.logical_cores as usize))
}

/// Which set a pipeline belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// Trained on.
    Train,
    /// Held out for the metrics.
    HeldOut,
}

/// The set of the pipeline with this hash: held out when
/// `fnv1a(hash) % 100 < held_out_percent`.
pub fn split_of(pipeline_hash: &str, held_out_percent: u32) -> Split {
    let mut hasher = fnv::FnvHasher::default();
    hasher.write(pipeline_hash.as_bytes());
    if hasher.finish() % 100 < u64::from(held_out_percent) {
        Split::HeldOut
    } else {
        Split::Train
    }
}

/// One stored pipeline, rebuilt, with its measured samples.
#[derive(Clone, Debug)]
pub struct StoredPipeline {
    /// The pipeline's hash in the store.
    pub hash: String,
    /// The bootstrap rounds its samples come from.
    pub rounds: BTreeSet<u32>,
    /// The network's inputs for the pipeline and its measured schedules.
    pub samples: PipelineSamples,
    /// The rebuilt pipeline's DAG (for baselines that read it, such as
    /// the analytical model).
    pub dag: std::sync::Arc<Dag>,
}

/// Pipelines left out, by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Skipped {
    /// Fewer than two measured samples.
    pub too_few_samples: usize,
    /// The stored source could not be rebuilt, analysed or read.
    pub unbuildable: usize,
    /// Rebuilt features differ from the stored ones, or the stored shapes are wrong.
    pub feature_mismatch: usize,
}

/// One host's training data, split by pipeline.
#[derive(Clone, Debug, Default)]
pub struct Dataset {
    /// The pipelines trained on.
    pub train: Vec<StoredPipeline>,
    /// The pipelines held out.
    pub held_out: Vec<StoredPipeline>,
    /// How many pipelines were left out of both, by reason.
    pub skipped: Skipped,
}

impl Dataset {
    /// Measured samples over `pipelines`.
    pub fn sample_count(pipelines: &[StoredPipeline]) -> usize {
        pipelines.iter().map(|p| p.samples.schedules.len()).sum()
    }

    /// The rounds the samples come from, over both sets.
    pub fn rounds(&self) -> BTreeSet<u32> {
        self.train.iter().chain(&self.held_out).flat_map(|p| p.rounds.iter().copied()).collect()
    }
}

/// The measured samples of `host_key` in this build's feature layouts,
/// rebuilt, checked and split (see the module documentation).
pub fn load(store: &Store, host_key: &str, target: &Target, held_out_percent: u32) -> Result<Dataset, DatasetError> {
    if held_out_percent >= 100 {
        return Err(DatasetError::HeldOutPercent(held_out_percent));
    }
    let sources: HashMap<String, PipelineSource> = store.pipelines()?.into_iter().map(|p| (p.hash, p.source)).collect();
    let stored = store.samples_for_training(host_key, store_layout(&PIPELINE_LAYOUT), store_layout(&SCHEDULE_LAYOUT))?;
    let mut dataset = Dataset::default();
    for pipeline in stored {
        match usable(&sources, target, pipeline) {
            Ok(usable) => {
                let set = match split_of(&usable.hash, held_out_percent) {
                    Split::Train => &mut dataset.train,
                    Split::HeldOut => &mut dataset.held_out,
                };
                set.push(usable);
            }
            Err(Unusable::TooFewSamples) => dataset.skipped.too_few_samples += 1,
            Err(Unusable::Unbuildable) => dataset.skipped.unbuildable += 1,
            Err(Unusable::FeatureMismatch) => dataset.skipped.feature_mismatch += 1,
        }
    }
    Ok(dataset)
}

/// The measured samples of one pipeline (by hash) on `host_key` from the
/// bootstrap rounds `rounds`, rebuilt and checked as [`load`] does,
/// whatever its split; `None` when fewer than two can be trained on.
pub fn load_pipeline(
    store: &Store,
    host_key: &str,
    target: &Target,
    pipeline_hash: &str,
    rounds: std::ops::RangeInclusive<u32>,
) -> Result<Option<StoredPipeline>, DatasetError> {
    let sources: HashMap<String, PipelineSource> =
        store.pipelines()?.into_iter().filter(|p| p.hash == pipeline_hash).map(|p| (p.hash, p.source)).collect();
    let stored = store.samples_for_training(host_key, store_layout(&PIPELINE_LAYOUT), store_layout(&SCHEDULE_LAYOUT))?;
    Ok(stored.into_iter().find(|p| p.pipeline_hash == pipeline_hash).and_then(|mut p| {
        p.samples.retain(|s| rounds.contains(&s.round));
        usable(&sources, target, p).ok()
    }))
}

/// Why a stored pipeline is left out (each is logged as it is found).
enum Unusable {
    TooFewSamples,
    Unbuildable,
    FeatureMismatch,
}

/// A stored pipeline rebuilt from `sources` and checked against its stored
/// features.
fn usable(sources: &HashMap<String, PipelineSource>, target: &Target, pipeline: data::PipelineSamples) -> Result<StoredPipeline, Unusable> {
    if pipeline.samples.len() < 2 {
        return Err(Unusable::TooFewSamples);
    }
    let Some(source) = sources.get(&pipeline.pipeline_hash) else {
        warn!(pipeline = %pipeline.pipeline_hash, "skipped: the store has samples but no source for this pipeline");
        return Err(Unusable::Unbuildable);
    };
    let (inputs, dag) = rebuild(source, target).map_err(|problem| {
        warn!(pipeline = %pipeline.pipeline_hash, "skipped: cannot rebuild it: {problem}");
        Unusable::Unbuildable
    })?;
    let samples = to_samples(inputs, &pipeline).map_err(|problem| {
        warn!(pipeline = %pipeline.pipeline_hash, "skipped: {problem}");
        Unusable::FeatureMismatch
    })?;
    let rounds = pipeline.samples.iter().map(|s| s.round).collect();
    Ok(StoredPipeline { hash: pipeline.pipeline_hash, rounds, samples, dag })
}

/// The model's view of a stored pipeline, rebuilt for `target`.
fn rebuild(source: &PipelineSource, target: &Target) -> Result<(PipelineInputs, std::sync::Arc<Dag>), RebuildError> {
    let pipeline = rebuild_pipeline(source)?;
    let dag = Dag::new(&pipeline, target)?;
    Ok((PipelineInputs::of(&dag), std::sync::Arc::new(dag)))
}

/// A stored pipeline's definition, rebuilt from its source.
pub fn rebuild_pipeline(source: &PipelineSource) -> Result<PipelineDef, RebuildError> {
    Ok(match source {
        PipelineSource::Generated { seed, params } => {
            let params: GeneratorParams = serde_json::from_value(params.clone()).map_err(RebuildError::GeneratorParams)?;
            if params.seed != *seed {
                return Err(RebuildError::SeedMismatch { seed: *seed, params: params.seed });
            }
            generate(&params)?.pipeline
        }
        PipelineSource::Definition { json } => stored_definition(json)?,
    })
}

/// A pipeline definition as a store keeps it (JSON). Definitions written
/// before Tuples gave each Func one `ty` and one `value` and each update
/// one `value`: they are read as the one-value `types` and `values` of
/// today's.
fn stored_definition(json: &str) -> Result<PipelineDef, RebuildError> {
    let mut v: serde_json::Value = serde_json::from_str(json).map_err(RebuildError::Definition)?;
    let as_list = |object: &mut serde_json::Map<String, serde_json::Value>, one: &str, many: &str| {
        if let Some(x) = object.remove(one) {
            object.entry(many).or_insert(serde_json::Value::Array(vec![x]));
        }
    };
    for f in v.get_mut("funcs").and_then(|f| f.as_array_mut()).into_iter().flatten() {
        let Some(f) = f.as_object_mut() else { continue };
        as_list(f, "ty", "types");
        as_list(f, "value", "values");
        for u in f.get_mut("updates").and_then(|u| u.as_array_mut()).into_iter().flatten() {
            if let Some(u) = u.as_object_mut() {
                as_list(u, "value", "values");
            }
        }
    }
    serde_json::from_value(v).map_err(RebuildError::Definition)
}

/// The stored samples as training samples, when the stored pipeline
/// features are the rebuilt ones and every shape fits.
fn to_samples(pipeline: PipelineInputs, stored: &data::PipelineSamples) -> Result<PipelineSamples, Mismatch> {
    let stages = pipeline.stages();
    let rebuilt: Vec<f32> = pipeline.stage_features.iter().flatten().copied().collect();
    if stored.features.stages as usize != stages || stored.features.values.len() != rebuilt.len() {
        return Err(Mismatch::PipelineStages { stored: stored.features.stages, rebuilt: stages });
    }
    if let Some((i, (&stored, &rebuilt))) = stored.features.values.iter().zip(&rebuilt).enumerate().find(|(_, (a, b))| a != b) {
        let len = PIPELINE_FEATURES.max(1);
        return Err(Mismatch::PipelineFeature { feature: i % len, stage: i / len, stored, rebuilt });
    }
    let schedules = stored
        .samples
        .iter()
        .map(|sample| {
            let features = &sample.features;
            if features.stages as usize != stages || features.layout.len as usize != SCHEDULE_FEATURES {
                return Err(Mismatch::ScheduleStages { schedule: sample.schedule_hash.clone(), stored: features.stages, stages });
            }
            let rows: Vec<ScheduleRow> =
                features.values.chunks_exact(SCHEDULE_FEATURES).map(|row| std::array::from_fn(|i| row[i])).collect();
            if rows.len() != stages {
                return Err(Mismatch::ScheduleRows { schedule: sample.schedule_hash.clone(), values: features.values.len(), stages });
            }
            Ok(ScheduleSample { stages: rows, runtime_seconds: sample.runtime.min_s })
        })
        .collect::<Result<Vec<_>, Mismatch>>()?;
    let samples = PipelineSamples { pipeline, schedules };
    samples.validate()?;
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_is_pinned_to_the_pipeline_hash() {
        // FNV-1a of the hash string mod 100: random-0 → 11, random-1 → 0,
        // random-2 → 33, random-3 → 22. Changing this moves pipelines
        // between the sets of stored weights' metrics.
        assert_eq!(split_of("random-0", 20), Split::HeldOut);
        assert_eq!(split_of("random-1", 1), Split::HeldOut);
        assert_eq!(split_of("random-2", 33), Split::Train);
        assert_eq!(split_of("random-2", 34), Split::HeldOut);
        assert_eq!(split_of("random-3", 20), Split::Train);
        assert_eq!(split_of("random-0", 0), Split::Train);
    }

    /// A Tuple pipeline round-trips as stored JSON, and the same JSON in
    /// the form written before Tuples (one `ty` and `value` per Func, one
    /// `value` per update) reads as the same pipeline.
    #[test]
    fn stored_definitions_read_in_both_forms() {
        use compiler::lang::ops::cast;
        use compiler::{Expr, Func, ImageParam, Pipeline, RDom, ScalarType, Type, Var};
        let x = Var::new("x");
        let input = ImageParam::new("input", ScalarType::U8, 1);
        let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(3))]);
        let g = Func::new("g");
        g.define(&[&x], cast(Type::i32(), input.at([x.expr()])));
        g.update([x.expr()], g.at([x.expr()]) + cast(Type::i32(), input.at([&x + r.x().expr()])));
        let t = Func::new("t");
        t.define_tuple(&[&x], [g.at([x.expr()]), Expr::i32(1)]);
        let [a, b] = [0, 1].map(|k| t.value_at([x.expr()], k));
        t.update_tuple([x.expr()], [b.clone(), a + b]);
        let out = Func::new("out");
        out.define(&[&x], t.value_at([x.expr()], 1));
        let p = Pipeline::new(&[&out]).unwrap();
        let mut json = serde_json::to_value(&p).unwrap();
        assert_eq!(stored_definition(&json.to_string()).unwrap(), p);
        let g = json["funcs"][0].as_object_mut().unwrap();
        let ty = g.remove("types").unwrap()[0].clone();
        let value = g.remove("values").unwrap()[0].clone();
        g.insert("ty".into(), ty);
        g.insert("value".into(), value);
        let update = g["updates"][0].as_object_mut().unwrap();
        let value = update.remove("values").unwrap()[0].clone();
        update.insert("value".into(), value);
        assert_eq!(stored_definition(&json.to_string()).unwrap(), p);
    }

    #[test]
    fn about_the_held_out_share_is_held_out() {
        let held_out = (0..1000).filter(|i| split_of(&format!("{i:016x}"), 20) == Split::HeldOut).count();
        assert!((150..250).contains(&held_out), "{held_out} of 1000 held out at 20%");
    }
}
