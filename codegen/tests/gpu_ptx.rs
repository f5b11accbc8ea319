//! GPU code generation without a GPU: kernels of GPU schedules compile to
//! PTX through LLVM's NVPTX back end for sm_70 (V100) and sm_90 (H100,
//! H200), with what a launch needs; NVIDIA's `ptxas` assembles them where
//! it is installed (`scripts/cuda-tools.sh` installs it; the test says so
//! and skips that step where it is not).

use codegen::gpu::{compile_gpu, ptxas, ptxas_path};
use compiler::exec::kernels::GpuModule;
use compiler::lower::lower_gpu;
use compiler::GpuTarget;

/// Assembles `m` with ptxas when there is one; returns its report.
fn assemble(m: &GpuModule) -> Option<String> {
    let Some(p) = ptxas_path() else {
        eprintln!("skipping ptxas: not installed (scripts/cuda-tools.sh installs it; or set HL_PTXAS)");
        return None;
    };
    match ptxas(&p, &m.ptx, &m.target.arch()) {
        Ok(r) => Some(r.info),
        Err(e) => panic!("ptxas refused the PTX for {}:\n{e}\n{}", m.target.arch(), m.ptx),
    }
}

#[test]
fn the_staged_blur_compiles_for_volta_and_hopper() {
    let blur = compiler::examples::blur();
    for target in [GpuTarget::sm_70(), GpuTarget::sm_90()] {
        let l = lower_gpu(&blur, &compiler::examples::blur_gpu_schedule(), &target).unwrap();
        let m = compile_gpu(&l).unwrap();
        assert_eq!(m.kernels.len(), 1);
        let k = &m.kernels[0];
        assert!(m.ptx.contains(&format!(".entry {}", k.entry)), "{}", m.ptx);
        assert!(m.ptx.contains(&format!(".target {}", target.arch())), "{}", m.ptx);
        assert!(m.ptx.contains(".shared"), "blur_x is staged in shared memory:\n{}", m.ptx);
        assert!(m.ptx.contains("bar.sync"), "a barrier separates blur_x's threads from blur_y's:\n{}", m.ptx);
        let buffers: Vec<&str> = k.signature.buffers.iter().map(|(n, _)| &**n).collect();
        assert_eq!(buffers, ["blur_y", "input"]);
        assert!(k.signature.scalars.iter().any(|(n, _)| &**n == "blur_y.s0.xo.loop_extent"), "{:?}", k.signature.scalars);
        if let Some(info) = assemble(&m) {
            eprintln!("{}: {info}", target.arch());
        }
        // The launch plan travels as data.
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(serde_json::from_str::<GpuModule>(&json).unwrap(), m);
    }
}
