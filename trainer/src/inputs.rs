//! What the model reads, in plain data: a pipeline's schedule-independent
//! inputs ([`PipelineInputs`], from a [`Dag`]), the candidates' per-stage
//! schedule features ([`schedule_rows`]), and measured samples for training
//! ([`PipelineSamples`]); and how they become the network's tensors.
//!
//! Stages are the DAG's, in its order (`StageIdx`); a stage a schedule
//! does not place has all-zero features, which cost nothing.

use crate::network::{NetworkInput, CONV1_CHANNELS};
use crate::terms::{term_values, StageContext};
use featurizer::pipeline_features::PIPELINE_FEATURES;
use featurizer::schedule_features::SCHEDULE_FEATURES;
use featurizer::{Dag, PipelineFeatures, ScheduleFeatures, StageIdx};
use search::featurize::StageFeatures;
use search::{Analytical, CostModel, Machine};
use tch::Tensor;
use thiserror::Error;

/// One stage's schedule features, in layout order.
pub type ScheduleRow = [f32; SCHEDULE_FEATURES];

/// A pipeline, as the model sees it independently of schedules.
#[derive(Clone, Debug, PartialEq)]
pub struct PipelineInputs {
    /// Per stage, the pipeline features in `PIPELINE_LAYOUT` order.
    pub stage_features: Vec<Vec<f32>>,
    /// Per stage: it is the last stage of an output Func (its stores are
    /// never read again).
    pub is_output: Vec<bool>,
    /// The analytical model, set for this pipeline on a typical machine of
    /// the target's cores (the terms' core count): its price of each stage
    /// is one of the terms.
    pub analytical: Analytical,
}

impl PipelineInputs {
    /// The inputs of the pipeline `dag` analyses.
    pub fn of(dag: &Dag) -> PipelineInputs {
        let stage_features = dag.stages.iter().map(|s| PipelineFeatures::of(dag, s).to_vec()).collect();
        let is_output = dag
            .stages
            .iter()
            .map(|s| {
                let node = dag.node(s.node);
                node.is_output && node.stages.last() == Some(&s.idx)
            })
            .collect();
        let mut analytical = Analytical::new(Machine::typical(dag.target.threads));
        analytical.set_pipeline(dag);
        PipelineInputs { stage_features, is_output, analytical }
    }

    /// How many stages the pipeline has.
    pub fn stages(&self) -> usize {
        self.stage_features.len()
    }

    /// The network input for candidates given as rows, candidate-major,
    /// one row per stage of `stages` (indices into this pipeline's
    /// stages, all in range).
    pub(crate) fn network_input(&self, stages: &[usize], rows: &[&ScheduleRow]) -> NetworkInput {
        let (batch, width) = ((rows.len() / stages.len().max(1)) as i64, stages.len() as i64);
        let flat: Vec<f32> = stages.iter().flat_map(|&s| self.stage_features[s].iter().copied()).collect();
        let pipeline = Tensor::from_slice(&flat).reshape([width, PIPELINE_FEATURES as i64]);
        let flat: Vec<f32> = rows.iter().flat_map(|r| r.iter().copied()).collect();
        let schedule = Tensor::from_slice(&flat).reshape([batch, width, SCHEDULE_FEATURES as i64]);
        let num_cores = self.analytical.machine.threads.max(1.0);
        let terms: Vec<f32> = rows
            .iter()
            .zip(stages.iter().cycle())
            .flat_map(|(row, &s)| {
                let f = ScheduleFeatures::from_array(&row.map(f64::from));
                let analytical = self.analytical.stage_cycles(StageIdx(s as u32), &f) / self.analytical.machine.cycles_per_second;
                term_values(&f, StageContext { is_output: self.is_output[s], num_cores }, analytical)
            })
            .collect();
        let terms = Tensor::from_slice(&terms).reshape([batch, width, CONV1_CHANNELS as i64]);
        NetworkInput { pipeline, schedule, terms }
    }
}

/// A candidate's features as one row per stage of the DAG (zero rows for
/// the stages it has not placed).
pub fn schedule_rows(stages: usize, features: &StageFeatures) -> Vec<ScheduleRow> {
    let mut rows = vec![[0.0; SCHEDULE_FEATURES]; stages];
    for (stage, f) in features.iter() {
        if let Some(row) = rows.get_mut(stage.index()) {
            *row = f.to_array().map(|v| v as f32);
        }
    }
    rows
}

/// One measured schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduleSample {
    /// One row per stage of the pipeline.
    pub stages: Vec<ScheduleRow>,
    /// Its measured runtime in seconds (the store's minimum).
    pub runtime_seconds: f64,
}

/// The measured schedules of one pipeline: a training batch.
#[derive(Clone, Debug, PartialEq)]
pub struct PipelineSamples {
    /// The pipeline's inputs.
    pub pipeline: PipelineInputs,
    /// Its measured schedules.
    pub schedules: Vec<ScheduleSample>,
}

/// Samples that cannot be trained on.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum SampleError {
    /// Fewer than two schedules (the count).
    #[error("fewer than two schedules ({0}): nothing to compare")]
    TooFewSchedules(usize),
    /// `is_output` does not have one flag per stage.
    #[error("the pipeline has {stages} stages but {is_output} output flags")]
    OutputFlags {
        /// Stages of the pipeline.
        stages: usize,
        /// Length of `is_output`.
        is_output: usize,
    },
    /// A stage whose pipeline features are not `PIPELINE_FEATURES` values.
    #[error("stage {stage} has {got} pipeline features, expected {PIPELINE_FEATURES}")]
    PipelineFeatureCount {
        /// The stage's index.
        stage: usize,
        /// How many features it has.
        got: usize,
    },
    /// A pipeline feature that is negative or not finite.
    #[error("pipeline feature {feature} of stage {stage} is {value} (must be finite and non-negative)")]
    PipelineFeatureValue {
        /// The stage's index.
        stage: usize,
        /// The feature's index in the layout.
        feature: usize,
        /// Its value.
        value: f32,
    },
    /// A schedule whose rows are not one per stage of the pipeline.
    #[error("schedule {schedule} has {got} stages, the pipeline {expected}")]
    StageCount {
        /// The schedule's index in the samples.
        schedule: usize,
        /// How many rows it has.
        got: usize,
        /// Stages of the pipeline.
        expected: usize,
    },
    /// A schedule feature that is negative or not finite.
    #[error("schedule feature {feature} of stage {stage} of schedule {schedule} is {value} (must be finite and non-negative)")]
    ScheduleFeatureValue {
        /// The schedule's index in the samples.
        schedule: usize,
        /// The stage's index.
        stage: usize,
        /// The feature's index in the layout.
        feature: usize,
        /// Its value.
        value: f32,
    },
    /// A runtime that is not finite and positive.
    #[error("schedule {schedule} has runtime {seconds} s (must be finite and positive)")]
    Runtime {
        /// The schedule's index in the samples.
        schedule: usize,
        /// The runtime, in seconds.
        seconds: f64,
    },
}

fn bad(v: f32) -> bool {
    !v.is_finite() || v < 0.0
}

impl PipelineSamples {
    /// Checks that every count and value can be trained on.
    pub fn validate(&self) -> Result<(), SampleError> {
        let stages = self.pipeline.stages();
        if self.schedules.len() < 2 {
            return Err(SampleError::TooFewSchedules(self.schedules.len()));
        }
        if self.pipeline.is_output.len() != stages {
            return Err(SampleError::OutputFlags { stages, is_output: self.pipeline.is_output.len() });
        }
        for (stage, features) in self.pipeline.stage_features.iter().enumerate() {
            if features.len() != PIPELINE_FEATURES {
                return Err(SampleError::PipelineFeatureCount { stage, got: features.len() });
            }
            if let Some((feature, &value)) = features.iter().enumerate().find(|(_, &v)| bad(v)) {
                return Err(SampleError::PipelineFeatureValue { stage, feature, value });
            }
        }
        for (schedule, sample) in self.schedules.iter().enumerate() {
            if sample.stages.len() != stages {
                return Err(SampleError::StageCount { schedule, got: sample.stages.len(), expected: stages });
            }
            if !sample.runtime_seconds.is_finite() || sample.runtime_seconds <= 0.0 {
                return Err(SampleError::Runtime { schedule, seconds: sample.runtime_seconds });
            }
            for (stage, row) in sample.stages.iter().enumerate() {
                if let Some((feature, &value)) = row.iter().enumerate().find(|(_, &v)| bad(v)) {
                    return Err(SampleError::ScheduleFeatureValue { schedule, stage, feature, value });
                }
            }
        }
        Ok(())
    }

    /// The network input for `schedules` (a window of `self.schedules`)
    /// and their runtimes `[batch]`; the samples must be valid.
    pub(crate) fn tensors(&self, schedules: &[ScheduleSample]) -> (NetworkInput, Tensor) {
        let stages: Vec<usize> = (0..self.pipeline.stages()).collect();
        let rows: Vec<&ScheduleRow> = schedules.iter().flat_map(|s| &s.stages).collect();
        let runtimes: Vec<f32> = schedules.iter().map(|s| s.runtime_seconds as f32).collect();
        (self.pipeline.network_input(&stages, &rows), Tensor::from_slice(&runtimes))
    }
}
