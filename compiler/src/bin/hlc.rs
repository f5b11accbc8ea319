//! `hlc`: the command line of the compiler. `hlc demo` runs the embedded
//! default job (schedule, lower, print and run a blur, checked against the
//! reference evaluator).

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
    },
}

fn main() -> Result<()> {
    tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::from_default_env()).with_writer(std::io::stderr).init();
    match Cli::parse().command {
        Command::Demo { schedule, width, height, passes } => {
            let schedule: Schedule = match schedule {
                Some(path) => {
                    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
                    text.parse().with_context(|| format!("parsing {}", path.display()))?
                }
                None => blur_schedule(),
            };
            println!("# algorithm\n{}", compiler::demo::blur_pipeline_text());
            println!("# schedule\n{schedule}");
            let started = std::time::Instant::now();
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
            println!(
                "ran a {width}x{height} blur on the interpreter: {} points, all equal to the reference evaluator ({:.1} ms)",
                report.points_checked,
                started.elapsed().as_secs_f64() * 1e3
            );
        }
    }
    Ok(())
}
