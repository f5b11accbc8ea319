//! The agent's spool: every measured work item's results are written to
//! disk before they are reported, and removed once the server has
//! acknowledged them, so that an agent killed (or a host that fails) while
//! its report waits for the server loses no measured sample: the next
//! agent of the same name on the host sends what it finds in the spool
//! before it leases anything.
//!
//! One file per work item (its id, hex-encoded, so any id is a file name),
//! JSON. A file is written under a temporary name, flushed to disk and
//! renamed, and the folder flushed, so the spool never holds a half-written
//! report: a crash leaves the old state or the new one.

use data::WorkResult;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why the spool could not be read or written.
#[derive(Debug, Error)]
pub enum SpoolError {
    /// The spool's folder or one of its files could not be created, read,
    /// written, renamed, flushed or removed.
    #[error("spool {path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file of the spool is not a spooled report.
    #[error("spool {path}: not a spooled report: {source}")]
    Decode {
        /// The file.
        path: PathBuf,
        /// The JSON error.
        source: serde_json::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SpoolError + '_ {
    move |source| SpoolError::Io { path: path.to_path_buf(), source }
}

const EXTENSION: &str = "json";
const REJECTED_EXTENSION: &str = "rejected";

/// A folder of reports not yet acknowledged.
#[derive(Clone, Debug)]
pub struct Spool {
    dir: PathBuf,
}

/// A report found in the spool.
#[derive(Debug)]
pub struct Spooled {
    /// The file it was read from.
    pub path: PathBuf,
    /// The work item's results.
    pub result: WorkResult,
}

impl Spool {
    /// The spool in `dir`, created if missing.
    pub fn open(dir: &Path) -> Result<Spool, SpoolError> {
        fs::create_dir_all(dir).map_err(io(dir))?;
        Ok(Spool { dir: dir.to_path_buf() })
    }

    /// The spool's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path_of(&self, work_id: &str, extension: &str) -> PathBuf {
        let name: String = work_id.bytes().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{name}.{extension}"))
    }

    /// Writes `result` to disk (durably) and says where.
    pub fn put(&self, result: &WorkResult) -> Result<PathBuf, SpoolError> {
        let path = self.path_of(&result.work_id, EXTENSION);
        let partial = self.path_of(&result.work_id, "partial");
        let bytes = serde_json::to_vec(result).expect("work results serialize");
        let mut file = File::create(&partial).map_err(io(&partial))?;
        file.write_all(&bytes).map_err(io(&partial))?;
        file.sync_all().map_err(io(&partial))?;
        fs::rename(&partial, &path).map_err(io(&path))?;
        File::open(&self.dir).and_then(|d| d.sync_all()).map_err(io(&self.dir))?;
        Ok(path)
    }

    /// The spooled reports, oldest work id first (by file name, so the
    /// order is the same on every run).
    pub fn pending(&self) -> Result<Vec<Spooled>, SpoolError> {
        let mut paths: Vec<PathBuf> = fs::read_dir(&self.dir)
            .map_err(io(&self.dir))?
            .map(|entry| entry.map(|e| e.path()).map_err(io(&self.dir)))
            .collect::<Result<_, _>>()?;
        paths.retain(|p| p.extension().is_some_and(|e| e == EXTENSION));
        paths.sort();
        paths
            .into_iter()
            .map(|path| {
                let bytes = fs::read(&path).map_err(io(&path))?;
                let result = serde_json::from_slice(&bytes).map_err(|source| SpoolError::Decode { path: path.clone(), source })?;
                Ok(Spooled { path, result })
            })
            .collect()
    }

    /// Forgets an acknowledged report.
    pub fn remove(&self, path: &Path) -> Result<(), SpoolError> {
        fs::remove_file(path).map_err(io(path))
    }

    /// Sets aside a report the server refused for good (kept for a person
    /// to look at, never sent again); where it went.
    pub fn reject(&self, spooled: &Spooled) -> Result<PathBuf, SpoolError> {
        let to = self.path_of(&spooled.result.work_id, REJECTED_EXTENSION);
        fs::rename(&spooled.path, &to).map_err(io(&to))?;
        Ok(to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use data::{Features, LayoutId, SampleRecord, ScheduleRecord};

    fn result(work_id: &str) -> WorkResult {
        let layout = LayoutId { version: 1, names_hash: u64::MAX, len: 1 };
        WorkResult {
            work_id: work_id.into(),
            pipeline_hash: "p".into(),
            pipeline_features: Features { layout, stages: 1, values: vec![0.5] },
            schedules: vec![ScheduleRecord {
                hash: "s".into(),
                source: "f.vectorize(x)".into(),
                features: Features { layout, stages: 1, values: vec![1.5] },
            }],
            samples: vec![SampleRecord {
                schedule_hash: "s".into(),
                compile_time_s: Some(0.25),
                outcome: data::Outcome::Measured(data::Runtime { min_s: 1e-3, median_s: 2e-3, samples: 3 }),
            }],
        }
    }

    #[test]
    fn reports_round_trip_in_work_id_order_until_removed_or_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::open(&dir.path().join("spool")).unwrap();
        assert!(spool.pending().unwrap().is_empty());
        let (b, a, odd) = (result("work-b"), result("work-a"), result("round 3/seed 7 \u{e9}"));
        for r in [&b, &a, &odd] {
            spool.put(r).unwrap();
        }
        // Written again (a retried report): still one file.
        spool.put(&a).unwrap();
        let pending = spool.pending().unwrap();
        let ids: Vec<&str> = pending.iter().map(|s| s.result.work_id.as_str()).collect();
        assert_eq!(ids, ["round 3/seed 7 \u{e9}", "work-a", "work-b"]);
        assert_eq!(pending[1].result, a);
        spool.remove(&pending[1].path).unwrap();
        let rejected = spool.reject(&pending[2]).unwrap();
        assert!(rejected.exists());
        let left: Vec<WorkResult> = spool.pending().unwrap().into_iter().map(|s| s.result).collect();
        assert_eq!(left, [odd]);
        // Nothing half-written is left beside them.
        assert_eq!(fs::read_dir(spool.dir()).unwrap().count(), 2);
    }

    #[test]
    fn a_file_that_is_not_a_report_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::open(dir.path()).unwrap();
        fs::write(dir.path().join("00.json"), b"{ not json").unwrap();
        let e = spool.pending().unwrap_err().to_string();
        assert!(e.contains("00.json") && e.contains("not a spooled report"), "{e}");
    }
}
