//! `datagen`: the local data-generation loop, without a server. Samples
//! schedules of random pipelines (or of one app, autotuning it), times them
//! in the isolated runner (`hl-runner`, beside this executable) and records
//! them in the training store; `bootstrap` alternates that with retraining,
//! `autotune` with fine-tuning on one app.

use anyhow::{bail, Context, Result};
use benchmark_agent::autotune::{autotune, AutotuneOptions};
use benchmark_agent::bootstrap::bootstrap;
use benchmark_agent::retime::{retime, RetimeOptions};
use benchmark_agent::yardstick::{self, Reference};
use benchmark_agent::{generate, GenerateOptions, SamplingOptions};
use clap::{Args as ClapArgs, Parser, Subcommand};
use codegen::runner::{Runner, RunnerOptions};
use data::{HostFingerprint, Store};
use search::BeamOptions;
use std::path::PathBuf;
use std::time::Duration;
use trainer::plot::CurvePoint;
use trainer::{choose_model, choose_network, RetrainOptions, TrainOptions, Zoo};

/// The searches that sample schedules (and replay them) allocate many small
/// nodes from several threads: mimalloc does that faster than glibc's malloc.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(about = "Generate training data: time sampled schedules of random pipelines into the store")]
struct Args {
    #[command(subcommand)]
    command: Command,
}

/// What to generate, common to both commands.
#[derive(ClapArgs)]
struct Work {
    /// The training store (created if missing).
    #[arg(long)]
    db: PathBuf,
    #[arg(long, default_value_t = 0)]
    first_seed: u64,
    /// Pipelines (or, with --app, batches) per run or per round.
    #[arg(long, default_value_t = 10)]
    pipelines: u64,
    /// Schedules sampled per pipeline.
    #[arg(long, default_value_t = 32)]
    schedules: usize,
    /// Of those, probes ranked at random instead of by the model (spread
    /// further apart in runtime than the model's probes).
    #[arg(long, default_value_t = 0)]
    random_probes: usize,
    #[arg(long, default_value = "local")]
    agent: String,
    /// Autotune this app (at the paper size) instead of random pipelines.
    #[arg(long)]
    app: Option<String>,
    /// Timing passes over each batch (the best time over the passes is kept).
    #[arg(long, default_value_t = 2)]
    timing_passes: usize,
    /// Sample schedules with sliding placements (line buffers) too.
    #[arg(long)]
    sliding: bool,
    /// With --sliding: of the probes ranked by the model, these many
    /// favour line buffers (take one wherever the search offers it).
    #[arg(long, default_value_t = 0, requires = "sliding")]
    line_buffer_probes: usize,
}

#[derive(Subcommand)]
enum Command {
    /// Sample, time and record the pipelines of a range of seeds.
    Generate(GenerateArgs),
    /// Time a stored random pipeline's schedules again, `repeats` times:
    /// how repeatable the stored times are (the ceiling of any model's
    /// pairwise accuracy), and how much more timing passes buy.
    Remeasure(RemeasureArgs),
    /// Time the stored schedules of a range of random pipelines again with
    /// today's compiler, recorded as reports `{tag}/{work id}`; the trainer
    /// then trains on the new times (a schedule's newest sample of its round on a host).
    /// Resumes where an interrupted run stopped.
    Retime(RetimeArgs),
    /// Time schedules of one random pipeline (text form, one file each),
    /// `repeats` times as `remeasure` does: for experiments on what makes
    /// a schedule slow (swap one Func's directives between two schedules).
    Time(TimeArgs),
    /// Autotune one app: rounds of sampling its schedules with the current
    /// network, fine-tuning the network on them and timing the
    /// autoscheduler's pick beside the expert schedule; prints a table.
    Autotune(AutotuneArgs),
    /// Featurize a store again in today's feature layouts: each stored
    /// schedule's loop nest is found again from its text and its features
    /// added beside the old ones (no timing). Schedules that already have
    /// today's features are checked against them.
    Relayout(RelayoutArgs),
    /// Rounds of generate, retrain, promote-if-no-worse; prints a table.
    Bootstrap(BootstrapArgs),
}

/// Sample, time and record the pipelines of a range of seeds.
#[derive(ClapArgs)]
struct GenerateArgs {
    #[command(flatten)]
    work: Work,
    /// The bootstrap round recorded with the samples.
    #[arg(long, default_value_t = 0)]
    round: u32,
    /// Rank with these weights (a trainer weights file); default: the
    /// store's promoted weights for this host, else the nearest known
    /// host's, else the analytical model.
    #[arg(long)]
    weights: Option<PathBuf>,
    #[command(flatten)]
    nearest: Nearest,
}

/// Whether a host without weights of its own takes the nearest known host's.
#[derive(ClapArgs)]
struct Nearest {
    /// Never rank with (or fine-tune) another host's weights: without
    /// weights of this host's own, rank with the analytical model (and
    /// train from scratch).
    #[arg(long)]
    no_nearest_host: bool,
    /// Leave this machine's own shipped weights out: serve and learn it as
    /// a machine nobody has trained on (how fast a new host is learned,
    /// measured on a known one).
    #[arg(long, conflicts_with = "no_nearest_host")]
    as_new_host: bool,
}

impl Nearest {
    /// The weights a host without its own may take (the shipped ones and
    /// the store's of other hosts), unless it may take none.
    fn zoo(&self) -> Result<Option<std::sync::Arc<Zoo>>> {
        if self.no_nearest_host {
            return Ok(None);
        }
        let shipped = Zoo::shipped();
        let zoo = if self.as_new_host { shipped.without_host(&HostFingerprint::detect()?.key()) } else { shipped.clone() };
        Ok(Some(std::sync::Arc::new(zoo)))
    }
}

/// Time a stored random pipeline's schedules again, `repeats` times:
/// how repeatable the stored times are (the ceiling of any model's
/// pairwise accuracy), and how much more timing passes buy.
#[derive(ClapArgs)]
struct RemeasureArgs {
    #[arg(long)]
    db: PathBuf,
    /// The stored pipelines' seeds (several: the agreement is also pooled over their pairs).
    #[arg(long, required = true, num_args = 1..)]
    seed: Vec<u64>,
    #[arg(long, default_value_t = 0)]
    round: u32,
    #[arg(long, default_value = "local")]
    agent: String,
    /// Timing passes per measurement (as `generate --timing-passes`).
    #[arg(long, default_value_t = 2)]
    passes: usize,
    /// Independent measurements of every schedule.
    #[arg(long, default_value_t = 2)]
    repeats: usize,
}

/// Time the stored schedules of a range of random pipelines again with
/// today's compiler, recorded as reports `{tag}/{work id}`; the trainer
/// then trains on the new times (a schedule's newest sample of its round on a host).
/// Resumes where an interrupted run stopped.
#[derive(ClapArgs)]
struct RetimeArgs {
    #[arg(long)]
    db: PathBuf,
    /// Names this retiming (e.g. the compiler change it follows).
    #[arg(long)]
    tag: String,
    #[arg(long, default_value_t = 0)]
    first_seed: u64,
    #[arg(long, default_value_t = 10)]
    pipelines: u64,
    /// The round the stored reports were recorded under.
    #[arg(long, default_value_t = 0)]
    round: u32,
    #[arg(long, default_value = "local")]
    agent: String,
    /// Timing passes over each pipeline's schedules (as `generate --timing-passes`).
    #[arg(long, default_value_t = 2)]
    timing_passes: usize,
}

/// Time schedules of one random pipeline (text form, one file each),
/// `repeats` times as `remeasure` does: for experiments on what makes
/// a schedule slow (swap one Func's directives between two schedules).
#[derive(ClapArgs)]
struct TimeArgs {
    /// The random pipeline's seed (generated as `generate` does).
    #[arg(long)]
    seed: u64,
    /// The generator's stage vocabulary (the shipped EPYC store's rounds
    /// 0-3 are version 1, rounds 4-5 version 2, round 6 version 3).
    #[arg(long, default_value_t = random_pipelines::VOCABULARY)]
    vocabulary: u32,
    /// The schedule files.
    #[arg(required = true)]
    schedules: Vec<PathBuf>,
    /// Timing passes per measurement.
    #[arg(long, default_value_t = 2)]
    passes: usize,
    /// Independent measurements of every schedule.
    #[arg(long, default_value_t = 2)]
    repeats: usize,
    /// Also write each schedule's lowered statement to DIR/{k}.stmt (k: its place in the list).
    #[arg(long)]
    emit: Option<PathBuf>,
}

/// Autotune one app: rounds of sampling its schedules with the current
/// network, fine-tuning the network on them and timing the
/// autoscheduler's pick beside the expert schedule; prints a table.
#[derive(ClapArgs)]
struct AutotuneArgs {
    /// The training store (created if missing; the app's batches are recorded in it).
    #[arg(long)]
    db: PathBuf,
    /// The app, at the paper size.
    #[arg(long)]
    app: String,
    /// Rounds after round 0 (the autoscheduler before any tuning).
    #[arg(long, default_value_t = 4)]
    rounds: u32,
    /// Batches of sampled schedules per round.
    #[arg(long, default_value_t = 1)]
    batches: u64,
    /// Schedules sampled per batch.
    #[arg(long, default_value_t = 32)]
    schedules: usize,
    /// Fine-tuning epochs per round over the app's samples.
    #[arg(long, default_value_t = 100)]
    epochs: usize,
    /// Start from these weights; default: the store's promoted weights for this host, else the analytical model.
    #[arg(long)]
    weights: Option<PathBuf>,
    /// Rehearse this training store's pipelines (this host's samples) while fine-tuning: one step on one of them after each step on the app.
    #[arg(long)]
    rehearse_db: Option<PathBuf>,
    /// Write the last round's fine-tuned weights here.
    #[arg(long)]
    weights_out: Option<PathBuf>,
    /// Write the fastest schedule measured (sampled or picked) here, as schedule text.
    #[arg(long)]
    schedule_out: Option<PathBuf>,
    /// Search budget of each round's pick, in milliseconds.
    #[arg(long, default_value_t = 5000)]
    budget_ms: u64,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[arg(long, default_value = "local")]
    agent: String,
    /// Timing passes over each batch.
    #[arg(long, default_value_t = 2)]
    timing_passes: usize,
    /// Timing passes over each round's pick and the expert schedule (in rotation).
    #[arg(long, default_value_t = 6)]
    pick_timing_passes: usize,
    /// Offer sliding placements (line buffers) to the sampling and to each round's pick.
    #[arg(long)]
    sliding: bool,
    /// With --sliding: probes per batch that favour line buffers (take one wherever the search offers it).
    #[arg(long, default_value_t = 0, requires = "sliding")]
    line_buffer_probes: usize,
    #[command(flatten)]
    nearest: Nearest,
}

/// Featurize a store again in today's feature layouts: each stored
/// schedule's loop nest is found again from its text and its features
/// added beside the old ones (no timing). Schedules that already have
/// today's features are checked against them.
#[derive(ClapArgs)]
struct RelayoutArgs {
    #[arg(long)]
    db: PathBuf,
    /// The host whose machine the pipelines are analysed for (its vector
    /// width and threads, as the store records it); by default the one host
    /// with samples in the store.
    #[arg(long)]
    host: Option<String>,
    /// Carry over the matrices of this earlier version of today's schedule
    /// layout where a pipeline's probes reproduce them (for a version that
    /// changed only what the DAG holds).
    #[arg(long)]
    carry_from_version: Option<u32>,
}

/// Rounds of generate, retrain, promote-if-no-worse; prints a table.
#[derive(ClapArgs)]
struct BootstrapArgs {
    #[command(flatten)]
    work: Work,
    #[arg(long, default_value_t = 3)]
    rounds: u32,
    /// The first round's number (continue a previous bootstrap).
    #[arg(long, default_value_t = 0)]
    first_round: u32,
    /// Training epochs per round.
    #[arg(long, default_value_t = 50)]
    epochs: usize,
    /// Stop after the round that passes this many minutes of generation
    /// and retraining.
    #[arg(long)]
    minutes: Option<f64>,
    /// Before the first round and after every round, autoschedule and time
    /// the twelve apps under the host's model as it stands, and print their
    /// geometric-mean speed against the times of `--reference` in this
    /// JSON (written by `bench/halide/run.sh` on this host).
    #[arg(long)]
    apps_against: Option<PathBuf>,
    /// The Halide bench's schedule kind to compare with.
    #[arg(long, default_value = "Adams2019", requires = "apps_against")]
    reference: String,
    /// Search budget of each app's schedule (milliseconds).
    #[arg(long, default_value_t = 5000, requires = "apps_against")]
    apps_budget_ms: u64,
    /// Append the learning curve here, one JSON line per point (`trainer
    /// plot-curve` draws it).
    #[arg(long)]
    curve: Option<PathBuf>,
    #[command(flatten)]
    nearest: Nearest,
}

fn main() -> Result<()> {
    tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::from_default_env()).with_writer(std::io::stderr).init();
    tch::set_num_threads(1);
    match Args::parse().command {
        Command::Generate(args) => run_generate(args),
        Command::Relayout(args) => run_relayout(args),
        Command::Retime(args) => run_retime(args),
        Command::Remeasure(args) => run_remeasure(args),
        Command::Time(args) => run_time(args),
        Command::Autotune(args) => run_autotune(args),
        Command::Bootstrap(args) => run_bootstrap(args),
    }
}

/// `datagen generate`.
fn run_generate(GenerateArgs { work, round, weights, nearest }: GenerateArgs) -> Result<()> {
    let (mut store, options) = open(&work, round)?;
    let host_key = HostFingerprint::detect()?.key();
    let chosen = choose_model(weights.as_deref(), Some(&store), &host_key, nearest.zoo()?.as_deref(), compiler::Target::host().threads)?;
    println!("ranking with the {} model", chosen.why);
    let mut model = chosen.model;
    let bar = indicatif::ProgressBar::new(work.pipelines);
    bar.set_style(indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} pipelines {msg} [{elapsed}]")?);
    let stats = generate(&mut store, model.as_mut(), &mut runner(), &options, |s| {
        bar.set_position(s.pipelines + s.skipped + s.unusable);
        bar.set_message(format!("{} timed, {:.0}/h", s.measured, s.samples_per_hour()));
    })?;
    bar.finish();
    println!(
        "{} pipelines ({} already stored, {} unusable), {} samples timed, failures {:?}, {:.1} s: {:.0} timed samples per hour",
        stats.pipelines,
        stats.skipped,
        stats.unusable,
        stats.measured,
        stats.failed,
        stats.wall_seconds,
        stats.samples_per_hour()
    );

    Ok(())
}

/// `datagen relayout`.
fn run_relayout(RelayoutArgs { db, host, carry_from_version }: RelayoutArgs) -> Result<()> {
    let mut store = Store::open(&db).with_context(|| format!("opening {}", db.display()))?;
    let host = match host {
        Some(host) => host,
        None => sole_sampled_host(&store)?,
    };
    let target = trainer::dataset::target_of_host(&store, &host)?;
    println!("analysing the pipelines for host {host}: {target:?}");
    let carry = carry_from_version.map(benchmark_agent::relayout::Carry::from_version);
    let bar = indicatif::ProgressBar::new(store.pipelines()?.len() as u64);
    bar.set_style(indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} pipelines {msg} [{elapsed}]")?);
    let stats = benchmark_agent::relayout::relayout(&mut store, &target, carry, |s| {
        bar.set_position(s.pipelines as u64);
        bar.set_message(format!("{} of {} schedules replayed", s.replayed, s.schedules));
    })?;
    bar.finish();
    println!(
        "{} pipelines ({} could not be rebuilt, {} changed), {} schedules: {} carried over from the earlier layout, \
         {} found again by replay, {} neither; of those found, {} already had today's features and {} of them came out identical; \
         {} feature matrices added",
        stats.pipelines,
        stats.unbuildable,
        stats.changed,
        stats.schedules,
        stats.carried,
        stats.replayed,
        stats.schedules - stats.carried - stats.replayed,
        stats.compared,
        stats.identical,
        stats.added
    );

    Ok(())
}

/// The one host with samples in `store`.
fn sole_sampled_host(store: &Store) -> Result<String> {
    let hosts: Vec<String> = store.summary()?.samples_per_host.into_iter().filter(|h| h.2 > 0).map(|h| h.0).collect();
    match hosts.as_slice() {
        [one] => Ok(one.clone()),
        [] => bail!("the store has no samples, so no host to analyse its pipelines for: name one with --host"),
        _ => bail!("the store has samples of {} hosts ({}): name the one to analyse for with --host", hosts.len(), hosts.join(", ")),
    }
}

/// `datagen retime`.
fn run_retime(RetimeArgs { db, tag, first_seed, pipelines, round, agent, timing_passes }: RetimeArgs) -> Result<()> {
    let mut store = Store::open(&db).with_context(|| format!("opening {}", db.display()))?;
    let options = RetimeOptions { first_seed, pipelines, round, agent, tag, timing_passes };
    let bar = indicatif::ProgressBar::new(pipelines);
    bar.set_style(indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} pipelines {msg} [{elapsed}]")?);
    let mut position = 0;
    let stats = retime(&mut store, &mut runner(), &options, |s| {
        position += 1;
        bar.set_position(position);
        bar.set_message(format!("{} timed, {:.0}/h", s.timed.measured, s.timed.samples_per_hour()));
    })?;
    bar.finish();
    let timed = &stats.timed;
    println!(
        "{} pipelines timed again ({} already, {} not stored, {} generated differently today), {} samples timed \
         ({} more than 1.1x faster than stored, {} slower), failures {:?}, {:.1} s: {:.0} timed samples per hour",
        timed.pipelines,
        timed.skipped,
        stats.missing,
        timed.unusable,
        timed.measured,
        stats.faster,
        stats.slower,
        timed.failed,
        timed.wall_seconds,
        timed.samples_per_hour()
    );

    Ok(())
}

/// `datagen remeasure`.
fn run_remeasure(RemeasureArgs { db, seed: seeds, round, agent, passes, repeats }: RemeasureArgs) -> Result<()> {
    let store = Store::open(&db).with_context(|| format!("opening {}", db.display()))?;
    let host_key = HostFingerprint::detect()?.key();
    let mut runner = runner();
    let name = |k: usize| if k == 0 { "stored".to_string() } else { format!("again {k}") };
    let comparisons: Vec<(usize, usize)> = (0..=repeats).flat_map(|a| (a + 1..=repeats).map(move |b| (a, b))).collect();
    let mut pooled = vec![(0usize, 0usize); comparisons.len()];
    for &seed in &seeds {
        let id = benchmark_agent::generate::work_id(&agent, round, None, seed);
        let stored = store.report_runtimes(&id, &host_key)?;
        anyhow::ensure!(!stored.is_empty(), "no measured samples of work {id} on this host");
        let (_, source) = store.report_pipeline(&id, &host_key)?.context("the report's pipeline is stored")?;
        let workload = benchmark_agent::Workload::from_stored_source(&source)
            .with_context(|| format!("work {id} timed an app, not a random pipeline"))??;
        let sources: Vec<String> = stored.iter().map(|(_, source, _)| source.clone()).collect();
        let mut measurements = vec![stored.iter().map(|(_, _, s)| Some(*s)).collect::<Vec<_>>()];
        for _ in 0..repeats {
            measurements.push(benchmark_agent::measure::remeasure(&mut runner, &workload, &sources, passes));
        }
        if seeds.len() > 1 {
            println!("seed {seed}:");
        }
        println!("| schedule | stored (ms) |{}", (1..=repeats).map(|k| format!(" again {k} (ms) |")).collect::<String>());
        println!("|---|---:|{}", "---:|".repeat(repeats));
        for (i, (hash, _, _)) in stored.iter().enumerate() {
            let times: String =
                measurements.iter().map(|m| m[i].map_or(" failed |".to_string(), |s| format!(" {:.3} |", s * 1e3))).collect();
            println!("| {} |{times}", &hash[..12]);
        }
        for (&(a, b), total) in comparisons.iter().zip(&mut pooled) {
            let agreement = benchmark_agent::measure::pairwise_agreement(&measurements[a], &measurements[b]);
            println!("pairs ordered the same way by {} and {}: {agreement:.3}", name(a), name(b));
            let (pairs, agreeing) = benchmark_agent::measure::agreeing_pairs(&measurements[a], &measurements[b]);
            *total = (total.0 + pairs, total.1 + agreeing);
        }
    }
    if seeds.len() > 1 {
        for (&(a, b), &(pairs, agreeing)) in comparisons.iter().zip(&pooled) {
            let agreement = agreeing as f64 / pairs.max(1) as f64;
            println!(
                "over the {} pipelines' {pairs} pairs, ordered the same way by {} and {}: {agreement:.3}",
                seeds.len(),
                name(a),
                name(b)
            );
        }
    }

    Ok(())
}

/// `datagen time`.
fn run_time(TimeArgs { seed, vocabulary, schedules, passes, repeats, emit }: TimeArgs) -> Result<()> {
    let params = random_pipelines::GeneratorParams { vocabulary, ..random_pipelines::GeneratorParams::for_training(seed) };
    let workload = benchmark_agent::Workload::generated(&params)?;
    let mut sources = vec![];
    for (k, path) in schedules.iter().enumerate() {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let schedule: compiler::Schedule = text.parse().with_context(|| format!("parsing the schedule in {}", path.display()))?;
        let lowered = compiler::lower(&workload.pipeline, &schedule).with_context(|| format!("lowering {}", path.display()))?;
        if let Some(dir) = &emit {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            let out = dir.join(format!("{k}.stmt"));
            std::fs::write(&out, format!("# {}\n{}", path.display(), lowered.stmt))
                .with_context(|| format!("writing {}", out.display()))?;
        }
        sources.push(text);
    }
    let mut runner = runner();
    let measurements: Vec<Vec<Option<f64>>> =
        (0..repeats).map(|_| benchmark_agent::measure::remeasure(&mut runner, &workload, &sources, passes)).collect();
    println!("| schedule |{}", (1..=repeats).map(|k| format!(" time {k} (ms) |")).collect::<String>());
    println!("|---|{}", "---:|".repeat(repeats));
    for (i, path) in schedules.iter().enumerate() {
        let times: String = measurements.iter().map(|m| m[i].map_or(" failed |".to_string(), |s| format!(" {:.3} |", s * 1e3))).collect();
        println!("| {} |{times}", path.display());
    }

    Ok(())
}

/// `datagen autotune`.
fn run_autotune(
    AutotuneArgs {
        db,
        app,
        rounds,
        batches,
        schedules,
        epochs,
        weights,
        rehearse_db,
        weights_out,
        schedule_out,
        budget_ms,
        seed,
        agent,
        timing_passes,
        pick_timing_passes,
        sliding,
        line_buffer_probes,
        nearest,
    }: AutotuneArgs,
) -> Result<()> {
    let mut store = Store::open(&db).with_context(|| format!("opening {}", db.display()))?;
    let app = apps::build(&app, apps::Size::Paper, &compiler::Target::host()).with_context(|| format!("no app called {app}"))?;
    let host_key = HostFingerprint::detect()?.key();
    let start = choose_network(weights.as_deref(), Some(&store), &host_key, nearest.zoo()?.as_deref())?;
    println!("autotuning {} from the {} model", app.name, start.why);
    let defaults = RetrainOptions::for_host();
    let rehearsal = match &rehearse_db {
        Some(path) => {
            let other = Store::open(path).with_context(|| format!("opening {}", path.display()))?;
            let dataset = trainer::dataset::load(&other, &host_key, &compiler::Target::host(), 0)?;
            println!("rehearsing {} pipelines of {} while fine-tuning", dataset.train.len(), path.display());
            dataset.train.into_iter().map(|p| p.samples).collect()
        }
        None => vec![],
    };
    let options = AutotuneOptions {
        app,
        rounds,
        batches,
        sampling: SamplingOptions { schedules, sliding, line_buffer_probes, ..SamplingOptions::default() },
        timing_passes,
        pick_timing_passes,
        agent,
        epochs,
        train: TrainOptions {
            learning_rate: defaults.learning_rate,
            ranking_weight: defaults.ranking_weight,
            seed,
            ..TrainOptions::default()
        },
        members: defaults.members,
        rehearsal,
        search: BeamOptions { seed, budget: Duration::from_millis(budget_ms), sliding, ..BeamOptions::default() },
    };
    println!(
        "| round | timed | failed | app samples | sampler's pairwise accuracy | best sampled (ms) | autoscheduled (ms) | best so far (ms) | expert (ms) | expert / autoscheduled | expert / best so far | model |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    let ms = |s: Option<f64>| s.map_or("–".to_string(), |s| format!("{:.3}", s * 1e3));
    let ratio = |x: Option<f64>| x.map_or("–".to_string(), |x| format!("{x:.2}"));
    let bar = indicatif::ProgressBar::new_spinner().with_message("round 0: timing the autoscheduler's pick beside the expert schedule");
    bar.set_style(indicatif::ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")?);
    bar.enable_steady_tick(Duration::from_millis(200));
    let tuned = autotune(&mut store, &mut runner(), start, &options, |r| {
        bar.set_message(format!("round {} of {rounds}: sampling, fine-tuning, timing", r.round + 1));
        bar.suspend(|| {
            println!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                r.round,
                r.timed,
                r.failed,
                r.app_samples,
                r.sampler_pairwise.map_or("–".to_string(), |a| format!("{a:.3}")),
                ms(r.best_sampled_seconds),
                ms(r.pick_seconds),
                ms(r.best_seconds),
                ms(r.expert_seconds),
                ratio(r.pick_speedup()),
                ratio(r.best_speedup()),
                r.model
            )
        });
    })?;
    bar.finish_and_clear();
    match tuned.first_round_beating_the_expert() {
        Some(round) => println!("the autoscheduled schedule first beats the expert's in round {round}"),
        None => println!("the autoscheduled schedule did not beat the expert's in {rounds} rounds"),
    }
    match tuned.first_round_autotuned_beyond_the_expert() {
        Some(round) => println!("the fastest schedule measured first beats the expert's in round {round}"),
        None => println!("no schedule measured beat the expert's in {rounds} rounds"),
    }
    if let (Some(path), Some((text, seconds))) = (schedule_out, &tuned.best) {
        std::fs::write(&path, format!("# the fastest schedule of {} measured: {:.3} ms\n{text}", options.app.name, seconds * 1e3))
            .with_context(|| format!("writing {}", path.display()))?;
        println!("the fastest schedule measured ({:.3} ms) written to {}", seconds * 1e3, path.display());
    }
    if let (Some(path), Some(network)) = (weights_out, &tuned.network) {
        trainer::WeightsFile::of(network, &tuned.label)
            .learned_on(Some(HostFingerprint::detect()?))
            .write(&path)
            .with_context(|| format!("writing {}", path.display()))?;
        println!("fine-tuned weights written to {}", path.display());
    }

    Ok(())
}

/// `datagen bootstrap`.
fn run_bootstrap(args: BootstrapArgs) -> Result<()> {
    let BootstrapArgs { work, rounds, first_round, epochs, minutes, apps_against, reference, apps_budget_ms, curve, nearest } = args;
    let (mut store, options) = open(&work, first_round)?;
    let zoo = nearest.zoo()?;
    let start = zoo.clone().map_or(trainer::Start::Promoted, trainer::Start::PromotedElseNearest);
    let retrain = RetrainOptions { epochs, torch_threads: Some(1), start, ..RetrainOptions::for_host() };
    let host_key = HostFingerprint::detect()?.key();
    let threads = compiler::Target::host().threads;
    let reference = apps_against.map(|path| Reference::from_halide_bench(&path, &reference)).transpose()?;
    let apps_budget = Duration::from_millis(apps_budget_ms);
    let mut curve_file = match &curve {
        Some(path) => {
            Some(std::fs::OpenOptions::new().create(true).append(true).open(path).with_context(|| format!("opening {}", path.display()))?)
        }
        None => None,
    };
    // The apps under the host's model as it stands, beside the reference.
    let apps = |store: &Store| -> Result<Option<(String, yardstick::Measured)>> {
        let Some(reference) = &reference else { return Ok(None) };
        let mut chosen = choose_model(None, Some(store), &host_key, zoo.as_deref(), threads)?;
        Ok(Some((chosen.why, yardstick::measure_apps(chosen.model.as_mut(), reference, apps_budget)?)))
    };
    let mut record = |point: CurvePoint, measured: Option<&yardstick::Measured>| -> Result<()> {
        if let Some(m) = measured {
            let per_app: Vec<String> = m.apps.iter().map(|a| format!("{} {:.2}x", a.app, a.reference_ms / a.ours_ms)).collect();
            eprintln!(
                "apps at {:.1} min ({}): {:.3}x {} ({}; timed in {:.0} s)",
                point.minutes,
                point.model,
                point.apps_speedup.unwrap_or(f64::NAN),
                point.reference.as_deref().unwrap_or_default(),
                per_app.join(", "),
                m.took.as_secs_f64()
            );
        }
        if let Some(file) = curve_file.as_mut() {
            use std::io::Write;
            writeln!(file, "{}", serde_json::to_string(&point)?).context("writing the curve")?;
        }
        Ok(())
    };
    let samples = store.summary()?.samples;
    if let Some((model, measured)) = apps(&store)? {
        let point = CurvePoint {
            round: None,
            minutes: 0.0,
            samples,
            model,
            top1_score: None,
            pairwise_accuracy_far: None,
            apps_speedup: Some(measured.geomean_speedup()),
            reference: reference.as_ref().map(|r| r.kind.clone()),
        };
        record(point, Some(&measured))?;
    }
    println!(
        "| round | sampled with | pipelines | timed | failed | samples/h | store samples | weights | promoted | held-out top-1 score | pairs > {}x apart | all pairs | R² log | minutes | apps vs {} |",
        trainer::metrics::FAR_APART,
        reference.as_ref().map_or("-", |r| r.kind.as_str()),
    );
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|");
    let mut learning = Duration::ZERO;
    bootstrap::<anyhow::Error>(&mut store, zoo.as_deref(), &mut runner(), &options, &retrain, first_round, rounds, |r, store| {
        learning += r.took;
        let measured = apps(store)?;
        let g = &r.generated;
        let speedup = measured.as_ref().map(|(_, m)| m.geomean_speedup());
        let metric = |f: fn(&trainer::Metrics) -> f64| r.held_out.as_ref().map_or("-".to_string(), |m| format!("{:.3}", f(m)));
        println!(
            "| {} | {} | {} | {} | {} | {:.0} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {} |",
            r.round,
            r.sampled_with,
            g.pipelines,
            g.measured,
            g.failed.values().sum::<u64>(),
            g.samples_per_hour(),
            r.samples_in_store,
            r.version.map_or_else(|| "none yet".to_string(), |v| format!("v{v}")),
            if r.promoted { "yes" } else { "no" },
            metric(|m| m.top1_score),
            metric(|m| m.pairwise_accuracy_far),
            metric(|m| m.pairwise_accuracy),
            metric(|m| m.r2_log_runtime),
            learning.as_secs_f64() / 60.0,
            speedup.map_or("-".to_string(), |s| format!("{s:.3}x")),
        );
        if r.version.is_none() {
            eprintln!("round {}: not retrained: {}", r.round, r.reason);
        }
        let point = CurvePoint {
            round: Some(r.round),
            minutes: learning.as_secs_f64() / 60.0,
            samples: r.samples_in_store,
            model: measured.as_ref().map_or_else(|| r.sampled_with.clone(), |(why, _)| why.clone()),
            top1_score: r.held_out.as_ref().map(|m| m.top1_score),
            pairwise_accuracy_far: r.held_out.as_ref().map(|m| m.pairwise_accuracy_far),
            apps_speedup: speedup,
            reference: reference.as_ref().map(|r| r.kind.clone()),
        };
        record(point, measured.as_ref().map(|(_, m)| m))?;
        Ok(minutes.is_none_or(|m| learning.as_secs_f64() < m * 60.0))
    })?;

    Ok(())
}

/// The store and the generation options of `work`.
fn open(work: &Work, round: u32) -> Result<(Store, GenerateOptions)> {
    let store = Store::open(&work.db).with_context(|| format!("opening {}", work.db.display()))?;
    let app = match &work.app {
        Some(name) => {
            Some(apps::build(name, apps::Size::Paper, &compiler::Target::host()).with_context(|| format!("no app called {name}"))?)
        }
        None => None,
    };
    let options = GenerateOptions {
        first_seed: work.first_seed,
        pipelines: work.pipelines,
        round,
        agent: work.agent.clone(),
        sampling: SamplingOptions {
            schedules: work.schedules,
            random_probes: work.random_probes,
            sliding: work.sliding,
            line_buffer_probes: work.line_buffer_probes,
            ..SamplingOptions::default()
        },
        app,
        timing_passes: work.timing_passes,
    };
    Ok((store, options))
}

/// The isolated runner: `hl-runner` beside this executable, 30 s a schedule.
fn runner() -> Runner {
    Runner::new(RunnerOptions { timeout: Duration::from_secs(30), ..RunnerOptions::beside_current_exe() })
}
