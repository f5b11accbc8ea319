//! Writing reports and hosts: one `BEGIN IMMEDIATE` transaction each, idempotent.
//!
//! A report's identity is (work id, host); a sample's is (report, schedule),
//! that is (work id, schedule hash, host). Rows already present are left as
//! they are (`ON CONFLICT DO NOTHING`), so an agent that retries a report
//! whose acknowledgement it lost stores nothing twice, and a kill between two
//! statements of a report leaves none of it (the transaction rolls back).

use std::collections::HashMap;

use rusqlite::{params, OptionalExtension, Transaction, TransactionBehavior};

use crate::blob::f32s_to_bytes;
use crate::store::unix_now;
use crate::{Features, HostFingerprint, Outcome, Report, ReportOutcome, Store, StoreError};

impl Store {
    /// Stores the host if it is new; returns its key.
    pub fn upsert_host(&mut self, host: &HostFingerprint) -> Result<String, StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        upsert_host(&tx, host)?;
        tx.commit()?;
        Ok(host.key())
    }

    /// Stores a report (its host, pipeline, schedules and samples) in one
    /// transaction. Samples already stored by an earlier copy of the report
    /// count as duplicates; everything else about them is left as first stored.
    ///
    /// Errors, and stores nothing of the report, when a feature matrix has the
    /// wrong number of values, a sample names a schedule the report lacks, or
    /// the work id was recorded on this host for another pipeline.
    pub fn record_report(&mut self, report: &Report) -> Result<ReportOutcome, StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (outcome, _) = record_in(&tx, report)?;
        tx.commit()?;
        Ok(outcome)
    }
}

/// Stores `report` inside `tx` (see [`Store::record_report`]); returns
/// what it stored and the report's row id.
pub(crate) fn record_in(tx: &Transaction<'_>, report: &Report) -> Result<(ReportOutcome, i64), StoreError> {
    report.pipeline.features.check_shape(&format!("pipeline {}", report.pipeline.hash))?;
    for s in &report.schedules {
        s.features.check_shape(&format!("schedule {}", s.hash))?;
    }

    let host_id = upsert_host(tx, &report.host)?;
    let pipeline = &report.pipeline;
    tx.prepare_cached("INSERT INTO pipelines (hash, source) VALUES (?1, ?2) ON CONFLICT DO NOTHING")?
        .execute(params![pipeline.hash, serde_json::to_string(&pipeline.source)?])?;
    let pipeline_id: i64 = tx.prepare_cached("SELECT id FROM pipelines WHERE hash = ?1")?.query_row([&pipeline.hash], |r| r.get(0))?;
    insert_features(tx, "pipeline", pipeline_id, &pipeline.features)?;

    let mut schedule_ids = HashMap::new();
    for s in &report.schedules {
        tx.prepare_cached("INSERT INTO schedules (pipeline_id, hash, source) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING")?
            .execute(params![pipeline_id, s.hash, s.source])?;
        let id: i64 = tx
            .prepare_cached("SELECT id FROM schedules WHERE pipeline_id = ?1 AND hash = ?2")?
            .query_row(params![pipeline_id, s.hash], |r| r.get(0))?;
        insert_features(tx, "schedule", id, &s.features)?;
        schedule_ids.insert(s.hash.as_str(), id);
    }

    tx.prepare_cached(
        "INSERT INTO reports (work_id, host_id, pipeline_id, agent, round, recorded_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT DO NOTHING",
    )?
    .execute(params![report.work_id, host_id, pipeline_id, report.agent, report.round, unix_now()])?;
    let (report_id, stored_pipeline): (i64, i64) = tx
        .prepare_cached("SELECT id, pipeline_id FROM reports WHERE work_id = ?1 AND host_id = ?2")?
        .query_row(params![report.work_id, host_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
    if stored_pipeline != pipeline_id {
        let stored = tx.query_row("SELECT hash FROM pipelines WHERE id = ?1", [stored_pipeline], |r| r.get(0))?;
        return Err(StoreError::ReportConflict { work_id: report.work_id.clone(), stored, given: pipeline.hash.clone() });
    }

    let mut outcome = ReportOutcome::default();
    for s in &report.samples {
        let schedule_id = *schedule_ids
            .get(s.schedule_hash.as_str())
            .ok_or_else(|| StoreError::UnknownSchedule { work_id: report.work_id.clone(), schedule_hash: s.schedule_hash.clone() })?;
        let (min, median, count, failure) = match s.outcome {
            Outcome::Measured(r) => (Some(r.min_s), Some(r.median_s), Some(r.samples), None),
            Outcome::Failed(class) => (None, None, None, Some(class.as_str())),
        };
        let inserted = tx
            .prepare_cached(
                "INSERT INTO samples (report_id, schedule_id, compile_time_s, runtime_min_s, runtime_median_s, runtime_samples, failure)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING",
            )?
            .execute(params![report_id, schedule_id, s.compile_time_s, min, median, count, failure])?;
        if inserted == 1 {
            outcome.inserted += 1;
        } else {
            outcome.duplicates += 1;
        }
    }
    Ok((outcome, report_id))
}

/// The host's row id, inserting it first if it is new; a fingerprint that
/// would not read back exactly is refused ([`HostFingerprint::check`]).
pub(crate) fn upsert_host(tx: &Transaction<'_>, host: &HostFingerprint) -> Result<i64, StoreError> {
    host.check()?;
    let key = host.key();
    let existing = tx.prepare_cached("SELECT id FROM hosts WHERE key = ?1")?.query_row([&key], |r| r.get(0)).optional()?;
    if let Some(id) = existing {
        return Ok(id);
    }
    tx.prepare_cached(
        "INSERT INTO hosts (key, cpu_model, isa_features, logical_cores, physical_cores, caches, gpu, first_seen)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        key,
        host.cpu_model,
        host.isa_features.join(" "),
        host.logical_cores,
        host.physical_cores,
        serde_json::to_string(&host.caches)?,
        host.gpu,
        unix_now()
    ])?;
    Ok(tx.last_insert_rowid())
}

/// Stores a feature matrix of a pipeline or a schedule (`kind`) unless one
/// of its layout is there; returns how many it stored (0 or 1).
pub(crate) fn insert_features(tx: &Transaction<'_>, kind: &str, owner: i64, f: &Features) -> Result<usize, StoreError> {
    let sql = format!(
        "INSERT INTO {kind}_features ({kind}_id, layout_version, layout_hash, layout_len, stages, features)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING"
    );
    tx.prepare_cached(&sql)?
        .execute(params![owner, f.layout.version, f.layout.hash_sql(), f.layout.len, f.stages, f32s_to_bytes(&f.values)])
        .map_err(StoreError::from)
}
