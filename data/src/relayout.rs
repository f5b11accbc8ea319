//! Features of stored pipelines and schedules in another layout: read a
//! pipeline's schedules with whatever features they have in a layout, and
//! add features of a new layout beside the old (a layout's rows are never
//! replaced: a matrix once stored for a layout stays as it is).

use rusqlite::{params, OptionalExtension};

use crate::query::features;
use crate::write::insert_features;
use crate::{Features, LayoutId, Store, StoreError};

/// A stored schedule of one pipeline.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredSchedule {
    /// Its hash, unique within the pipeline.
    pub hash: String,
    /// Its text form.
    pub source: String,
    /// Its features in the layout asked for, if stored.
    pub features: Option<Features>,
}

impl Store {
    /// The schedules of the pipeline `pipeline_hash` (in storage order),
    /// each with its features in `layout` where stored.
    pub fn schedules_of(&self, pipeline_hash: &str, layout: LayoutId) -> Result<Vec<StoredSchedule>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT s.hash, s.source, sf.stages, sf.features FROM schedules s
             JOIN pipelines p ON p.id = s.pipeline_id
             LEFT JOIN schedule_features sf
               ON sf.schedule_id = s.id AND sf.layout_version = ?2 AND sf.layout_hash = ?3 AND sf.layout_len = ?4
             WHERE p.hash = ?1 ORDER BY s.id",
        )?;
        let mut rows = stmt.query(params![pipeline_hash, layout.version, layout.hash_sql(), layout.len])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let hash: String = row.get(0)?;
            // No matrix in this layout: the left join's columns are null.
            let features = match row.get::<_, Option<i64>>(2)? {
                Some(_) => Some(features(row, 2, layout, &hash)?),
                None => None,
            };
            out.push(StoredSchedule { hash, source: row.get(1)?, features });
        }
        Ok(out)
    }

    /// Adds features of another layout to a stored pipeline and to its
    /// schedules (by hash), in one transaction; a matrix of a layout already
    /// stored for its owner is left as it is. Returns how many schedules'
    /// matrices were added.
    pub fn add_features(
        &mut self,
        pipeline_hash: &str,
        pipeline: &Features,
        schedules: &[(String, Features)],
    ) -> Result<usize, StoreError> {
        pipeline.check_shape(&format!("pipeline {pipeline_hash}"))?;
        for (hash, f) in schedules {
            f.check_shape(&format!("schedule {hash}"))?;
        }
        let tx = self.conn.transaction()?;
        let pipeline_id: i64 = tx
            .prepare_cached("SELECT id FROM pipelines WHERE hash = ?1")?
            .query_row([pipeline_hash], |r| r.get(0))
            .optional()?
            .ok_or_else(|| StoreError::UnknownPipeline(pipeline_hash.to_string()))?;
        insert_features(&tx, "pipeline", pipeline_id, pipeline)?;
        let mut added = 0;
        for (hash, f) in schedules {
            let schedule_id: i64 = tx
                .prepare_cached("SELECT id FROM schedules WHERE pipeline_id = ?1 AND hash = ?2")?
                .query_row(params![pipeline_id, hash], |r| r.get(0))
                .optional()?
                .ok_or_else(|| StoreError::UnknownStoredSchedule { pipeline: pipeline_hash.to_string(), schedule: hash.clone() })?;
            added += insert_features(&tx, "schedule", schedule_id, f)?;
        }
        tx.commit()?;
        Ok(added)
    }
}
