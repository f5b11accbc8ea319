//! The values the store holds and hands back: reports with their pipeline,
//! schedules and samples; feature matrices tagged with their layout; weights.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::store::narrow;
use crate::{HostFingerprint, StoreError};

/// The identity of a feature layout, as `featurizer::LayoutId` gives it
/// (the kind is implied by where the features are stored).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LayoutId {
    /// The layout's version number.
    pub version: u32,
    /// Hash of the layout's field names. Stored bit for bit in an SQLite
    /// integer (`as i64`), so any value round-trips.
    pub names_hash: u64,
    /// Features per stage.
    pub len: u32,
}

impl LayoutId {
    /// The names hash as stored: the same 64 bits as an SQLite integer.
    pub(crate) fn hash_sql(&self) -> i64 {
        self.names_hash as i64
    }

    /// The layout of three stored columns (version, hash, length).
    pub(crate) fn from_sql(version: i64, hash: i64, len: i64) -> Result<LayoutId, StoreError> {
        Ok(LayoutId { version: narrow(version, "layout version")?, names_hash: hash as u64, len: narrow(len, "layout length")? })
    }
}

/// A per-stage feature matrix: row `s` is stage `s`, `layout.len` values a row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Features {
    /// The layout the rows follow.
    pub layout: LayoutId,
    /// How many stages (rows).
    pub stages: u32,
    /// Row-major, `stages * layout.len` values.
    pub values: Vec<f32>,
}

impl Features {
    /// Ok when the values fill exactly `stages` rows of `layout.len`; `what` names the matrix in the error.
    pub fn check_shape(&self, what: &str) -> Result<(), StoreError> {
        let expected = u64::from(self.stages) * u64::from(self.layout.len);
        if self.values.len() as u64 == expected {
            return Ok(());
        }
        Err(StoreError::FeatureShape { what: what.to_string(), values: self.values.len(), stages: self.stages, len: self.layout.len })
    }

    /// The features of stage `s`, if there is one.
    pub fn stage(&self, s: u32) -> Option<&[f32]> {
        let len = self.layout.len as usize;
        if s >= self.stages {
            return None;
        }
        let start = (s as usize).checked_mul(len)?;
        self.values.get(start..start.checked_add(len)?)
    }
}

/// How to rebuild a pipeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PipelineSource {
    /// Made by the random pipeline generator from a seed and its parameters.
    Generated {
        /// The generator's seed.
        seed: u64,
        /// The generator's parameters (opaque to the store).
        params: serde_json::Value,
    },
    /// The serialized pipeline definition (JSON).
    Definition {
        /// The definition as JSON text.
        json: String,
    },
}

/// A pipeline as a report carries it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PipelineRecord {
    /// Content hash (the caller's choice of hash, as text); unique in the store.
    pub hash: String,
    /// How to rebuild it.
    pub source: PipelineSource,
    /// Per-stage features of the pipeline.
    pub features: Features,
}

/// A schedule of the report's pipeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScheduleRecord {
    /// Unique within its pipeline.
    pub hash: String,
    /// The schedule's text form.
    pub source: String,
    /// Per-stage features of the schedule.
    pub features: Features,
}

/// Times of a successful run, in seconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Runtime {
    /// The fastest timed run.
    pub min_s: f64,
    /// The median timed run.
    pub median_s: f64,
    /// How many timed runs the two come from.
    pub samples: u32,
}

/// Why a schedule produced no runtime, as the isolated runner classifies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// Lowering or compiling the schedule failed (an illegal schedule included).
    CompileError,
    /// The compiled pipeline crashed or ran out of memory.
    Crash,
    /// The run took longer than its time limit.
    Timeout,
    /// The output differed from the reference output.
    WrongOutput,
    /// Any other failure to run.
    Other,
}

impl FailureClass {
    /// Every class, in the order of the declaration.
    pub const ALL: [FailureClass; 5] =
        [FailureClass::CompileError, FailureClass::Crash, FailureClass::Timeout, FailureClass::WrongOutput, FailureClass::Other];

    /// The text stored in the `failure` column.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::CompileError => "compile_error",
            FailureClass::Crash => "crash",
            FailureClass::Timeout => "timeout",
            FailureClass::WrongOutput => "wrong_output",
            FailureClass::Other => "other",
        }
    }
}

impl fmt::Display for FailureClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for FailureClass {
    type Err = StoreError;

    fn from_str(s: &str) -> Result<Self, StoreError> {
        FailureClass::ALL.into_iter().find(|c| c.as_str() == s).ok_or_else(|| StoreError::Corrupt(format!("unknown failure class {s:?}")))
    }
}

/// What timing one schedule gave.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The schedule ran and was timed.
    Measured(Runtime),
    /// The schedule produced no runtime.
    Failed(FailureClass),
}

/// One schedule's result in a report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampleRecord {
    /// The hash of one of the report's schedules.
    pub schedule_hash: String,
    /// Seconds to compile, where compiling got that far.
    pub compile_time_s: Option<f64>,
    /// Its runtime, or why there is none.
    pub outcome: Outcome,
}

/// One unit of work's results: one pipeline, its schedules, their samples.
/// Recorded in one transaction; recording it again changes nothing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The work item's id; with the host, the report's identity.
    pub work_id: String,
    /// The measuring host.
    pub host: HostFingerprint,
    /// The agent that measured.
    pub agent: String,
    /// The bootstrap round (weights generation) that steered sampling.
    pub round: u32,
    /// The pipeline measured.
    pub pipeline: PipelineRecord,
    /// The pipeline's schedules.
    pub schedules: Vec<ScheduleRecord>,
    /// One result (a runtime or a failure) per schedule.
    pub samples: Vec<SampleRecord>,
}

/// What recording a report did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportOutcome {
    /// Samples stored now.
    pub inserted: usize,
    /// Samples that were already stored (the report was recorded before).
    pub duplicates: usize,
}

/// A measured sample, ready for training.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScheduleSample {
    /// The schedule's hash.
    pub schedule_hash: String,
    /// Per-stage features of the schedule.
    pub features: Features,
    /// Its measured times.
    pub runtime: Runtime,
    /// The bootstrap round of the report it came from.
    pub round: u32,
}

/// A pipeline with its measured samples on one host, for training.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PipelineSamples {
    /// The pipeline's hash.
    pub pipeline_hash: String,
    /// Per-stage features of the pipeline.
    pub features: Features,
    /// One entry per measured sample, in the order they were stored.
    pub samples: Vec<ScheduleSample>,
}

/// A stored pipeline and how much it was measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PipelineInfo {
    /// The pipeline's content hash.
    pub hash: String,
    /// How to rebuild it.
    pub source: PipelineSource,
    /// Its stored schedules.
    pub schedules: u64,
    /// Samples of its schedules, over all hosts.
    pub samples: u64,
}

/// Weights to store, before they have a version.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewWeights {
    /// The version they were trained from, if any.
    pub parent: Option<u32>,
    /// The serialized model, opaque to the store.
    pub blob: Vec<u8>,
    /// The layout of the pipeline features they read.
    pub pipeline_layout: LayoutId,
    /// The layout of the schedule features they read.
    pub schedule_layout: LayoutId,
    /// What they were trained on (rounds, hosts, sample counts), free text.
    pub training_set: String,
    /// Held-out metrics.
    pub metrics: serde_json::Value,
    /// The host they were trained for; `None` for any host.
    pub host_key: Option<String>,
}

/// Stored weights without their blob.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WeightsInfo {
    /// The version the store gave them when they were inserted.
    pub version: u32,
    /// The version they were trained from, if any.
    pub parent: Option<u32>,
    /// The layout of the pipeline features they read.
    pub pipeline_layout: LayoutId,
    /// The layout of the schedule features they read.
    pub schedule_layout: LayoutId,
    /// What they were trained on (rounds, hosts, sample counts), free text.
    pub training_set: String,
    /// Held-out metrics.
    pub metrics: serde_json::Value,
    /// The host they were trained for; `None` for any host.
    pub host_key: Option<String>,
    /// Whether they are the ones served for their host key.
    pub promoted: bool,
    /// Unix seconds.
    pub created_at: i64,
}

/// Stored weights.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Weights {
    /// Everything stored about them but the blob.
    pub info: WeightsInfo,
    /// The serialized model, opaque to the store.
    pub blob: Vec<u8>,
}

/// Counts over the whole store.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Stored hosts.
    pub hosts: u64,
    /// Stored pipelines.
    pub pipelines: u64,
    /// Stored schedules.
    pub schedules: u64,
    /// Reports recorded.
    pub reports: u64,
    /// Samples, measured or failed.
    pub samples: u64,
    /// Stored weights versions, promoted or not.
    pub weights: u64,
    /// (host key, CPU model, samples).
    pub samples_per_host: Vec<(String, String, u64)>,
    /// (round, samples).
    pub samples_per_round: Vec<(u32, u64)>,
    /// (failure class or `ok`, samples).
    pub samples_per_outcome: Vec<(String, u64)>,
}

/// One sample as a flat row (the CSV export).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExportRow {
    /// The measuring host's key.
    pub host_key: String,
    /// The measuring host's CPU model.
    pub cpu_model: String,
    /// The pipeline's hash.
    pub pipeline_hash: String,
    /// The schedule's hash.
    pub schedule_hash: String,
    /// Seconds to compile, where compiling got that far.
    pub compile_time_s: Option<f64>,
    /// Fastest run in seconds; `None` for a failure.
    pub runtime_min_s: Option<f64>,
    /// Median run in seconds; `None` for a failure.
    pub runtime_median_s: Option<f64>,
    /// Timed runs behind the two; `None` for a failure.
    pub runtime_samples: Option<u32>,
    /// The failure class (`FailureClass::as_str`); `None` when measured.
    pub failure: Option<String>,
    /// The bootstrap round of the report.
    pub round: u32,
    /// The agent that measured.
    pub agent: String,
    /// The report's work id.
    pub work_id: String,
    /// When the report was recorded, in Unix seconds.
    pub recorded_at: i64,
}
