//! The networked agent: it registers with a scheduling server, leases work
//! items (a generator seed with its sampling settings and weights), builds
//! the pipeline, samples and times its schedules with the local loop's code
//! ([`measure_workload`]), heartbeats while it works, and reports.
//!
//! Failure handling: every call is retried with exponential backoff while
//! the server is unreachable (or overloaded); a report is retried until the
//! server acknowledges it, so a measured sample is never dropped by the
//! agent. Before it is sent, a report is written to the agent's [`Spool`],
//! and removed once acknowledged: an agent killed while its report waits
//! (or a host that fails) leaves it there, and the next agent of the same
//! name sends it before leasing anything (the server accepts a late report
//! once from an agent the item was leased to, and stores nothing for a
//! report it already has). A stop request (SIGTERM in the binary) ends the
//! current timing, reports what was measured and leaves. An agent killed
//! while it measures loses only that unreported work: its lease expires
//! and the server gives the item to another agent. A seed whose pipeline
//! cannot be built or searched is not reported: its lease lapses and the
//! server gives up on it after its attempts.
//!
//! A work item may instead carry a tuning's schedules to time
//! ([`time_item`]): the agent times them as given (no sampling) and answers
//! with their times (`ReportTimings`), which the waiting tuning records; such
//! a report is not spooled, as the tuning it answers ends with the server.

use crate::generate::{measure_workload, Measured};
use crate::spool::{Spool, SpoolError};
use crate::{AgentError, SamplingOptions, Workload};
use agent_protocol::{FromWire, ToWire};
use codegen::runner::Runner;
use compiler::Target;
use data::{HostFingerprint, WorkResult};
use proto::v1;
use proto::v1::agent_client::AgentClient;
use random_pipelines::GeneratorParams;
use search::{Analytical, CostModel, Machine};
use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;
use tonic::transport::Channel;
use tonic::{Code, Request, Status};

/// Why the networked agent stopped.
#[derive(Debug, Error)]
pub enum RemoteError {
    /// The server's address or CA certificate is not usable.
    #[error(transparent)]
    Endpoint(#[from] proto::transport::EndpointError),
    /// A call to the server failed for good (or the agent was stopping).
    #[error("{call}: {status}")]
    Call {
        /// The call's name (`register`, `lease_work`, ...).
        call: &'static str,
        /// The status it failed with.
        status: Status,
    },
    /// Measuring a work item failed.
    #[error("{0}")]
    Agent(#[from] AgentError),
    /// The measuring thread panicked or was cancelled.
    #[error("the measuring thread failed: {0}")]
    Join(#[from] tokio::task::JoinError),
    /// The spool could not be read or written.
    #[error("{0}")]
    Spool(#[from] SpoolError),
}

/// Exponential backoff between retries: `initial`, doubled each time, at most `max`.
#[derive(Clone, Copy, Debug)]
pub struct Backoff {
    /// The first wait.
    pub initial: Duration,
    /// The longest wait.
    pub max: Duration,
}

/// How the agent runs.
#[derive(Clone, Debug)]
pub struct RemoteOptions {
    /// The server, e.g. `http://127.0.0.1:50051` (`https://` for TLS).
    pub server: String,
    /// The CA certificate (PEM) to trust for an `https://` server; the
    /// system's roots without one.
    pub tls_ca: Option<PathBuf>,
    /// The shared secret to register with.
    pub secret: String,
    /// The agent's name (stable across restarts).
    pub name: String,
    /// Timing passes over each batch (the best time over the passes is kept).
    pub timing_passes: usize,
    /// The backoff between retries of a call that may succeed when tried again.
    pub backoff: Backoff,
    /// Leave once the server's queue is drained, instead of waiting for more work.
    pub exit_when_drained: bool,
    /// The deadline of each call.
    pub call_timeout: Duration,
    /// Where reports wait until the server acknowledges them (one folder
    /// per agent name on a host).
    pub spool: PathBuf,
}

/// What an agent did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RemoteStats {
    /// Items reported (and acknowledged).
    pub reported: u64,
    /// Of those, reports an earlier run of the agent left in its spool.
    pub resent: u64,
    /// Spooled reports the server refused for good (set aside in the spool).
    pub rejected: u64,
    /// Samples the server stored from this agent.
    pub inserted: u64,
    /// Reports the server already had (the item was completed by another).
    pub already_done: u64,
    /// Items whose pipeline could not be built or searched (left to lapse).
    pub unusable: u64,
    /// Leases the server said were lost while measuring.
    pub lost_leases: u64,
    /// The weights versions fetched from the server, in order.
    pub weights_fetched: Vec<u32>,
    /// Tunings' timing items answered.
    pub timings_reported: u64,
}

/// Whether a failed call may succeed if tried again.
fn retryable(status: &Status) -> bool {
    matches!(status.code(), Code::Unavailable | Code::DeadlineExceeded | Code::ResourceExhausted | Code::Cancelled | Code::Aborted)
}

/// Sleeps for `d`, or less if `stop` is raised; whether it was raised.
async fn sleep_unless_stopped(d: Duration, stop: &AtomicBool) -> bool {
    let step = Duration::from_millis(50);
    let mut left = d;
    while !left.is_zero() {
        if stop.load(Ordering::Relaxed) {
            return true;
        }
        let nap = left.min(step);
        tokio::time::sleep(nap).await;
        left -= nap;
    }
    stop.load(Ordering::Relaxed)
}

/// A registered agent's connection: its client and session token.
#[derive(Clone)]
pub struct Session {
    client: AgentClient<Channel>,
    token: String,
    backoff: Backoff,
    call_timeout: Duration,
    /// How often to heartbeat a lease.
    pub heartbeat_interval: Duration,
    /// The id the server gave this agent when it registered.
    pub agent_id: u64,
    /// The key the server gave this host when the agent registered.
    pub host_key: String,
}

impl Session {
    /// Registers with the server (retrying while it is unreachable; `stop`
    /// gives up).
    pub async fn register(options: &RemoteOptions, host: &HostFingerprint, stop: &AtomicBool) -> Result<Session, RemoteError> {
        let endpoint = proto::transport::endpoint(&options.server, options.tls_ca.as_deref())?;
        let client = AgentClient::new(endpoint.connect_lazy()).max_decoding_message_size(64 << 20);
        let target = Target::host();
        let request = v1::RegisterRequest {
            host: Some(host.to_wire()),
            agent_name: options.name.clone(),
            capabilities: Some(v1::Capabilities {
                gpu_devices: data::detect_gpu_devices(),
                target: Some(proto::target::target_to_wire(&target, &host.key())),
            }),
        };
        let mut session = Session {
            client,
            token: options.secret.clone(),
            backoff: options.backoff,
            call_timeout: options.call_timeout,
            heartbeat_interval: Duration::ZERO,
            agent_id: 0,
            host_key: String::new(),
        };
        let reply = session.call("register", Some(stop), |mut c, r| async move { c.register(r).await }, request).await?;
        session.token = reply.session_token;
        session.heartbeat_interval = Duration::from_millis(reply.heartbeat_interval_ms.max(1));
        session.agent_id = reply.agent_id;
        session.host_key = reply.host_key;
        Ok(session)
    }

    /// Calls `rpc` with `message`, authorized and with a deadline, retrying
    /// retryable failures with backoff until it succeeds, fails otherwise,
    /// or `stop` (when given) is raised.
    async fn call<M: Clone, T, F, Fut>(&self, name: &'static str, stop: Option<&AtomicBool>, rpc: F, message: M) -> Result<T, RemoteError>
    where
        F: Fn(AgentClient<Channel>, Request<M>) -> Fut,
        Fut: Future<Output = Result<tonic::Response<T>, Status>>,
    {
        let mut wait = self.backoff.initial;
        loop {
            let mut request = Request::new(message.clone());
            request.set_timeout(self.call_timeout);
            let bearer = format!("Bearer {}", self.token)
                .parse()
                .map_err(|_| RemoteError::Call { call: name, status: Status::invalid_argument("the token is not valid metadata") })?;
            request.metadata_mut().insert("authorization", bearer);
            match rpc(self.client.clone(), request).await {
                Ok(reply) => return Ok(reply.into_inner()),
                Err(status) if retryable(&status) => {
                    tracing::warn!(call = name, code = ?status.code(), message = status.message(), retry_in_ms = wait.as_millis() as u64, "retrying");
                    let stopped = match stop {
                        Some(stop) => sleep_unless_stopped(wait, stop).await,
                        None => {
                            tokio::time::sleep(wait).await;
                            false
                        }
                    };
                    if stopped {
                        return Err(RemoteError::Call { call: name, status: Status::cancelled("the agent is stopping") });
                    }
                    wait = (wait * 2).min(self.backoff.max);
                }
                Err(status) => return Err(RemoteError::Call { call: name, status }),
            }
        }
    }

    /// Leases a work item (`stop` gives up while the server is unreachable).
    pub async fn lease(&self, stop: &AtomicBool) -> Result<v1::LeaseWorkReply, RemoteError> {
        self.call("lease_work", Some(stop), |mut c, r| async move { c.lease_work(r).await }, v1::LeaseWorkRequest {}).await
    }

    /// Extends the leases of `work_ids`; the reply names those lost.
    pub async fn heartbeat(&self, work_ids: &[String]) -> Result<v1::HeartbeatReply, RemoteError> {
        let request = v1::HeartbeatRequest { work_ids: work_ids.to_vec() };
        self.call("heartbeat", None, |mut c, r| async move { c.heartbeat(r).await }, request).await
    }

    /// Reports a work item's results, retrying until the server acknowledges them.
    pub async fn report(&self, result: &WorkResult) -> Result<v1::ReportSamplesReply, RemoteError> {
        self.call("report_samples", None, |mut c, r| async move { c.report_samples(r).await }, result.to_wire()).await
    }

    /// Answers a tuning's timing item with the times measured.
    pub async fn report_timings(&self, work_id: &str, timed: &[(Option<f64>, data::Outcome)]) -> Result<(), RemoteError> {
        let request = agent_protocol::timings_to_wire(work_id, timed);
        self.call("report_timings", None, |mut c, r| async move { c.report_timings(r).await }, request).await?;
        Ok(())
    }

    /// The weights file of a stored version.
    pub async fn fetch_weights(&self, version: u32) -> Result<Vec<u8>, RemoteError> {
        let request = v1::FetchWeightsRequest { version: Some(version), host_key: String::new() };
        Ok(self.call("fetch_weights", None, |mut c, r| async move { c.fetch_weights(r).await }, request).await?.blob)
    }
}

/// What to measure for a work item: its pipeline's parameters and how to sample it.
fn item_parts(item: &v1::WorkItem) -> Result<(GeneratorParams, SamplingOptions), RemoteError> {
    let missing = |field: &str| RemoteError::Call {
        call: "lease_work",
        status: Status::invalid_argument(format!("work item {}: missing {field}", item.work_id)),
    };
    let generator = GeneratorParams::from(item.generator.as_ref().ok_or_else(|| missing("generator"))?);
    let s = data::SamplingSettings::from_wire(item.sampling.as_ref().ok_or_else(|| missing("sampling"))?).map_err(|e| {
        RemoteError::Call { call: "lease_work", status: Status::invalid_argument(format!("work item {}: {e}", item.work_id)) }
    })?;
    let sampling = SamplingOptions {
        schedules: s.schedules as usize,
        beam: s.beam as usize,
        random_dropout: s.random_dropout,
        budget: Duration::from_millis(s.budget_ms),
        sliding: s.sliding,
        ..SamplingOptions::default()
    };
    Ok((generator, sampling))
}

/// Builds and measures a work item's pipeline on this thread (blocking):
/// ranked by the weights file `weights` if given, else the analytical
/// model; `stop` ends it after the current timing.
pub fn measure_item(
    item: &v1::WorkItem,
    weights: Option<&[u8]>,
    runner: &mut Runner,
    timing_passes: usize,
    stop: &AtomicBool,
) -> Result<WorkResult, RemoteError> {
    let (generator, sampling) = item_parts(item)?;
    let target = Target::host();
    let mut model: Box<dyn CostModel> = match weights {
        Some(blob) => Box::new(trainer::LearnedModel::from_bytes(blob).map_err(AgentError::from)?),
        None => Box::new(Analytical::new(Machine::typical(target.threads))),
    };
    let workload = Workload::generated(&generator).map_err(AgentError::from)?;
    let Measured { pipeline, schedules, samples } =
        measure_workload(&workload, &target, model.as_mut(), runner, &sampling, generator.seed, timing_passes, &|| {
            stop.load(Ordering::Relaxed)
        })?;
    Ok(WorkResult { work_id: item.work_id.clone(), pipeline_hash: pipeline.hash, pipeline_features: pipeline.features, schedules, samples })
}

/// Times a tuning's timing item on this thread (blocking): its pipeline
/// at its estimates, its schedules as given, each `passes` times in
/// rotation (at most [`MAX_TIMING_PASSES`]); `stop` ends it after the
/// current timing, with the times measured so far.
pub fn time_item(work: &v1::TimingWork, runner: &mut Runner, stop: &AtomicBool) -> Result<Vec<(Option<f64>, data::Outcome)>, String> {
    let wire = work.pipeline.as_ref().ok_or("the item has no pipeline")?;
    let pipeline = compiler::PipelineDef::try_from(wire).map_err(|e| format!("its pipeline: {e}"))?;
    let app = apps::App::at_estimates(pipeline).map_err(|e| format!("its pipeline cannot be timed at its estimates: {e}"))?;
    let workload = Workload::from_app(&app);
    let schedules = work
        .schedules
        .iter()
        .enumerate()
        .map(|(i, text)| text.parse::<compiler::Schedule>().map_err(|e| format!("schedule {i}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let schedules: Vec<&compiler::Schedule> = schedules.iter().collect();
    let passes = (work.passes as usize).clamp(1, MAX_TIMING_PASSES);
    Ok(crate::measure::time_in_rotation(runner, &workload, &schedules, passes, &|| stop.load(Ordering::Relaxed)))
}

/// The most timing passes a timing item gets.
pub const MAX_TIMING_PASSES: usize = 10;

/// Heartbeats `work_id` every `session.heartbeat_interval` until aborted;
/// counts a lost lease in `lost`.
fn spawn_heartbeat(session: Session, work_id: String, lost: Arc<AtomicBool>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let ids = [work_id];
        loop {
            tokio::time::sleep(session.heartbeat_interval).await;
            match session.heartbeat(&ids).await {
                Ok(reply) if !reply.lost.is_empty() => {
                    tracing::warn!(work_id = ids[0], "the lease was lost: another agent may measure this item too");
                    lost.store(true, Ordering::Relaxed);
                    return;
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(work_id = ids[0], error = %e, "heartbeat failed"),
            }
        }
    })
}

/// Runs the agent until `stop` is raised (or, with `exit_when_drained`,
/// the server's queue is drained): lease, measure, report.
pub async fn run(options: &RemoteOptions, mut runner: Runner, stop: Arc<AtomicBool>) -> Result<RemoteStats, RemoteError> {
    let host = HostFingerprint::detect().map_err(AgentError::from)?;
    let session = Session::register(options, &host, &stop).await?;
    tracing::info!(agent_id = session.agent_id, host_key = session.host_key, "registered");
    let mut stats = RemoteStats::default();
    let spool = Spool::open(&options.spool)?;
    resend_spooled(&session, &spool, &mut stats).await?;
    let mut weights: Option<(u32, Arc<Vec<u8>>)> = None;
    while !stop.load(Ordering::Relaxed) {
        let reply = match session.lease(&stop).await {
            Err(RemoteError::Call { status, .. }) if status.code() == Code::Cancelled && stop.load(Ordering::Relaxed) => break,
            reply => reply?,
        };
        let Some(item) = reply.item else {
            if reply.drained && options.exit_when_drained {
                break;
            }
            sleep_unless_stopped(Duration::from_millis(reply.retry_after_ms.max(10)), &stop).await;
            continue;
        };
        if let Some(work) = item.timing.clone() {
            tracing::info!(work_id = item.work_id, attempt = item.attempt, schedules = work.schedules.len(), "leased a tuning's timings");
            let lost = Arc::new(AtomicBool::new(false));
            let heartbeat = spawn_heartbeat(session.clone(), item.work_id.clone(), lost.clone());
            let timing_stop = stop.clone();
            let (returned, timed) = tokio::task::spawn_blocking(move || {
                let timed = time_item(&work, &mut runner, &timing_stop);
                (runner, timed)
            })
            .await?;
            runner = returned;
            heartbeat.abort();
            stats.lost_leases += u64::from(lost.load(Ordering::Relaxed));
            // An item that cannot be timed is answered with no times, so
            // that its tuning goes on without waiting for a lease to lapse.
            let timed = timed.unwrap_or_else(|why| {
                tracing::warn!(work_id = item.work_id, why, "the timing item cannot be timed");
                vec![]
            });
            match session.report_timings(&item.work_id, &timed).await {
                Ok(()) => stats.timings_reported += 1,
                // The tuning ended meanwhile, or the lease moved: nothing waits for these times.
                Err(RemoteError::Call { status, .. }) if matches!(status.code(), Code::NotFound | Code::FailedPrecondition) => {
                    tracing::warn!(work_id = item.work_id, message = status.message(), "timings not taken");
                }
                Err(e) => return Err(e),
            }
            continue;
        }
        tracing::info!(work_id = item.work_id, attempt = item.attempt, weights_version = item.weights_version, "leased");
        let blob = match item.weights_version {
            Some(version) if weights.as_ref().is_some_and(|(v, _)| *v == version) => weights.as_ref().map(|(_, b)| b.clone()),
            Some(version) => {
                let blob = Arc::new(session.fetch_weights(version).await?);
                tracing::info!(version, bytes = blob.len(), "fetched weights");
                stats.weights_fetched.push(version);
                weights = Some((version, blob.clone()));
                Some(blob)
            }
            None => None,
        };
        let lost = Arc::new(AtomicBool::new(false));
        let heartbeat = spawn_heartbeat(session.clone(), item.work_id.clone(), lost.clone());
        let (timing_passes, measuring_stop, measuring_item) = (options.timing_passes, stop.clone(), item.clone());
        let (returned, measured) = tokio::task::spawn_blocking(move || {
            let measured = measure_item(&measuring_item, blob.as_deref().map(Vec::as_slice), &mut runner, timing_passes, &measuring_stop);
            (runner, measured)
        })
        .await?;
        runner = returned;
        heartbeat.abort();
        stats.lost_leases += u64::from(lost.load(Ordering::Relaxed));
        let result = match measured {
            Ok(result) => result,
            Err(RemoteError::Agent(e)) => {
                tracing::warn!(work_id = item.work_id, error = %e, "unusable work item: its lease is left to lapse");
                stats.unusable += 1;
                continue;
            }
            Err(e) => return Err(e),
        };
        if result.samples.is_empty() {
            continue;
        }
        let spooled = spool.put(&result)?;
        let reply = session.report(&result).await?;
        spool.remove(&spooled)?;
        tracing::info!(work_id = item.work_id, inserted = reply.inserted, already_done = reply.already_done, "reported");
        stats.count(&reply);
    }
    Ok(stats)
}

impl RemoteStats {
    fn count(&mut self, reply: &v1::ReportSamplesReply) {
        self.reported += 1;
        self.inserted += u64::from(reply.inserted);
        self.already_done += u64::from(reply.already_done);
    }
}

/// Sends the reports an earlier run left in `spool`, removing each once
/// acknowledged; one the server refuses for good (an item it does not
/// know, or never leased to this agent) is set aside.
async fn resend_spooled(session: &Session, spool: &Spool, stats: &mut RemoteStats) -> Result<(), RemoteError> {
    for spooled in spool.pending()? {
        let work_id = spooled.result.work_id.clone();
        match session.report(&spooled.result).await {
            Ok(reply) => {
                spool.remove(&spooled.path)?;
                tracing::info!(work_id, inserted = reply.inserted, already_done = reply.already_done, "reported from the spool");
                stats.count(&reply);
                stats.resent += 1;
            }
            Err(RemoteError::Call { status, .. })
                if matches!(status.code(), Code::NotFound | Code::FailedPrecondition | Code::InvalidArgument) =>
            {
                let to = spool.reject(&spooled)?;
                tracing::warn!(work_id, code = ?status.code(), message = status.message(), kept = %to.display(), "spooled report refused");
                stats.rejected += 1;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
