//! `trainer`: retrain the learned cost model from a training store, judge
//! weights on the held-out pipelines, draw charts, and manage the stored
//! weights versions (promote, roll back, export).

use anyhow::{bail, Context, Result};
use clap::builder::TypedValueParser;
use clap::{Args, Parser, Subcommand};
use data::{HostFingerprint, PipelineSource, Store};
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use trainer::dataset::{load, target_of_host, DEFAULT_HELD_OUT_PERCENT};
use trainer::metrics::{accuracy_by_gap, analytical_predictions, evaluate, metrics_of, predictions, Metrics, PipelineScore, Predictions};
use trainer::network::MAX_MEMBERS;
use trainer::plot::charts;
use trainer::retrain::{retrain, scaled_to_fit, RetrainOptions, ScaleFit, Start, DEFAULT_MEMBERS, DEFAULT_RANKING_WEIGHT};
use trainer::{CostNetwork, Dataset, StoredPipeline, WeightsFile};

#[derive(Parser)]
#[command(about = "Retrain, evaluate and manage the learned cost model's weights in a training store")]
struct Cli {
    /// Threads libtorch uses: one trains these small batches fastest beside other work.
    #[arg(long, global = true, default_value_t = 1)]
    torch_threads: i32,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args)]
struct StoreArgs {
    /// The training store (SQLite file).
    #[arg(long)]
    db: PathBuf,
    /// The host whose samples and weights to use (default: this machine's key).
    #[arg(long)]
    host: Option<String>,
    /// Percentage of pipelines held out (chosen by a hash of the pipeline).
    #[arg(long, default_value_t = DEFAULT_HELD_OUT_PERCENT)]
    held_out_percent: u32,
}

/// Which weights a command reads, and the store it judges them on.
#[derive(Args)]
struct WeightsArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// A stored weights version (default: the host's promoted one).
    #[arg(long, conflicts_with = "weights")]
    version: Option<u32>,
    /// A weights file instead of a stored version.
    #[arg(long)]
    weights: Option<PathBuf>,
    /// Read weights of an earlier version of this build's feature layouts (the same feature names) as if trained in this build's: how weights compare across a version that changed what features count.
    #[arg(long)]
    adopt_layouts: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Train new weights from the host's samples, store them, and promote them if they are no worse on the held-out pipelines.
    Retrain(RetrainArgs),
    /// Print held-out metrics of the promoted weights, a stored version or a weights file (and of each member of an ensemble).
    Evaluate(EvaluateArgs),
    /// Scale the predictions of the promoted weights, a stored version or a weights file by the one factor that fits the host's training pipelines best (least squares of log runtime), and write them to a file. The order of any two predictions stays as it was.
    Calibrate(CalibrateArgs),
    /// Draw PNG charts: held-out predictions, the loss curve, metrics by weights version.
    Plot(PlotArgs),
    /// Draw a bootstrap's learning curve (the JSON lines of `datagen bootstrap --curve`) as a PNG: the apps' speed against the reference, the held-out top-1 score and far-pair accuracy, by minutes of learning.
    PlotCurve(PlotCurveArgs),
    /// Promote a stored weights version for its host.
    Promote(PromoteArgs),
    /// Record in a weights file the host whose samples it learned (the store's fingerprint of the key), so that it can stand in for hosts near it; the parameters stay as they are.
    LearnedOn(LearnedOnArgs),
    /// List the shipped weights (and a store's promoted weights of every host), each host's distance from this machine (or from a host of the store), and which weights a host without its own is ranked with.
    Zoo(ZooArgs),
    /// Demote the host's promoted weights and promote their parent.
    Rollback(RollbackArgs),
    /// Export a stored weights version as a weights file.
    Weights(ExportArgs),
}

/// Train new weights from the host's samples, store them, and promote them if they are no worse on the held-out pipelines.
#[derive(Args)]
struct RetrainArgs {
    #[command(flatten)]
    store: StoreArgs,
    #[arg(long, default_value_t = 50)]
    epochs: usize,
    #[arg(long, default_value_t = 1e-3)]
    learning_rate: f64,
    /// Weight of the loss's ranking term over pairs of schedules (0: the paper's loss alone).
    #[arg(long, default_value_t = DEFAULT_RANKING_WEIGHT)]
    ranking_weight: f64,
    /// Members of the ensemble when training from scratch (training from promoted weights keeps theirs).
    #[arg(long, default_value_t = DEFAULT_MEMBERS, value_parser = clap::value_parser!(u16).range(1..=MAX_MEMBERS as i64).map(usize::from))]
    members: usize,
    /// The seed of the first run.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Training runs (seeds `seed`, `seed + 1`, ...) joined into one ensemble of all their members, so that no single seed's luck decides promotion.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=MAX_MEMBERS as i64).map(usize::from))]
    runs: usize,
    /// Start from random weights instead of the promoted ones.
    #[arg(long, conflicts_with = "start_from")]
    from_scratch: bool,
    /// Start from this weights file instead of the promoted weights, e.g. another machine's, to fine-tune them on this host's samples.
    #[arg(long)]
    start_from: Option<PathBuf>,
    /// Relabel the starting weights with this build's feature layouts when they differ only in version (the same feature names): fine-tune across a version that changed what features count.
    #[arg(long, requires = "start_from")]
    adopt_layouts: bool,
    /// Weight this build's cost terms when starting from weights trained before a term existed: the new terms' coefficients start as from scratch, the rest as the weights leave them.
    #[arg(long, conflicts_with = "from_scratch")]
    current_terms: bool,
    /// Also write the new weights to this file.
    #[arg(long)]
    weights_out: Option<PathBuf>,
    /// Show a progress bar.
    #[arg(long)]
    progress: bool,
}

/// Print held-out metrics of the promoted weights, a stored version or a weights file (and of each member of an ensemble).
#[derive(Args)]
struct EvaluateArgs {
    #[command(flatten)]
    which: WeightsArgs,
    /// Also list the N held-out pipelines whose schedules the weights order worst, beside the analytical model's scores.
    #[arg(long, default_value_t = 0)]
    worst: usize,
    /// Also print pairwise accuracy by how far apart the pairs measured (both models).
    #[arg(long)]
    by_gap: bool,
}

/// Scale the predictions of the promoted weights, a stored version or a weights file by the one factor that fits the host's training pipelines best (least squares of log runtime), and write them to a file. The order of any two predictions stays as it was.
#[derive(Args)]
struct CalibrateArgs {
    #[command(flatten)]
    which: WeightsArgs,
    #[arg(long)]
    weights_out: PathBuf,
}

/// Draw PNG charts: held-out predictions, the loss curve, metrics by weights version.
#[derive(Args)]
struct PlotArgs {
    #[command(flatten)]
    store: StoreArgs,
    #[arg(long)]
    out: PathBuf,
}

/// Draw a bootstrap's learning curve as a PNG.
#[derive(Args)]
struct PlotCurveArgs {
    /// The curve (`datagen bootstrap --curve`).
    #[arg(long)]
    curve: PathBuf,
    /// The PNG to write.
    #[arg(long)]
    out: PathBuf,
}

/// Promote a stored weights version for its host.
#[derive(Args)]
struct PromoteArgs {
    #[arg(long)]
    db: PathBuf,
    version: u32,
}

/// Demote the host's promoted weights and promote their parent.
#[derive(Args)]
struct RollbackArgs {
    #[arg(long)]
    db: PathBuf,
    /// The host (default: this machine's key).
    #[arg(long)]
    host: Option<String>,
}

/// `trainer learned-on`.
#[derive(Args)]
struct LearnedOnArgs {
    /// The store that knows the host.
    #[arg(long)]
    db: PathBuf,
    /// The host's key.
    #[arg(long)]
    host: String,
    #[arg(long)]
    weights: PathBuf,
    #[arg(long)]
    weights_out: PathBuf,
}

/// `trainer zoo`.
#[derive(Args)]
struct ZooArgs {
    /// A training store: its promoted weights of every host join the shipped ones, and `--host` is looked up in it.
    #[arg(long)]
    db: Option<PathBuf>,
    /// The host to measure from (default: this machine).
    #[arg(long, requires = "db")]
    host: Option<String>,
}

/// Export a stored weights version as a weights file.
#[derive(Args)]
struct ExportArgs {
    #[arg(long)]
    db: PathBuf,
    #[arg(long)]
    version: u32,
    #[arg(long)]
    out: PathBuf,
}

fn main() -> Result<()> {
    // Piped into `head` and the like: end quietly when the reader goes.
    sigpipe::reset();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    tch::set_num_threads(cli.torch_threads);
    match cli.command {
        Command::Retrain(args) => run_retrain(args),
        Command::Evaluate(args) => run_evaluate(args),
        Command::Calibrate(args) => run_calibrate(args),
        Command::Plot(args) => run_plot(args),
        Command::PlotCurve(args) => run_plot_curve(args),
        Command::Promote(args) => run_promote(args),
        Command::LearnedOn(args) => run_learned_on(args),
        Command::Zoo(args) => run_zoo(args),
        Command::Rollback(args) => run_rollback(args),
        Command::Weights(args) => run_weights(args),
    }
}

/// `trainer retrain`.
fn run_retrain(
    RetrainArgs {
        store,
        epochs,
        learning_rate,
        ranking_weight,
        members,
        seed,
        runs,
        from_scratch,
        start_from,
        adopt_layouts,
        current_terms,
        weights_out,
        progress,
    }: RetrainArgs,
) -> Result<()> {
    let host = host_key(store.host)?;
    let mut db = open(&store.db)?;
    let start = match start_from {
        Some(path) => {
            let file = WeightsFile::read(&path).with_context(|| format!("the starting weights {}", path.display()))?;
            let file = if adopt_layouts { file.adopting_current_layouts().context("adopting this build's layouts")? } else { file };
            Start::Weights(Box::new(file))
        }
        None if from_scratch => Start::Scratch,
        None => Start::Promoted,
    };
    let options = RetrainOptions {
        epochs,
        learning_rate,
        ranking_weight,
        members,
        seed,
        runs,
        held_out_percent: store.held_out_percent,
        start,
        current_terms,
        ..RetrainOptions::for_host()
    };
    let bar = progress.then(|| {
        let bar = ProgressBar::new(0);
        if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} steps {elapsed} {msg}") {
            bar.set_style(style);
        }
        bar
    });
    let outcome = retrain(&mut db, &host, &options, bar.as_ref()).with_context(|| format!("retraining for host {host}"))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if let Some(path) = weights_out {
        outcome.weights.write(&path)?;
    }
    println!(
        "weights version {} ({} training pipelines, {} samples)",
        outcome.version, outcome.metrics.train_pipelines, outcome.metrics.train_samples
    );
    print_metrics(&format!("v{} (new)", outcome.version), &outcome.metrics.held_out);
    print_metrics("analytical model (baseline)", &outcome.metrics.analytical_held_out);
    if let Some(incumbent) = &outcome.incumbent {
        match &incumbent.held_out {
            Some(m) => print_metrics(&format!("v{} (promoted before)", incumbent.version), m),
            None => println!("v{} (promoted before) does not fit this build's layouts", incumbent.version),
        }
    }
    println!("{}: {}", if outcome.promoted { "promoted" } else { "not promoted" }, outcome.reason);

    Ok(())
}

/// `trainer evaluate`.
fn run_evaluate(EvaluateArgs { which, worst, by_gap }: EvaluateArgs) -> Result<()> {
    let Judged { host, db, label, network, target, dataset, .. } = judged(&which)?;
    if dataset.held_out.is_empty() {
        bail!("no held-out pipelines with samples for host {host} in this build's feature layouts");
    }
    let learned = predictions(&network, &dataset.held_out)?;
    print_metrics(&label, &metrics_of(&learned));
    if network.members() > 1 {
        for (k, member) in (0..network.members()).filter_map(|k| Some((k, network.member(k)?))) {
            print_metrics(&format!("{label}, member {k} alone"), &evaluate(&member, &dataset.held_out)?);
        }
    }
    let machine = search::Machine::typical(target.threads);
    let analytical = analytical_predictions(&dataset.held_out, &machine);
    print_metrics("analytical model (baseline)", &metrics_of(&analytical));
    if by_gap {
        print_by_gap(&learned, &analytical);
    }
    if worst > 0 {
        print_worst(&db, &learned, &analytical, worst)?;
    }
    if network.members() > 1 {
        print_guard(&network, &dataset.held_out, &learned, &analytical)?;
    }

    Ok(())
}

/// The members' disagreement on the held-out pipelines' every-Func-at-the-root
/// schedules, and what answering from the analytical model above each
/// quantile of it would have done to the picks.
fn print_guard(network: &CostNetwork, held_out: &[StoredPipeline], learned: &[Predictions], analytical: &[Predictions]) -> Result<()> {
    let disagreements: Vec<f64> = held_out.iter().map(|p| trainer::trust::root_disagreement(network, &p.dag).unwrap_or(0.0)).collect();
    let quantiles = [0.5, 0.75, 0.9, 0.95, 0.99];
    let thresholds: Vec<f64> = quantiles.iter().map(|&q| trainer::trust::quantile(&disagreements, q)).collect();
    println!(
        "the members' disagreement on each held-out pipeline's every-Func-at-the-root schedule, and the analytical model's picks above it"
    );
    println!("{:<10} {:>9} {:>6} {:>15} {:>24}", "quantile", "threshold", "above", "mean regret", "above: learned / analytical");
    for (q, o) in quantiles.iter().zip(trainer::trust::by_threshold(&disagreements, learned, analytical, &thresholds)) {
        println!(
            "{:<10} {:>9.3} {:>6} {:>7.3} -> {:.3} {:>13.3} / {:.3}",
            q, o.threshold, o.above, o.learned_regret, o.guarded_regret, o.above_regret.0, o.above_regret.1
        );
    }
    let per_sample = held_out.iter().map(|p| trainer::trust::sample_disagreements(network, &p.samples)).collect::<Result<Vec<_>, _>>()?;
    println!("mean regret with each pipeline's samples ranked by the prediction times e^(k x the members' disagreement on the sample)");
    for k in [0.0, 0.25, 0.5, 1.0, 2.0] {
        println!("  k = {k:<4}  {:.3}", trainer::trust::pessimistic_regret(learned, &per_sample, k));
    }
    Ok(())
}

/// `trainer calibrate`.
fn run_calibrate(CalibrateArgs { which, weights_out }: CalibrateArgs) -> Result<()> {
    let Judged { host, label, file, network, dataset, .. } = judged(&which)?;
    if dataset.train.is_empty() || dataset.held_out.is_empty() {
        bail!(
            "host {host} has {} training and {} held-out pipelines in this build's feature layouts: both are needed",
            dataset.train.len(),
            dataset.held_out.len()
        );
    }
    print_metrics(&label, &evaluate(&network, &dataset.held_out)?);
    let (scaled, factor) = scaled_to_fit(network, &dataset.train, ScaleFit::Mean)?;
    print_metrics(&format!("{label}, scaled by {factor:.4}"), &evaluate(&scaled, &dataset.held_out)?);
    let text =
        format!("{}, outputs scaled by {factor:.4} to fit host {host}'s {} training pipelines", file.header.version, dataset.train.len());
    WeightsFile::of(&scaled, &text).learned_on(file.header.host.clone()).write(&weights_out)?;
    println!("wrote the scaled weights to {}", weights_out.display());

    Ok(())
}

/// `trainer plot`.
fn run_plot(PlotArgs { store, out }: PlotArgs) -> Result<()> {
    let host = host_key(store.host)?;
    let db = open(&store.db)?;
    for path in charts(&db, &host, &target_of_host(&db, &host)?, store.held_out_percent, &out)? {
        println!("{}", path.display());
    }

    Ok(())
}

/// `trainer plot-curve`.
fn run_plot_curve(PlotCurveArgs { curve, out }: PlotCurveArgs) -> Result<()> {
    let text = std::fs::read_to_string(&curve).with_context(|| format!("reading {}", curve.display()))?;
    let points = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str::<trainer::plot::CurvePoint>(line).with_context(|| format!("{} line {}", curve.display(), i + 1))
        })
        .collect::<Result<Vec<_>>>()?;
    anyhow::ensure!(!points.is_empty(), "{} holds no curve points", curve.display());
    trainer::plot::bootstrap_curve(&out, &points)?;
    println!("{}", out.display());

    Ok(())
}

/// `trainer promote`.
fn run_promote(PromoteArgs { db, version }: PromoteArgs) -> Result<()> {
    open(&db)?.promote(version)?;
    println!("promoted weights version {version}");

    Ok(())
}

/// `trainer learned-on`.
fn run_learned_on(LearnedOnArgs { db, host, weights, weights_out }: LearnedOnArgs) -> Result<()> {
    let fingerprint = open(&db)?.host(&host)?.with_context(|| format!("the store has no host {host}"))?;
    let file = WeightsFile::read(&weights).with_context(|| format!("the weights {}", weights.display()))?;
    file.learned_on(Some(fingerprint)).write(&weights_out)?;
    println!("wrote {} as learned on host {host} to {}", weights.display(), weights_out.display());

    Ok(())
}

/// `trainer zoo`.
fn run_zoo(ZooArgs { db, host }: ZooArgs) -> Result<()> {
    let store = db.as_deref().map(open).transpose()?;
    let (key, fingerprint) = match (&host, &store) {
        (Some(key), Some(store)) => (key.clone(), store.host(key)?.with_context(|| format!("the store has no host {key}"))?),
        _ => {
            let here = HostFingerprint::detect().context("detecting this machine's fingerprint")?;
            (here.key(), here)
        }
    };
    println!(
        "host {key}: {}, {} f32 lanes, {} ISA features",
        fingerprint.cpu_model,
        fingerprint.vector_lanes(),
        fingerprint.isa_features.len()
    );
    let zoo = match &store {
        Some(store) => trainer::Zoo::shipped().with_promoted_of(store, None)?,
        None => trainer::Zoo::shipped().clone(),
    };
    let mut entries = zoo.entries().to_vec();
    entries.sort_by_key(|e| fingerprint.distance(&e.host));
    for e in &entries {
        let fits = e.file.fits().map_or_else(|e| format!(" (does not fit this build: {e})"), |()| String::new());
        println!("  {} of host {}: {}{fits}", e.origin, e.host.key(), fingerprint.distance(&e.host));
    }
    let chosen = trainer::choose_network(None, store.as_ref(), &key, Some(trainer::Zoo::shipped()))?;
    println!("ranked with: {}", chosen.why);

    Ok(())
}

/// `trainer rollback`.
fn run_rollback(RollbackArgs { db, host }: RollbackArgs) -> Result<()> {
    let host = host_key(host)?;
    let parent = open(&db)?.rollback(Some(&host))?;
    println!("rolled back host {host} to weights version {parent}");

    Ok(())
}

/// `trainer weights`.
fn run_weights(ExportArgs { db, version, out }: ExportArgs) -> Result<()> {
    let weights = open(&db)?.weights(version)?;
    WeightsFile::decode(&weights.blob).with_context(|| format!("weights version {version}"))?.write(&out)?;
    println!("wrote weights version {version} to {}", out.display());

    Ok(())
}

/// The weights a command names and what they are judged on.
struct Judged {
    host: String,
    db: Store,
    /// Names the weights in what the command prints.
    label: String,
    file: WeightsFile,
    network: CostNetwork,
    /// The machine the host's pipelines are analysed for.
    target: compiler::Target,
    /// The host's samples, split into training and held-out pipelines.
    dataset: Dataset,
}

/// Opens the store, reads the weights `which` names (a file, a stored
/// version, or else the host's promoted version) and loads the host's
/// samples.
fn judged(which: &WeightsArgs) -> Result<Judged> {
    let host = host_key(which.store.host.clone())?;
    let db = open(&which.store.db)?;
    let stored = |v: u32| -> Result<WeightsFile> {
        let weights = db.weights(v)?;
        WeightsFile::decode(&weights.blob).with_context(|| format!("weights version {v}"))
    };
    let (label, file) = match (which.version, &which.weights) {
        (_, Some(path)) => {
            (path.display().to_string(), WeightsFile::read(path).with_context(|| format!("the weights {}", path.display()))?)
        }
        (Some(v), None) => (format!("v{v}"), stored(v)?),
        (None, None) => {
            let promoted = db.promoted_weights(Some(&host))?.with_context(|| format!("no promoted weights for host {host}"))?;
            let v = promoted.info.version;
            (format!("v{v} (promoted)"), stored(v)?)
        }
    };
    let file = if which.adopt_layouts { file.adopting_current_layouts().context("adopting this build's layouts")? } else { file };
    let network = file.to_network()?;
    let target = target_of_host(&db, &host)?;
    let dataset = load(&db, &host, &target, which.store.held_out_percent)?;
    Ok(Judged { host, db, label, file, network, target, dataset })
}

fn host_key(given: Option<String>) -> Result<String> {
    match given {
        Some(key) => Ok(key),
        None => Ok(HostFingerprint::detect().context("detecting this machine's fingerprint")?.key()),
    }
}

fn open(path: &Path) -> Result<Store> {
    if !path.exists() {
        bail!("no training store at {}", path.display());
    }
    Store::open(path).with_context(|| format!("opening {}", path.display()))
}

/// The `count` pipelines of `learned` with the lowest pairwise accuracy,
/// worst first, each beside the analytical model's scores on it.
fn print_worst(db: &Store, learned: &[Predictions], analytical: &[Predictions], count: usize) -> Result<()> {
    let sources: HashMap<String, PipelineSource> = db.pipelines()?.into_iter().map(|p| (p.hash, p.source)).collect();
    let mut scores: Vec<(PipelineScore, PipelineScore)> = learned.iter().zip(analytical).map(|(l, a)| (l.score(), a.score())).collect();
    scores.sort_by(|a, b| a.0.pairwise_accuracy.total_cmp(&b.0.pairwise_accuracy));
    println!(
        "the {} held-out pipelines the weights order worst (pairwise accuracy and top-1 score: learned / analytical)",
        count.min(scores.len())
    );
    println!("{:<24} {:>7} {:>6} {:>9} {:>15} {:>15}", "pipeline", "samples", "pairs", "spread", "pairwise", "top-1 score");
    for (l, a) in scores.iter().take(count) {
        let name = match sources.get(&l.pipeline_hash) {
            Some(PipelineSource::Generated { seed, .. }) => format!("seed {seed}"),
            _ => l.pipeline_hash.chars().take(16).collect(),
        };
        println!(
            "{name:<24} {:>7} {:>6} {:>8.2}x {:>7.3} / {:.3} {:>7.3} / {:.3}",
            l.samples, l.pairs, l.spread, l.pairwise_accuracy, a.pairwise_accuracy, l.top1_score, a.top1_score
        );
    }
    Ok(())
}

/// Pairwise accuracy by measured gap, learned beside analytical.
fn print_by_gap(learned: &[Predictions], analytical: &[Predictions]) {
    let bands = accuracy_by_gap(learned);
    let total: usize = bands.iter().map(|b| b.pairs).sum();
    println!("pairwise accuracy by how far apart the pair measured (slower / faster): learned / analytical");
    println!("{:<14} {:>7} {:>6} {:>15}", "gap", "pairs", "share", "accuracy");
    let mut lower = 1.0;
    for (l, a) in bands.iter().zip(accuracy_by_gap(analytical)) {
        let band = match l.upto {
            Some(upto) => format!("{lower:.2}-{upto:.2}x"),
            None => format!("> {lower:.2}x"),
        };
        let share = l.pairs as f64 / total.max(1) as f64;
        println!("{band:<14} {:>7} {:>6.3} {:>7.3} / {:.3}", l.pairs, share, l.accuracy, a.accuracy);
        lower = l.upto.unwrap_or(lower);
    }
}

fn print_metrics(label: &str, m: &Metrics) {
    use trainer::metrics::{APART, FAR_APART};
    println!("{label}: held-out {} pipelines, {} samples, {} pairs", m.pipelines, m.samples, m.pairs);
    println!("  top-1 score                    {:.4} (the pick's speed against the best measured, mean over pipelines)", m.top1_score);
    println!("  pairwise, pairs > {FAR_APART}x apart   {:.4} ({} pairs)", m.pairwise_accuracy_far, m.pairs_far);
    println!("  pairwise, pairs > {APART}x apart   {:.4} ({} pairs)", m.pairwise_accuracy_apart, m.pairs_apart);
    println!(
        "  pairwise, all pairs            {:.4} (set beside how often two fresh timings agree: datagen remeasure)",
        m.pairwise_accuracy
    );
    println!("  R² of log runtime              {:.4}", m.r2_log_runtime);
}
