//! The twelve apps as a yardstick of a cost model, against another
//! scheduler's times measured on the same host.
//!
//! Each app (at its paper size, estimated as it runs) is autoscheduled
//! under the model at a fixed search budget, compiled in the fast float
//! mode (Halide's default) and timed as the bench times it
//! ([`benchmark::measure`]); the yardstick is the geometric mean over the
//! apps of the reference's time over ours (above 1: ours faster). The
//! reference times are read from the JSON that `bench/halide/run.sh`
//! writes (`results[]` rows with `app`, `kind`, `ok` and `min_ms`), so the
//! reference must have been measured on this host, with the same thread
//! count, for the figure to mean anything. `datagen bootstrap
//! --apps-against` prints it after every round (the learning curve of a
//! new host against Halide's Adams2019).

use crate::AgentError;
use benchmark::{measure, SamplingOptions};
use compiler::Target;
use search::{BeamOptions, CostModel};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Why the reference times could not be read.
#[derive(Debug, Error)]
pub enum ReferenceError {
    /// The file could not be read.
    #[error("reading {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The failure.
        source: std::io::Error,
    },
    /// The file is not the Halide bench's JSON.
    #[error("{path} is not the JSON of bench/halide/run.sh: {source}")]
    Parse {
        /// The file.
        path: String,
        /// The failure.
        source: serde_json::Error,
    },
    /// The file times none of the apps under the kind asked for.
    #[error("{path} has no successful `{kind}` times (kinds timed there: {kinds})")]
    NoTimes {
        /// The file.
        path: String,
        /// The kind asked for.
        kind: String,
        /// The kinds the file has, comma-separated.
        kinds: String,
    },
}

/// One row of the Halide bench's `results`.
#[derive(Deserialize)]
struct HalideResult {
    app: String,
    kind: String,
    #[serde(default)]
    ok: bool,
    min_ms: Option<f64>,
}

#[derive(Deserialize)]
struct HalideBench {
    results: Vec<HalideResult>,
}

/// Another scheduler's best-of-samples times of the apps.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// The scheduler (the Halide bench's kind, such as `Adams2019`).
    pub kind: String,
    /// Milliseconds by app name.
    pub min_ms: BTreeMap<String, f64>,
}

impl Reference {
    /// The `kind` rows of the Halide bench's JSON in `path` that ran.
    pub fn from_halide_bench(path: &Path, kind: &str) -> Result<Reference, ReferenceError> {
        let shown = || path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ReferenceError::Read { path: shown(), source })?;
        let bench: HalideBench = serde_json::from_str(&text).map_err(|source| ReferenceError::Parse { path: shown(), source })?;
        let min_ms: BTreeMap<String, f64> = bench
            .results
            .iter()
            .filter(|r| r.kind == kind && r.ok)
            .filter_map(|r| r.min_ms.filter(|ms| ms.is_finite() && *ms > 0.0).map(|ms| (r.app.clone(), ms)))
            .collect();
        if min_ms.is_empty() {
            let kinds: std::collections::BTreeSet<&str> = bench.results.iter().map(|r| r.kind.as_str()).collect();
            let kinds = kinds.into_iter().collect::<Vec<_>>().join(", ");
            return Err(ReferenceError::NoTimes { path: shown(), kind: kind.to_string(), kinds });
        }
        Ok(Reference { kind: kind.to_string(), min_ms })
    }
}

/// One app under the model beside the reference.
#[derive(Clone, Debug, PartialEq)]
pub struct AppTime {
    /// The app.
    pub app: String,
    /// Ours, best of samples.
    pub ours_ms: f64,
    /// The reference's.
    pub reference_ms: f64,
}

/// The apps under one model.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// Every app the reference times, in the catalog's order.
    pub apps: Vec<AppTime>,
    /// Wall time of the searches and timings.
    pub took: Duration,
}

impl Measured {
    /// Geometric mean of reference time over ours (above 1: ours faster).
    pub fn geomean_speedup(&self) -> f64 {
        let logs: Vec<f64> = self.apps.iter().map(|a| (a.reference_ms / a.ours_ms).ln()).collect();
        (logs.iter().sum::<f64>() / logs.len().max(1) as f64).exp()
    }
}

/// Autoschedules each of the twelve apps the reference times under
/// `model` (search budget `budget`, seed 0), times them, and pairs the
/// times with the reference's.
pub fn measure_apps(model: &mut dyn CostModel, reference: &Reference, budget: Duration) -> Result<Measured, AgentError> {
    let started = Instant::now();
    let host = Target::host();
    let options = BeamOptions { budget, ..BeamOptions::default() };
    let sampling = SamplingOptions { fast_float: true, ..SamplingOptions::default() };
    let mut apps = vec![];
    for name in apps::names_in(apps::Set::Apps) {
        let Some(&reference_ms) = reference.min_ms.get(name) else { continue };
        let app = apps::build(name, apps::Size::Paper, &host).expect("a catalog app builds");
        let searched = search::autoschedule(&app.pipeline_estimated_as_run(), &host, model, &options, 0)?;
        let schedule = searched.answer().ok_or(AgentError::Abandoned)?.schedule;
        let timed = measure(&app, &[("ours", schedule)], &sampling).map_err(Box::new)?;
        apps.push(AppTime { app: name.to_string(), ours_ms: timed.rows[0].min_ms, reference_ms });
    }
    Ok(Measured { apps, took: started.elapsed() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().expect("a temporary file");
        std::fs::write(file.path(), text).expect("written");
        file
    }

    #[test]
    fn reads_the_kind_asked_for_and_skips_failures() {
        let file = write(
            r#"{"results": [
                {"app": "blur", "kind": "Adams2019", "ok": true, "min_ms": 2.0},
                {"app": "blur", "kind": "Li2018", "ok": true, "min_ms": 3.0},
                {"app": "harris", "kind": "Adams2019", "ok": false, "error": "timed out"},
                {"app": "matmul", "kind": "Adams2019", "ok": true, "min_ms": 0.0}
            ]}"#,
        );
        let reference = Reference::from_halide_bench(file.path(), "Adams2019").expect("read");
        assert_eq!(reference.min_ms, BTreeMap::from([("blur".to_string(), 2.0)]));
    }

    #[test]
    fn a_file_without_the_kind_names_the_kinds_it_has() {
        let file = write(r#"{"results": [{"app": "blur", "kind": "Li2018", "ok": true, "min_ms": 3.0}]}"#);
        let e = Reference::from_halide_bench(file.path(), "Adams2019").expect_err("no Adams2019 rows");
        assert!(e.to_string().contains("Adams2019") && e.to_string().contains("Li2018"), "{e}");
        let e = Reference::from_halide_bench(write("[1, 2]").path(), "Adams2019").expect_err("not the bench's JSON");
        assert!(matches!(e, ReferenceError::Parse { .. }), "{e}");
    }

    #[test]
    fn the_geomean_is_of_reference_over_ours() {
        let at = |ours_ms, reference_ms| AppTime { app: "a".into(), ours_ms, reference_ms };
        let measured = Measured { apps: vec![at(1.0, 2.0), at(4.0, 2.0), at(1.0, 4.0)], took: Duration::ZERO };
        assert!((measured.geomean_speedup() - 4f64.powf(1.0 / 3.0)).abs() < 1e-12);
    }
}
