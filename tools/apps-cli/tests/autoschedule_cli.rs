//! `autoschedule --file P --run` times a user's own pipeline (here a
//! random one, written as JSON) at its estimates under the naive schedule
//! and the search's, and checks that the outputs agree; a pipeline without
//! an estimate is refused with the dimension named.

use std::process::Command;

fn autoschedule(file: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_autoschedule"))
        .arg("--file")
        .arg(file)
        .args(["--run", "--budget-ms", "300", "--top-k", "0"])
        .env("HL_NUM_THREADS", "1")
        .output()
        .expect("autoschedule runs")
}

#[test]
fn a_pipeline_from_a_file_is_timed_at_its_estimates() {
    let params = random_pipelines::GeneratorParams { seed: 3, max_stages: 5, input_size: (40, 24, 3), ..Default::default() };
    let mut p = random_pipelines::generate(&params).expect("a pipeline").pipeline;
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("autoschedule_cli_pipeline.json");
    std::fs::write(&path, serde_json::to_string(&p).unwrap()).unwrap();
    let out = autoschedule(&path);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "autoschedule failed: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    for line in ["naive: compile", "auto: compile", "outputs agree"] {
        assert!(stdout.contains(line), "no `{line}` in\n{stdout}");
    }

    let output = p.outputs[0].clone();
    p.funcs.iter_mut().find(|f| f.name == output).expect("the output").estimates[1] = None;
    std::fs::write(&path, serde_json::to_string(&p).unwrap()).unwrap();
    let out = autoschedule(&path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("has no estimate in dimension 1"), "{stderr}");
}
