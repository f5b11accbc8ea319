//! GPU expert schedules of the twelve apps, in the style of Halide's own
//! CUDA schedules: each stage that gets a kernel of its own is tiled into
//! blocks of 16x16 (or 32x8) threads over its two innermost pure
//! dimensions, a third pure dimension becomes the grid's z (or a loop
//! around the kernel); small stencil producers are staged per tile in
//! shared memory and computed by the tile's threads; reduction loops run
//! serially inside each thread; a short scan with no pure dimension to
//! spread runs in thread 0 of each block that needs it. Everything else is
//! inlined. The schedules are written for the apps' algorithms, not
//! derived from them.

use crate::App;
use compiler::schedule::{FuncBuilder, Schedule};

/// The GPU expert schedule of `app` (one of the twelve), `None` for the
/// suite's pipelines.
pub fn gpu_expert(app: &App) -> Option<Schedule> {
    let mut s = Schedule::new();
    let funcs: Vec<String> = app.pipeline.funcs.iter().map(|f| f.name.to_string()).collect();
    let has = |f: &str| funcs.iter().any(|g| g == f);
    match app.name {
        "blur" => {
            tile(s.func("blur_y"), "x", "y", 32, 8);
            staged(s.func("blur_x").compute_at("blur_y", "xo"), 32, 8);
        }
        "unsharp" => {
            tile(s.func("gray").compute_root(), "x", "y", 16, 16);
            tile(s.func("output"), "x", "y", 16, 16).gpu_blocks("c");
            staged(s.func("blur_y").compute_at("output", "xo"), 16, 16);
        }
        "harris" => {
            tile(s.func("gray").compute_root(), "x", "y", 16, 16);
            tile(s.func("output"), "x", "y", 16, 16);
            for f in ["Ix", "Iy"] {
                staged(s.func(f).compute_at("output", "xo"), 16, 16);
            }
        }
        "camera_pipe" => {
            s.func("curve").compute_root().split("x", "xo", "xi", 256).gpu_blocks("xo").gpu_threads("xi");
            tile(s.func("denoised").compute_root(), "x", "y", 16, 16);
            tile(s.func("demosaiced").compute_root(), "x", "y", 16, 16).gpu_blocks("c");
            tile(s.func("processed"), "x", "y", 16, 16).gpu_blocks("c");
        }
        "local_laplacian" => {
            // Every Func the CPU schedule puts at the root is a kernel.
            for f in funcs.iter().filter(|f| is_root_in(app, f)) {
                kernel(&mut s, app, f, 16, 16);
            }
            tile(s.func("output"), "x", "y", 16, 16).gpu_blocks("c");
        }
        "bilateral_grid" => {
            // The grid: a thread per cell, its 8x8 pixels in a loop.
            tile(s.func("histogram").compute_root(), "x", "y", 8, 8).gpu_blocks("z");
            tile(s.func("histogram").update(0), "x", "y", 8, 8).gpu_blocks("c");
            for f in ["blurz", "blurx", "blury"] {
                tile(s.func(f).compute_root(), "x", "y", 8, 8).gpu_blocks("z");
            }
            tile(s.func("bilateral_grid"), "x", "y", 16, 16);
        }
        "interpolate" => {
            for f in funcs.iter().filter(|f| is_root_in(app, f)) {
                kernel(&mut s, app, f, 16, 16);
            }
            tile(s.func("output"), "x", "y", 16, 16).gpu_blocks("c");
        }
        "stencil_chain" => {
            let last = funcs.last().expect("a chain").clone();
            for f in &funcs[..funcs.len() - 1] {
                tile(s.func(f).compute_root(), "x", "y", 32, 8);
            }
            tile(s.func(&last), "x", "y", 32, 8);
        }
        "conv_layer" => {
            // A thread per output channel and column; the reduction over the
            // input channels and the window in the thread.
            tile(s.func("conv").compute_root(), "c", "x", 16, 4).gpu_blocks("y");
            tile(s.func("conv").update(0), "c", "x", 16, 4).gpu_blocks("y");
            tile(s.func("relu"), "c", "x", 16, 4).gpu_blocks("y");
        }
        "iir_blur" => {
            // The scans down the columns: a thread per column, the scan in it.
            for f in ["blur_cols", "blur_rows"] {
                tile(s.func(f).compute_root(), "x", "y", 16, 16).gpu_blocks("c");
                for u in 0..2 {
                    s.func(f).update(u).split("x", "xo", "xi", 32).gpu_blocks("xo").gpu_threads("xi").gpu_blocks("c");
                }
            }
            tile(s.func("blur_cols_t").compute_root(), "x", "y", 16, 16).gpu_blocks("c");
            tile(s.func("output"), "x", "y", 16, 16).gpu_blocks("c");
        }
        "hist_eq" => {
            tile(s.func("Y").compute_root(), "x", "y", 16, 16);
            // A row per thread: its histogram is the thread's.
            tile(s.func("hist_rows").compute_root(), "x", "y", 16, 16);
            s.func("hist_rows").update(0).split("y", "yo", "yi", 32).gpu_blocks("yo").gpu_threads("yi");
            s.func("hist").compute_root().split("x", "xo", "xi", 64).gpu_blocks("xo").gpu_threads("xi");
            s.func("hist").update(0).split("x", "xo", "xi", 64).gpu_blocks("xo").gpu_threads("xi");
            // The cumulative histogram: 256 steps in thread 0 of each block.
            s.func("cdf").compute_at("output", "xo");
            tile(s.func("output"), "x", "y", 16, 16).gpu_blocks("c");
        }
        "matmul" => {
            tile(s.func("C"), "x", "y", 16, 16);
            tile(s.func("C").update(0), "x", "y", 16, 16);
        }
        _ => return None,
    }
    debug_assert!(s.funcs.keys().all(|f| has(f)), "{}: a GPU schedule names a Func the app lacks", app.name);
    Some(s)
}

/// `x` and `y` tiled by `w` x `h` threads: blocks `xo`, `yo`, threads
/// `xi`, `yi`.
fn tile<'a>(f: FuncBuilder<'a>, x: &str, y: &str, w: i64, h: i64) -> FuncBuilder<'a> {
    f.gpu_tile(x, y, "xo", "yo", "xi", "yi", w, h)
}

/// A producer computed at a consumer's block loop: its `x` and `y` split
/// by the block's `w` x `h` threads, the tiles it needs computed by them
/// in turn.
fn staged(f: FuncBuilder<'_>, w: i64, h: i64) {
    f.split("x", "xo", "xi", w).split("y", "yo", "yi", h).reorder(&["xi", "yi", "xo", "yo"]).gpu_threads("xi").gpu_threads("yi");
}

/// Whether the app's CPU expert schedule computes `f` at the root.
fn is_root_in(app: &App, f: &str) -> bool {
    app.expert.as_ref().is_some_and(|e| e.funcs.get(f).is_some_and(|fs| fs.compute == compiler::LoopLevel::Root))
}

/// `f` as a kernel of its own: its first two pure dimensions tiled, a
/// third the grid's z.
fn kernel(s: &mut Schedule, app: &App, f: &str, w: i64, h: i64) {
    let dims = app.pipeline.func(f).map_or(0, |d| d.args.len());
    let b = s.func(f).compute_root();
    match dims {
        1 => {
            b.split("x", "xo", "xi", w * h).gpu_blocks("xo").gpu_threads("xi");
        }
        2 => {
            tile(b, "x", "y", w, h);
        }
        _ => {
            let third = app.pipeline.func(f).expect("a Func of the app").args[2].to_string();
            tile(b, "x", "y", w, h).gpu_blocks(&third);
        }
    }
}
