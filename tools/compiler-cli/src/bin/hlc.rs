//! `hlc`: the command line of the compiler. `hlc demo` runs the embedded
//! default job (schedule, lower, print and run a blur on the interpreter and
//! through the LLVM JIT, checked against the reference evaluator). The
//! benchmark is the `bench` command (`tools/apps-cli`).

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use codegen::demo::{blur_schedule, run_demo};
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
}

fn main() -> Result<()> {
    // Piped into `head` and the like: end quietly when the reader goes.
    sigpipe::reset();
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
            println!("# algorithm\n{}", codegen::demo::blur_pipeline_text());
            println!("# schedule\n{schedule}");
            let report = run_demo(&schedule, width, height)?;
            if passes {
                let p = compiler::examples::blur();
                let l =
                    compiler::lower::lower_with(&p, &schedule, &compiler::lower::LowerOptions { keep_passes: true, ..Default::default() })?;
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
                codegen::HostTarget::detect().cpu,
                ms(report.compile_time),
                ms(report.jit_time),
                codegen::runtime::num_threads(),
                report.points_checked,
            );
        }
    }
    Ok(())
}
