//! The training store: an SQLite file of hosts, pipelines, schedules, timed
//! samples and cost-model weights.
//!
//! Benchmark agents' reports go in through [`Store::record_report`] (one
//! transaction each, idempotent by work id and host); the trainer reads them
//! back with [`Store::samples_for_training`] (features of a new layout are
//! added beside the old with [`Store::add_features`]) and stores what it trains with
//! [`Store::insert_weights`]; the server serves [`Store::promoted_weights`].
//! Features are stored as little-endian `f32` blobs tagged with their
//! layout's version, names hash and length, and are only read back in the
//! layout asked for. The scheduling server hands work to benchmark agents
//! through the queue ([`Store::lease_work`], [`Store::heartbeat`],
//! [`Store::complete_work`]): leases live in the store, and an item's
//! samples are stored once however many agents report it; agents present
//! tokens whose hashes the store keeps ([`tokens`]: sessions, and per-agent
//! tokens an operator issues and revokes). The schema grows by numbered migrations ([`schema`]).
//! This crate depends on no other crate of the workspace.
//!
//! # Example
//!
//! A store in memory, this machine's fingerprint, and the store's counts.
//!
//! ```
//! let store = data::Store::open_in_memory()?;
//! let host = data::HostFingerprint::detect()?;
//! assert_eq!(host.key().len(), 16);
//! assert!(store.pipelines()?.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod blob;
mod error;
mod export;
pub mod fingerprint;
pub mod host_distance;
mod model;
mod query;
mod queue;
mod relayout;
pub mod schema;
mod store;
pub mod tokens;
mod weights;
mod write;

pub use error::StoreError;
pub use export::EXPORT_COLUMNS;
pub use fingerprint::{detect_gpu_devices, CacheInfo, HostFingerprint};
pub use host_distance::{HostDistance, IsaFamily};
pub use model::{
    ExportRow, FailureClass, Features, LayoutId, NewWeights, Outcome, PipelineInfo, PipelineRecord, PipelineSamples, PipelineSource,
    Report, ReportOutcome, Runtime, SampleRecord, ScheduleRecord, ScheduleSample, Summary, Weights, WeightsInfo,
};
pub use queue::{
    AgentSession, Completion, LeaseState, NewWork, SamplingSettings, WorkCounts, WorkItemState, WorkLease, WorkResult, MAX_AGENT_NAME_BYTES,
};
pub use relayout::StoredSchedule;
pub use schema::SCHEMA_VERSION;
pub use store::{Store, BUSY_TIMEOUT};
pub use tokens::{new_token, token_hash, AgentToken};
