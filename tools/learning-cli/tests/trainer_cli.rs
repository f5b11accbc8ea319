//! The `trainer` command on a training store on disk (see
//! `training_fixtures`): it retrains, promotes, evaluates,
//! calibrates, plots, exports and rolls back, and names what is wrong with
//! bad arguments.

use std::path::Path;
use std::process::Command;
use trainer::WeightsFile;
use training_fixtures::{host, store_copy, target};

fn trainer(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_trainer")).args(args).output().expect("the trainer command runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn the_command_retrains_evaluates_calibrates_plots_and_exports() {
    let (dir, path) = store_copy(target(), Path::new(env!("CARGO_TARGET_TMPDIR")));
    let db = path.to_str().expect("a UTF-8 path");
    let key = host().key();
    let (ok, out, err) = trainer(&["retrain", "--db", db, "--host", &key, "--epochs", "3", "--learning-rate", "0.001"]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("weights version 1") && out.contains("than the analytical model"), "{out}");

    let (ok, out, err) = trainer(&["promote", "--db", db, "1"]);
    assert!(ok && out.contains("promoted weights version 1"), "{out}{err}");
    let (ok, out, err) = trainer(&["evaluate", "--db", db, "--host", &key, "--by-gap"]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("v1 (promoted)") && out.contains("pairwise accuracy"), "{out}");
    assert!(out.contains("1.00-1.05x") && out.contains("> 4.00x"), "{out}");

    let charts = dir.path().join("charts");
    let (ok, out, err) = trainer(&["plot", "--db", db, "--host", &key, "--out", charts.to_str().expect("a UTF-8 path")]);
    assert!(ok, "{out}{err}");
    for name in ["predicted_vs_measured.png", "loss_curve.png", "metrics_by_version.png"] {
        let bytes = std::fs::read(charts.join(name)).expect("a chart");
        assert!(bytes.len() > 1000 && bytes.starts_with(b"\x89PNG"), "{name}: {} bytes", bytes.len());
    }

    let exported = dir.path().join("v1.weights");
    let (ok, out, err) = trainer(&["weights", "--db", db, "--version", "1", "--out", exported.to_str().expect("a UTF-8 path")]);
    assert!(ok, "{out}{err}");
    let (ok, out, err) = trainer(&["evaluate", "--db", db, "--host", &key, "--weights", exported.to_str().expect("a UTF-8 path")]);
    assert!(ok, "{out}{err}");

    // Calibrating writes the weights scaled to the training runtimes
    // (retraining scaled them already, so by 1) and shows both metrics.
    let calibrated = dir.path().join("v1-scaled.weights");
    let (ok, out, err) = trainer(&[
        "calibrate",
        "--db",
        db,
        "--host",
        &key,
        "--weights",
        exported.to_str().expect("a UTF-8 path"),
        "--weights-out",
        calibrated.to_str().expect("a UTF-8 path"),
    ]);
    assert!(ok && out.contains("scaled by 1.0000") && out.contains("R² of log runtime"), "{out}{err}");
    let header = WeightsFile::read(&calibrated).expect("the scaled weights").header;
    assert!(header.version.contains("outputs scaled by 1.0000 to fit host"), "{}", header.version);
    let (ok, _, err) = trainer(&["calibrate", "--db", db, "--host", &key, "--weights", "missing.weights", "--weights-out", "out.weights"]);
    assert!(!ok && err.contains("missing.weights"), "{err}");

    let (ok, out, err) =
        trainer(&["retrain", "--db", db, "--host", &key, "--epochs", "1", "--start-from", exported.to_str().expect("a UTF-8 path")]);
    assert!(ok && out.contains("weights version 2"), "{out}{err}");
    let missing = dir.path().join("missing.weights");
    let (ok, _, err) = trainer(&["retrain", "--db", db, "--host", &key, "--start-from", missing.to_str().expect("a UTF-8 path")]);
    assert!(!ok && err.contains("the starting weights") && err.contains("missing.weights"), "{err}");
    let (ok, _, err) = trainer(&["retrain", "--db", db, "--from-scratch", "--start-from", exported.to_str().expect("a UTF-8 path")]);
    assert!(!ok && err.contains("cannot be used with"), "{err}");

    let (ok, _, err) = trainer(&["promote", "--db", db, "7"]);
    assert!(!ok && err.contains("no weights version 7"), "{err}");
    // Rolling back walks to version 1 when version 2, its child, was
    // promoted, and then refuses: version 1 has no parent.
    let (mut ok, out, mut err) = trainer(&["rollback", "--db", db, "--host", &key]);
    if ok {
        assert!(out.contains("to weights version 1"), "{out}");
        (ok, _, err) = trainer(&["rollback", "--db", db, "--host", &key]);
    }
    assert!(!ok && err.contains("has no parent"), "{err}");
    let (ok, _, err) = trainer(&["retrain", "--db", db, "--host", "0000000000000000", "--epochs", "1"]);
    assert!(!ok && err.contains("the store knows no host 0000000000000000"), "{err}");
}

#[test]
fn a_bootstrap_curve_is_drawn_and_a_bad_line_is_named() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let point = |round: Option<u32>, minutes: f64, speedup: f64, top1: Option<f64>| trainer::plot::CurvePoint {
        round,
        minutes,
        samples: (minutes * 100.0) as u64,
        model: "the nearest host's weights".into(),
        top1_score: top1,
        pairwise_accuracy_far: top1.map(|t| t + 0.02),
        apps_speedup: Some(speedup),
        reference: Some("Adams2019".into()),
    };
    let lines: Vec<String> = [point(None, 0.0, 1.2, None), point(Some(0), 9.5, 1.25, Some(0.8)), point(Some(1), 19.0, 1.3, Some(0.85))]
        .iter()
        .map(|p| serde_json::to_string(p).expect("serializes"))
        .collect();
    let curve = dir.path().join("curve.jsonl");
    std::fs::write(&curve, lines.join("\n") + "\n").expect("written");
    let png = dir.path().join("curve.png");
    let (ok, out, err) = trainer(&["plot-curve", "--curve", curve.to_str().expect("UTF-8"), "--out", png.to_str().expect("UTF-8")]);
    assert!(ok, "{out}{err}");
    let bytes = std::fs::read(&png).expect("the chart");
    assert!(bytes.len() > 1000 && bytes.starts_with(b"\x89PNG"), "{} bytes", bytes.len());

    std::fs::write(&curve, format!("{}\nnot json\n", lines[0])).expect("written");
    let (ok, _, err) = trainer(&["plot-curve", "--curve", curve.to_str().expect("UTF-8"), "--out", png.to_str().expect("UTF-8")]);
    assert!(!ok && err.contains("line 2"), "{err}");
}
