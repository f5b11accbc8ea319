//! `hl-gpu`: the commands of a GPU host, which has a CUDA driver but no
//! LLVM. `hl-gpu device` names the GPU; `hl-gpu check CASES` runs the GPU
//! differential check on cases compiled elsewhere (`hlc gpu-cases`), each
//! in a child process with a time limit, and prints a table.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use gpu_runner::check::{check_case, CheckCase, Outcome, Source};
use gpu_runner::cuda::{describe_device, CudaDevice};
use gpu_runner::emulated::Emulator;
use gpu_runner::Device;
use std::collections::BTreeMap;
use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(name = "hl-gpu", about = "Runs compiled GPU pipelines on this host's NVIDIA GPU")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Names GPU 0 and its compute capability.
    Device,
    /// Runs each case of a JSON-lines file (`hlc gpu-cases`) on the GPU,
    /// compared with the reference evaluator; exits nonzero on any
    /// mismatch or failure.
    Check {
        /// The cases.
        cases: PathBuf,
        /// Seconds a case may take (its child process is killed after).
        #[arg(long, default_value_t = 60)]
        timeout_s: u64,
        /// Runs the kernels on the CPU from their launch plans instead of
        /// on a GPU (the check's plumbing, where there is no GPU).
        #[arg(long)]
        emulate: bool,
    },
    /// Runs one case read from stdin and prints its outcome as JSON (the
    /// child process of `check`).
    #[command(hide = true)]
    RunCase {
        #[arg(long)]
        emulate: bool,
    },
}

fn main() -> Result<()> {
    sigpipe::reset();
    match Cli::parse().command {
        Command::Device => {
            let (name, sm) = describe_device()?;
            println!("{name} (sm_{sm})");
        }
        Command::RunCase { emulate } => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text)?;
            let case = CheckCase::from_json(&text).context("reading the case")?;
            let module = &case.program.module;
            let outcome = if emulate {
                check_case(&case, &mut || Ok(Box::new(Emulator::new(module.clone())) as Box<dyn Device>))
            } else {
                check_case(&case, &mut || Ok(Box::new(CudaDevice::open(module)?) as Box<dyn Device>))
            };
            println!("{}", serde_json::to_string(&outcome)?);
        }
        Command::Check { cases, timeout_s, emulate } => check(&cases, Duration::from_secs(timeout_s), emulate)?,
    }
    Ok(())
}

/// Runs every case in a child process; prints a line per failure and a
/// summary.
fn check(path: &PathBuf, timeout: Duration, emulate: bool) -> Result<()> {
    let device = if emulate {
        "the CPU, emulating the kernels from their launch plans".to_string()
    } else {
        let (name, sm) = describe_device()?;
        format!("{name} (sm_{sm})")
    };
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let me = std::env::current_exe()?;
    let (mut agreed, mut launches, mut kernel_ms) = (0, 0, 0.0);
    let mut failures: BTreeMap<String, usize> = BTreeMap::new();
    let mut total = 0;
    let mut apps = vec![];
    let started = Instant::now();
    for line in std::io::BufReader::new(file).lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        total += 1;
        let case = CheckCase::from_json(&line).with_context(|| format!("case {total} of {}", path.display()))?;
        let outcome = run_child(&me, &line, timeout, emulate)?;
        let is_app = matches!(case.source, Source::App { .. });
        match outcome {
            Outcome::Agreed { launches: l, kernel_ms: ms } => {
                agreed += 1;
                launches += l;
                kernel_ms += ms;
                if is_app {
                    apps.push(format!("| {} | {l} | {ms:.3} | agreed |", case.source));
                }
            }
            Outcome::Mismatch(at) => {
                println!("{}: mismatch {at}", case.source);
                *failures.entry("Mismatch".into()).or_default() += 1;
                if is_app {
                    apps.push(format!("| {} | | | mismatch |", case.source));
                }
            }
            Outcome::Failed { kind, message } => {
                println!("{}: {kind}: {message}", case.source);
                if is_app {
                    apps.push(format!("| {} | | | {kind} |", case.source));
                }
                *failures.entry(kind).or_default() += 1;
            }
        }
    }
    println!("device: {device}");
    if !apps.is_empty() {
        println!("| app | kernels launched | kernel time, best of 3 (ms) | output |");
        println!("|---|---|---|---|");
        for row in &apps {
            println!("{row}");
        }
    }
    println!("| cases | agreed with the reference | kernels launched | kernel time (ms) | failures | wall (s) |");
    println!("|---|---|---|---|---|---|");
    let failed: usize = failures.values().sum();
    let kinds = if failures.is_empty() {
        "none".to_string()
    } else {
        failures.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", ")
    };
    println!("| {total} | {agreed} | {launches} | {kernel_ms:.1} | {kinds} | {:.1} |", started.elapsed().as_secs_f64());
    if failed > 0 || agreed != total {
        bail!("{failed} of {total} cases failed");
    }
    Ok(())
}

/// Runs one case in a child process, killed after `timeout`.
fn run_child(me: &PathBuf, case: &str, timeout: Duration, emulate: bool) -> Result<Outcome> {
    let mut command = Process::new(me);
    command.arg("run-case");
    if emulate {
        command.arg("--emulate");
    }
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    child.stdin.take().expect("piped").write_all(case.as_bytes())?;
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            let mut out = String::new();
            child.stdout.take().expect("piped").read_to_string(&mut out)?;
            let mut err = String::new();
            child.stderr.take().expect("piped").read_to_string(&mut err)?;
            return Ok(match serde_json::from_str(out.trim()) {
                Ok(o) => o,
                Err(_) => Outcome::Failed { kind: "Crashed".into(), message: format!("the child exited with {status}: {}", err.trim()) },
            });
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(Outcome::Failed { kind: "Timeout".into(), message: format!("no answer in {} s", timeout.as_secs()) });
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
