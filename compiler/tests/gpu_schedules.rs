//! GPU schedules: a Halide-style GPU schedule of the blur lowers to one
//! kernel (its grid, threads and shared memory as the schedule says) and
//! computes on the interpreter what the reference computes; each illegal
//! GPU schedule is refused before code generation with an error naming the
//! Func, the loop and the limit.

mod common;

use compiler::error::{GpuError, LowerError, UserError};
use compiler::exec::realize::realize;
use compiler::lower::{lower_gpu, GpuLowered};
use compiler::schedule::Schedule;
use compiler::{GpuTarget, ScalarType};

fn gpu_lower(case: &common::Case, s: &Schedule) -> Result<GpuLowered, GpuError> {
    match lower_gpu(&case.pipeline, s, &GpuTarget::sm_90()) {
        Ok(l) => Ok(l),
        Err(LowerError::User(UserError::Gpu(e))) => Err(e),
        Err(e) => panic!("not a GPU error: {e}\n{s}"),
    }
}

fn agrees(case: &common::Case, l: &GpuLowered) {
    let want = compiler::exec::reference::realize(&case.pipeline, &case.inputs, &case.params, &case.output, &case.region).unwrap();
    let got = realize(&l.lowered, &case.inputs, &case.params, &[(&case.output, case.region.clone())]).unwrap();
    assert_eq!(got[&case.output], want);
}

#[test]
fn a_tiled_blur_is_one_kernel_with_its_producer_in_shared_memory() {
    let case = common::blur();
    let l = gpu_lower(&case, &compiler::examples::blur_gpu_schedule()).unwrap();
    assert_eq!(l.kernels.len(), 1);
    let k = &l.kernels[0];
    assert_eq!(&*k.name, "blur_y.s0.yo");
    let grid: Vec<&str> = k.blocks.iter().map(|b| &*b.var).collect();
    assert_eq!(grid, ["blur_y.s0.xo", "blur_y.s0.yo"], "x first");
    assert_eq!(k.threads, [16, 8]);
    assert_eq!(k.shared.len(), 1);
    assert_eq!((&*k.shared[0].name, k.shared[0].elem, k.shared[0].elems), ("blur_x", ScalarType::U16, 16 * 10));
    agrees(&case, &l);
}

#[test]
fn producers_at_root_are_kernels_of_their_own() {
    let case = common::stencil_chain();
    let mut s = Schedule::new();
    for f in ["s1", "s2", "s3"] {
        s.func(f).compute_root().gpu_tile("x", "y", "xo", "yo", "xi", "yi", 8, 4);
    }
    let l = gpu_lower(&case, &s).unwrap();
    assert_eq!(l.kernels.len(), 3);
    assert!(l.kernels.iter().all(|k| k.threads == [8, 4] && k.shared.is_empty()));
    agrees(&case, &l);
}

#[test]
fn a_reduction_runs_serially_inside_each_thread() {
    let case = common::row_sum();
    let mut s = Schedule::new();
    s.func("out").gpu_tile("x", "y", "xo", "yo", "xi", "yi", 8, 8);
    s.func("rows").compute_at("out", "xi");
    let l = gpu_lower(&case, &s).unwrap();
    assert_eq!(l.kernels[0].threads, [8, 8]);
    agrees(&case, &l);
}

#[test]
fn a_block_without_threads_runs_in_one_thread() {
    let case = common::blur();
    let mut s = Schedule::new();
    s.func("blur_y").tile("x", "y", "xo", "yo", "xi", "yi", 8, 8).gpu_blocks("xo").gpu_blocks("yo");
    s.func("blur_x").compute_at("blur_y", "xo");
    let l = gpu_lower(&case, &s).unwrap();
    assert!(l.kernels[0].threads.is_empty());
    agrees(&case, &l);
}

#[test]
fn no_gpu_loops_is_computation_on_the_host() {
    let case = common::blur();
    let e = gpu_lower(&case, &Schedule::new()).unwrap_err();
    assert_eq!(e, GpuError::HostComputation { func: "blur_y".into() });
    assert!(e.to_string().contains("gpu_blocks"), "{e}");
}

#[test]
fn threads_need_blocks_around_them() {
    let case = common::blur();
    let mut s = Schedule::new();
    s.func("blur_y").split("x", "xo", "xi", 16).gpu_threads("xi");
    let e = gpu_lower(&case, &s).unwrap_err();
    assert_eq!(e, GpuError::ThreadsOutsideBlocks { func: "blur_y".into(), var: "xi".into() });
}

#[test]
fn too_many_threads_per_block_names_the_limit() {
    let case = common::blur();
    let mut s = Schedule::new();
    s.func("blur_y").gpu_tile("x", "y", "xo", "yo", "xi", "yi", 64, 32);
    let e = gpu_lower(&case, &s).unwrap_err();
    assert!(matches!(&e, GpuError::TooManyThreads { threads: 2048, limit: 1024, .. }), "{e}");
    assert!(e.to_string().contains("64 * 32"), "{e}");
}

#[test]
fn a_thread_loop_of_variable_extent_is_refused() {
    let case = common::blur();
    let mut s = Schedule::new();
    s.func("blur_y").split("y", "yo", "yi", 8).reorder(&["yi", "x", "yo"]).gpu_blocks("yo").gpu_threads("x");
    let e = gpu_lower(&case, &s).unwrap_err();
    assert!(matches!(&e, GpuError::ThreadExtentNotConstant { func, var, .. } if func == "blur_y" && var == "x"), "{e}");
}

#[test]
fn shared_memory_over_the_limit_names_the_funcs() {
    let case = common::blur();
    let mut s = Schedule::new();
    // 256x128 tiles of blur_x (u16) per block: 66 KB of shared memory.
    s.func("blur_y")
        .tile("x", "y", "xo", "yo", "xi", "yi", 256, 128)
        .split("xi", "xio", "xii", 16)
        .split("yi", "yio", "yii", 16)
        .reorder(&["xii", "yii", "xio", "yio", "xo", "yo"])
        .gpu_blocks("xo")
        .gpu_blocks("yo")
        .gpu_threads("xii")
        .gpu_threads("yii");
    s.func("blur_x").compute_at("blur_y", "xo");
    let e = gpu_lower(&case, &s).unwrap_err();
    let GpuError::SharedMemoryExceeded { bytes, limit, largest, .. } = &e else { panic!("{e}") };
    assert_eq!((*bytes, *limit, largest.as_str()), (256 * 130 * 2, 48 * 1024, "blur_x"), "{e}");
}

#[test]
fn blocks_inside_a_kernel_are_refused() {
    let case = common::blur();
    let mut s = compiler::examples::blur_gpu_schedule();
    s.func("blur_x").gpu_blocks("yo");
    let e = gpu_lower(&case, &s).unwrap_err();
    assert_eq!(e, GpuError::BlocksInsideKernel { func: "blur_x".into(), var: "yo".into(), kernel: "blur_y.s0.yo".into() });
}

#[test]
fn a_producer_between_thread_loops_is_refused() {
    let case = common::blur();
    let mut s = Schedule::new();
    s.func("blur_y").gpu_tile("x", "y", "xo", "yo", "xi", "yi", 16, 8);
    s.func("blur_x").compute_at("blur_y", "yi");
    let e = gpu_lower(&case, &s).unwrap_err();
    assert!(matches!(&e, GpuError::ThreadsInsideThreads { func, var, .. } if func == "blur_y" && var == "xi"), "{e}");
}

#[test]
fn a_fourth_block_dimension_is_refused() {
    let case = common::blur();
    let mut s = Schedule::new();
    s.func("blur_y")
        .split("x", "xo", "xi", 16)
        .split("xo", "xoo", "xoi", 2)
        .split("y", "yo", "yi", 8)
        .split("yo", "yoo", "yoi", 2)
        .reorder(&["xi", "yi", "xoi", "yoi", "xoo", "yoo"])
        .gpu_blocks("xoi")
        .gpu_blocks("yoi")
        .gpu_blocks("xoo")
        .gpu_blocks("yoo")
        .gpu_threads("xi")
        .gpu_threads("yi");
    let e = gpu_lower(&case, &s).unwrap_err();
    assert!(matches!(&e, GpuError::TooManyDimensions { func, var, what: "block" } if func == "blur_y" && var == "xoi"), "{e}");
}

#[test]
fn a_parallel_loop_inside_a_kernel_is_refused() {
    let case = common::blur();
    let mut s = compiler::examples::blur_gpu_schedule();
    s.func("blur_x").parallel("yo");
    let e = gpu_lower(&case, &s).unwrap_err();
    assert_eq!(e, GpuError::ParallelInsideKernel { func: "blur_x".into(), var: "yo".into() });
}

#[test]
fn storage_no_constant_bounds_is_refused() {
    use compiler::{Expr, Func, ImageParam, Pipeline, Var};
    // Every tile of out reads f at its own columns and at column 0: the
    // region of f a block stores grows with the block.
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::U16, 2);
    let f = Func::new("f");
    f.define(&[&x, &y], input.at([x.expr(), y.expr()]) * 2);
    let out = Func::new("out");
    out.define(&[&x, &y], f.at([x.expr(), y.expr()]) + f.at([Expr::i32(0), y.expr()]));
    let pipeline = Pipeline::new(&[&out]).unwrap();
    let mut s = Schedule::new();
    s.func("out").gpu_tile("x", "y", "xo", "yo", "xi", "yi", 8, 8);
    s.func("f").compute_at("out", "xo");
    let Err(LowerError::User(UserError::Gpu(e))) = lower_gpu(&pipeline, &s, &GpuTarget::sm_70()) else { panic!("lowered") };
    assert!(matches!(&e, GpuError::StorageNotConstant { func, memory: "shared", .. } if func == "f"), "{e}");
}
