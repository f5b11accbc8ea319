//! Every pipeline of the catalog at its small size computes, under its
//! naive schedule and its expert schedule (the twelve apps'), exactly what
//! the reference evaluator computes from the algorithm; at the paper's size
//! the expert schedules lower.

use apps::Size;
use benchmark::{app_inputs, measure, naive_schedule, SamplingOptions};
use compiler::target::Target;
use std::collections::BTreeMap;

fn check(name: &str) {
    let app = apps::build(name, Size::Small, &Target::host()).expect("a listed app");
    let mut schedules = vec![("naive", naive_schedule(&app.pipeline))];
    schedules.extend(app.expert.clone().map(|e| ("expert", e)));
    let measured = measure(&app, &schedules, &SamplingOptions::once()).unwrap_or_else(|e| panic!("{e}"));
    let inputs = app_inputs(&app).expect("inputs");
    let p = &app.pipeline;
    let expected = compiler::exec::reference::realize(p, &inputs, &BTreeMap::new(), &p.outputs[0], &app.output)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(measured.output == expected, "{name}: the schedules' output differs from the reference evaluator's");
}

macro_rules! reference_tests {
    ($($app:ident),* $(,)?) => {
        $(#[test] fn $app() { check(stringify!($app)); })*

        #[test]
        fn every_app_is_tested() {
            assert_eq!(apps::names().collect::<Vec<_>>(), [$(stringify!($app)),*]);
        }
    };
}

reference_tests!(
    blur,
    unsharp,
    harris,
    camera_pipe,
    local_laplacian,
    bilateral_grid,
    interpolate,
    stencil_chain,
    conv_layer,
    iir_blur,
    hist_eq,
    matmul
);

/// The suite's pipelines, both halves (their naive schedules).
#[test]
fn suite() {
    for name in apps::names_in(apps::Set::Development).chain(apps::names_in(apps::Set::HeldOut)) {
        check(name);
    }
}

/// Every expert schedule lowers at the paper's size and its lowered code
/// reads its inputs and writes its output only where they are, at that
/// size: the tests run the small sizes, where bounds that grow with the
/// image (a sliding window beside a split's shifted tiles once read an
/// image height past stencil_chain's input) stay hidden.
#[test]
fn expert_schedules_fit_their_buffers_at_the_papers_sizes() {
    for app in apps::all(Size::Paper, &Target::host()) {
        let p = app.pipeline_estimated_as_run();
        let expert = app.expert.as_ref().expect("the apps have expert schedules");
        compiler::check_at_estimates(&p, expert, &compiler::schedule::legality::Limits::default())
            .unwrap_or_else(|e| panic!("{}: {e}", app.name));
    }
}

#[test]
fn estimates_are_the_papers_sizes() {
    let host = Target::host();
    for (small, paper) in apps::all(Size::Small, &host).iter().zip(apps::all(Size::Paper, &host)) {
        let output = small.pipeline.func(small.output_name()).expect("the output Func");
        let estimated: Vec<(i64, i64)> =
            output.estimates.iter().map(|e| e.map(|e| (e.min, e.extent)).expect("every dimension estimated")).collect();
        assert_eq!(estimated, paper.output, "{}", small.name);
    }
}

/// The register-blocked matmul (`B` packed per panel, products summed per
/// register tile) computes, in the strict float mode, exactly what the
/// reference evaluator computes from its algorithm, and its reads of the
/// packed panel are dense vectors, not gathers.
#[test]
fn register_blocked_matmul() {
    use compiler::exec::buffer::Buffer;
    use compiler::ir::types::ScalarType;
    use compiler::ir::value::Scalar;
    let n = 64;
    let lanes = Target::host().natural_lanes(ScalarType::F32);
    let (p, s) = apps::matmul::register_blocked(n, 2, 8, lanes);
    let lowered = compiler::lower(&p, &s).unwrap();
    let compiled = codegen::compile_with(&lowered, &codegen::CompileOptions { keep_text: true, ..Default::default() }).unwrap();
    assert!(!compiled.text.as_ref().expect("kept").llvm_ir.contains("llvm.masked.gather"), "the packed panel is read with gathers");
    let square = [(0, n), (0, n)];
    let mut inputs = BTreeMap::new();
    for (name, k) in [("A", 7), ("B", 5)] {
        let mut buf = Buffer::new(name, ScalarType::F32, &square).unwrap();
        buf.fill(|c| Scalar::Float(((c[0] * k + c[1] * 3) % 17) as f64 / 16.0 - 0.5));
        inputs.insert(name.to_string(), buf);
    }
    let got = compiled.run(&inputs, &BTreeMap::new(), &[("C", square.to_vec())]).unwrap().remove("C").unwrap();
    let expected = compiler::exec::reference::realize(&p, &inputs, &BTreeMap::new(), "C", &square).unwrap();
    assert_eq!(got, expected);
}
