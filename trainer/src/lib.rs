//! The learned cost model (after Adams et al. 2019) in libtorch, through
//! the `tch` crate: the network ([`network`]) whose coefficients weight
//! hand-designed cost terms ([`terms`]), its loss ([`loss`]) and training
//! step ([`train`]) over one pipeline's measured schedules ([`inputs`]),
//! weights files that record the feature layouts and network shape they
//! fit ([`weights`]), and batched inference behind the search's
//! `CostModel` trait ([`learned`]).
//!
//! Linking libtorch needs `LIBTORCH` (see `scripts/env.sh`); the search
//! crate does not depend on this one.

pub mod inputs;
pub mod learned;
pub mod loss;
pub mod network;
pub mod terms;
pub mod train;
pub mod weights;

pub use inputs::{schedule_rows, PipelineInputs, PipelineSamples, SampleError, ScheduleRow, ScheduleSample};
pub use learned::LearnedModel;
pub use network::{CostNetwork, NetworkShape};
pub use train::{ordering_accuracy, predict, StepReport, TrainError, TrainOptions, Trainer};
pub use weights::{WeightsError, WeightsFile, WeightsHeader};
