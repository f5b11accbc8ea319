//! Reading samples back: training data grouped by pipeline, the pipelines, counts.

use rusqlite::{params, OptionalExtension, Row};

use crate::blob::f32s_from_bytes;
use crate::store::narrow;
use crate::{
    Features, HostFingerprint, LayoutId, PipelineInfo, PipelineSamples, PipelineSource, Runtime, ScheduleSample, Store, StoreError, Summary,
};

impl Store {
    /// The measured samples of one host whose pipeline and schedule features
    /// exist in the given layouts, grouped by pipeline (in storage order).
    /// Failed samples and features of other layouts are left out. A schedule
    /// timed more than once on the host in one bootstrap round (timed again
    /// after the compiler changed: a retimed report keeps its round) counts
    /// once, as its newest sample says: a newer failure leaves it out.
    /// Samples of other rounds are kept, so that training on rounds up to
    /// r reads what it read before round r + 1 was recorded.
    pub fn samples_for_training(
        &self,
        host_key: &str,
        pipeline_layout: LayoutId,
        schedule_layout: LayoutId,
    ) -> Result<Vec<PipelineSamples>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT p.hash, pf.stages, pf.features, s.hash, sf.stages, sf.features,
                    sa.runtime_min_s, sa.runtime_median_s, sa.runtime_samples, r.round
             FROM samples sa
             JOIN reports r ON r.id = sa.report_id
             JOIN hosts h ON h.id = r.host_id
             JOIN schedules s ON s.id = sa.schedule_id
             JOIN pipelines p ON p.id = s.pipeline_id
             JOIN pipeline_features pf ON pf.pipeline_id = p.id AND pf.layout_version = ?2 AND pf.layout_hash = ?3 AND pf.layout_len = ?4
             JOIN schedule_features sf ON sf.schedule_id = s.id AND sf.layout_version = ?5 AND sf.layout_hash = ?6 AND sf.layout_len = ?7
             WHERE h.key = ?1 AND sa.failure IS NULL
               AND NOT EXISTS (SELECT 1 FROM samples newer JOIN reports nr ON nr.id = newer.report_id
                               WHERE newer.schedule_id = sa.schedule_id AND nr.host_id = r.host_id AND nr.round = r.round
                                 AND newer.id > sa.id)
             ORDER BY p.id, sa.id",
        )?;
        let mut rows = stmt.query(params![
            host_key,
            pipeline_layout.version,
            pipeline_layout.hash_sql(),
            pipeline_layout.len,
            schedule_layout.version,
            schedule_layout.hash_sql(),
            schedule_layout.len
        ])?;
        let mut out: Vec<PipelineSamples> = Vec::new();
        while let Some(row) = rows.next()? {
            let pipeline_hash: String = row.get(0)?;
            if out.last().is_none_or(|p| p.pipeline_hash != pipeline_hash) {
                let features = features(row, 1, pipeline_layout, &pipeline_hash)?;
                out.push(PipelineSamples { pipeline_hash, features, samples: Vec::new() });
            }
            let schedule_hash: String = row.get(3)?;
            let sample = ScheduleSample {
                features: features(row, 4, schedule_layout, &schedule_hash)?,
                schedule_hash,
                runtime: Runtime { min_s: row.get(6)?, median_s: row.get(7)?, samples: narrow(row.get(8)?, "runtime_samples")? },
                round: narrow(row.get(9)?, "round")?,
            };
            if let Some(p) = out.last_mut() {
                p.samples.push(sample);
            }
        }
        Ok(out)
    }

    /// Every stored pipeline with its schedule and sample counts, in storage order.
    pub fn pipelines(&self) -> Result<Vec<PipelineInfo>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT p.hash, p.source,
                    (SELECT COUNT(*) FROM schedules s WHERE s.pipeline_id = p.id),
                    (SELECT COUNT(*) FROM samples sa JOIN schedules s ON s.id = sa.schedule_id WHERE s.pipeline_id = p.id)
             FROM pipelines p ORDER BY p.id",
        )?;
        let mut rows = stmt.query([])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let source: String = row.get(1)?;
            out.push(PipelineInfo {
                hash: row.get(0)?,
                source: serde_json::from_str::<PipelineSource>(&source)?,
                schedules: narrow(row.get(2)?, "schedule count")?,
                samples: narrow(row.get(3)?, "sample count")?,
            });
        }
        Ok(out)
    }

    /// The fingerprint of the host with this key, if the store has met it.
    pub fn host(&self, key: &str) -> Result<Option<HostFingerprint>, StoreError> {
        let id: Option<i64> = self.conn.prepare_cached("SELECT id FROM hosts WHERE key = ?1")?.query_row([key], |r| r.get(0)).optional()?;
        id.map(|id| crate::queue::host_of(&self.conn, id)).transpose()
    }

    /// The highest bootstrap round any report was recorded under.
    pub fn latest_round(&self) -> Result<Option<u32>, StoreError> {
        let round: Option<i64> = self.conn.query_row("SELECT MAX(round) FROM reports", [], |r| r.get(0))?;
        round.map(|r| narrow(r, "round")).transpose()
    }

    /// Whether a report with this work id is stored for this host.
    pub fn has_report(&self, work_id: &str, host_key: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM reports r JOIN hosts h ON h.id = r.host_id WHERE r.work_id = ?1 AND h.key = ?2)")?
            .query_row(params![work_id, host_key], |r| r.get(0))?)
    }

    /// The pipeline a report of this host measured, if stored: its hash
    /// and how to rebuild it.
    pub fn report_pipeline(&self, work_id: &str, host_key: &str) -> Result<Option<(String, PipelineSource)>, StoreError> {
        let found: Option<(String, String)> = self
            .conn
            .prepare_cached(
                "SELECT p.hash, p.source FROM reports r JOIN hosts h ON h.id = r.host_id JOIN pipelines p ON p.id = r.pipeline_id
                 WHERE r.work_id = ?1 AND h.key = ?2",
            )?
            .query_row(params![work_id, host_key], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        found.map(|(hash, source)| Ok((hash, serde_json::from_str(&source)?))).transpose()
    }

    /// The measured schedules of one report, in storage order: each one's
    /// hash, source text and best runtime in seconds (to measure them again
    /// and see how repeatable the stored times are).
    pub fn report_runtimes(&self, work_id: &str, host_key: &str) -> Result<Vec<(String, String, f64)>, StoreError> {
        let mut statement = self.conn.prepare_cached(
            "SELECT sc.hash, sc.source, s.runtime_min_s FROM samples s \
             JOIN reports r ON r.id = s.report_id JOIN hosts h ON h.id = r.host_id JOIN schedules sc ON sc.id = s.schedule_id \
             WHERE r.work_id = ?1 AND h.key = ?2 AND s.runtime_min_s IS NOT NULL ORDER BY s.id",
        )?;
        let rows = statement.query_map(params![work_id, host_key], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Counts of everything, and of samples per host, round and outcome.
    pub fn summary(&self) -> Result<Summary, StoreError> {
        let count = |table: &str| -> Result<u64, StoreError> {
            narrow(self.conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))?, "count")
        };
        let mut summary = Summary {
            hosts: count("hosts")?,
            pipelines: count("pipelines")?,
            schedules: count("schedules")?,
            reports: count("reports")?,
            samples: count("samples")?,
            weights: count("weights")?,
            ..Summary::default()
        };
        let mut stmt = self.conn.prepare(
            "SELECT h.key, h.cpu_model, COUNT(sa.id) FROM hosts h
             LEFT JOIN reports r ON r.host_id = h.id LEFT JOIN samples sa ON sa.report_id = r.id
             GROUP BY h.id ORDER BY h.id",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            summary.samples_per_host.push((row.get(0)?, row.get(1)?, narrow(row.get(2)?, "count")?));
        }
        let mut stmt = self.conn.prepare(
            "SELECT r.round, COUNT(sa.id) FROM reports r LEFT JOIN samples sa ON sa.report_id = r.id GROUP BY r.round ORDER BY r.round",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            summary.samples_per_round.push((narrow(row.get(0)?, "round")?, narrow(row.get(1)?, "count")?));
        }
        let mut stmt =
            self.conn.prepare("SELECT COALESCE(failure, 'ok'), COUNT(*) FROM samples GROUP BY failure ORDER BY COUNT(*) DESC, failure")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            summary.samples_per_outcome.push((row.get(0)?, narrow(row.get(1)?, "count")?));
        }
        Ok(summary)
    }
}

/// The feature matrix in columns `first` (stages) and `first + 1` (blob) of a row, in `layout`.
pub(crate) fn features(row: &Row<'_>, first: usize, layout: LayoutId, owner: &str) -> Result<Features, StoreError> {
    let blob: Vec<u8> = row.get(first + 1)?;
    let f = Features { layout, stages: narrow(row.get(first)?, "stages")?, values: f32s_from_bytes(&blob)? };
    f.check_shape(owner).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    Ok(f)
}
