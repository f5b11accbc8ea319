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
