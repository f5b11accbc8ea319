//! The `Tune` RPC: one pipeline tuned within a time budget for a host
//! ([`benchmark_agent::tune`]): search, time the candidates on that host,
//! fine-tune the model on what was measured, search again; the stream
//! carries a message after each round and the result last (the fastest
//! schedule measured, its time beside the one-shot answer's, the history,
//! the samples recorded in the training store, where they were timed).
//!
//! Where: the target's host (the server's when the request names none).
//! While an agent of that host asks for work (or heartbeats), the
//! candidates are timed there, through the [`TimingBoard`]: an agent's
//! timings are not disturbed by the server's other calls. Otherwise, for
//! the server's own host, they are timed in the server's isolated runner.
//!
//! A call is converted and checked before anything runs: a bad pipeline is
//! `INVALID_ARGUMENT`; a target naming another host none of whose agents
//! is asking for work, a server without a training store (the samples are
//! recorded there) or without tuning is `FAILED_PRECONDITION`; a budget under [`MIN_TUNE_BUDGET`] is
//! `INVALID_ARGUMENT` (`DEADLINE_EXCEEDED` when the call's deadline leaves
//! less); while a tuning runs, another is
//! `RESOURCE_EXHAUSTED` (tunings time schedules on the same cores and would
//! spoil each other's timings). The budget is clamped by the server's
//! maximum and the call's deadline. A client that goes away stops the
//! tuning at its next timing.

use crate::deadline::parse_grpc_timeout;
use crate::timing_board::{AgentTimer, TimingBoard};
use benchmark_agent::tune::{tune, TuneOn, TuneOptions, TuneRound, Tuned};
use benchmark_agent::Workload;
use codegen::runner::{Runner, RunnerOptions};
use compiler::schedule::text::schedule_to_text;
use compiler::PipelineDef;
use data::Store;
use proto::v1;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tonic::Status;

/// The most schedules a round may time.
pub const MAX_CANDIDATES: u32 = 64;
/// The least budget a tuning runs with (a search and a few timings).
pub const MIN_TUNE_BUDGET: Duration = Duration::from_secs(2);
/// A host's agents take its tunings' timings while one of them asked for
/// work or heartbeat this recently.
pub const AGENT_ALIVE_WITHIN: Duration = Duration::from_secs(90);

/// How a server tunes.
#[derive(Clone, Debug)]
pub struct TuneSettings {
    /// The budget when a request asks for none.
    pub default_budget: Duration,
    /// The largest budget a request may ask for.
    pub max_budget: Duration,
    /// The isolated runner the schedules are timed in.
    pub runner: RunnerOptions,
}

impl Default for TuneSettings {
    /// A minute by default, an hour at most, the `hl-runner` beside the
    /// server's executable (30 s a request).
    fn default() -> Self {
        TuneSettings {
            default_budget: Duration::from_secs(60),
            max_budget: Duration::from_secs(3600),
            runner: RunnerOptions { timeout: Duration::from_secs(30), ..RunnerOptions::beside_current_exe() },
        }
    }
}

/// The server's side of tunings: its settings and the one tuning at a time.
pub struct Tuning {
    settings: TuneSettings,
    running: Arc<Semaphore>,
    board: Arc<TimingBoard>,
}

/// Where a tuning times its candidates.
enum Where {
    /// On an agent of this host.
    Agents(String),
    /// In the server's isolated runner (the server's host).
    Here,
}

/// A tuning request converted and checked.
pub struct TuneJob {
    pipeline: PipelineDef,
    wire: v1::Pipeline,
    fingerprint: proto::Fingerprint,
    options: TuneOptions,
    /// `None`: the host's own.
    target: Option<compiler::Target>,
    host_key: String,
    on: Where,
    permit: OwnedSemaphorePermit,
}

/// The stream a `Tune` call answers with.
pub type TuneStream = tokio_stream::wrappers::ReceiverStream<Result<v1::TuneProgress, Status>>;

/// What the tuning thread needs from the server: its host, store and model choice.
pub struct TuneContext {
    /// The server's host key.
    pub host_key: String,
    /// The training store.
    pub store: Option<Arc<Mutex<Store>>>,
    /// The server's weights file, if it was given one.
    pub weights: Option<std::path::PathBuf>,
    /// Known hosts' weights for a host without its own.
    pub nearest: Option<Arc<trainer::Zoo>>,
}

impl TuneJob {
    /// The tuning's budget.
    pub fn budget(&self) -> Duration {
        self.options.budget
    }
}

impl Tuning {
    /// Tuning with `settings`, one at a time.
    pub fn new(settings: TuneSettings) -> Tuning {
        Tuning { settings, running: Arc::new(Semaphore::new(1)), board: Arc::new(TimingBoard::default()) }
    }

    /// The board where tunings post timings for agents.
    pub fn board(&self) -> Arc<TimingBoard> {
        self.board.clone()
    }

    /// Converts and checks a call (see the module documentation).
    pub fn job(&self, request: &tonic::Request<v1::TuneRequest>, context: &TuneContext, arrived: Instant) -> Result<TuneJob, Status> {
        let deadline = request.metadata().get("grpc-timeout").and_then(|v| v.to_str().ok()).and_then(parse_grpc_timeout);
        let r = request.get_ref();
        let wire = r.pipeline.as_ref().ok_or_else(|| Status::invalid_argument("the request has no pipeline"))?;
        let pipeline = PipelineDef::try_from(wire).map_err(|e| Status::invalid_argument(e.to_string()))?;
        let fingerprint = proto::fingerprint(&pipeline).map_err(|e| Status::invalid_argument(e.to_string()))?;
        // A target of a host key alone is that host's own (from its fingerprint).
        let (target, host_key) = match &r.target {
            Some(t) if t.vector_bytes == 0 && t.threads == 0 && t.gpu.is_none() && !t.host_key.is_empty() => (None, t.host_key.clone()),
            Some(t) => {
                let target = compiler::Target::try_from(t).map_err(|e| Status::invalid_argument(e.to_string()))?;
                (Some(target), if t.host_key.is_empty() { context.host_key.clone() } else { t.host_key.clone() })
            }
            None => (None, context.host_key.clone()),
        };
        let on = if self.board.serves(&host_key, AGENT_ALIVE_WITHIN) {
            Where::Agents(host_key.clone())
        } else if host_key == context.host_key {
            Where::Here
        } else {
            let served = self.board.hosts_served(AGENT_ALIVE_WITHIN);
            return Err(Status::failed_precondition(format!(
                "no agent of host {host_key} is asking this server for work (agents of {} are), and the server times on its own host ({}) only: start a benchmark agent on that host",
                if served.is_empty() { "no host".to_string() } else { format!("hosts {}", served.join(", ")) },
                context.host_key
            )));
        };
        if context.store.is_none() {
            return Err(Status::failed_precondition(
                "tuning records its samples in the training store, and this server has none (start it with --db)",
            ));
        }
        let requested = if r.budget_ms == 0 { self.settings.default_budget } else { Duration::from_millis(r.budget_ms) };
        if requested < MIN_TUNE_BUDGET {
            return Err(Status::invalid_argument(format!(
                "a tuning needs a budget of at least {} s (a search and a few timings); the request asks for {} ms",
                MIN_TUNE_BUDGET.as_secs(),
                requested.as_millis()
            )));
        }
        let mut budget = requested.min(self.settings.max_budget);
        if let Some(d) = deadline {
            // The result is sent before the deadline: a tenth of what is
            // left, at most a second, is kept for it.
            let left = d.saturating_sub(arrived.elapsed());
            budget = budget.min(left.saturating_sub((left / 10).min(Duration::from_secs(1))));
        }
        if budget < MIN_TUNE_BUDGET {
            return Err(Status::deadline_exceeded(format!(
                "a tuning needs at least {} s, and the call's deadline leaves {:.3} s",
                MIN_TUNE_BUDGET.as_secs(),
                budget.as_secs_f64()
            )));
        }
        let mut options = TuneOptions::within(budget);
        if r.search_budget_ms > 0 {
            let search = Duration::from_millis(r.search_budget_ms).min(budget / 4);
            options.search.budget = search;
            options.sampling.budget = search.min(options.sampling.budget);
        }
        if r.candidates > 0 {
            options.sampling.schedules = r.candidates.min(MAX_CANDIDATES) as usize;
        }
        options.search.seed = r.seed;
        let permit = self.running.clone().try_acquire_owned().map_err(|_| {
            Status::resource_exhausted(
                "a tuning is running; tunings time schedules on the same cores and would spoil each other's timings: call again when it ends",
            )
        })?;
        Ok(TuneJob { pipeline, wire: wire.clone(), fingerprint, options, target, host_key, on, permit })
    }

    /// Runs `job` on a thread of its own, streaming its rounds and result.
    pub fn start(&self, job: TuneJob, context: TuneContext, arrived: Instant) -> Result<TuneStream, Status> {
        let (tx, rx) = mpsc::channel(16);
        let runner = self.settings.runner.clone();
        let board = self.board.clone();
        std::thread::Builder::new()
            .name("tune".into())
            .spawn(move || {
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(job, &context, runner, &board, &tx, arrived)));
                let failed = match outcome {
                    Ok(Ok(())) => return,
                    Ok(Err(status)) => status,
                    Err(panic) => {
                        Status::internal(format!("the tuning panicked: {}", crate::panic_message(&*panic).unwrap_or("(no message)")))
                    }
                };
                tracing::warn!(error = %failed.message(), "tuning failed");
                let _ = tx.blocking_send(Err(failed));
            })
            .map_err(|e| Status::resource_exhausted(format!("cannot start a tuning thread: {e}")))?;
        Ok(tokio_stream::wrappers::ReceiverStream::new(rx))
    }
}

/// The tuning of `job`, its messages sent on `tx`.
fn run(
    job: TuneJob,
    context: &TuneContext,
    runner: RunnerOptions,
    board: &TimingBoard,
    tx: &mpsc::Sender<Result<v1::TuneProgress, Status>>,
    arrived: Instant,
) -> Result<(), Status> {
    let TuneJob { pipeline, wire, fingerprint, options, target, host_key, on, permit: _running } = job;
    let store = context.store.as_ref().ok_or_else(|| Status::failed_precondition("no training store"))?;
    let (start, host, target) = {
        let store = store.lock().map_err(|_| Status::internal("the training store's lock is poisoned"))?;
        let start = trainer::choose_network(context.weights.as_deref(), Some(&store), &host_key, context.nearest.as_deref())
            .map_err(|e| Status::failed_precondition(format!("no cost model: {e}")))?;
        let host = match &on {
            Where::Agents(key) => store.host(key).map_err(|e| Status::internal(format!("training store: {e}")))?.ok_or_else(|| {
                Status::failed_precondition(format!("the training store has no fingerprint of host {key}, whose agents asked for work"))
            })?,
            Where::Here => data::HostFingerprint::detect().map_err(|e| Status::internal(format!("this machine's fingerprint: {e}")))?,
        };
        let target = match (target, &on) {
            (Some(target), _) => target,
            (None, Where::Here) => compiler::Target::host(),
            (None, Where::Agents(key)) => trainer::dataset::target_of_host(&store, key)
                .map_err(|e| Status::failed_precondition(format!("the target of host {key}: {e}")))?,
        };
        (start, host, target)
    };
    let model = start.why.clone();
    let app = apps::App::at_estimates(pipeline)
        .map_err(|e| Status::invalid_argument(format!("the pipeline cannot be timed at its estimates: {e}")))?;
    let workload = Workload::from_app(&app);
    let gone = AtomicBool::new(false);
    let cancelled = || gone.load(Ordering::Relaxed) || tx.is_closed();
    let send = |event: v1::tune_progress::Event| {
        if tx.blocking_send(Ok(v1::TuneProgress { event: Some(event) })).is_err() {
            gone.store(true, Ordering::Relaxed);
        }
    };
    // One timing may not outlast a tenth of the budget (but gets 5 s), so
    // the last one started before the deadline ends near it.
    let timeout = (options.budget / 10).clamp(Duration::from_secs(5).min(runner.timeout), runner.timeout);
    let mut runner = Runner::new(RunnerOptions { timeout, ..runner });
    let prefix = format!("{}/tune/{}", options.agent, &fingerprint.to_string()[..16]);
    let mut agents = AgentTimer::new(board, host_key.clone(), wire, prefix);
    let (timer, timed_on): (&mut dyn benchmark_agent::measure::Timer, String) = match &on {
        Where::Agents(key) => (&mut agents, format!("an agent of host {key}")),
        Where::Here => (&mut runner, format!("the server's isolated runner (host {host_key})")),
    };
    let tuned = tune(store, TuneOn { timer, host, target }, &workload, start, &options, &cancelled, |round| {
        send(v1::tune_progress::Event::Round(round_to_wire(round)));
    })
    .map_err(|e| Status::internal(format!("tuning: {e}")))?;
    tracing::info!(
        fingerprint = %fingerprint,
        rounds = tuned.rounds.len(),
        best_seconds = tuned.best_seconds,
        one_shot_seconds = tuned.one_shot_seconds,
        samples_stored = tuned.samples_stored,
        timed_on,
        wall_s = arrived.elapsed().as_secs_f64(),
        "tuned"
    );
    send(v1::tune_progress::Event::Result(result_to_wire(&tuned, fingerprint, &host_key, model, timed_on)));
    Ok(())
}

/// A round on the wire.
pub fn round_to_wire(round: &TuneRound) -> v1::TuneRound {
    v1::TuneRound {
        round: round.round,
        model: round.model.clone(),
        timed: round.timed,
        failed: round.failed,
        best_seconds: round.best_seconds,
        elapsed_ms: round.elapsed_seconds * 1e3,
    }
}

fn result_to_wire(tuned: &Tuned, fingerprint: proto::Fingerprint, host_key: &str, model: String, timed_on: String) -> v1::TuneResult {
    v1::TuneResult {
        schedule: Some(v1::Schedule::from(&tuned.best)),
        schedule_text: schedule_to_text(&tuned.best),
        measured_seconds: tuned.best_seconds,
        one_shot: Some(v1::Schedule::from(&tuned.one_shot)),
        one_shot_text: schedule_to_text(&tuned.one_shot),
        one_shot_seconds: tuned.one_shot_seconds,
        history: tuned.rounds.iter().map(round_to_wire).collect(),
        samples_stored: tuned.samples_stored,
        pipeline_fingerprint: fingerprint.0.to_vec(),
        host_key: host_key.to_string(),
        model,
        timed_on,
    }
}
