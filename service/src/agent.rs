//! The `Agent` service: benchmark agents register, lease work items, extend
//! their leases, report samples and fetch weights, over the training store
//! the server owns. The queue's logic is the store's ([`data::Store::lease_work`]
//! and the rest); the handlers here authenticate, convert, call the store
//! on a blocking thread and map its errors to status codes.
//!
//! Authentication: `Register` needs the shared secret as `authorization:
//! Bearer <secret>` and returns a session token (random, 256 bits; the
//! store keeps only its SHA-256), which every other call presents the same
//! way. Sessions are also held in memory, so a call without a valid token is
//! `UNAUTHENTICATED` before the store sees anything of it. An agent has one
//! session (registering again replaces it), and a session unused for
//! [`AgentSettings::session_ttl`] expires (the agent registers again).
//!
//! Validation: names, ids and lists have limits ([`proto::limits`]), every
//! number of a report is a plausible measurement, and a report's pipeline
//! must be the one its work item names (the server rebuilds it from the
//! item's generator parameters and compares the hashes).
//!
//! With a [`Retrainer`], every report's newly stored samples are counted
//! for the agent's host, which retrains the host's model once enough
//! have arrived (without holding up the report).

use crate::messages::{record_outcome, MAX_MESSAGE_BYTES};
use crate::retraining::Retrainer;
use crate::timing_board::{BoardError, TimingBoard};
use agent_protocol::{FromWire, ToWire};
use data::{AgentSession, NewWork, SamplingSettings, Store, StoreError};
use proto::v1;
use proto::v1::agent_server::{Agent, AgentServer};
use random_pipelines::GeneratorParams;
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::ops::Range;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
use tonic::metadata::MetadataMap;
use tonic::service::interceptor::InterceptedService;
use tonic::{Request, Response, Status};
use tracing::{field, info, info_span, Instrument};

/// The work the server hands out: the seeds of one round.
#[derive(Clone, Debug)]
pub struct WorkSource {
    /// The bootstrap round the work items belong to.
    pub round: u32,
    /// The random pipelines' seeds, one work item each.
    pub seeds: Range<u64>,
    /// Overrides of the generator's training parameters
    /// ([`GeneratorParams::for_training`]): most stages, image side.
    pub max_stages: Option<usize>,
    /// Override of the input image's width and height, in pixels.
    pub image_side: Option<i64>,
    /// How the agents sample each pipeline's schedules.
    pub sampling: SamplingSettings,
}

impl WorkSource {
    /// The generator parameters of `seed`.
    pub fn params(&self, seed: u64) -> GeneratorParams {
        let mut params = GeneratorParams::for_training(seed);
        if let Some(stages) = self.max_stages {
            params.max_stages = stages;
        }
        if let Some(side) = self.image_side {
            params.input_size = (side, side, params.input_size.2);
        }
        params
    }

    /// The work items, one per seed.
    pub fn items(&self) -> Vec<NewWork> {
        self.seeds
            .clone()
            .map(|seed| NewWork {
                round: self.round,
                seed,
                generator: serde_json::to_value(self.params(seed)).expect("generator parameters serialize"),
                sampling: self.sampling,
            })
            .collect()
    }
}

/// How the agent service runs.
#[derive(Clone, Debug)]
pub struct AgentSettings {
    /// The shared secret `Register` needs.
    pub secret: String,
    /// How long a lease lasts without a heartbeat.
    pub lease: Duration,
    /// Leases an item gets before it is given up on.
    pub max_attempts: u32,
    /// What a `LeaseWork` with no work to give suggests to wait.
    pub retry_after: Duration,
    /// Queued when the server starts (items queued before are kept as they are).
    pub work: WorkSource,
    /// How long a session may go unused before it expires.
    pub session_ttl: Duration,
    /// How often the server rereads the sessions and per-agent tokens the
    /// store holds (an operator's `store agent-token` issues and
    /// revocations take effect within it).
    pub refresh: Duration,
}

/// Sessions expire after this long unused unless told otherwise.
pub const DEFAULT_SESSION_TTL: Duration = Duration::from_secs(3600);

/// The server rereads sessions and tokens this often unless told otherwise.
pub const DEFAULT_REFRESH: Duration = Duration::from_secs(10);

/// Hashes of the live per-agent tokens, with the agent names they are for.
type Tokens = Arc<Mutex<HashMap<String, String>>>;

/// The live sessions by token hash.
type Sessions = Arc<Mutex<HashMap<String, LiveSession>>>;

/// The `Agent` service.
pub struct AgentService {
    settings: AgentSettings,
    secret_hash: String,
    store: Arc<Mutex<Store>>,
    sessions: Sessions,
    tokens: Tokens,
    retrainer: Option<Retrainer>,
    /// Tunings' timings for agents of their hosts (offered before the queue).
    board: Option<Arc<TimingBoard>>,
}

/// A session held in memory, and when it was last used and last recorded
/// as used in the store.
struct LiveSession {
    session: AgentSession,
    /// When this server came to hold it.
    since: Instant,
    used: Instant,
    recorded: Instant,
}

impl LiveSession {
    fn new(session: AgentSession) -> LiveSession {
        let now = Instant::now();
        LiveSession { session, since: now, used: now, recorded: now }
    }
}

/// The bearer token of a call's `authorization` metadata.
fn bearer(metadata: &MetadataMap) -> Option<&str> {
    metadata.get("authorization")?.to_str().ok()?.strip_prefix("Bearer ")
}

/// A store error as a status: a request naming what does not exist is
/// `NOT_FOUND`, one the queue's state refuses `FAILED_PRECONDITION`, a
/// report that contradicts itself or the store `INVALID_ARGUMENT`.
fn store_status(e: StoreError) -> Status {
    match e {
        StoreError::UnknownWork(_) | StoreError::UnknownWeights(_) | StoreError::NoPromotedWeights(_) => Status::not_found(e.to_string()),
        StoreError::NotLeased { .. } | StoreError::UnknownAgent(_) => Status::failed_precondition(e.to_string()),
        StoreError::UnknownSchedule { .. }
        | StoreError::ReportConflict { .. }
        | StoreError::FeatureShape { .. }
        | StoreError::Fingerprint { .. }
        | StoreError::AgentName(_) => Status::invalid_argument(e.to_string()),
        e => Status::internal(format!("training store: {e}")),
    }
}

impl AgentService {
    /// The service over `store`: queues the work source's items and loads
    /// the sessions; reports feed `retrainer` when given.
    pub fn new(settings: AgentSettings, store: Arc<Mutex<Store>>, retrainer: Option<Retrainer>) -> Result<AgentService, StoreError> {
        let sessions = {
            let mut s = store.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let added = s.enqueue_work(&settings.work.items())?;
            info!(round = settings.work.round, seeds = ?settings.work.seeds, added, "work queued");
            let expired = s.expire_sessions(settings.session_ttl)?;
            let sessions: HashMap<String, LiveSession> =
                s.agent_sessions()?.into_iter().map(|session| (session.token_hash.clone(), LiveSession::new(session))).collect();
            let tokens: HashMap<String, String> = s.live_agent_tokens()?.into_iter().collect();
            info!(expired, live = sessions.len(), agent_tokens = tokens.len(), "sessions loaded");
            (sessions, tokens)
        };
        let (sessions, tokens) = (Arc::new(Mutex::new(sessions.0)), Arc::new(Mutex::new(sessions.1)));
        let secret_hash = data::token_hash(&settings.secret);
        Ok(AgentService { settings, secret_hash, store, sessions, tokens, retrainer, board: None })
    }

    /// The service offering the tunings' timings of `board` to the agents
    /// of their hosts, before the store's queue.
    pub fn with_timing_board(self, board: Option<Arc<TimingBoard>>) -> AgentService {
        AgentService { board, ..self }
    }

    /// The service as tonic serves it, with the server's message size
    /// limits, behind its [`AgentGate`].
    /// Starts the task that rereads sessions and tokens every
    /// [`AgentSettings::refresh`] (it ends with the service).
    pub fn into_server(self) -> InterceptedService<AgentServer<AgentService>, AgentGate> {
        tokio::spawn(refresh(self.store.clone(), Arc::downgrade(&self.sessions), Arc::downgrade(&self.tokens), self.settings.refresh));
        let gate = AgentGate { secret_hash: self.secret_hash.clone(), sessions: self.sessions.clone(), tokens: self.tokens.clone() };
        let server = AgentServer::new(self).max_decoding_message_size(MAX_MESSAGE_BYTES).max_encoding_message_size(MAX_MESSAGE_BYTES);
        InterceptedService::new(server, gate)
    }

    /// The session of the call's token, marked as used now (in the store
    /// too, at most every quarter of the session's lifetime).
    fn authenticate(&self, metadata: &MetadataMap) -> Result<AgentSession, Status> {
        let token = bearer(metadata).ok_or_else(|| Status::unauthenticated("no session token (authorization: Bearer <token>)"))?;
        let token_hash = data::token_hash(token);
        let ttl = self.settings.session_ttl;
        let mut sessions = self.sessions.lock().map_err(|_| Status::internal("the sessions' lock is poisoned"))?;
        let live = sessions.get_mut(&token_hash).ok_or_else(|| Status::unauthenticated("unknown session token: register first"))?;
        let now = Instant::now();
        if now.duration_since(live.used) > ttl {
            sessions.remove(&token_hash);
            return Err(Status::unauthenticated(format!("the session expired after {} s unused: register again", ttl.as_secs())));
        }
        live.used = now;
        if now.duration_since(live.recorded) > ttl / 4 {
            live.recorded = now;
            let (store, token_hash) = (self.store.clone(), token_hash.clone());
            tokio::task::spawn_blocking(move || {
                if let Ok(mut store) = store.lock() {
                    if let Err(e) = store.touch_session(&token_hash) {
                        tracing::warn!(error = %e, "cannot record a session's use");
                    }
                }
            });
        }
        let session = live.session.clone();
        tracing::Span::current().record("agent", session.agent_id);
        Ok(session)
    }

    /// The hash of the pipeline work item `work_id` names, rebuilt from its
    /// generator parameters (`NOT_FOUND` for an unknown item).
    async fn expected_pipeline_hash(&self, work_id: String) -> Result<String, Status> {
        let generator = self.store(move |s| s.work_generator(&work_id)).await?;
        tokio::task::spawn_blocking(move || {
            let params: GeneratorParams = serde_json::from_value(generator)
                .map_err(|e| Status::internal(format!("a queued item's generator parameters do not read back: {e}")))?;
            let generated = random_pipelines::generate(&params)
                .map_err(|e| Status::internal(format!("a queued item's pipeline cannot be generated: {e}")))?;
            Ok(proto::definition_hash(&generated.pipeline))
        })
        .await
        .map_err(|e| Status::internal(format!("rebuilding the item's pipeline failed: {e}")))?
    }

    /// Runs `f` on the store on a blocking thread.
    async fn store<T: Send + 'static>(&self, f: impl FnOnce(&mut Store) -> Result<T, StoreError> + Send + 'static) -> Result<T, Status> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || {
            let mut store = store.lock().map_err(|_| Status::internal("the training store's lock is poisoned"))?;
            f(&mut store).map_err(store_status)
        })
        .await
        .map_err(|e| Status::internal(format!("the store call failed: {e}")))?
    }
}

/// Refuses a call before its message is decoded unless it carries the
/// shared secret or a session token the server holds (`UNAUTHENTICATED`):
/// a caller without either costs the server its headers only. Each handler
/// then checks the token it needs (the secret for `Register`, a live
/// session for the rest).
#[derive(Clone)]
pub struct AgentGate {
    secret_hash: String,
    sessions: Sessions,
    tokens: Tokens,
}

impl tonic::service::Interceptor for AgentGate {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        let token = bearer(request.metadata())
            .ok_or_else(|| Status::unauthenticated("no token (authorization: Bearer <secret, agent token or session token>)"))?;
        let hash = data::token_hash(token);
        let known = hash == self.secret_hash
            || self.sessions.lock().is_ok_and(|s| s.contains_key(&hash))
            || self.tokens.lock().is_ok_and(|t| t.contains_key(&hash));
        if known {
            Ok(request)
        } else {
            Err(Status::unauthenticated("unknown token: register with the shared secret or an agent token for a session token"))
        }
    }
}

/// Every `every`, rereads the sessions and per-agent tokens the store
/// holds: a session the store no longer has (revoked, expired, replaced)
/// is dropped unless this server came to hold it after the read began,
/// and the tokens are replaced. Ends once the service is gone.
async fn refresh(
    store: Arc<Mutex<Store>>,
    sessions: Weak<Mutex<HashMap<String, LiveSession>>>,
    tokens: Weak<Mutex<HashMap<String, String>>>,
    every: Duration,
) {
    loop {
        tokio::time::sleep(every).await;
        let (Some(sessions), Some(tokens)) = (sessions.upgrade(), tokens.upgrade()) else {
            return;
        };
        let read_at = Instant::now();
        let store = store.clone();
        let read = tokio::task::spawn_blocking(move || {
            let store = store.lock().map_err(|_| "the training store's lock is poisoned".to_string())?;
            let live: HashSet<String> = store.agent_sessions().map_err(|e| e.to_string())?.into_iter().map(|s| s.token_hash).collect();
            Ok::<_, String>((live, store.live_agent_tokens().map_err(|e| e.to_string())?))
        })
        .await;
        match read {
            Ok(Ok((live, live_tokens))) => {
                if let Ok(mut sessions) = sessions.lock() {
                    sessions.retain(|hash, s| live.contains(hash) || s.since >= read_at);
                }
                if let Ok(mut tokens) = tokens.lock() {
                    *tokens = live_tokens.into_iter().collect();
                }
            }
            Ok(Err(e)) => tracing::warn!(error = e, "cannot reread the sessions and tokens"),
            Err(e) => tracing::warn!(error = %e, "cannot reread the sessions and tokens"),
        }
    }
}

/// Unix time in milliseconds `after` from now.
fn unix_ms_in(after: Duration) -> i64 {
    let at = std::time::SystemTime::now() + after;
    at.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Runs a handler in an `agent` span that records the call's outcome and wall time.
async fn traced<T>(rpc: &'static str, handler: impl Future<Output = Result<T, Status>>) -> Result<Response<T>, Status> {
    let span = info_span!("agent", rpc, agent = field::Empty, work_id = field::Empty, outcome = field::Empty, wall_ms = field::Empty);
    async move {
        let started = Instant::now();
        record_outcome(started, handler.await).map(Response::new)
    }
    .instrument(span)
    .await
}

#[tonic::async_trait]
impl Agent for AgentService {
    async fn register(&self, request: Request<v1::RegisterRequest>) -> Result<Response<v1::RegisterReply>, Status> {
        traced("register", async {
            let credential = bearer(request.metadata())
                .ok_or_else(|| Status::unauthenticated("no shared secret or agent token (authorization: Bearer <token>)"))?;
            let credential_hash = data::token_hash(credential);
            let r = request.get_ref();
            if r.agent_name.is_empty() {
                return Err(Status::invalid_argument("agent_name: missing"));
            }
            // The shared secret registers any name; an agent token only the
            // name it was issued for, and only while the store holds it.
            let by_token = credential_hash != self.secret_hash;
            let host = r.host.as_ref().ok_or_else(|| Status::invalid_argument("host: missing"))?;
            let host = data::HostFingerprint::from_wire(host).map_err(|e| Status::invalid_argument(e.to_string()))?;
            let capabilities = r.capabilities.as_ref();
            let capabilities = serde_json::json!({
                "gpu_devices": capabilities.map_or(&[][..], |c| &c.gpu_devices[..]),
                "target": capabilities.and_then(|c| c.target.as_ref()).map(|t| serde_json::json!({
                    "vector_bytes": t.vector_bytes, "threads": t.threads, "host_key": t.host_key,
                })),
            });
            let token = data::new_token();
            let token_hash = data::token_hash(&token);
            let name = r.agent_name.clone();
            let session = self
                .store(move |s| {
                    if by_token {
                        match s.agent_token_name(&credential_hash)? {
                            Some(issued_for) if issued_for == name => {}
                            Some(issued_for) => {
                                return Ok(Err(Status::permission_denied(format!("the agent token is for {issued_for}, not {name}"))))
                            }
                            None => return Ok(Err(Status::unauthenticated("neither the shared secret nor a live agent token"))),
                        }
                    }
                    s.register_agent(&name, &host, &capabilities, &token_hash).map(Ok)
                })
                .await??;
            tracing::Span::current().record("agent", session.agent_id);
            info!(name = session.agent, host_key = session.host_key, "registered");
            let reply = v1::RegisterReply {
                agent_id: session.agent_id as u64,
                session_token: token,
                host_key: session.host_key.clone(),
                lease_ms: self.settings.lease.as_millis() as u64,
                heartbeat_interval_ms: (self.settings.lease / 3).as_millis() as u64,
            };
            let mut sessions = self.sessions.lock().map_err(|_| Status::internal("the sessions' lock is poisoned"))?;
            // The agent's earlier session is replaced; expired ones go.
            let now = Instant::now();
            let ttl = self.settings.session_ttl;
            sessions.retain(|_, live| live.session.agent_id != session.agent_id && now.duration_since(live.used) <= ttl);
            sessions.insert(session.token_hash.clone(), LiveSession::new(session));
            Ok(reply)
        })
        .await
    }

    async fn lease_work(&self, request: Request<v1::LeaseWorkRequest>) -> Result<Response<v1::LeaseWorkReply>, Status> {
        traced("lease_work", async {
            let session = self.authenticate(request.metadata())?;
            let (lease, max_attempts) = (self.settings.lease, self.settings.max_attempts);
            if let Some(board) = &self.board {
                board.asked(&session.host_key);
                if let Some(timing) = board.lease(&session.host_key, session.agent_id, lease) {
                    tracing::Span::current().record("work_id", timing.work_id.as_str());
                    info!(attempt = timing.attempt, schedules = timing.work.schedules.len(), "leased a tuning's timings");
                    let expires_in = timing.expires.saturating_duration_since(Instant::now());
                    let item = v1::WorkItem {
                        work_id: timing.work_id,
                        lease_expires_unix_ms: unix_ms_in(expires_in),
                        attempt: timing.attempt,
                        timing: Some(timing.work),
                        ..Default::default()
                    };
                    return Ok(v1::LeaseWorkReply { item: Some(item), retry_after_ms: 0, drained: false });
                }
            }
            let leased = self
                .store(move |s| {
                    let leased = s.lease_work(session.agent_id, lease, max_attempts)?;
                    let counts = if leased.is_none() { Some(s.work_counts(max_attempts)?) } else { None };
                    Ok((leased, counts))
                })
                .await?;
            let (Some(leased), _) = leased else {
                let drained = leased.1.is_some_and(|c| c.waiting + c.leased == 0);
                return Ok(v1::LeaseWorkReply { item: None, retry_after_ms: self.settings.retry_after.as_millis() as u64, drained });
            };
            tracing::Span::current().record("work_id", leased.work_id.as_str());
            info!(attempt = leased.attempt, weights_version = leased.weights_version, "leased");
            let item = agent_protocol::work_item(&leased)
                .map_err(|e| Status::internal(format!("work item {}: stored generator parameters: {e}", leased.work_id)))?;
            Ok(v1::LeaseWorkReply { item: Some(item), retry_after_ms: 0, drained: false })
        })
        .await
    }

    async fn heartbeat(&self, request: Request<v1::HeartbeatRequest>) -> Result<Response<v1::HeartbeatReply>, Status> {
        traced("heartbeat", async {
            let session = self.authenticate(request.metadata())?;
            let work_ids = request.into_inner().work_ids;
            if work_ids.len() > proto::limits::MAX_HEARTBEAT_IDS {
                let why = format!("a heartbeat lists {} work ids, more than {}", work_ids.len(), proto::limits::MAX_HEARTBEAT_IDS);
                return Err(Status::invalid_argument(why));
            }
            for id in &work_ids {
                proto::limits::check_id(id, "a work id", "heartbeat").map_err(|e| Status::invalid_argument(e.to_string()))?;
            }
            let lease = self.settings.lease;
            if let Some(board) = &self.board {
                board.asked(&session.host_key);
            }
            let mut reply = v1::HeartbeatReply::default();
            let (timings, work_ids): (Vec<String>, Vec<String>) =
                work_ids.into_iter().partition(|id| self.board.as_ref().is_some_and(|b| b.holds(id)));
            for work_id in timings {
                match self.board.as_ref().and_then(|b| b.renew(&work_id, session.agent_id, lease)) {
                    Some(expires) => reply
                        .renewed
                        .push(v1::Lease { work_id, expires_unix_ms: unix_ms_in(expires.saturating_duration_since(Instant::now())) }),
                    None => reply.lost.push(work_id),
                }
            }
            let states = self.store(move |s| s.heartbeat(session.agent_id, &work_ids, lease)).await?;
            for (work_id, state) in states {
                match state {
                    data::LeaseState::Renewed { expires_ms } => reply.renewed.push(v1::Lease { work_id, expires_unix_ms: expires_ms }),
                    data::LeaseState::Lost => reply.lost.push(work_id),
                }
            }
            Ok(reply)
        })
        .await
    }

    async fn report_samples(&self, request: Request<v1::ReportSamplesRequest>) -> Result<Response<v1::ReportSamplesReply>, Status> {
        traced("report_samples", async {
            let session = self.authenticate(request.metadata())?;
            let result = data::WorkResult::from_wire(request.get_ref()).map_err(|e| Status::invalid_argument(e.to_string()))?;
            drop(request);
            tracing::Span::current().record("work_id", result.work_id.as_str());
            let expected = self.expected_pipeline_hash(result.work_id.clone()).await?;
            if result.pipeline_hash != expected {
                return Err(Status::invalid_argument(format!(
                    "report of {}: pipeline_hash {} is not the hash of the pipeline the work item names ({expected})",
                    result.work_id, result.pipeline_hash
                )));
            }
            let agent_id = session.agent_id;
            let completion = self.store(move |s| s.complete_work(agent_id, &result)).await?;
            if let Some(retrainer) = &self.retrainer {
                retrainer.stored(&session.host_key, completion.outcome.inserted as u64);
            }
            info!(
                inserted = completion.outcome.inserted,
                duplicates = completion.outcome.duplicates,
                already_done = completion.already_done,
                "reported"
            );
            Ok(v1::ReportSamplesReply {
                inserted: completion.outcome.inserted as u32,
                duplicates: completion.outcome.duplicates as u32,
                already_done: completion.already_done,
            })
        })
        .await
    }

    async fn report_timings(&self, request: Request<v1::ReportTimingsRequest>) -> Result<Response<v1::ReportTimingsReply>, Status> {
        traced("report_timings", async {
            let session = self.authenticate(request.metadata())?;
            let r = request.get_ref();
            proto::limits::check_id(&r.work_id, "work_id", "report").map_err(|e| Status::invalid_argument(e.to_string()))?;
            tracing::Span::current().record("work_id", r.work_id.as_str());
            let board = self.board.as_ref().ok_or_else(|| Status::not_found(format!("{}: this server hands out no timings", r.work_id)))?;
            board.answer(&r.work_id, session.agent_id, |schedules| agent_protocol::timings_from_wire(r, schedules)).map_err(
                |e| match e {
                    BoardError::Unknown(_) => Status::not_found(e.to_string()),
                    BoardError::NotLeased(_) => Status::failed_precondition(e.to_string()),
                    BoardError::Invalid(_) => Status::invalid_argument(e.to_string()),
                },
            )?;
            info!(timings = r.timings.len(), "timings reported");
            Ok(v1::ReportTimingsReply {})
        })
        .await
    }

    async fn fetch_weights(&self, request: Request<v1::FetchWeightsRequest>) -> Result<Response<v1::FetchWeightsReply>, Status> {
        traced("fetch_weights", async {
            let session = self.authenticate(request.metadata())?;
            let r = request.into_inner();
            let host_key = if r.host_key.is_empty() { session.host_key } else { r.host_key };
            let weights = match r.version {
                Some(version) => self.store(move |s| s.weights(version)).await?,
                None => {
                    self.store(move |s| s.promoted_weights(Some(&host_key))?.ok_or(StoreError::NoPromotedWeights(Some(host_key)))).await?
                }
            };
            let info = weights.info;
            Ok(v1::FetchWeightsReply {
                version: info.version,
                blob: weights.blob,
                pipeline_layout: Some(info.pipeline_layout.to_wire()),
                schedule_layout: Some(info.schedule_layout.to_wire()),
                host_key: info.host_key,
                promoted: info.promoted,
            })
        })
        .await
    }
}
