//! `hl-gpu check` end to end without a GPU: cases compiled here run in
//! child processes on the emulator and agree with the reference; a case
//! whose program does not compute its pipeline fails the check.

use std::process::Command;

/// The JSON lines of the cases of `seeds` (both GPU schedules of each).
fn cases(seeds: std::ops::Range<u64>) -> Vec<String> {
    let mut lines = vec![];
    for seed in seeds {
        let case = random_pipelines::cases::gpu_case(seed).unwrap();
        for (k, (_, lowered)) in case.schedules.iter().enumerate() {
            let l = lowered.as_ref().unwrap();
            let program = gpu_runner::GpuProgram::new(l, codegen::gpu::compile_gpu(l).unwrap());
            let source = gpu_runner::check::Source::Random { seed, schedule: k, region: case.region.clone() };
            let check = gpu_runner::check::CheckCase { source, program, expected_digest: None };
            lines.push(serde_json::to_string(&check).unwrap());
        }
    }
    lines
}

fn check(lines: &[String], name: &str) -> std::process::Output {
    let path = std::env::temp_dir().join(format!("hl-gpu-check-{}-{name}.jsonl", std::process::id()));
    std::fs::write(&path, lines.join("\n")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hl-gpu")).arg("check").arg(&path).arg("--emulate").output().unwrap();
    let _ = std::fs::remove_file(&path);
    out
}

#[test]
fn emulated_cases_agree_and_a_wrong_program_fails() {
    let good = cases(2..4);
    let out = check(&good, "good");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains(&format!("| {} | {} |", good.len(), good.len())), "{stdout}");
    // Seed 2's program checked as if it were seed 3's: another pipeline's
    // inputs and reference.
    let wrong = good[0].replacen("\"seed\":2", "\"seed\":3", 1);
    assert_ne!(wrong, good[0]);
    let out = check(&[wrong], "wrong");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(stdout.contains("seed 3 schedule 0"), "{stdout}");
}

/// An app's case checked by the digest of its expected output (as at the
/// paper's size): the right digest agrees, another fails the check.
#[test]
fn an_app_case_is_checked_by_its_digest() {
    let app = apps::build("blur", apps::Size::Small, &compiler::Target::host()).unwrap();
    let schedule = apps::gpu::gpu_expert(&app).unwrap();
    let l = compiler::lower::lower_gpu(&app.pipeline, &schedule, &compiler::GpuTarget::sm_90()).unwrap();
    let program = gpu_runner::GpuProgram::new(&l, codegen::gpu::compile_gpu(&l).unwrap());
    let want = compiler::exec::reference::realize(
        &app.pipeline,
        &app.pattern_inputs().unwrap(),
        &Default::default(),
        app.output_name(),
        &app.output,
    )
    .unwrap();
    let source = gpu_runner::check::Source::App { name: "blur".into(), size: apps::Size::Small };
    let case = |d: u64| {
        let c = gpu_runner::check::CheckCase { source: source.clone(), program: program.clone(), expected_digest: Some(d) };
        serde_json::to_string(&c).unwrap()
    };
    let right = gpu_runner::check::digest(&want);
    let out = check(&[case(right)], "digest");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("| blur (small) | 1 |"), "{stdout}");
    let out = check(&[case(right ^ 1)], "wrong-digest");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("digest"));
}
