//! The `tune` command: through a server's `Tune` RPC on loopback, and in
//! its own process with a store; each prints its rounds, the answer and its
//! time beside the one-shot answer's.

use service::{SchedulerSettings, ServerConfig};

fn tune(args: &[&str]) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tune")).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("round 0: ") && stdout.contains("round 1: "), "{stdout}");
    assert!(stdout.contains("measured beside the one-shot answer's"), "{stdout}");
    stdout
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tune_through_the_server_and_in_process() {
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        settings: SchedulerSettings::new("test-host".into()),
        store: Some(data::Store::open(dir.path().join("server.sqlite")).unwrap()),
        max_concurrent: 1,
        agents: None,
        retrainer: None,
        tls: None,
    };
    let server = service::spawn(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(), config).unwrap();
    let url = format!("http://{}", server.addr);
    let common = ["--app", "blur", "--app-size", "small", "--budget-s", "3", "--candidates", "4"];
    let served = tokio::task::spawn_blocking(move || tune(&[&common[..], &["--server", &url]].concat())).await.unwrap();
    assert!(served.contains("pipeline fingerprint") && served.contains(": matches"), "{served}");

    let db = dir.path().join("local.sqlite");
    let local = tune(&[&common[..], &["--db", db.to_str().unwrap(), "--no-nearest-host"]].concat());
    assert!(local.contains("tuning from the analytical"), "{local}");
    assert!(data::Store::open(&db).unwrap().summary().unwrap().samples > 0, "the samples are stored");
}
