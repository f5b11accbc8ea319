//! The `store` command on a file with reports and weights.

use std::process::Command;

use data::{NewWeights, Store};
use test_support::reports::{host, report, PIPELINE_LAYOUT, SCHEDULE_LAYOUT};

fn store_command(db: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_store")).arg("--db").arg(db).args(args).output().unwrap();
    assert!(out.status.success(), "store {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_store_command_summarises_exports_and_lists_weights() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.sqlite");
    {
        let mut store = Store::open(&db).unwrap();
        store.record_report(&report("w1", &host("cpu-a"), 1, 3, 0)).unwrap();
        store.record_report(&report("w2", &host("cpu-b"), 2, 6, 1)).unwrap();
        let v = store
            .insert_weights(&NewWeights {
                parent: None,
                blob: vec![0; 16],
                pipeline_layout: PIPELINE_LAYOUT,
                schedule_layout: SCHEDULE_LAYOUT,
                training_set: "round 0".into(),
                metrics: serde_json::json!({"loss": 0.5}),
                host_key: None,
            })
            .unwrap();
        store.promote(v).unwrap();
    }
    let summary = store_command(&db, &["summary"]);
    assert!(summary.contains("2 hosts, 2 pipelines, 9 schedules, 2 reports, 9 samples, 1 weights versions"), "{summary}");
    assert!(summary.contains(&format!("{}         6  cpu-b", host("cpu-b").key())), "{summary}");
    assert!(summary.contains("timeout              3"), "{summary}");

    let csv = dir.path().join("out.csv");
    assert!(store_command(&db, &["export", "--csv", csv.to_str().unwrap()]).starts_with("9 samples written"));
    assert_eq!(std::fs::read_to_string(&csv).unwrap().lines().count(), 10);

    let weights = store_command(&db, &["weights"]);
    assert!(weights.lines().nth(1).is_some_and(|l| l.contains("yes") && l.contains(r#"{"loss":0.5}"#)), "{weights}");
    assert_eq!(store_command(&db, &["check"]), "ok\n");
}

#[test]
fn the_store_command_issues_lists_and_revokes_agent_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.sqlite");
    let token = store_command(&db, &["agent-token", "issue", "node-7"]);
    let token = token.trim();
    assert_eq!(token.len(), 64, "{token}");
    assert_eq!(Store::open(&db).unwrap().agent_token_name(&data::token_hash(token)).unwrap().as_deref(), Some("node-7"));
    assert!(store_command(&db, &["agent-token", "list"]).starts_with("node-7"));
    assert!(store_command(&db, &["agent-token", "revoke", "node-7"]).contains("revoked the token of node-7"));
    assert!(store_command(&db, &["agent-token", "list"]).contains("revoked at"));
    assert_eq!(Store::open(&db).unwrap().agent_token_name(&data::token_hash(token)).unwrap(), None);
}
