//! The one error type of the store.

use std::path::PathBuf;

use thiserror::Error;

/// Everything that can go wrong opening, writing or reading the store.
#[derive(Debug, Error)]
pub enum StoreError {
    /// An SQLite call failed.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A file or folder could not be read.
    #[error("reading {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Writing the CSV export failed.
    #[error("csv: {0}")]
    Csv(#[from] csv::Error),
    /// A JSON value could not be serialized or parsed.
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    /// The file was written by a newer version of this crate.
    #[error("the store has schema version {found}, newer than the {supported} this build knows; use a newer build")]
    NewerSchema {
        /// The schema version the file has.
        found: i64,
        /// The newest schema version this build knows (`SCHEMA_VERSION`).
        supported: i64,
    },
    /// A feature matrix whose value count is not `stages * layout.len`.
    #[error("{what}: {values} feature values do not fill {stages} stages of {len} features")]
    FeatureShape {
        /// Which matrix (the caller's name for it).
        what: String,
        /// How many values it has.
        values: usize,
        /// Its stage count.
        stages: u32,
        /// Its layout's features per stage.
        len: u32,
    },
    /// A sample names a schedule the report does not carry.
    #[error("report {work_id}: sample of schedule {schedule_hash}, which the report does not carry")]
    UnknownSchedule {
        /// The report's work id.
        work_id: String,
        /// The hash the sample names.
        schedule_hash: String,
    },
    /// Features given for a pipeline the store does not hold.
    #[error("no stored pipeline has hash {0}")]
    UnknownPipeline(String),
    /// Features given for a schedule the store does not hold for its pipeline.
    #[error("pipeline {pipeline}: no stored schedule has hash {schedule}")]
    UnknownStoredSchedule {
        /// The pipeline's hash.
        pipeline: String,
        /// The schedule hash not found.
        schedule: String,
    },
    /// A report id already recorded for another pipeline.
    #[error("report {work_id} was already recorded for pipeline {stored}, not {given}")]
    ReportConflict {
        /// The report's work id.
        work_id: String,
        /// The hash of the pipeline it was recorded for.
        stored: String,
        /// The hash of the pipeline it now carries.
        given: String,
    },
    /// A work id the queue never issued.
    #[error("no work item {0}")]
    UnknownWork(String),
    /// A report of a work item that was never leased to the reporting agent.
    #[error("work item {work_id} was never leased to agent {agent_id}")]
    NotLeased {
        /// The reported work id.
        work_id: String,
        /// The reporting agent's id.
        agent_id: i64,
    },
    /// A host fingerprint that would not read back as it was given.
    #[error("host fingerprint: {field} {why}")]
    Fingerprint {
        /// The offending field's name.
        field: &'static str,
        /// What is wrong with it.
        why: String,
    },
    /// An agent name that is empty, too long or not printable.
    #[error("agent name: {0}")]
    AgentName(String),
    /// No per-agent token was ever issued for the name.
    #[error("no token was issued for agent {0}")]
    UnknownAgentToken(String),
    /// No registered agent has the id.
    #[error("no registered agent {0}")]
    UnknownAgent(i64),
    /// No stored weights have the version.
    #[error("no weights version {0}")]
    UnknownWeights(u32),
    /// No weights are promoted for the host key (`None`: for any host).
    #[error("no promoted weights for host key {0:?}")]
    NoPromotedWeights(Option<String>),
    /// A rollback of weights that have no parent version.
    #[error("weights version {0} has no parent to roll back to")]
    NoParent(u32),
    /// A stored value this build cannot read (a blob of the wrong length, an unknown failure class).
    #[error("corrupt value in the store: {0}")]
    Corrupt(String),
}
