//! `hlc`: the command line of the compiler. `hlc demo` runs the embedded
//! default job (schedule, lower, print and run a blur on the interpreter and
//! through the LLVM JIT, checked against the reference evaluator); `hlc
//! bench` times JIT-compiled pipelines (naive against expert schedules, and
//! compile time).

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use compiler::demo::{blur_schedule, run_demo};
use compiler::schedule::Schedule;
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "hlc", about = "A Halide-style image-processing compiler")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Schedule, lower, print and run the embedded blur pipeline.
    Demo {
        /// A schedule in text form to use instead of the built-in one.
        #[arg(long)]
        schedule: Option<PathBuf>,
        #[arg(long, default_value_t = 64)]
        width: i64,
        #[arg(long, default_value_t = 48)]
        height: i64,
        /// Print the statement after every lowering pass.
        #[arg(long)]
        passes: bool,
        /// Write the optimized LLVM IR of the compiled pipeline to this file.
        #[arg(long)]
        emit_llvm: Option<PathBuf>,
        /// Write the host assembly of the compiled pipeline to this file.
        #[arg(long)]
        emit_asm: Option<PathBuf>,
    },
    /// Time JIT-compiled pipelines: naive (all root, serial, scalar) against
    /// expert schedules, and the compile time of a long stencil chain.
    Bench {
        #[arg(long, default_value_t = 1536)]
        width: i64,
        #[arg(long, default_value_t = 2560)]
        height: i64,
        /// Worker threads for parallel loops (default: HL_NUM_THREADS, else all).
        #[arg(long)]
        threads: Option<usize>,
        /// Stages of the chain whose compile time is measured.
        #[arg(long, default_value_t = 20)]
        chain_stages: usize,
        /// Write the rows as JSON to this file.
        #[arg(long)]
        json: Option<PathBuf>,
    },
}

fn main() -> Result<()> {
    tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::from_default_env()).with_writer(std::io::stderr).init();
    match Cli::parse().command {
        Command::Demo { schedule, width, height, passes, emit_llvm, emit_asm } => {
            let schedule: Schedule = match schedule {
                Some(path) => {
                    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
                    text.parse().with_context(|| format!("parsing {}", path.display()))?
                }
                None => blur_schedule(),
            };
            println!("# algorithm\n{}", compiler::demo::blur_pipeline_text());
            println!("# schedule\n{schedule}");
            let report = run_demo(&schedule, width, height)?;
            if passes {
                let p = compiler::demo::blur_pipeline();
                let l = compiler::lower::lower_with(&p, &schedule, &compiler::lower::LowerOptions { keep_passes: true })?;
                for (name, stmt) in &l.passes {
                    println!("# after {name}\n{stmt}");
                }
            } else {
                println!("# lowered\n{}", report.lowered.stmt);
            }
            for (path, text) in [(emit_llvm, &report.llvm_ir), (emit_asm, &report.assembly)] {
                if let Some(path) = path {
                    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
                }
            }
            let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
            println!(
                "ran a {width}x{height} blur on the interpreter ({:.1} ms) and through the LLVM JIT for {} (compile {:.1} ms, run {:.3} ms, {} threads): {} points, all equal to the reference evaluator",
                ms(report.interpret_time),
                compiler::codegen::HostTarget::detect().cpu,
                ms(report.compile_time),
                ms(report.jit_time),
                compiler::codegen::runtime::num_threads(),
                report.points_checked,
            );
        }
        Command::Bench { width, height, threads, chain_stages, json } => bench(width, height, threads, chain_stages, json)?,
    }
    Ok(())
}

fn bench(width: i64, height: i64, threads: Option<usize>, chain_stages: usize, json: Option<PathBuf>) -> Result<()> {
    use compiler::bench::*;
    if let Some(n) = threads {
        compiler::codegen::runtime::set_num_threads(n);
    }
    let host = compiler::codegen::HostTarget::detect();
    let options = SamplingOptions::default();
    let region = [(0, width), (0, height)];
    let input_region = [(-1, width + 2), (-1, height + 2)];
    let blur = compiler::demo::blur_pipeline();
    let lanes = host.natural_lanes(compiler::types::ScalarType::U16);
    let schedules = [("naive", naive_schedule(&blur)), ("expert", blur_expert_schedule(lanes))];
    let progress = indicatif::ProgressBar::new_spinner().with_message(format!("timing blur {width}x{height}"));
    progress.enable_steady_tick(std::time::Duration::from_millis(100));
    let rows = compare_schedules("blur", &blur, &schedules, &input_region, &region, &options)?;
    progress.set_message(format!("compiling a {chain_stages}-stage chain"));
    let chain = chain_compile_time(chain_stages, 5, host.natural_lanes(compiler::types::ScalarType::F32))?;
    progress.finish_and_clear();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    println!("host: {} ({} bytes per vector), {} threads\n", host.cpu, host.vector_bytes(), compiler::codegen::runtime::num_threads());
    println!("| pipeline | schedule | compile (ms) | min (ms) | median (ms) | samples | speed-up over naive |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    let naive = rows[0].timing.min;
    for r in &rows {
        println!(
            "| {} | {} | {:.1} | {:.3} | {:.3} | {} | {:.1}x |",
            r.pipeline,
            r.schedule,
            ms(r.compile),
            ms(r.timing.min),
            ms(r.timing.median),
            r.timing.samples,
            naive.as_secs_f64() / r.timing.min.as_secs_f64()
        );
    }
    println!("\nJIT compile of a {chain_stages}-stage stencil chain: median {:.1} ms over 5 compiles", ms(chain));
    if let Some(path) = json {
        let doc = serde_json::json!({ "host": host.cpu, "threads": compiler::codegen::runtime::num_threads(), "rows": rows, "chain_stages": chain_stages, "chain_compile_ms": ms(chain) });
        std::fs::write(&path, serde_json::to_string_pretty(&doc)?).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
