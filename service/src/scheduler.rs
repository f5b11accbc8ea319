//! The `Schedule` RPC.
//!
//! A call is converted (a bad pipeline or target is `INVALID_ARGUMENT`),
//! fingerprinted and admitted if fewer than `max_in_flight` calls are in
//! flight (else `RESOURCE_EXHAUSTED` at once: the back-pressure). It then
//! gets a thread of its own ([`crate::priority`]) that chooses its cost
//! model (the requested weights version of the store, else the store's
//! promoted weights for the target's host, else the analytical model) and
//! sends an early answer (every Func at the root, which needs no legality
//! check), then waits for one of the server's search slots, which the
//! call hands it in arrival order, and searches under a budget clamped by
//! the deadline. The slots bound the searches that share the cores: on an
//! overloaded server each search runs at the speed it was budgeted for,
//! and the calls that find every slot busy until their answer is due
//! answer with the early answer, as does a search that has not answered
//! shortly before the budget ends; the reply's `reason` says which (as
//! data, and in words in its `fallback`).
//! However the call ends, its search is abandoned and stops at its next
//! step. One tracing span per call records the fingerprint, budget, model,
//! outcome and wall time.

use crate::deadline::{answer_reserve, parse_grpc_timeout, search_budget, MIN_BUDGET};
use crate::messages::record_outcome;
use crate::priority::{spawn_search, SearchPanic};
use compiler::schedule::text::schedule_to_text;
use compiler::{PipelineDef, Target};
use data::{Store, StoreError};
use proto::v1;
use proto::v1::scheduler_server::Scheduler;
use search::{at_root, autoschedule, Abandon, AutoSchedule, BeamOptions, CostModel, LastResortPick, Reason, Rejection, Searched};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, OwnedSemaphorePermit, Semaphore};
use tonic::{Request, Response, Status};
use tracing::{field, info, info_span, Instrument};

/// The calls a server admits at once unless told otherwise.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 256;

/// The most alternatives a reply carries.
const MAX_TOP_K: usize = 16;

/// Settings of the RPC.
#[derive(Clone, Debug)]
pub struct SchedulerSettings {
    /// The budget when a request asks for none.
    pub default_budget: Duration,
    /// The largest budget a request may ask for.
    pub max_budget: Duration,
    /// The beam width when a request asks for none, and the largest.
    pub default_beam: usize,
    /// The largest beam width a request may ask for.
    pub max_beam: usize,
    /// The most calls in flight at once (searching, waiting for a search
    /// slot or replying); more are `RESOURCE_EXHAUSTED` at once.
    pub max_in_flight: usize,
    /// This host's fingerprint key (the promoted weights that apply when a
    /// request names no host).
    pub host_key: String,
    /// A weights file that ranks every call naming no weights version, in
    /// place of the store's promoted weights (`None`: the store's, else the
    /// analytical model).
    pub weights: Option<std::path::PathBuf>,
    /// Weights of known hosts: a host with no promoted weights of its own
    /// is ranked with the nearest one's among them and the store's of other
    /// hosts ([`trainer::zoo`]; `None`: with the analytical model).
    pub nearest: Option<Arc<trainer::Zoo>>,
    /// How the `Tune` RPC tunes (`None`: it is refused).
    pub tuning: Option<crate::tuning::TuneSettings>,
}

impl SchedulerSettings {
    /// The defaults for `host_key`: a budget of 1 s (60 s at most), a beam
    /// of 32 (256 at most), at most `DEFAULT_MAX_IN_FLIGHT` calls in flight.
    pub fn new(host_key: String) -> SchedulerSettings {
        SchedulerSettings {
            default_budget: Duration::from_secs(1),
            max_budget: Duration::from_secs(60),
            default_beam: 32,
            max_beam: 256,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            host_key,
            weights: None,
            nearest: None,
            tuning: Some(crate::tuning::TuneSettings::default()),
        }
    }
}

/// The `Scheduler` service.
pub struct SchedulerService {
    settings: SchedulerSettings,
    store: Option<Arc<Mutex<Store>>>,
    slots: Arc<Semaphore>,
    max_concurrent: usize,
    in_flight: Arc<Semaphore>,
    /// The cores the searches share.
    cores: usize,
    /// The `Tune` RPC's state (`None`: refused).
    tuning: Option<crate::tuning::Tuning>,
}

impl SchedulerService {
    /// A service running at most `max_concurrent` searches and admitting at
    /// most `settings.max_in_flight` calls at once (each at least one), with
    /// models from `store` when given (shared with the agent service).
    /// Its searches' parallel steps run on rayon's global pool, made here
    /// at a lower priority if the process has not started it yet.
    pub fn new(mut settings: SchedulerSettings, store: Option<Arc<Mutex<Store>>>, max_concurrent: usize) -> SchedulerService {
        let max_concurrent = max_concurrent.max(1);
        settings.max_in_flight = settings.max_in_flight.max(1);
        crate::priority::lower_search_pool();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let in_flight = Arc::new(Semaphore::new(settings.max_in_flight));
        let tuning = settings.tuning.clone().map(crate::tuning::Tuning::new);
        SchedulerService { settings, store, slots: Arc::new(Semaphore::new(max_concurrent)), max_concurrent, in_flight, cores, tuning }
    }

    /// The board where this service's tunings post timings for agents
    /// (`None`: it does not tune).
    pub fn timing_board(&self) -> Option<Arc<crate::timing_board::TimingBoard>> {
        self.tuning.as_ref().map(crate::tuning::Tuning::board)
    }

    /// The gate that admits calls before their messages are decoded
    /// (install it with `InterceptedService`; calls that did not pass it
    /// are admitted by the handler itself).
    pub fn admission(&self) -> Admission {
        Admission { in_flight: self.in_flight.clone(), max: self.settings.max_in_flight }
    }

    /// The call's admission: taken before its message was decoded
    /// ([`Admission`]), or now.
    fn admitted<T>(&self, request: &Request<T>) -> Result<OwnedSemaphorePermit, Status> {
        match request.extensions().get::<Admitted>().and_then(Admitted::take) {
            Some(permit) => Ok(permit),
            None => self.admission().admit(),
        }
    }

    /// Searches running per core now (this one included, its slot held).
    fn sharing(&self) -> f64 {
        (self.max_concurrent - self.slots.available_permits()) as f64 / self.cores as f64
    }
}

/// Admission control before decoding: a call is admitted if fewer than
/// `max_in_flight` calls are in flight, else refused `RESOURCE_EXHAUSTED`
/// before its message is read, so a flood of large requests costs their
/// headers, not their decoding. The permit travels in the request's
/// extensions to the handler, and with the call's search until it ends.
#[derive(Clone)]
pub struct Admission {
    in_flight: Arc<Semaphore>,
    max: usize,
}

impl Admission {
    fn admit(&self) -> Result<OwnedSemaphorePermit, Status> {
        self.in_flight.clone().try_acquire_owned().map_err(|_| {
            Status::resource_exhausted(format!("the server has {} calls in flight, the most it admits at once; call again later", self.max))
        })
    }
}

impl tonic::service::Interceptor for Admission {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        let permit = self.admit()?;
        request.extensions_mut().insert(Admitted(Arc::new(Mutex::new(Some(permit)))));
        Ok(request)
    }
}

/// The admission permit of a call, from [`Admission`] to its handler.
#[derive(Clone)]
struct Admitted(Arc<Mutex<Option<OwnedSemaphorePermit>>>);

impl Admitted {
    fn take(&self) -> Option<OwnedSemaphorePermit> {
        self.0.lock().ok()?.take()
    }
}

/// A request converted and checked.
struct Job {
    pipeline: PipelineDef,
    target: Target,
    host_key: String,
    requested: Duration,
    options: BeamOptions,
    weights_version: Option<u32>,
    /// The server's weights file, if it was given one.
    weights: Option<std::path::PathBuf>,
    nearest: Option<Arc<trainer::Zoo>>,
    top_k: usize,
}

/// The most bytes of an error's text a status carries (it travels in an
/// HTTP/2 header); past them, the rest (most often a schedule's text) is
/// cut, and the status says how much was.
const MAX_STATUS_MESSAGE: usize = 960;

fn invalid(e: impl std::fmt::Display) -> Status {
    let mut text = e.to_string();
    if text.len() > MAX_STATUS_MESSAGE {
        let cut = (0..=MAX_STATUS_MESSAGE).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
        let dropped = text.len() - cut;
        text.truncate(cut);
        text.push_str(&format!(" ... ({dropped} more bytes)"));
    }
    Status::invalid_argument(text)
}

impl SchedulerService {
    fn job(&self, r: &v1::ScheduleRequest) -> Result<Job, Status> {
        let wire = r.pipeline.as_ref().ok_or_else(|| Status::invalid_argument("the request has no pipeline"))?;
        let pipeline = PipelineDef::try_from(wire).map_err(invalid)?;
        let (target, host_key) = match &r.target {
            Some(t) => {
                let host_key = if t.host_key.is_empty() { self.settings.host_key.clone() } else { t.host_key.clone() };
                (Target::try_from(t).map_err(invalid)?, host_key)
            }
            None => (Target::host(), self.settings.host_key.clone()),
        };
        let s = &self.settings;
        let requested = if r.budget_ms == 0 { s.default_budget } else { Duration::from_millis(r.budget_ms).min(s.max_budget) };
        let beam = if r.beam == 0 { s.default_beam } else { (r.beam as usize).min(s.max_beam) };
        let options = BeamOptions { beam, seed: r.seed, strict_budget: true, sliding: r.sliding, ..BeamOptions::default() };
        Ok(Job {
            pipeline,
            target,
            host_key,
            requested,
            options,
            weights_version: r.weights_version,
            weights: self.settings.weights.clone(),
            nearest: self.settings.nearest.clone(),
            top_k: (r.top_k as usize).min(MAX_TOP_K),
        })
    }

    /// Hands `searcher` the next free search slot, if one frees before
    /// `until`; else drops it, which tells the searcher no search is worth
    /// starting. Never completes (the call's answer does).
    async fn hand_slot(&self, searcher: oneshot::Sender<Slot>, until: Instant) -> Infallible {
        match tokio::time::timeout_at(until.into(), self.slots.clone().acquire_owned()).await {
            Ok(Ok(permit)) => {
                let _ = searcher.send(Slot { _permit: permit, sharing: self.sharing() });
            }
            _ => drop(searcher),
        }
        std::future::pending().await
    }

    async fn run(&self, request: Request<v1::ScheduleRequest>, started: Instant) -> Result<v1::ScheduleReply, Status> {
        let deadline =
            request.metadata().get("grpc-timeout").and_then(|v| v.to_str().ok()).and_then(parse_grpc_timeout).map(|d| started + d);
        let span = tracing::Span::current();
        let admitted = self.admitted(&request)?;
        // The wire message goes as soon as it is converted: a call holds
        // the compiler's pipeline, never the (larger) decoded message.
        let mut job = self.job(&request.into_inner())?;
        let fingerprint = proto::fingerprint(&job.pipeline).map_err(invalid)?;
        span.record("fingerprint", field::display(fingerprint));
        let remaining = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        job.options.budget = search_budget(job.requested, remaining)
            .ok_or_else(|| Status::deadline_exceeded("too little time is left before the deadline to search"))?;
        span.record("budget_ms", job.options.budget.as_millis() as u64);
        // The budget counts from the call's arrival: the wait for a slot,
        // the model's loading and the reply come out of it.
        let answer_by = started + job.options.budget;
        // However the call ends (its answer, the early one, an error, or
        // tonic dropping it at its deadline), its search stops at its next
        // step rather than spend the cores on an answer no one will read;
        // the slot goes with the search until it has stopped.
        let abandon = Abandon::new();
        let _abandon_when_answered = AbandonOnDrop(abandon.clone());
        job.options.abandon = Some(abandon);
        let job = Arc::new(job);
        let search_job = job.clone();
        let store = self.store.clone();
        let (early_tx, early_rx) = oneshot::channel();
        let (slot_tx, slot_rx) = oneshot::channel::<Slot>();
        let search = spawn_search(move || {
            let _admitted = admitted;
            let (mut model, why) = choose(store.as_deref(), &search_job)?;
            let early =
                at_root(&search_job.pipeline, &search_job.target, model.as_mut(), Reason::EarlyAnswerAtDeadline).map_err(invalid)?;
            let _ = early_tx.send((early.clone(), why.clone()));
            let Ok(slot) = slot_rx.blocking_recv() else {
                return Ok((AutoSchedule { reason: Reason::NoSearchSlot, ..early }, why));
            };
            crate::priority::lower_this_thread();
            let options = BeamOptions { budget: search_time(&search_job.options, answer_by, slot.sharing), ..search_job.options.clone() };
            let searched =
                autoschedule(&search_job.pipeline, &search_job.target, model.as_mut(), &options, search_job.top_k).map_err(invalid)?;
            // Abandoned: the call has ended, and no one reads this.
            let Searched::Answered(result) = searched else {
                return Err(Status::cancelled("the call ended before its search answered"));
            };
            Ok::<_, Status>((*result, why))
        })
        .map_err(|e| Status::resource_exhausted(format!("cannot start a search thread: {e}")))?;
        // A slot that frees later than this leaves too little time to search.
        let last_start = answer_by.checked_sub(answer_reserve(job.options.budget, 1.0) + MIN_BUDGET).unwrap_or(started);
        let (result, why) = tokio::select! {
            answered = answer(search, early_rx, answer_by - reply_margin(job.options.budget)) => answered?,
            never = self.hand_slot(slot_tx, last_start) => match never {},
        };
        span.record("model", why.as_str());
        Ok(reply(&result, &job, fingerprint, why, started))
    }
}

/// A search slot handed to a call's search thread, and the searches per
/// core (this one included) when it was handed.
struct Slot {
    _permit: OwnedSemaphorePermit,
    sharing: f64,
}

/// Raises its flag when dropped.
struct AbandonOnDrop(Abandon);

impl Drop for AbandonOnDrop {
    fn drop(&mut self) {
        self.0.raise();
    }
}

/// The part of a budget kept for encoding and sending the reply after the
/// answer is chosen: a tenth of it, between 2 and 20 ms.
fn reply_margin(budget: Duration) -> Duration {
    (budget / 10).clamp(Duration::from_millis(2), Duration::from_millis(20))
}

type Answer = (AutoSchedule, String);

/// The search's answer if it comes by `answer_at`, else the early answer
/// (every Func at the root) its task sent before searching; if neither is
/// there at `answer_at`, whichever comes first. Failures of the task (a model that cannot be loaded, a pipeline that
/// cannot be analysed) are the search's.
async fn answer(
    mut search: oneshot::Receiver<Result<Result<Answer, Status>, SearchPanic>>,
    mut early: oneshot::Receiver<Answer>,
    answer_at: Instant,
) -> Result<Answer, Status> {
    let finished = |joined: Result<Result<Result<Answer, Status>, SearchPanic>, oneshot::error::RecvError>| match joined {
        Ok(Ok(result)) => result,
        Ok(Err(panic)) => Err(Status::internal(panic.to_string())),
        Err(_) => Err(Status::internal("the search's thread ended without an answer")),
    };
    tokio::select! {
        joined = &mut search => return finished(joined),
        _ = tokio::time::sleep_until(answer_at.into()) => {}
    }
    tokio::select! {
        biased;
        joined = &mut search => finished(joined),
        Ok(early) = &mut early => {
            info!("answered at the deadline with every Func at the root");
            Ok(early)
        }
    }
}

/// What is left of a job's budget for its search when it starts, the
/// answer being due at `answer_by`: the time to `answer_by` less what the
/// answer needs after the search while `sharing` searches share each core
/// ([`answer_reserve`]), and never less than [`MIN_BUDGET`] (the search
/// then answers from its greedy completion).
fn search_time(options: &BeamOptions, answer_by: Instant, sharing: f64) -> Duration {
    answer_by.saturating_duration_since(Instant::now()).saturating_sub(answer_reserve(options.budget, sharing)).max(MIN_BUDGET)
}

/// The model for a job and the sentence saying which it is (blocking:
/// it reads the store and loads weights).
fn choose(store: Option<&Mutex<Store>>, job: &Job) -> Result<(Box<dyn CostModel>, String), Status> {
    let store = match store {
        Some(s) => Some(s.lock().map_err(|_| Status::internal("the training store's lock is poisoned"))?),
        None => None,
    };
    match job.weights_version {
        Some(version) => {
            let store = store.ok_or_else(|| {
                Status::failed_precondition(format!(
                    "weights v{version} were asked for, but the server has no training store (start it with --db)"
                ))
            })?;
            let w = store.weights(version).map_err(|e| match e {
                StoreError::UnknownWeights(_) => Status::not_found(format!("the training store has no weights v{version}")),
                e => Status::internal(format!("training store: {e}")),
            })?;
            let model = trainer::LearnedModel::from_bytes(&w.blob)
                .map_err(|e| Status::failed_precondition(format!("weights v{version} cannot be used: {e}")))?;
            Ok((Box::new(model), format!("learned weights v{version}, as requested")))
        }
        None => {
            let chosen =
                trainer::choose_model(job.weights.as_deref(), store.as_deref(), &job.host_key, job.nearest.as_deref(), job.target.threads)
                    .map_err(|e| Status::failed_precondition(format!("no cost model: {e}")))?;
            Ok((chosen.model, chosen.why))
        }
    }
}

/// The reply of a call that arrived at `arrived`, answered `a`.
fn reply(a: &AutoSchedule, job: &Job, fingerprint: proto::Fingerprint, why: String, arrived: Instant) -> v1::ScheduleReply {
    let ms = |s: f64| s * 1e3;
    let mut reply = v1::ScheduleReply {
        schedule: Some(v1::Schedule::from(&a.schedule)),
        schedule_text: schedule_to_text(&a.schedule),
        predicted_seconds: a.predicted_seconds,
        disagreement: a.disagreement,
        per_stage: a.per_stage.iter().map(|s| v1::StageCost { func: s.func.clone(), stage: s.stage as u32, seconds: s.seconds }).collect(),
        alternatives: a
            .alternatives
            .iter()
            .map(|alt| v1::Alternative {
                schedule: Some(v1::Schedule::from(&alt.schedule)),
                schedule_text: schedule_to_text(&alt.schedule),
                predicted_seconds: alt.predicted_seconds,
            })
            .collect(),
        model: why,
        pipeline_fingerprint: fingerprint.0.to_vec(),
        stats: Some(v1::SearchStats {
            states_generated: a.stats.states_generated as u64,
            states_evaluated: a.stats.states_evaluated as u64,
            states_pruned: a.stats.states_pruned as u64,
            passes_completed: a.stats.passes_completed as u32,
            hit_deadline: a.stats.hit_deadline,
            wall_ms: ms(a.stats.wall_seconds),
            evaluation_ms: ms(a.stats.evaluation_seconds),
            legality_check_ms: ms(a.check_seconds),
            quick_pass_completed: a.stats.quick_pass_completed,
        }),
        fallback: if a.reason == Reason::Searched { String::new() } else { a.reason.to_string() },
        target: Some(proto::target::target_to_wire(&job.target, &job.host_key)),
        budget_ms: job.options.budget.as_millis() as u64,
        answered_after_ms: 0.0,
        reason: Some(reason_to_wire(&a.reason)),
    };
    reply.answered_after_ms = ms(arrived.elapsed().as_secs_f64());
    reply
}

/// Why the answer is its schedule, on the wire.
fn reason_to_wire(reason: &Reason) -> v1::Reason {
    let mut wire = v1::Reason::default();
    let kind = match reason {
        Reason::Searched => v1::ReasonKind::Searched,
        Reason::FlatFallback { nested } => {
            wire.nested = Some(rejection_to_wire(nested));
            v1::ReasonKind::FlatFallback
        }
        Reason::RootUnchecked { nested, timed_out } => {
            wire.nested = nested.as_ref().map(rejection_to_wire);
            wire.timed_out = count(*timed_out);
            v1::ReasonKind::RootUnchecked
        }
        Reason::RootAfterFailures { nested, flat, checked } => {
            wire.nested = nested.as_ref().map(rejection_to_wire);
            wire.flat = Some(rejection_to_wire(flat));
            wire.root_unchecked = !checked;
            v1::ReasonKind::RootAfterFailures
        }
        Reason::LastResort { nested, flat, pick } => {
            wire.nested = Some(rejection_to_wire(nested));
            wire.flat = Some(rejection_to_wire(flat));
            let last_resort = match pick {
                LastResortPick::Mispriced(m) => {
                    wire.last_resort_mispriced = Some(rejection_to_wire(&Rejection::Mispriced(m.clone())));
                    v1::LastResortPick::Mispriced
                }
                LastResortPick::CheckedPastBudget => v1::LastResortPick::CheckedPastBudget,
            };
            wire.set_last_resort(last_resort);
            v1::ReasonKind::LastResort
        }
        Reason::EarlyAnswerAtDeadline => v1::ReasonKind::EarlyAnswerAtDeadline,
        Reason::NoSearchSlot => v1::ReasonKind::NoSearchSlot,
    };
    wire.set_kind(kind);
    wire
}

/// Why a search's candidates were turned down, on the wire.
fn rejection_to_wire(rejection: &Rejection) -> v1::Rejection {
    let (cause, timed_out) = match rejection {
        Rejection::Failed(_) => (v1::RejectionCause::FailedAtEstimates, 0),
        Rejection::Mispriced(_) => (v1::RejectionCause::Mispriced, 0),
        Rejection::TimedOut { checks } => (v1::RejectionCause::TimedOut, *checks),
        Rejection::NoCandidate => (v1::RejectionCause::NoCandidate, 0),
    };
    v1::Rejection {
        cause: cause.into(),
        func: rejection.func().unwrap_or_default().to_string(),
        timed_out: count(timed_out),
        text: rejection.to_string(),
    }
}

/// A count on the wire (saturating: no search checks 2^32 candidates).
fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[tonic::async_trait]
impl Scheduler for SchedulerService {
    async fn schedule(&self, request: Request<v1::ScheduleRequest>) -> Result<Response<v1::ScheduleReply>, Status> {
        let started = Instant::now();
        let span = info_span!(
            "schedule",
            fingerprint = field::Empty,
            budget_ms = field::Empty,
            model = field::Empty,
            outcome = field::Empty,
            wall_ms = field::Empty
        );
        async move {
            let result = record_outcome(started, self.run(request, started).await);
            if let Ok(r) = &result {
                info!(
                    predicted_seconds = r.predicted_seconds,
                    hit_deadline = r.stats.as_ref().is_some_and(|s| s.hit_deadline),
                    "scheduled"
                );
            }
            result.map(Response::new)
        }
        .instrument(span)
        .await
    }

    type TuneStream = crate::tuning::TuneStream;

    async fn tune(&self, request: Request<v1::TuneRequest>) -> Result<Response<Self::TuneStream>, Status> {
        let arrived = Instant::now();
        // Admitted like any call; a tuning then runs alone ([`crate::tuning`]).
        let _admitted = self.admitted(&request)?;
        let tuning =
            self.tuning.as_ref().ok_or_else(|| Status::unimplemented("this server does not tune (it was started without tuning)"))?;
        let context = crate::tuning::TuneContext {
            host_key: self.settings.host_key.clone(),
            store: self.store.clone(),
            weights: self.settings.weights.clone(),
            nearest: self.settings.nearest.clone(),
        };
        let job = tuning.job(&request, &context, arrived)?;
        info!(budget_ms = job.budget().as_millis() as u64, "tuning");
        Ok(Response::new(tuning.start(job, context, arrived)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use random_pipelines::{generate, GeneratorParams};
    use search::{Analytical, Machine};

    fn early() -> Answer {
        let pipeline =
            generate(&GeneratorParams { seed: 7, max_stages: 4, input_size: (64, 64, 3), ..Default::default() }).unwrap().pipeline;
        let mut model = Analytical::new(Machine::typical(2));
        (at_root(&pipeline, &Target::host(), &mut model, Reason::EarlyAnswerAtDeadline).unwrap(), "the analytical model".to_string())
    }

    #[tokio::test]
    async fn a_search_that_overruns_is_answered_at_the_deadline_with_the_early_answer() {
        let (_still_searching, search) = oneshot::channel();
        let (early_tx, early_rx) = oneshot::channel();
        early_tx.send(early()).unwrap();
        let started = Instant::now();
        let (answer, _) = answer(search, early_rx, started + Duration::from_millis(50)).await.unwrap();
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(50) && waited < Duration::from_secs(2), "{waited:?}");
        assert_eq!(answer.reason, Reason::EarlyAnswerAtDeadline);
        assert!(!answer.per_stage.is_empty() && answer.predicted_seconds > 0.0);
    }

    #[tokio::test]
    async fn a_search_that_answers_in_time_is_the_answer() {
        let (search_tx, search) = oneshot::channel();
        let (early_tx, early_rx) = oneshot::channel();
        let (mut searched, why) = early();
        searched.reason = Reason::Searched;
        early_tx.send(early()).unwrap();
        search_tx.send(Ok(Ok((searched, why)))).unwrap();
        let (answer, _) = answer(search, early_rx, Instant::now() + Duration::from_secs(60)).await.unwrap();
        assert_eq!(answer.reason, Reason::Searched);
    }

    #[test]
    fn a_last_resort_goes_on_the_wire_with_each_rejection_and_its_func() {
        let mispricing = search::Mispricing::Unslid { func: "f".into() };
        let reason = Reason::LastResort {
            nested: Rejection::TimedOut { checks: 2 },
            flat: Rejection::Mispriced(mispricing.clone()),
            pick: LastResortPick::Mispriced(mispricing),
        };
        let wire = reason_to_wire(&reason);
        assert_eq!(wire.kind(), v1::ReasonKind::LastResort);
        let nested = wire.nested.as_ref().unwrap();
        assert_eq!((nested.cause(), nested.timed_out, nested.func.as_str()), (v1::RejectionCause::TimedOut, 2, ""));
        let flat = wire.flat.as_ref().unwrap();
        assert_eq!((flat.cause(), flat.func.as_str()), (v1::RejectionCause::Mispriced, "f"));
        assert!(flat.text.contains("Func f is stored outside"), "{}", flat.text);
        assert_eq!(wire.last_resort(), v1::LastResortPick::Mispriced);
        assert_eq!(wire.last_resort_mispriced.as_ref().map(|m| m.func.as_str()), Some("f"));
        let searched = reason_to_wire(&Reason::Searched);
        assert_eq!((searched.kind(), searched.nested, searched.flat), (v1::ReasonKind::Searched, None, None));
    }

    #[tokio::test]
    async fn without_an_early_answer_the_deadline_waits_for_the_search_and_its_failure() {
        let (search_tx, search) = oneshot::channel();
        let (early_tx, early_rx) = oneshot::channel::<Answer>();
        drop(early_tx);
        let late = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(30)).await;
            search_tx.send(Ok(Err(Status::failed_precondition("no cost model")))).unwrap();
        });
        let status = answer(search, early_rx, Instant::now()).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::FailedPrecondition);
        late.await.unwrap();
        let (search_tx, search) = oneshot::channel();
        let (_early_tx, early_rx) = oneshot::channel::<Answer>();
        search_tx.send(Err(SearchPanic { message: Some("index out of bounds".to_string()) })).unwrap();
        let status = answer(search, early_rx, Instant::now()).await.unwrap_err();
        assert!(status.code() == tonic::Code::Internal && status.message().contains("index out of bounds"), "{status:?}");
    }
}
