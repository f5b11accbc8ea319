//! Cost-model weights: versions with parents, one promoted version per host key.
//!
//! The trainer inserts each new set of weights with the version it started
//! from as parent; promotion makes a version the one served for its host key
//! (demoting the previous one in the same transaction, and a unique partial
//! index guarantees at most one); rollback promotes the current one's parent.

use rusqlite::{params, OptionalExtension, Row, Transaction, TransactionBehavior};

use crate::store::{narrow, unix_now};
use crate::{LayoutId, NewWeights, Store, StoreError, Weights, WeightsInfo};

const INFO_COLUMNS: &str = "version, parent_version, pipeline_layout_version, pipeline_layout_hash, pipeline_layout_len,
    schedule_layout_version, schedule_layout_hash, schedule_layout_len, training_set, metrics, host_key, promoted, created_at";

impl Store {
    /// Stores new weights (not promoted) and returns their version.
    pub fn insert_weights(&mut self, w: &NewWeights) -> Result<u32, StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        if let Some(parent) = w.parent {
            host_key_of(&tx, parent)?;
        }
        tx.execute(
            "INSERT INTO weights (parent_version, blob, pipeline_layout_version, pipeline_layout_hash, pipeline_layout_len,
                 schedule_layout_version, schedule_layout_hash, schedule_layout_len, training_set, metrics, host_key, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                w.parent,
                w.blob,
                w.pipeline_layout.version,
                w.pipeline_layout.hash_sql(),
                w.pipeline_layout.len,
                w.schedule_layout.version,
                w.schedule_layout.hash_sql(),
                w.schedule_layout.len,
                w.training_set,
                serde_json::to_string(&w.metrics)?,
                w.host_key,
                unix_now()
            ],
        )?;
        let version = narrow(tx.last_insert_rowid(), "weights version")?;
        tx.commit()?;
        Ok(version)
    }

    /// The weights of one version, blob included.
    pub fn weights(&self, version: u32) -> Result<Weights, StoreError> {
        let sql = format!("SELECT {INFO_COLUMNS}, blob FROM weights WHERE version = ?1");
        self.conn
            .query_row(&sql, [version], |r| Ok((info(r), r.get::<_, Vec<u8>>(13)?)))
            .optional()?
            .ok_or(StoreError::UnknownWeights(version))
            .and_then(|(info, blob)| Ok(Weights { info: info?, blob }))
    }

    /// Every version, oldest first, without blobs.
    pub fn weights_list(&self) -> Result<Vec<WeightsInfo>, StoreError> {
        let mut stmt = self.conn.prepare(&format!("SELECT {INFO_COLUMNS} FROM weights ORDER BY version"))?;
        let rows = stmt.query_map([], |r| Ok(info(r)))?;
        rows.map(|r| r?).collect()
    }

    /// The promoted weights for a host key (`None`: the weights for any host), if some are promoted.
    pub fn promoted_weights(&self, host_key: Option<&str>) -> Result<Option<Weights>, StoreError> {
        let version: Option<i64> = self
            .conn
            .query_row("SELECT version FROM weights WHERE promoted = 1 AND host_key IS ?1", [host_key], |r| r.get(0))
            .optional()?;
        version.map(|v| self.weights(narrow(v, "weights version")?)).transpose()
    }

    /// The promoted weights of every host key, in the order of the keys
    /// (weights promoted for any host left out).
    pub fn promoted_weights_of_every_host(&self) -> Result<Vec<Weights>, StoreError> {
        let mut stmt = self.conn.prepare("SELECT version FROM weights WHERE promoted = 1 AND host_key IS NOT NULL ORDER BY host_key")?;
        let versions: Vec<i64> = stmt.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
        versions.into_iter().map(|v| self.weights(narrow(v, "weights version")?)).collect()
    }

    /// Makes `version` the promoted weights of its host key, demoting the one promoted before.
    pub fn promote(&mut self, version: u32) -> Result<(), StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        promote(&tx, version)?;
        tx.commit()?;
        Ok(())
    }

    /// Demotes the promoted weights of a host key and promotes their parent; returns the parent's version.
    pub fn rollback(&mut self, host_key: Option<&str>) -> Result<u32, StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let current: Option<(i64, Option<i64>)> = tx
            .query_row("SELECT version, parent_version FROM weights WHERE promoted = 1 AND host_key IS ?1", [host_key], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        let (current, parent) = current.ok_or_else(|| StoreError::NoPromotedWeights(host_key.map(str::to_string)))?;
        let current: u32 = narrow(current, "weights version")?;
        let parent = narrow(parent.ok_or(StoreError::NoParent(current))?, "weights version")?;
        tx.execute("UPDATE weights SET promoted = 0 WHERE version = ?1", [current])?;
        promote(&tx, parent)?;
        tx.commit()?;
        Ok(parent)
    }
}

/// The host key of a stored version; an error when there is no such version.
fn host_key_of(tx: &Transaction<'_>, version: u32) -> Result<Option<String>, StoreError> {
    tx.query_row("SELECT host_key FROM weights WHERE version = ?1", [version], |r| r.get(0))
        .optional()?
        .ok_or(StoreError::UnknownWeights(version))
}

fn promote(tx: &Transaction<'_>, version: u32) -> Result<(), StoreError> {
    let host_key = host_key_of(tx, version)?;
    tx.execute("UPDATE weights SET promoted = 0 WHERE promoted = 1 AND host_key IS ?1", [&host_key])?;
    tx.execute("UPDATE weights SET promoted = 1 WHERE version = ?1", [version])?;
    Ok(())
}

/// A row of [`INFO_COLUMNS`].
fn info(r: &Row<'_>) -> Result<WeightsInfo, StoreError> {
    let metrics: String = r.get(9)?;
    Ok(WeightsInfo {
        version: narrow(r.get(0)?, "weights version")?,
        parent: r.get::<_, Option<i64>>(1)?.map(|p| narrow(p, "parent version")).transpose()?,
        pipeline_layout: LayoutId::from_sql(r.get(2)?, r.get(3)?, r.get(4)?)?,
        schedule_layout: LayoutId::from_sql(r.get(5)?, r.get(6)?, r.get(7)?)?,
        training_set: r.get(8)?,
        metrics: serde_json::from_str(&metrics)?,
        host_key: r.get(10)?,
        promoted: r.get(11)?,
        created_at: r.get(12)?,
    })
}
