//! A training store on disk, filled as benchmark agents fill it: small
//! random pipelines (stored by seed and generator parameters, with their
//! pipeline features for the training target), schedules sampled by the
//! search under its random model, and as "measured" runtime of each
//! schedule the analytical model's prediction from its features for a
//! machine unlike the typical one it assumes (scalar code and memory
//! slower, parallel tasks dearer): a synthetic but real target, so no JIT
//! is needed, which the learned model (which starts as the analytical
//! model of the typical machine) has to learn.
//!
//! Two extra pipelines are there to be skipped: one whose stored features
//! were altered, one with a single sample.
//!
//! The trainer's tests and the `trainer` command's share it. It is a crate
//! apart from `test-support` because it links the trainer (and so
//! libtorch), which the store's tests must not.
//!
//! ```no_run
//! let (_dir, path) = training_fixtures::store_copy(compiler::Target::host(), &std::env::temp_dir());
//! assert!(path.exists());
//! ```

#![warn(missing_docs)]

use compiler::schedule::text::schedule_to_text;
use compiler::Target;
use data::{Features, HostFingerprint, Outcome, PipelineRecord, PipelineSource, Report, Runtime, SampleRecord, ScheduleRecord, Store};
use featurizer::{Dag, PIPELINE_LAYOUT, SCHEDULE_LAYOUT};
use random_pipelines::{generate, GeneratorParams};
use search::apply::to_schedule;
use search::beam::beam_search;
use search::featurize::StageFeatures;
use search::{Analytical, BeamOptions, CostModel, Machine, RandomModel};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;
use tempfile::TempDir;
use trainer::{schedule_rows, store_layout, PipelineInputs};

/// Pipelines trained and judged on (seeds `0..GOOD_PIPELINES`).
pub const GOOD_PIPELINES: u64 = 14;
/// Schedules sampled per pipeline.
pub const SCHEDULES: usize = 16;
/// The pipeline whose stored features do not match its rebuilt ones.
pub const MISMATCHED: &str = "random-100";
/// The pipeline with one sample.
pub const SINGLE_SAMPLE: &str = "random-101";

/// The fingerprint the reports carry (fixed, so the key is the same on every machine).
pub fn host() -> HostFingerprint {
    HostFingerprint::from_sources("processor\t: 0\nmodel name\t: Test CPU\nflags\t\t: avx2 fma\n", vec![])
}

/// The machine of [`host`], as a trainer analyses its pipelines
/// (`trainer::dataset::target_of_host`).
pub fn target() -> Target {
    let host = host();
    Target::of_isa(&host.isa_features, host.logical_cores as usize)
}

/// The hash under which the pipeline of generator seed `seed` is stored: `random-{seed}`.
pub fn pipeline_hash(seed: u64) -> String {
    format!("random-{seed}")
}

/// Writes the store to `path`, its pipelines analysed for `target`.
pub fn build_store(path: &Path, target: &Target) {
    let mut store = Store::open(path).expect("a store");
    for seed in 0..GOOD_PIPELINES {
        store.record_report(&report(seed, SCHEDULES, false, target)).expect("a report");
    }
    store.record_report(&report(100, SCHEDULES, true, target)).expect("a report");
    store.record_report(&report(101, 1, false, target)).expect("a report");
}

fn report(seed: u64, schedules: usize, alter_features: bool, target: &Target) -> Report {
    let params = GeneratorParams { seed, max_stages: 5, input_size: (64, 64, 3), ..Default::default() };
    let pipeline = generate(&params).expect("a random pipeline");
    let dag = Dag::new(&pipeline.pipeline, target).expect("a DAG");
    let stages = dag.stages.len();
    let mut values: Vec<f32> = PipelineInputs::of(&dag).stage_features.into_iter().flatten().collect();
    if alter_features {
        values[0] += 1.0;
    }
    let features = Features { layout: store_layout(&PIPELINE_LAYOUT), stages: stages as u32, values };
    let mut analytical = Analytical::new(synthetic_machine(target.threads));
    analytical.set_pipeline(&dag);
    let candidates = candidates(&dag, schedules);
    let refs: Vec<&StageFeatures> = candidates.iter().map(|(_, _, f)| f).collect();
    let costs = analytical.evaluate(&refs);
    let schedule_records = candidates
        .iter()
        .map(|(hash, text, f)| ScheduleRecord {
            hash: hash.clone(),
            source: text.clone(),
            features: Features {
                layout: store_layout(&SCHEDULE_LAYOUT),
                stages: stages as u32,
                values: schedule_rows(stages, f).into_iter().flatten().collect(),
            },
        })
        .collect();
    let samples = candidates
        .iter()
        .zip(costs)
        .map(|((hash, _, _), cost)| SampleRecord {
            schedule_hash: hash.clone(),
            compile_time_s: None,
            outcome: Outcome::Measured(Runtime { min_s: cost.total, median_s: cost.total, samples: 1 }),
        })
        .collect();
    Report {
        work_id: format!("work-{seed}"),
        host: host(),
        agent: "test".to_string(),
        round: (seed % 2) as u32,
        pipeline: PipelineRecord {
            hash: pipeline_hash(seed),
            source: PipelineSource::Generated { seed, params: serde_json::to_value(&params).expect("json") },
            features,
        },
        schedules: schedule_records,
        samples,
    }
}

/// The machine whose analytical prices are the store's runtimes.
fn synthetic_machine(threads: usize) -> Machine {
    Machine { scalar_ops_per_cycle: 0.25, cycles_per_byte: [0.02, 0.1, 0.4, 1.5], parallel_task: 3000.0, ..Machine::typical(threads) }
}

/// Up to `count` distinct complete candidates (hash, schedule text, features)
/// from searches ranked at random.
fn candidates(dag: &Dag, count: usize) -> Vec<(String, String, StageFeatures)> {
    let mut seen = HashSet::new();
    let mut out = vec![];
    for seed in 0..4 * count as u64 {
        let options = BeamOptions { beam: 4, passes: 1, seed, budget: Duration::from_secs(10), ..BeamOptions::default() };
        for state in beam_search(dag, &RandomModel::new(seed), &options).complete {
            if out.len() < count && seen.insert(state.hash) {
                let text = schedule_to_text(&to_schedule(dag, &state.root));
                out.push((format!("{:016x}", state.hash), text, (*state.features).clone()));
            }
        }
        if out.len() == count {
            break;
        }
    }
    out
}

/// The store for `target`, built once per process in `templates`; each
/// caller works on its own copy.
fn template(target: Target, templates: &Path) -> PathBuf {
    static TEMPLATES: Mutex<BTreeMap<(usize, usize), PathBuf>> = Mutex::new(BTreeMap::new());
    let mut built = TEMPLATES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let key = (target.vector_bytes, target.threads);
    built
        .entry(key)
        .or_insert_with(|| {
            let name = format!("training-store-fixture-{}x{}-{}.sqlite", key.0, key.1, std::process::id());
            let path = templates.join(name);
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
            }
            build_store(&path, &target);
            path
        })
        .clone()
}

/// A copy of the store built for `target` (built once per process, under
/// `templates`, e.g. the test's `CARGO_TARGET_TMPDIR`), in a temporary
/// folder that goes with the returned guard.
pub fn store_copy(target: Target, templates: &Path) -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("training.sqlite");
    std::fs::copy(template(target, templates), &path).expect("a copy of the store");
    (dir, path)
}
