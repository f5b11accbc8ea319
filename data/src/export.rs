//! Samples as flat rows, and as CSV.

use std::io::Write;

use crate::store::narrow;
use crate::{ExportRow, Store, StoreError};

/// The CSV header: [`ExportRow`]'s fields, in order.
pub const EXPORT_COLUMNS: [&str; 13] = [
    "host_key",
    "cpu_model",
    "pipeline_hash",
    "schedule_hash",
    "compile_time_s",
    "runtime_min_s",
    "runtime_median_s",
    "runtime_samples",
    "failure",
    "round",
    "agent",
    "work_id",
    "recorded_at",
];

impl Store {
    /// One row per sample, in storage order.
    pub fn export_rows(&self) -> Result<Vec<ExportRow>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT h.key, h.cpu_model, p.hash, s.hash, sa.compile_time_s, sa.runtime_min_s, sa.runtime_median_s, sa.runtime_samples,
                    sa.failure, r.round, r.agent, r.work_id, r.recorded_at
             FROM samples sa
             JOIN reports r ON r.id = sa.report_id
             JOIN hosts h ON h.id = r.host_id
             JOIN schedules s ON s.id = sa.schedule_id
             JOIN pipelines p ON p.id = s.pipeline_id
             ORDER BY sa.id",
        )?;
        let mut rows = stmt.query([])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(ExportRow {
                host_key: r.get(0)?,
                cpu_model: r.get(1)?,
                pipeline_hash: r.get(2)?,
                schedule_hash: r.get(3)?,
                compile_time_s: r.get(4)?,
                runtime_min_s: r.get(5)?,
                runtime_median_s: r.get(6)?,
                runtime_samples: r.get::<_, Option<i64>>(7)?.map(|n| narrow(n, "runtime_samples")).transpose()?,
                failure: r.get(8)?,
                round: narrow(r.get(9)?, "round")?,
                agent: r.get(10)?,
                work_id: r.get(11)?,
                recorded_at: r.get(12)?,
            });
        }
        Ok(out)
    }

    /// Writes [`Store::export_rows`] as CSV under the header [`EXPORT_COLUMNS`]
    /// (also when there are no rows); returns the number of rows.
    pub fn export_csv(&self, out: impl Write) -> Result<usize, StoreError> {
        let rows = self.export_rows()?;
        let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(out);
        w.write_record(EXPORT_COLUMNS)?;
        for row in &rows {
            w.serialize(row)?;
        }
        w.flush().map_err(csv::Error::from)?;
        Ok(rows.len())
    }
}
