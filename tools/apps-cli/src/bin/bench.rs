//! `bench`: times every pipeline of the chosen sets (the twelve apps by
//! default; `--set development,held-out` for the suite) under the naive
//! schedule (every Func at root, serial, scalar), its expert schedule where
//! it has one and, with `--auto`, the autoscheduler's, checks that all
//! compute the same output, and prints a markdown table (and JSON with
//! `--json`, the manifest `bench/halide/halide_bench.py` reads); last, the
//! JIT compile time of a long stencil chain.

use anyhow::{Context, Result};
use apps::{App, Set, Size};
use benchmark::{chain_compile_time, measure, naive_schedule, SamplingOptions};
use clap::Parser;
use compiler::ir::types::ScalarType;
use compiler::target::Target;
use std::path::{Path, PathBuf};

/// The search allocates and frees many small loop nests and feature maps
/// from several threads: mimalloc does that faster than glibc's malloc.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(about = "Time the apps under naive and expert schedules")]
struct Args {
    /// `paper` (the seed papers' sizes) or `small` (test sizes).
    #[arg(long, default_value = "paper")]
    size: Size,
    /// Worker threads for parallel loops (default: HL_NUM_THREADS, else all).
    #[arg(long)]
    threads: Option<usize>,
    /// The sets to run: `apps` (the twelve), `development` and `held-out`
    /// (the suite's halves).
    #[arg(long, value_delimiter = ',', default_value = "apps")]
    set: Vec<Set>,
    /// Only these pipelines (by name, from any set; default: every
    /// pipeline of `--set`).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Stages of the 3x3 chain whose compile time is measured.
    #[arg(long, default_value_t = 20)]
    chain_stages: usize,
    /// Write the apps' regions and rows as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write each app's output (raw, dimension 0 fastest) to DIR/{app}.bin.
    #[arg(long)]
    outputs: Option<PathBuf>,
    /// Write each expert schedule's lowered statement, LLVM IR and assembly
    /// to DIR/{app}.stmt, .ll and .s.
    #[arg(long)]
    emit: Option<PathBuf>,
    /// Also time each expert schedule lowered in checked mode (every access
    /// asserted) and print what the checks cost.
    #[arg(long)]
    checked_cost: bool,
    /// Also time the autoscheduler's schedule (beam 32, analytical model)
    /// for each app, searched for the size it runs at.
    #[arg(long)]
    auto: bool,
    /// The autoscheduler's budget per app, in milliseconds.
    #[arg(long, default_value_t = 5000)]
    auto_budget_ms: u64,
    /// With `--auto`, the search also tries storing a Func one level out
    /// and computing it sliding inside (line buffers).
    #[arg(long, requires = "auto")]
    sliding: bool,
    /// With `--auto`, also time the autoscheduler's schedule under these
    /// learned weights (a trainer weights file), as the row "learned".
    /// Repeat the flag to time several weights side by side in one run:
    /// the rows "learned", "learned 2", "learned 3", ... in the order given.
    #[arg(long, requires = "auto")]
    learned: Vec<PathBuf>,
    /// Compile in the fast float mode (multiplies and adds may fuse, a
    /// division by a constant may multiply by its reciprocal, as in Halide's
    /// default); outputs then agree within a tolerance, not bit for bit.
    #[arg(long)]
    fast_float: bool,
}

/// The bench row (and table label) of the `index`th `--learned` weights.
fn learned_row(index: usize) -> String {
    if index == 0 {
        "learned".to_string()
    } else {
        format!("learned {}", index + 1)
    }
}

fn write(dir: &Path, file: String, bytes: &[u8]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join(file);
    std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))
}

fn region_json(region: &[(i64, i64)]) -> serde_json::Value {
    region.iter().map(|&(min, extent)| serde_json::json!([min, extent])).collect()
}

fn manifest(app: &App, rows: &[benchmark::BenchRow]) -> serde_json::Value {
    let p = &app.pipeline;
    let inputs: Vec<_> = p
        .inputs
        .iter()
        .map(|i| serde_json::json!({"name": &*i.name, "type": i.ty.name(), "region": region_json(app.input_region(&i.name).map_or(&[][..], |r| r))}))
        .collect();
    let out_ty = p.func(app.output_name()).map_or("?", |f| f.types[0].scalar.name());
    let mut entry = serde_json::json!({
        "name": app.name,
        "set": apps::set_of(app.name).map(Set::name),
        "inputs": inputs,
        "output": {"name": app.output_name(), "type": out_ty, "region": region_json(&app.output)},
        "rows": rows,
    });
    for (name, value) in &app.params {
        entry[*name] = serde_json::json!(value);
    }
    entry
}

fn main() -> Result<()> {
    // Piped into `head` and the like: end quietly when the reader goes.
    sigpipe::reset();
    let args = Args::parse();
    if let Some(n) = args.threads {
        codegen::runtime::set_num_threads(n);
    }
    let catalog: Vec<&str> = Set::ALL.into_iter().flat_map(apps::names_in).collect();
    for name in &args.only {
        anyhow::ensure!(catalog.contains(&name.as_str()), "unknown pipeline `{name}` (the catalog: {})", catalog.join(", "));
    }
    let host = Target::host();
    let selected: Vec<&str> = if args.only.is_empty() {
        Set::ALL.into_iter().filter(|s| args.set.contains(s)).flat_map(apps::names_in).collect()
    } else {
        catalog.into_iter().filter(|n| args.only.iter().any(|o| o == n)).collect()
    };
    let progress = indicatif::ProgressBar::new(selected.len() as u64 + 1)
        .with_style(indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}").expect("a valid template"));
    let mut results = vec![];
    let mut search_failures = vec![];
    let mut searches = vec![];
    let mut checked = vec![];
    for name in selected {
        progress.set_message(format!("timing {name}"));
        let app = apps::build(name, args.size, &host).expect("a listed app");
        let mut schedules = vec![("naive".to_string(), naive_schedule(&app.pipeline))];
        schedules.extend(app.expert.clone().map(|e| ("expert".to_string(), e)));
        let mut search_ms = vec![];
        if args.auto {
            progress.set_message(format!("scheduling {name}"));
            let options = search::BeamOptions {
                budget: std::time::Duration::from_millis(args.auto_budget_ms),
                sliding: args.sliding,
                ..Default::default()
            };
            let mut models: Vec<(String, Box<dyn search::CostModel>)> =
                vec![("auto".to_string(), Box::new(search::Analytical::new(search::Machine::typical(codegen::runtime::num_threads()))))];
            for (index, path) in args.learned.iter().enumerate() {
                let model = trainer::LearnedModel::load(path).with_context(|| format!("loading {}", path.display()))?;
                models.push((learned_row(index), Box::new(model)));
            }
            for (row, mut model) in models {
                let started = std::time::Instant::now();
                // A pipeline the search cannot schedule is reported, and the
                // run goes on with the others.
                match search::autoschedule(&app.pipeline_estimated_as_run(), &host, model.as_mut(), &options, 0) {
                    Ok(searched) => {
                        let found = searched.answer().context("the search was abandoned")?;
                        search_ms.push((row.clone(), started.elapsed().as_secs_f64() * 1e3));
                        let st = &found.stats;
                        searches.push(serde_json::json!({
                            "app": name, "row": &row, "reason": found.reason.to_string(),
                            "searched": found.reason == search::Reason::Searched,
                            "quick_pass_completed": st.quick_pass_completed, "passes_completed": st.passes_completed,
                        }));
                        schedules.push((row, found.schedule));
                    }
                    Err(e) => search_failures.push(format!("{name}, {row}: {e}")),
                }
            }
            progress.set_message(format!("timing {name}"));
        }
        let sampling = SamplingOptions { fast_float: args.fast_float, ..SamplingOptions::default() };
        let mut measured = measure(&app, &schedules, &sampling)?;
        for row in measured.rows.iter_mut() {
            row.search_ms = search_ms.iter().find(|(name, _)| *name == row.schedule).map(|&(_, ms)| ms);
        }
        if let Some(dir) = &args.outputs {
            write(dir, format!("{name}.bin"), measured.output.bytes())?;
        }
        if let (Some(dir), Some(expert)) = (&args.emit, &app.expert) {
            for (ext, text) in benchmark::listings(&app, expert, args.fast_float)? {
                write(dir, format!("{name}.{ext}"), text.as_bytes())?;
            }
        }
        if let (true, Some(expert)) = (args.checked_cost, &app.expert) {
            let options = SamplingOptions { check_accesses: true, ..sampling };
            let with_checks = measure(&app, &[("expert checked", expert.clone())], &options)?;
            checked.push((name, measured.rows[1].min_ms, with_checks.rows[0].min_ms));
        }
        results.push((app, measured.rows));
        progress.inc(1);
    }
    progress.set_message(format!("compiling a {}-stage chain", args.chain_stages));
    let chain_ms = chain_compile_time(args.chain_stages, 5, host.natural_lanes(ScalarType::F32))?.as_secs_f64() * 1e3;
    progress.finish_and_clear();

    let threads = codegen::runtime::num_threads();
    println!(
        "host: {} ({} bytes per vector), {threads} threads, {:?} sizes, {} float mode\n",
        codegen::HostTarget::detect().cpu,
        host.vector_bytes,
        args.size,
        if args.fast_float { "fast" } else { "strict" }
    );
    let mut auto_head = String::new();
    if args.auto {
        auto_head += " auto (ms) | naive / auto | expert / auto | auto search (ms) |";
    }
    for index in 0..args.learned.len() {
        let row = learned_row(index);
        auto_head += &format!(" {row} (ms) | auto / {row} | expert / {row} | {row} search (ms) |");
    }
    let auto_columns = if args.auto { 4 * (1 + args.learned.len()) } else { 0 };
    println!("| app | naive (ms) | expert (ms) | naive / expert | expert compile (ms) | samples |{auto_head}");
    println!("|---|---:|---:|---:|---:|---:|{}", "---:|".repeat(auto_columns));
    let (mut log_speedups, mut log_auto, mut log_auto_expert) = (vec![], vec![], vec![]);
    let mut log_learned = vec![(vec![], vec![]); args.learned.len()];
    let ms = |v: Option<f64>, digits: usize| v.map_or("–".to_string(), |v| format!("{v:.digits$}"));
    for (app, rows) in &results {
        let row = |name: &str| rows.iter().find(|r| r.schedule == name);
        let naive = row("naive").expect("every pipeline is timed naive");
        let expert = row("expert");
        let expert_ms = expert.map(|e| e.min_ms);
        if let Some(e) = expert_ms {
            log_speedups.push((naive.min_ms / e).ln());
        }
        let mut auto = String::new();
        let auto_ms = row("auto").map(|a| a.min_ms);
        if args.auto {
            let a = row("auto");
            if let Some(a) = a {
                log_auto.push((naive.min_ms / a.min_ms).ln());
                log_auto_expert.extend(expert_ms.map(|e| (e / a.min_ms).ln()));
            }
            auto += &format!(
                " {} | {} | {} | {} |",
                ms(auto_ms, 3),
                auto_ms.map_or("–".to_string(), |a| format!("{:.1}x", naive.min_ms / a)),
                ms(expert_ms.zip(auto_ms).map(|(e, a)| e / a), 2),
                ms(a.and_then(|a| a.search_ms), 0)
            );
        }
        for (index, (over_auto, over_expert)) in log_learned.iter_mut().enumerate() {
            let l = row(&learned_row(index));
            let l_ms = l.map(|l| l.min_ms);
            if let Some(l) = l_ms {
                over_auto.extend(auto_ms.map(|a| (a / l).ln()));
                over_expert.extend(expert_ms.map(|e| (e / l).ln()));
            }
            auto += &format!(
                " {} | {} | {} | {} |",
                ms(l_ms, 3),
                ms(auto_ms.zip(l_ms).map(|(a, l)| a / l), 2),
                ms(expert_ms.zip(l_ms).map(|(e, l)| e / l), 2),
                ms(l.and_then(|l| l.search_ms), 0)
            );
        }
        println!(
            "| {} | {:.3} | {} | {} | {} | {} |{auto}",
            app.name,
            naive.min_ms,
            ms(expert_ms, 3),
            expert_ms.map_or("–".to_string(), |e| format!("{:.1}x", naive.min_ms / e)),
            ms(expert.map(|e| e.compile_ms), 1),
            expert.map_or("–".to_string(), |e| e.samples.to_string())
        );
    }
    let geomean = |logs: &[f64]| {
        if logs.is_empty() {
            "–".to_string()
        } else {
            format!("{:.2}", (logs.iter().sum::<f64>() / logs.len() as f64).exp())
        }
    };
    let times = |ratio: String| if ratio == "–" { ratio } else { ratio + "x" };
    if !results.is_empty() {
        let mut auto =
            if args.auto { format!(" | {} | {} | |", times(geomean(&log_auto)), geomean(&log_auto_expert)) } else { String::new() };
        for (over_auto, over_expert) in &log_learned {
            auto += &format!(" | {} | {} | |", geomean(over_auto), geomean(over_expert));
        }
        println!("| geometric mean | | | {} | | |{auto}", times(geomean(&log_speedups)));
    }
    let fallbacks: Vec<&serde_json::Value> = searches.iter().filter(|s| s["searched"] == false).collect();
    if !fallbacks.is_empty() {
        println!("\nAnswers that are not the search's (a fallback):\n");
        for s in &fallbacks {
            println!(
                "- {}, {}: {}",
                s["app"].as_str().unwrap_or("?"),
                s["row"].as_str().unwrap_or("?"),
                s["reason"].as_str().unwrap_or("?")
            );
        }
    }
    if !search_failures.is_empty() {
        println!("\nSearches that failed (their rows are missing):\n");
        for f in &search_failures {
            println!("- {f}");
        }
    }
    println!("\nJIT compile of a {}-stage 3x3 stencil chain: median {chain_ms:.1} ms over 5 compiles", args.chain_stages);
    if !checked.is_empty() {
        println!("\n| app | expert (ms) | expert, checked mode (ms) | checked / expert |");
        println!("|---|---:|---:|---:|");
        for (name, plain, with_checks) in &checked {
            println!("| {name} | {plain:.3} | {with_checks:.3} | {:.2} |", with_checks / plain);
        }
    }
    if let Some(path) = &args.json {
        let doc = serde_json::json!({
            "host": codegen::HostTarget::detect().cpu, "vector_bytes": host.vector_bytes, "threads": threads, "size": args.size,
            "float_mode": if args.fast_float { "fast" } else { "strict" },
            "apps": results.iter().map(|(app, rows)| manifest(app, rows)).collect::<Vec<_>>(),
            "compile_chain_stages": args.chain_stages, "chain_compile_ms": chain_ms,
            "search_failures": search_failures,
            "searches": searches,
        });
        std::fs::write(path, serde_json::to_string_pretty(&doc)?).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
