//! The learned cost model (after Adams et al. 2019) in libtorch, through
//! the `tch` crate: the network ([`network`]) whose coefficients weight
//! hand-designed cost terms ([`terms`]), its loss ([`loss`]) and training
//! step ([`train`]) over one pipeline's measured schedules ([`inputs`]),
//! weights files that record the feature layouts and network shape they
//! fit ([`weights`]), and batched inference behind the search's
//! `CostModel` trait ([`learned`]). Around it, retraining from the
//! training store: the host's samples rebuilt, checked and split by
//! pipeline ([`dataset`]), held-out metrics ([`metrics`]), training,
//! storing and the promotion rule ([`mod@retrain`]), and the charts of the
//! `trainer` command ([`plot`]); which model a search uses ([`choose`]), the
//! nearest known host's weights among them ([`zoo`]).
//!
//! Linking libtorch needs `LIBTORCH` (see `scripts/env.sh`); the search
//! crate does not depend on this one.
//!
//! # Example
//!
//! A fresh network as the search's cost model, ranking the blur's
//! schedules.
//!
//! ```
//! use search::{autoschedule, BeamOptions};
//! use std::time::Duration;
//! use trainer::{CostNetwork, LearnedModel};
//!
//! let mut model = LearnedModel::new(CostNetwork::random(1, 0), "untrained");
//! let options = BeamOptions { budget: Duration::from_millis(200), ..BeamOptions::default() };
//! let answer = autoschedule(&compiler::examples::blur(), &compiler::Target::host(), &mut model, &options, 0)?.answer().expect("not abandoned");
//! assert!(answer.predicted_seconds.is_finite());
//! # Ok::<(), search::SearchError>(())
//! ```

#![warn(missing_docs)]

pub mod choose;
pub mod dataset;
pub mod inputs;
pub mod learned;
pub mod loss;
pub mod metrics;
pub mod network;
pub mod plot;
pub mod retrain;
pub mod terms;
pub mod train;
pub mod trust;
pub mod weights;
pub mod zoo;

pub use choose::{choose_model, choose_network, nearest_known_host, ChooseError, Chosen, ChosenNetwork, NearestHost};
pub use dataset::{store_layout, Dataset, DatasetError, StoredPipeline};
pub use inputs::{schedule_rows, PipelineInputs, PipelineSamples, SampleError, ScheduleRow, ScheduleSample};
pub use learned::LearnedModel;
pub use metrics::Metrics;
pub use network::{CostNetwork, NetworkShape};
pub use retrain::{retrain, FirstPromotion, RetrainError, RetrainOptions, RetrainOutcome, Start};
pub use train::{fine_tune, ordering_accuracy, predict, StepReport, TrainError, TrainOptions, Trainer};
pub use weights::{WeightsError, WeightsFile, WeightsHeader};
pub use zoo::{Zoo, ZooEntry};
