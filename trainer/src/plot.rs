//! Charts of the cost model as PNG files (plotters' bitmap backend): the
//! promoted weights' predictions against the measured times of the
//! held-out set (log-log), the promoted version's loss curve and held-out
//! accuracy per epoch, the held-out metrics of every weights version
//! of a host, measured again on today's held-out set, and a bootstrap's
//! learning curve ([`CurvePoint`]s against learning time).
//!
//! Text is drawn with DejaVu Sans, embedded in the binary
//! (`assets/DejaVuSans.ttf`, Bitstream Vera licence in
//! `assets/DejaVuSans-LICENSE.txt`) and rendered by `ab_glyph`, so no
//! system font library (fontconfig, freetype) is needed.

use crate::dataset::{load, StoredPipeline};
use crate::metrics::{evaluate, predictions, Metrics, Predictions};
use crate::retrain::{stored_network, EpochRecord, RetrainError, StoredMetrics};
use compiler::Target;
use data::Store;
use plotters::coord::Shift;
use plotters::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use thiserror::Error;

const FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
const FONT_FAMILY: &str = "sans-serif";
/// Predictions below this many seconds are drawn at this value on the log axis.
const MIN_PLOTTED_SECONDS: f64 = 1e-12;

/// Why a chart was not drawn.
#[derive(Debug, Error)]
pub enum PlotError {
    /// Reading the data or the weights to plot failed.
    #[error(transparent)]
    Retrain(#[from] RetrainError),
    /// The embedded font could not be registered with plotters.
    #[error("the embedded font could not be loaded")]
    Font,
    /// Plotters failed to draw or save a chart.
    #[error("drawing {path}: {message}")]
    Draw {
        /// The chart's file.
        path: PathBuf,
        /// Plotters' error, as text.
        message: String,
    },
    /// The output folder could not be created.
    #[error("creating {path}: {source}")]
    Io {
        /// The folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The host (its key) has no promoted weights.
    #[error("no promoted weights for host {0}: nothing to plot")]
    NoPromotedWeights(String),
}

type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

fn register_font() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let registered = *REGISTERED.get_or_init(|| plotters::style::register_font(FONT_FAMILY, FontStyle::Normal, FONT).is_ok());
    registered.then_some(()).ok_or(PlotError::Font)
}

/// The charts of `host_key`'s cost model into `dir` (created if needed);
/// returns the files written.
pub fn charts(store: &Store, host_key: &str, target: &Target, held_out_percent: u32, dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    std::fs::create_dir_all(dir).map_err(|source| PlotError::Io { path: dir.to_path_buf(), source })?;
    let promoted = store
        .promoted_weights(Some(host_key))
        .map_err(RetrainError::from)?
        .ok_or_else(|| PlotError::NoPromotedWeights(host_key.to_string()))?;
    let version = promoted.info.version;
    let dataset = load(store, host_key, target, held_out_percent).map_err(RetrainError::from)?;
    let network = stored_network(store, version)?;
    let scatter = dir.join("predicted_vs_measured.png");
    let held_out = predictions(&network, &dataset.held_out).map_err(RetrainError::from)?;
    predicted_vs_measured(&scatter, &held_out, &format!("held-out predictions of weights v{version}"))?;
    let curve = dir.join("loss_curve.png");
    let epochs = serde_json::from_value::<StoredMetrics>(promoted.info.metrics).map(|m| m.epochs).unwrap_or_default();
    loss_curve(&curve, &epochs, &format!("training of weights v{version}"))?;
    let by_version = dir.join("metrics_by_version.png");
    metrics_by_version(&by_version, &version_metrics(store, host_key, &dataset.held_out)?)?;
    Ok(vec![scatter, curve, by_version])
}

/// Every version of the host that fits this build, with its metrics on `held_out`.
fn version_metrics(store: &Store, host_key: &str, held_out: &[StoredPipeline]) -> Result<Vec<(u32, Metrics)>, PlotError> {
    let versions = store.weights_list().map_err(RetrainError::from)?;
    let mut out = vec![];
    for info in versions.iter().filter(|w| w.host_key.as_deref() == Some(host_key)) {
        if let Ok(network) = stored_network(store, info.version) {
            out.push((info.version, evaluate(&network, held_out).map_err(RetrainError::from)?));
        }
    }
    Ok(out)
}

/// Predicted against measured seconds, log-log, with the diagonal.
pub fn predicted_vs_measured(path: &Path, predictions: &[Predictions], title: &str) -> Result<(), PlotError> {
    register_font()?;
    let points: Vec<(f64, f64)> = predictions
        .iter()
        .flat_map(|p| p.measured.iter().zip(&p.predicted))
        .map(|(&m, &q)| (m, q.max(MIN_PLOTTED_SECONDS)))
        .filter(|(m, q)| m.is_finite() && *m > 0.0 && q.is_finite())
        .collect();
    let values = points.iter().flat_map(|&(m, q)| [m, q]);
    let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (lo, hi) = if lo <= hi { (lo / 2.0, hi * 2.0) } else { (1e-6, 1.0) };
    let err = |e: &dyn std::fmt::Display| PlotError::Draw { path: path.to_path_buf(), message: e.to_string() };
    let root = BitMapBackend::new(path, (800, 800)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FONT_FAMILY, 22))
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d((lo..hi).log_scale(), (lo..hi).log_scale())
        .map_err(|e| err(&e))?;
    chart.configure_mesh().x_desc("measured seconds").y_desc("predicted seconds").draw().map_err(|e| err(&e))?;
    chart.draw_series(LineSeries::new([(lo, lo), (hi, hi)], BLACK.mix(0.4))).map_err(|e| err(&e))?;
    chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, BLUE.mix(0.6).filled()))).map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}

/// Mean training loss and held-out pairwise accuracy (of the pairs more
/// than [`crate::metrics::FAR_APART`] times apart) per epoch.
pub fn loss_curve(path: &Path, epochs: &[EpochRecord], title: &str) -> Result<(), PlotError> {
    register_font()?;
    let err = |e: &dyn std::fmt::Display| PlotError::Draw { path: path.to_path_buf(), message: e.to_string() };
    let root = BitMapBackend::new(path, (900, 800)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let root = root.titled(title, (FONT_FAMILY, 22)).map_err(|e| err(&e))?;
    let panels = root.split_evenly((2, 1));
    let loss: Vec<(f64, f64)> = epochs.iter().filter_map(|e| Some((e.epoch as f64, e.mean_loss?))).collect();
    let accuracy: Vec<(f64, f64)> = epochs.iter().map(|e| (e.epoch as f64, e.held_out.pairwise_accuracy_far)).collect();
    line_panel(&panels[0], "mean training loss", "epoch", &loss).map_err(|e| err(&e))?;
    let far = format!("held-out pairwise accuracy, pairs > {}x apart", crate::metrics::FAR_APART);
    line_panel(&panels[1], &far, "epoch", &accuracy).map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}

/// Held-out top-1 score, pairwise accuracy of the pairs more than
/// [`crate::metrics::FAR_APART`] times apart and R² of log runtime by
/// weights version (the first two of the versions whose stored metrics
/// hold them).
pub fn metrics_by_version(path: &Path, versions: &[(u32, Metrics)]) -> Result<(), PlotError> {
    register_font()?;
    let err = |e: &dyn std::fmt::Display| PlotError::Draw { path: path.to_path_buf(), message: e.to_string() };
    let root = BitMapBackend::new(path, (900, 1000)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let root = root.titled("held-out metrics by weights version", (FONT_FAMILY, 22)).map_err(|e| err(&e))?;
    let panels = root.split_evenly((3, 1));
    let series = |f: fn(&Metrics) -> f64, all: bool| -> Vec<(f64, f64)> {
        versions.iter().filter(|(_, m)| all || m.has_top1_score()).map(|(v, m)| (f64::from(*v), f(m))).collect()
    };
    let far = format!("pairwise accuracy, pairs > {}x apart", crate::metrics::FAR_APART);
    line_panel(&panels[0], "top-1 score", "weights version", &series(|m| m.top1_score, false)).map_err(|e| err(&e))?;
    line_panel(&panels[1], &far, "weights version", &series(|m| m.pairwise_accuracy_far, false)).map_err(|e| err(&e))?;
    line_panel(&panels[2], "R² of log runtime", "weights version", &series(|m| m.r2_log_runtime, true)).map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}

/// Where a bootstrap stood after a round (a line of `datagen bootstrap
/// --curve`): the model that now ranks the host's searches, its held-out
/// metrics, and the apps under it against a reference scheduler.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// The round just finished; `None` before the first.
    pub round: Option<u32>,
    /// Minutes of generation and retraining so far (the apps' timing not counted).
    pub minutes: f64,
    /// Measured samples in the store.
    pub samples: u64,
    /// The model that ranks the host's searches now, in words.
    pub model: String,
    /// Held-out top-1 score of the round's weights.
    pub top1_score: Option<f64>,
    /// Held-out pairwise accuracy of the round's weights, pairs more than
    /// [`crate::metrics::FAR_APART`] times apart.
    pub pairwise_accuracy_far: Option<f64>,
    /// The apps' geometric-mean speed against the reference (above 1: faster).
    pub apps_speedup: Option<f64>,
    /// The reference scheduler (such as `Adams2019`).
    pub reference: Option<String>,
}

/// A bootstrap's learning curve against minutes of learning: the apps'
/// speed against the reference (a line at 1: as fast), the held-out top-1
/// score and far-pair accuracy.
pub fn bootstrap_curve(path: &Path, points: &[CurvePoint]) -> Result<(), PlotError> {
    register_font()?;
    let err = |e: &dyn std::fmt::Display| PlotError::Draw { path: path.to_path_buf(), message: e.to_string() };
    let root = BitMapBackend::new(path, (900, 1000)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let root = root.titled("learning a host from an empty store", (FONT_FAMILY, 22)).map_err(|e| err(&e))?;
    let panels = root.split_evenly((3, 1));
    let series =
        |f: fn(&CurvePoint) -> Option<f64>| -> Vec<(f64, f64)> { points.iter().filter_map(|p| f(p).map(|y| (p.minutes, y))).collect() };
    let reference = points.iter().find_map(|p| p.reference.clone()).unwrap_or_else(|| "the reference".into());
    let speed = format!("apps' geomean speed over {reference}");
    let speedups = series(|p| p.apps_speedup);
    line_panel(&panels[0], &speed, "minutes of learning", &speedups).map_err(|e| err(&e))?;
    let far = format!("held-out pairs > {}x apart", crate::metrics::FAR_APART);
    line_panel(&panels[1], "held-out top-1 score", "minutes of learning", &series(|p| p.top1_score)).map_err(|e| err(&e))?;
    line_panel(&panels[2], &far, "minutes of learning", &series(|p| p.pairwise_accuracy_far)).map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}

/// A line with its points in one panel (x values are whole numbers:
/// epochs, versions), axes fitted to the points.
fn line_panel<'a>(area: &Area<'a>, y_desc: &str, x_desc: &str, points: &[(f64, f64)]) -> DrawResult<(), BitMapBackend<'a>> {
    let (x_lo, x_hi) = padded_range(points.iter().map(|p| p.0));
    let (y_lo, y_hi) = padded_range(points.iter().map(|p| p.1));
    let mut chart =
        ChartBuilder::on(area).margin(15).x_label_area_size(45).y_label_area_size(80).build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)?;
    chart
        .configure_mesh()
        .x_labels(points.len().clamp(2, 10))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .x_desc(x_desc)
        .y_desc(y_desc)
        .draw()?;
    chart.draw_series(LineSeries::new(points.iter().copied(), BLUE))?;
    chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, BLUE.filled())))?;
    Ok(())
}

/// The values' range with a margin; a unit range around a single value, `0..1` for none.
fn padded_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.filter(|v| v.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        (0.0, 1.0)
    } else if lo == hi {
        (lo - 0.5, hi + 0.5)
    } else {
        let margin = (hi - lo) * 0.05;
        (lo - margin, hi + margin)
    }
}
