//! The server: the `Scheduler` service and, with agent settings and a
//! store, the `Agent` service (and, with a retrainer, retraining as its
//! samples arrive), with message size limits, gRPC health (the
//! services and the server as a whole reported SERVING while it serves,
//! NOT_SERVING once shutdown begins) and reflection (v1, over the proto
//! crate's descriptor set), on a listener the caller bound, until a
//! shutdown future completes (in-flight calls finish first).

use crate::agent::{AgentService, AgentSettings};
use crate::messages::{MAX_MESSAGE_BYTES, MAX_REQUEST_BYTES};
use crate::retraining::Retrainer;
use crate::scheduler::{SchedulerService, SchedulerSettings};
use data::{Store, StoreError};
use proto::v1::agent_server::AgentServer;
use proto::v1::scheduler_server::SchedulerServer;
use std::future::Future;
use std::sync::{Arc, Mutex};
use thiserror::Error;
use tokio::net::TcpListener;
use tonic::body::Body;
use tonic::codegen::http::Response;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Identity, Server, ServerTlsConfig};
use tonic_health::ServingStatus;

/// How the server runs.
pub struct ServerConfig {
    /// Settings of the `Schedule` RPC.
    pub settings: SchedulerSettings,
    /// The training store models come from, if any.
    pub store: Option<Store>,
    /// Searches that may run at once.
    pub max_concurrent: usize,
    /// Serve the `Agent` service (it needs the store).
    pub agents: Option<AgentSettings>,
    /// Retrain as the agents' samples arrive (it needs the agent service;
    /// make it with [`Retrainer::new`] over the same store).
    pub retrainer: Option<Retrainer>,
    /// Serve over TLS with this certificate and key (see [`tls_identity`]);
    /// plain text without.
    pub tls: Option<Identity>,
}

/// The TLS identity in the PEM files `cert` (the chain, leaf first) and
/// `key` (its private key), as Kubernetes TLS Secrets hold them.
pub fn tls_identity(cert: &std::path::Path, key: &std::path::Path) -> Result<Identity, ServeError> {
    let read =
        |path: &std::path::Path| std::fs::read(path).map_err(|source| ServeError::TlsFile { path: path.display().to_string(), source });
    Ok(Identity::from_pem(read(cert)?, read(key)?))
}

/// Why the server could not start or stopped with an error.
#[derive(Debug, Error)]
pub enum ServeError {
    /// The reflection service could not be built.
    #[error("reflection: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    /// Tonic's transport failed: the TLS configuration, or serving.
    #[error("transport: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// The agent service was asked for without a training store.
    #[error("the agent service needs a training store (--db)")]
    AgentsWithoutStore,
    /// Retraining in the loop was asked for without the agent service.
    #[error("retraining in the loop needs the agent service, whose reports start it")]
    RetrainingWithoutAgents,
    /// The training store failed.
    #[error("training store: {0}")]
    Store(#[from] StoreError),
    /// A TLS certificate or key file could not be read.
    #[error("reading {path}: {source}")]
    TlsFile {
        /// The file's path, as displayed.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Serves on `listener` until `shutdown` completes.
pub async fn serve(listener: TcpListener, config: ServerConfig, shutdown: impl Future<Output = ()>) -> Result<(), ServeError> {
    type Scheduling = SchedulerServer<SchedulerService>;
    type Agents = AgentServer<AgentService>;
    let store = config.store.map(|s| Arc::new(Mutex::new(s)));
    if config.retrainer.is_some() && config.agents.is_none() {
        return Err(ServeError::RetrainingWithoutAgents);
    }
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let models = match &store {
        Some(shared) => Some(reading_connection(shared)?),
        None => None,
    };
    let scheduler = SchedulerService::new(config.settings, models, config.max_concurrent);
    let agents = match (config.agents, &store) {
        (Some(settings), Some(store)) => {
            Some(AgentService::new(settings, store.clone(), config.retrainer)?.with_timing_board(scheduler.timing_board()).into_server())
        }
        (Some(_), None) => return Err(ServeError::AgentsWithoutStore),
        (None, _) => None,
    };
    let (reporter, health) = tonic_health::server::health_reporter();
    reporter.set_serving::<Scheduling>().await;
    if agents.is_some() {
        reporter.set_serving::<Agents>().await;
    }
    let admission = scheduler.admission();
    let scheduler = InterceptedService::new(
        SchedulerServer::new(scheduler).max_decoding_message_size(MAX_REQUEST_BYTES).max_encoding_message_size(MAX_MESSAGE_BYTES),
        admission,
    );
    let serves_agents = agents.is_some();
    let shutdown = async move {
        shutdown.await;
        reporter.set_not_serving::<Scheduling>().await;
        if serves_agents {
            reporter.set_not_serving::<Agents>().await;
        }
        reporter.set_service_status("", ServingStatus::NotServing).await;
        tracing::info!("shutting down: in-flight calls finish first");
    };
    let builder = match config.tls {
        Some(identity) => Server::builder().tls_config(ServerTlsConfig::new().identity(identity))?,
        None => Server::builder(),
    };
    builder
        .layer(tower::util::MapResponseLayer::new(oversized_as_resource_exhausted))
        .add_service(health)
        .add_service(reflection)
        .add_service(scheduler)
        .add_optional_service(agents)
        .serve_with_incoming_shutdown(incoming(listener), shutdown)
        .await?;
    Ok(())
}

/// The store connection the `Schedule` RPC reads models through: one of
/// its own on the same file, so that choosing a model never waits for the
/// agents' traffic on the shared connection (SQLite's WAL lets it read
/// while they write); the shared one for a store in memory, which has no
/// second connection.
fn reading_connection(shared: &Arc<Mutex<Store>>) -> Result<Arc<Mutex<Store>>, StoreError> {
    let path = shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).path().map(std::path::Path::to_path_buf);
    match path {
        Some(path) => Ok(Arc::new(Mutex::new(Store::open(path)?))),
        None => Ok(shared.clone()),
    }
}

/// A reply refusing a message over the size limit, which tonic's decoder
/// makes `OUT_OF_RANGE` (before reading the body), as gRPC's convention has
/// it: `RESOURCE_EXHAUSTED`. Every other reply passes unchanged.
fn oversized_as_resource_exhausted(reply: Response<Body>) -> Response<Body> {
    match tonic::Status::from_header_map(reply.headers()) {
        Some(status) if status.code() == tonic::Code::OutOfRange && status.message().contains("message length too large") => {
            tonic::Status::resource_exhausted(format!("the message is too large for this server: {}", status.message())).into_http()
        }
        _ => reply,
    }
}

/// The connections `listener` accepts, with Nagle's algorithm off: a reply
/// is a few small HTTP/2 frames, which would otherwise wait for the
/// client's delayed acknowledgement (40 ms on Linux) before leaving.
fn incoming(listener: TcpListener) -> TcpIncoming {
    TcpIncoming::from(listener).with_nodelay(Some(true))
}

/// A server running on a task of the current Tokio runtime: its address,
/// and its stop (dropping it shuts the server down gracefully).
#[derive(Debug)]
pub struct Running {
    /// Where it listens.
    pub addr: std::net::SocketAddr,
    /// Sending (or dropping) it stops the server.
    pub stop: tokio::sync::oneshot::Sender<()>,
    /// The server's task: its result once it has stopped.
    pub task: tokio::task::JoinHandle<Result<(), ServeError>>,
}

/// Serves `config` on `listener` on a task of the current runtime until
/// the returned [`Running`] is dropped: a server embedded in a program or
/// a test (bind `127.0.0.1:0` for a free loopback port).
pub fn spawn(listener: TcpListener, config: ServerConfig) -> std::io::Result<Running> {
    let addr = listener.local_addr()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(serve(listener, config, async {
        let _ = stopped.await;
    }));
    Ok(Running { addr, stop, task })
}
