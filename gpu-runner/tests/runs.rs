//! GPU programs run: on the emulator (each kernel from its launch plan
//! alone) everywhere, on the GPU where there is one; both must compute
//! what the reference evaluator computes. Without a GPU the device test
//! says why it skips.

use codegen::gpu::compile_gpu;
use compiler::exec::buffer::Buffer;
use compiler::exec::reference;
use compiler::lower::lower_gpu;
use compiler::{GpuTarget, Scalar, ScalarType};
use gpu_runner::cuda::{describe_device, CudaDevice};
use gpu_runner::emulated::Emulator;
use gpu_runner::{run, Device, GpuProgram};
use std::collections::BTreeMap;

fn blur_program(target: GpuTarget) -> GpuProgram {
    let l = lower_gpu(&compiler::examples::blur(), &compiler::examples::blur_gpu_schedule(), &target).unwrap();
    let module = compile_gpu(&l).unwrap();
    GpuProgram::new(&l, module)
}

fn blur_inputs() -> BTreeMap<String, Buffer> {
    let mut input = Buffer::new("input", ScalarType::U16, &[(-1, 102), (-1, 66)]).unwrap();
    input.fill(|c| Scalar::UInt((c[0] * 37 + c[1] * 11).rem_euclid(4000) as u64));
    BTreeMap::from([("input".to_string(), input)])
}

fn runs_like_the_reference(program: &GpuProgram, device: &mut dyn Device) -> gpu_runner::Timings {
    let inputs = blur_inputs();
    // 100x64: tiles of 16x8 with a partial last column of tiles.
    let region = vec![(0, 100), (0, 64)];
    let (out, timings) = run(program, device, &inputs, &BTreeMap::new(), &[("blur_y", region.clone())]).unwrap();
    let want = reference::realize(&program.pipeline, &inputs, &BTreeMap::new(), "blur_y", &region).unwrap();
    assert!(out["blur_y"] == want);
    timings
}

#[test]
fn the_emulator_runs_kernels_from_their_launch_plans() {
    let program = blur_program(GpuTarget::sm_90());
    // Through JSON, as it travels to a GPU host.
    let program: GpuProgram = serde_json::from_str(&serde_json::to_string(&program).unwrap()).unwrap();
    let timings = runs_like_the_reference(&program, &mut Emulator::new(program.module.clone()));
    assert_eq!(timings.launches, 1);
}

/// Random pipelines under random GPU schedules (the GPU differential
/// suite's cases), compiled to PTX and run from their launch plans.
#[test]
fn random_gpu_programs_run_from_their_launch_plans() {
    use compiler::exec::interpret::InterpretError;
    use gpu_runner::RunError;
    let (mut ran, mut slow, mut launches) = (0, 0, 0);
    for seed in 0..24 {
        let case = random_pipelines::cases::gpu_case(seed).unwrap();
        let p = &case.pipeline;
        let inputs = p.make_inputs();
        let want = reference::realize(&p.pipeline, &inputs, &BTreeMap::new(), &p.output, &case.region).unwrap();
        for (schedule, lowered) in &case.schedules {
            let Ok(l) = lowered else { continue };
            let program = GpuProgram::new(l, compile_gpu(l).unwrap());
            let mut emulator = Emulator::new(program.module.clone()).with_step_budget(1_000_000);
            match run(&program, &mut emulator, &inputs, &BTreeMap::new(), &[(&p.output, case.region.clone())]) {
                Ok((out, timings)) => {
                    assert!(out[&p.output] == want, "seed {seed}\n{}{schedule}", p.text());
                    ran += 1;
                    launches += timings.launches;
                }
                Err(RunError::Host(InterpretError::StepBudgetExceeded { .. })) => slow += 1,
                Err(e) => panic!("seed {seed}: {e}\n{}{schedule}", p.text()),
            }
        }
    }
    eprintln!("{ran} programs ran ({launches} launches), {slow} over the step budget");
    assert!(ran >= 24, "only {ran} programs ran");
}

#[test]
fn the_gpu_runs_the_blur_where_there_is_one() {
    match describe_device() {
        Err(e) => eprintln!("skipping the GPU run: {e}"),
        Ok((name, sm)) => {
            let target = if sm >= 90 { GpuTarget::sm_90() } else { GpuTarget::sm_70() };
            let program = blur_program(target);
            let mut device = CudaDevice::open(&program.module).unwrap();
            let timings = runs_like_the_reference(&program, &mut device);
            eprintln!("{name} (sm_{sm}): {} launch, {:.3} ms on the device", timings.launches, timings.kernel_seconds * 1e3);
        }
    }
}
