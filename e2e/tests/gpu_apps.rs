//! The twelve apps under their GPU expert schedules, at their small
//! sizes: each lowers for sm_90 and sm_70, computes on the interpreter
//! what the reference evaluator computes, compiles to PTX that NVIDIA's
//! `ptxas` assembles (where installed), and runs from its launch plans on
//! the emulator with the same result; at the paper's sizes each lowers.

use apps::gpu::gpu_expert;
use apps::Size;
use benchmark::app_inputs;
use codegen::gpu::{compile_gpu, ptxas, ptxas_path};
use compiler::exec::realize::realize;
use compiler::lower::lower_gpu;
use compiler::target::Target;
use compiler::GpuTarget;
use gpu_runner::emulated::Emulator;
use gpu_runner::{run, GpuProgram};
use std::collections::BTreeMap;

fn check(name: &str) {
    let app = apps::build(name, Size::Small, &Target::host()).expect("a listed app");
    let schedule = gpu_expert(&app).expect("the twelve apps have GPU schedules");
    let inputs = app_inputs(&app).unwrap();
    let p = &app.pipeline;
    let output = app.output_name();
    let regions = [(output, app.output.clone())];
    let want = compiler::exec::reference::realize(p, &inputs, &BTreeMap::new(), output, &app.output).unwrap();
    for target in [GpuTarget::sm_90(), GpuTarget::sm_70()] {
        let l = lower_gpu(p, &schedule, &target).unwrap_or_else(|e| panic!("{name}: {e}\n{schedule}"));
        let got = realize(&l.lowered, &inputs, &BTreeMap::new(), &regions).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(got[output] == want, "{name}: the interpreter's output differs from the reference's");
        let module = compile_gpu(&l).unwrap_or_else(|e| panic!("{name}: {e}"));
        match ptxas_path() {
            Some(path) => {
                let report = ptxas(&path, &module.ptx, &target.arch()).unwrap_or_else(|e| panic!("{name} for {}: {e}", target.arch()));
                eprintln!(
                    "{name} {}: {} kernels, at most {:?} registers, spills: {}",
                    target.arch(),
                    module.kernels.len(),
                    report.max_registers(),
                    report.spills()
                );
            }
            None => eprintln!("{name}: ptxas not installed, PTX not assembled (scripts/cuda-tools.sh installs it)"),
        }
        let program = GpuProgram::new(&l, module);
        let (out, _) = run(&program, &mut Emulator::new(program.module.clone()), &inputs, &BTreeMap::new(), &regions)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(out[output] == want, "{name}: the emulated kernels' output differs from the reference's");
    }
}

macro_rules! gpu_app_tests {
    ($($app:ident),* $(,)?) => {
        $(#[test] fn $app() { check(stringify!($app)); })*

        #[test]
        fn every_app_is_tested() {
            assert_eq!(apps::names().collect::<Vec<_>>(), [$(stringify!($app)),*]);
        }
    };
}

gpu_app_tests!(
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

/// At the paper's sizes every GPU schedule lowers for both targets: its
/// kernels' threads, shared memory and storage fit.
#[test]
fn every_gpu_schedule_lowers_at_the_paper_size() {
    for name in apps::names() {
        let app = apps::build(name, Size::Paper, &Target::host()).expect("a listed app");
        let schedule = gpu_expert(&app).expect("a GPU schedule");
        for target in [GpuTarget::sm_90(), GpuTarget::sm_70()] {
            let l = lower_gpu(&app.pipeline, &schedule, &target).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(l.kernels.iter().all(|k| k.threads_per_block() <= 1024 && k.shared_bytes() <= 48 * 1024), "{name}");
        }
    }
}
