//! `autoschedule`: searches a schedule for an app, a random pipeline or a
//! pipeline in a serde (JSON) file, and prints it as source with its
//! explanation: the predicted runtime, each stage's share, the next-best
//! alternatives and the search's counters; with `--price`, the same
//! model's prediction for other schedules. With `--run`, also compiles it,
//! times it beside the naive schedule (and an app's expert schedule) at the
//! pipeline's estimates, any pipeline (an app, a random one or a file's),
//! and checks that all outputs agree.

use anyhow::{bail, Context, Result};
use clap::Parser;
use compiler::{PipelineDef, Schedule, Target};
use search::{autoschedule, BeamOptions, Reason};
use std::time::Duration;

/// The search allocates and frees many small loop nests and feature maps
/// from several threads: mimalloc does that faster than glibc's malloc.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(about = "Search a schedule for a pipeline and explain it")]
struct Args {
    /// An app (blur, harris, ...).
    #[arg(long, conflicts_with_all = ["random", "file"])]
    app: Option<String>,
    /// A random pipeline's seed.
    #[arg(long, conflicts_with = "file")]
    random: Option<u64>,
    /// A pipeline as JSON (a serialized `PipelineDef` with estimates).
    #[arg(long)]
    file: Option<std::path::PathBuf>,
    #[arg(long, default_value_t = 32)]
    beam: usize,
    #[arg(long, default_value_t = 5)]
    passes: usize,
    #[arg(long, default_value_t = 5000)]
    budget_ms: u64,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[arg(long, default_value_t = 3)]
    top_k: usize,
    /// Compile and time the schedule beside the naive one (and an app's
    /// expert one), at the pipeline's estimates, outputs compared.
    #[arg(long)]
    run: bool,
    /// Rank with these learned weights (a trainer weights file).
    #[arg(long)]
    weights: Option<std::path::PathBuf>,
    /// A training store: rank with its newest promoted weights for this
    /// host, when it has some (else the nearest known host's weights, its
    /// other hosts' among them).
    #[arg(long)]
    db: Option<std::path::PathBuf>,
    /// Never rank with another host's weights: without weights of this
    /// host's own (`--weights`, `--db`), rank with the analytical model
    /// rather than the nearest known host's (the shipped weights').
    #[arg(long)]
    no_nearest_host: bool,
    /// With `--run`, also time these schedules (text form, one file each).
    #[arg(long, requires = "run")]
    also: Vec<std::path::PathBuf>,
    /// With `--run`, write each timed schedule's lowered statement, LLVM
    /// IR and assembly to DIR/{n}.stmt, .ll and .s (in the order timed:
    /// naive, an app's expert, auto, then the `--also` files).
    #[arg(long, requires = "run")]
    emit: Option<std::path::PathBuf>,
    /// With `--run`, compile in the fast float mode (multiplies and adds
    /// may fuse, as in Halide's default); outputs then agree within a
    /// tolerance, not bit for bit.
    #[arg(long, requires = "run")]
    fast_float: bool,
    /// Also try storing a Func one level out and computing it sliding
    /// inside (line buffers).
    #[arg(long)]
    sliding: bool,
    /// Also price these schedules (text form, one file each) with the same
    /// model, each stage's share beside the pick's: why the search chose
    /// its schedule over them.
    #[arg(long)]
    price: Vec<std::path::PathBuf>,
}

/// Prints a predicted runtime and each stage's share of it.
fn print_prediction(priced: &search::AutoSchedule) {
    println!("predicted runtime: {:.3} ms ({} model)", priced.predicted_seconds * 1e3, priced.model);
    if let Some(d) = priced.disagreement {
        println!("the ensemble's members disagree by {d:.3} (standard deviation of the logarithms of their predictions)");
    }
    println!("\nper stage:");
    for s in &priced.per_stage {
        let share = 100.0 * s.seconds / priced.predicted_seconds.max(f64::MIN_POSITIVE);
        println!("  {:>6.1}%  {:.3} ms  {} stage {}", share, s.seconds * 1e3, s.func, s.stage);
    }
}

fn main() -> Result<()> {
    // Piped into `head` and the like: end quietly when the reader goes.
    sigpipe::reset();
    let args = Args::parse();
    tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::from_default_env()).with_writer(std::io::stderr).init();
    let target = Target::host();
    let app = match &args.app {
        Some(name) => Some(apps::build(name, apps::Size::Paper, &target).with_context(|| format!("no app called {name}"))?),
        None => None,
    };
    let pipeline: PipelineDef = match (&app, args.random, &args.file) {
        (Some(app), _, _) => app.pipeline_estimated_as_run(),
        (None, Some(seed), _) => random_pipelines::generate(&random_pipelines::GeneratorParams { seed, ..Default::default() })?.pipeline,
        (None, None, Some(path)) => serde_json::from_str(&std::fs::read_to_string(path)?).context("reading the pipeline")?,
        (None, None, None) => bail!("give --app NAME, --random SEED or --file PIPELINE.json"),
    };
    let options = BeamOptions {
        beam: args.beam,
        passes: args.passes,
        seed: args.seed,
        budget: Duration::from_millis(args.budget_ms),
        sliding: args.sliding,
        ..BeamOptions::default()
    };
    let store = args.db.as_ref().map(|path| data::Store::open(path).with_context(|| format!("opening {}", path.display()))).transpose()?;
    let host_key = data::HostFingerprint::detect()?.key();
    let nearest = (!args.no_nearest_host).then(trainer::Zoo::shipped);
    let chosen = trainer::choose_model(args.weights.as_deref(), store.as_ref(), &host_key, nearest, target.threads)?;
    println!("# ranked with the {} model", chosen.why);
    let mut model = chosen.model;
    let progress = indicatif::ProgressBar::new_spinner().with_message("searching");
    progress.enable_steady_tick(Duration::from_millis(100));
    let Some(result) = autoschedule(&pipeline, &target, model.as_mut(), &options, args.top_k)?.answer() else {
        bail!("the search was abandoned");
    };
    progress.finish_and_clear();
    println!("{}", result.schedule);
    if result.reason != Reason::Searched {
        println!("fallback: {}", result.reason);
    }
    print_prediction(&result);
    for (k, a) in result.alternatives.iter().enumerate() {
        println!("\nalternative {} (predicted {:.3} ms):\n{}", k + 1, a.predicted_seconds * 1e3, a.schedule);
    }
    let st = &result.stats;
    println!(
        "\nsearch: {} states generated, {} evaluated, {} pruned, {} passes completed{}{}, {:.1} ms wall, {:.2} us per evaluated candidate; legality check {:.1} ms",
        st.states_generated,
        st.states_evaluated,
        st.states_pruned,
        st.passes_completed,
        if st.quick_pass_completed { " after the quick one" } else { "" },
        if st.hit_deadline { " (deadline reached)" } else { "" },
        st.wall_seconds * 1e3,
        st.evaluation_seconds * 1e6 / st.states_evaluated.max(1) as f64,
        result.check_seconds * 1e3
    );
    for path in &args.price {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        println!("\n# {} priced by the same model", path.display());
        match search::price(&pipeline, &target, model.as_mut(), &text) {
            Ok(priced) => print_prediction(&priced),
            Err(e) => println!("not priced: {e}"),
        }
    }
    if args.run {
        let app = match app {
            Some(app) => app,
            None => apps::App::at_estimates(pipeline.clone()).context("timing the pipeline at its estimates")?,
        };
        let mut schedules = vec![("naive".to_string(), benchmark::naive_schedule(&app.pipeline))];
        schedules.extend(app.expert.clone().map(|e| ("expert".to_string(), e)));
        schedules.push(("auto".to_string(), result.schedule.clone()));
        for path in &args.also {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            let schedule = text.parse().with_context(|| format!("parsing the schedule in {}", path.display()))?;
            schedules.push((path.display().to_string(), schedule));
        }
        let schedules: Vec<(&str, Schedule)> = schedules.iter().map(|(n, s)| (n.as_str(), s.clone())).collect();
        if let Some(dir) = &args.emit {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            for (k, (name, schedule)) in schedules.iter().enumerate() {
                let listings =
                    benchmark::listings(&app, schedule, args.fast_float).with_context(|| format!("compiling the {name} schedule"))?;
                for (ext, text) in listings {
                    // The statement file is headed by its schedule; IR and assembly stay as LLVM wrote them.
                    let text = if ext == "stmt" { format!("# {name}\n{text}") } else { text };
                    let path = dir.join(format!("{k}.{ext}"));
                    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
                }
            }
        }
        let sampling = benchmark::SamplingOptions { fast_float: args.fast_float, ..benchmark::SamplingOptions::default() };
        let measured = benchmark::measure(&app, &schedules, &sampling)?;
        for row in &measured.rows {
            println!("{}: compile {:.1} ms, run {:.3} ms (min of {})", row.schedule, row.compile_ms, row.min_ms, row.samples);
        }
        println!("outputs agree");
    }
    Ok(())
}
