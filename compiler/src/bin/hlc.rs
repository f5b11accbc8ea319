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
    /// Time JIT-compiled pipelines (blur, a 5x5 stencil chain, a separable
    /// Gaussian, a matrix multiply): naive (all root, serial, scalar)
    /// against expert schedules; and the compile time of a long chain.
    Bench {
        #[command(flatten)]
        args: BenchArgs,
    },
}

#[derive(clap::Args)]
struct BenchArgs {
    #[arg(long, default_value_t = 1536)]
    width: i64,
    #[arg(long, default_value_t = 2560)]
    height: i64,
    /// Stages of the benchmarked 5x5 stencil chain.
    #[arg(long, default_value_t = 8)]
    stencil_stages: usize,
    /// Size of the multiplied matrices.
    #[arg(long, default_value_t = 1024)]
    matmul_n: i64,
    /// Worker threads for parallel loops (default: HL_NUM_THREADS, else all).
    #[arg(long)]
    threads: Option<usize>,
    /// Stages of the 3x3 chain whose compile time is measured.
    #[arg(long, default_value_t = 20)]
    chain_stages: usize,
    /// Only these benchmarks (by name; default: all).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Write the rows as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write each benchmark's output (raw, x fastest) to DIR/{name}.bin.
    #[arg(long)]
    outputs: Option<PathBuf>,
    /// Write each expert schedule's lowered statement, LLVM IR and assembly
    /// to DIR/{name}.stmt, .ll and .s.
    #[arg(long)]
    emit: Option<PathBuf>,
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
        Command::Bench { args } => bench(args)?,
    }
    Ok(())
}

fn bench(args: BenchArgs) -> Result<()> {
    use compiler::bench::*;
    if let Some(n) = args.threads {
        compiler::codegen::runtime::set_num_threads(n);
    }
    let host = compiler::codegen::HostTarget::detect();
    let sizes = BenchSizes { width: args.width, height: args.height, chain_stages: args.stencil_stages, matmul_n: args.matmul_n };
    let cases: Vec<BenchCase> = cases(sizes, &host).into_iter().filter(|c| args.only.is_empty() || args.only.iter().any(|o| o == c.name)).collect();
    let progress = indicatif::ProgressBar::new(cases.len() as u64 + 1)
        .with_style(indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}").expect("a valid template"));
    let mut rows = vec![];
    for case in &cases {
        progress.set_message(format!("timing {}", case.name));
        let measured = measure(case, &SamplingOptions::default())?;
        if let Some(dir) = &args.outputs {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            let path = dir.join(format!("{}.bin", case.name));
            std::fs::write(&path, measured.output.bytes()).with_context(|| format!("writing {}", path.display()))?;
        }
        if let Some(dir) = &args.emit {
            let lowered = compiler::lower::lower(&case.pipeline, &case.expert)?;
            let compiled = compiler::codegen::JitCache::global().get_or_compile(&lowered)?;
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            for (ext, text) in [("stmt", lowered.stmt.to_string()), ("ll", compiled.llvm_ir.clone()), ("s", compiled.assembly.clone())] {
                let path = dir.join(format!("{}.{ext}", case.name));
                std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
            }
        }
        rows.extend(measured.rows);
        progress.inc(1);
    }
    progress.set_message(format!("compiling a {}-stage chain", args.chain_stages));
    let chain_ms = chain_compile_time(args.chain_stages, 5, host.natural_lanes(compiler::types::ScalarType::F32))?.as_secs_f64() * 1e3;
    progress.finish_and_clear();
    let threads = compiler::codegen::runtime::num_threads();
    println!("host: {} ({} bytes per vector), {threads} threads; images {}x{}, {}-stage 5x5 chain, {}x{} matmul\n", host.cpu, host.vector_bytes(), args.width, args.height, args.stencil_stages, args.matmul_n, args.matmul_n);
    println!("| pipeline | schedule | compile (ms) | min (ms) | median (ms) | samples | speed-up over naive |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    for r in &rows {
        let naive = rows.iter().find(|n| n.pipeline == r.pipeline && n.schedule == "naive").map_or(r.min_ms, |n| n.min_ms);
        println!("| {} | {} | {:.1} | {:.3} | {:.3} | {} | {:.1}x |", r.pipeline, r.schedule, r.compile_ms, r.min_ms, r.median_ms, r.samples, naive / r.min_ms);
    }
    println!("\nJIT compile of a {}-stage 3x3 stencil chain: median {chain_ms:.1} ms over 5 compiles", args.chain_stages);
    if let Some(path) = &args.json {
        let doc = serde_json::json!({
            "host": host.cpu, "vector_bytes": host.vector_bytes(), "threads": threads,
            "width": args.width, "height": args.height, "chain_stages": args.stencil_stages, "matmul_n": args.matmul_n,
            "rows": rows, "compile_chain_stages": args.chain_stages, "chain_compile_ms": chain_ms,
        });
        std::fs::write(path, serde_json::to_string_pretty(&doc)?).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
