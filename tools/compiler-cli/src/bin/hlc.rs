//! `hlc`: the command line of the compiler. `hlc demo` runs the embedded
//! default job (schedule, lower, print and run a blur on the interpreter and
//! through the LLVM JIT, checked against the reference evaluator).
//! `hlc gpu-cases` compiles random pipelines under random GPU schedules to
//! PTX, the cases a GPU host checks (`hl-gpu check`, `scripts/gpu-check.sh`).
//! The benchmark is the `bench` command (`tools/apps-cli`).

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
    /// Compiles the GPU differential suite's cases (random pipelines under
    /// random GPU schedules, sm_90 for even seeds and sm_70 for odd) to
    /// PTX and writes them as JSON lines, for `hl-gpu check` on a GPU host.
    GpuCases {
        /// The first seed.
        #[arg(long, default_value_t = 0)]
        first: u64,
        /// How many seeds.
        #[arg(long, default_value_t = 200)]
        seeds: u64,
        /// Only seeds whose target is this architecture (`sm_90`, `sm_70`).
        #[arg(long)]
        arch: Option<String>,
        /// Also the twelve apps under their GPU expert schedules, at this
        /// size (`paper` or `small`), for this architecture (`sm_90`).
        #[arg(long, value_names = ["SIZE", "ARCH"], num_args = 2)]
        apps: Option<Vec<String>>,
        /// The file written.
        #[arg(long)]
        out: PathBuf,
    },
}

fn main() -> Result<()> {
    // Piped into `head` and the like: end quietly when the reader goes.
    sigpipe::reset();
    tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::from_default_env()).with_writer(std::io::stderr).init();
    match Cli::parse().command {
        Command::GpuCases { first, seeds, arch, apps, out } => gpu_cases(first, seeds, arch.as_deref(), apps.as_deref(), &out)?,
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

/// Writes the GPU differential suite's cases of seeds `first..first+seeds`.
fn gpu_cases(first: u64, seeds: u64, arch: Option<&str>, apps: Option<&[String]>, out: &std::path::Path) -> Result<()> {
    use std::io::Write;
    let mut file = std::io::BufWriter::new(std::fs::File::create(out).with_context(|| format!("creating {}", out.display()))?);
    let (mut written, mut refused) = (0, 0);
    if let Some([size, arch]) = apps {
        let size: apps::Size = size.parse()?;
        let target = compiler::GpuTarget::named(arch)?;
        for name in apps::names() {
            let app = apps::build(name, size, &compiler::Target::host()).expect("a listed app");
            let schedule = apps::gpu::gpu_expert(&app).expect("the twelve apps have GPU schedules");
            let l = compiler::lower::lower_gpu(&app.pipeline, &schedule, &target)?;
            let program = gpu_runner::GpuProgram::new(&l, codegen::gpu::compile_gpu(&l)?);
            let source = gpu_runner::check::Source::App { name: name.to_string(), size };
            // At the paper's size the GPU host compares a digest of what the
            // CPU expert schedule computes here (the reference would take
            // minutes there).
            let expected_digest = match size {
                apps::Size::Paper => {
                    let expert = app.expert.as_ref().expect("the twelve apps have expert schedules");
                    let compiled = codegen::compile(&compiler::lower(&app.pipeline, expert)?)?;
                    let out = compiled.run(&app.pattern_inputs()?, &Default::default(), &[(app.output_name(), app.output.clone())])?;
                    Some(gpu_runner::check::digest(&out[app.output_name()]))
                }
                apps::Size::Small => None,
            };
            writeln!(file, "{}", serde_json::to_string(&gpu_runner::check::CheckCase { source, program, expected_digest })?)?;
            written += 1;
        }
    }
    for seed in first..first + seeds {
        let case = random_pipelines::cases::gpu_case(seed)?;
        if arch.is_some_and(|a| a != case.target.arch()) {
            continue;
        }
        for (k, (_, lowered)) in case.schedules.iter().enumerate() {
            let Ok(l) = lowered else {
                refused += 1;
                continue;
            };
            let program = gpu_runner::GpuProgram::new(l, codegen::gpu::compile_gpu(l)?);
            let source = gpu_runner::check::Source::Random { seed, schedule: k, region: case.region.clone() };
            let check = gpu_runner::check::CheckCase { source, program, expected_digest: None };
            writeln!(file, "{}", serde_json::to_string(&check)?)?;
            written += 1;
        }
    }
    file.flush()?;
    eprintln!("{written} cases written to {} ({refused} schedules the compiler refused)", out.display());
    Ok(())
}
