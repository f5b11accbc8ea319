//! The one error type of the store.

use std::path::PathBuf;

use thiserror::Error;

/// Everything that can go wrong opening, writing or reading the store.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("reading {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("csv: {0}")]
    Csv(#[from] csv::Error),
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    /// The file was written by a newer version of this crate.
    #[error("the store has schema version {found}, newer than the {supported} this build knows; use a newer build")]
    NewerSchema { found: i64, supported: i64 },
    /// A feature matrix whose value count is not `stages * layout.len`.
    #[error("{what}: {values} feature values do not fill {stages} stages of {len} features")]
    FeatureShape { what: String, values: usize, stages: u32, len: u32 },
    /// A sample names a schedule the report does not carry.
    #[error("report {work_id}: sample of schedule {schedule_hash}, which the report does not carry")]
    UnknownSchedule { work_id: String, schedule_hash: String },
    /// Features given for a pipeline the store does not hold.
    #[error("no stored pipeline has hash {0}")]
    UnknownPipeline(String),
    /// Features given for a schedule the store does not hold for its pipeline.
    #[error("pipeline {pipeline}: no stored schedule has hash {schedule}")]
    UnknownStoredSchedule { pipeline: String, schedule: String },
    /// A report id already recorded for another pipeline.
    #[error("report {work_id} was already recorded for pipeline {stored}, not {given}")]
    ReportConflict { work_id: String, stored: String, given: String },
    /// A work id the queue never issued.
    #[error("no work item {0}")]
    UnknownWork(String),
    /// A report of a work item that was never leased to the reporting agent.
    #[error("work item {work_id} was never leased to agent {agent_id}")]
    NotLeased { work_id: String, agent_id: i64 },
    /// A host fingerprint that would not read back as it was given.
    #[error("host fingerprint: {field} {why}")]
    Fingerprint { field: &'static str, why: String },
    /// An agent name that is empty, too long or not printable.
    #[error("agent name: {0}")]
    AgentName(String),
    #[error("no token was issued for agent {0}")]
    UnknownAgentToken(String),
    #[error("no registered agent {0}")]
    UnknownAgent(i64),
    #[error("no weights version {0}")]
    UnknownWeights(u32),
    #[error("no promoted weights for host key {0:?}")]
    NoPromotedWeights(Option<String>),
    #[error("weights version {0} has no parent to roll back to")]
    NoParent(u32),
    /// A stored value this build cannot read (a blob of the wrong length, an unknown failure class).
    #[error("corrupt value in the store: {0}")]
    Corrupt(String),
}
