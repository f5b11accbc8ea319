//! The `bench` binary with several `--learned` weights: each gets its own
//! row in the JSON manifest (`learned`, `learned 2`, ...) and its own
//! columns in the table, so weights are compared side by side in one run.

use std::process::Command;

#[test]
fn two_learned_weights_are_timed_side_by_side() {
    let weights = concat!(env!("CARGO_MANIFEST_DIR"), "/../../trainer/assets/epyc-7cd6cd16125da94a.weights");
    let json = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench_cli_two_learned.json");
    let out = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args(["--size", "small", "--only", "blur", "--threads", "1", "--chain-stages", "2", "--auto", "--auto-budget-ms", "200"])
        .args(["--learned", weights, "--learned", weights, "--json"])
        .arg(&json)
        .output()
        .expect("bench runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "bench failed: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));

    let header = stdout.lines().find(|l| l.starts_with("| app |")).expect("a table header");
    assert!(header.contains("| learned (ms) |") && header.contains("| learned 2 (ms) |"), "{header}");
    let columns = |line: &str| line.matches('|').count();
    let blur = stdout.lines().find(|l| l.starts_with("| blur |")).expect("a row for blur");
    assert_eq!(columns(blur), columns(header), "{blur}");
    let mean = stdout.lines().find(|l| l.starts_with("| geometric mean |")).expect("a geometric mean row");
    assert_eq!(columns(mean), columns(header), "{mean}");

    let manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).expect("the manifest")).expect("JSON");
    let rows: Vec<&str> =
        manifest["apps"][0]["rows"].as_array().expect("rows").iter().map(|r| r["schedule"].as_str().expect("a name")).collect();
    assert_eq!(rows, ["naive", "expert", "auto", "learned", "learned 2"]);
    let searched = |i: usize| manifest["apps"][0]["rows"][i]["search_ms"].as_f64().expect("a search time");
    assert!(searched(3) > 0.0 && searched(4) > 0.0);
}
