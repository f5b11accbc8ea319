//! The `schedule-client` command against a server on loopback: an app's
//! schedule served, then timed beside its naive and expert schedules.

use service::{SchedulerSettings, ServerConfig};

async fn start(max_concurrent: usize) -> service::Running {
    let config = ServerConfig {
        settings: SchedulerSettings::new("test-host".into()),
        store: None,
        max_concurrent,
        agents: None,
        retrainer: None,
        tls: None,
    };
    service::spawn(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(), config).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedule_client_app_run_prints_the_served_naive_and_expert_timings() {
    let server = start(2).await;
    let url = format!("http://{}", server.addr);
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_schedule-client"))
            .args(["--server", &url, "--app", "unsharp", "--app-size", "small", "--run", "--budget-ms", "500", "--top-k", "0"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("model: analytical") && stdout.contains(": matches"), "{stdout}");
    for row in ["naive", "expert", "served"] {
        assert!(stdout.lines().any(|l| l.trim_start().starts_with(&format!("{row} "))), "no {row} row in\n{stdout}");
    }
    assert!(stdout.contains("x faster than naive"), "{stdout}");
}
