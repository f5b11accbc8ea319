//! The server: the `Scheduler` service and, with agent settings and a
//! store, the `Agent` service (and, with a retrainer, retraining as its
//! samples arrive), with message size limits, gRPC health (the
//! services and the server as a whole reported SERVING while it serves,
//! NOT_SERVING once shutdown begins) and reflection (v1, over the proto
//! crate's descriptor set), on a listener the caller bound, until a
//! shutdown future completes (in-flight calls finish first).

use crate::agent::{AgentService, AgentSettings};
use crate::retraining::Retrainer;
use crate::scheduler::{SchedulerService, SchedulerSettings};
use data::{Store, StoreError};
use proto::v1::agent_server::AgentServer;
use proto::v1::scheduler_server::SchedulerServer;
use std::future::Future;
use std::sync::{Arc, Mutex};
use thiserror::Error;
use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;
use tonic::transport::Server;
use tonic_health::ServingStatus;

/// The largest message the server reads or writes.
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// How the server runs.
pub struct ServerConfig {
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
}

/// Why the server could not start or stopped with an error.
#[derive(Debug, Error)]
pub enum ServeError {
    #[error("reflection: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    #[error("transport: {0}")]
    Transport(#[from] tonic::transport::Error),
    #[error("the agent service needs a training store (--db)")]
    AgentsWithoutStore,
    #[error("retraining in the loop needs the agent service, whose reports start it")]
    RetrainingWithoutAgents,
    #[error("training store: {0}")]
    Store(#[from] StoreError),
}

/// Serves on `listener` until `shutdown` completes.
pub async fn serve(listener: TcpListener, config: ServerConfig, shutdown: impl Future<Output = ()>) -> Result<(), ServeError> {
    type Scheduling = SchedulerServer<SchedulerService>;
    type Agents = AgentServer<AgentService>;
    let store = config.store.map(|s| Arc::new(Mutex::new(s)));
    if config.retrainer.is_some() && config.agents.is_none() {
        return Err(ServeError::RetrainingWithoutAgents);
    }
    let agents = match (config.agents, &store) {
        (Some(settings), Some(store)) => Some(AgentService::new(settings, store.clone(), config.retrainer)?.into_server()),
        (Some(_), None) => return Err(ServeError::AgentsWithoutStore),
        (None, _) => None,
    };
    let (reporter, health) = tonic_health::server::health_reporter();
    reporter.set_serving::<Scheduling>().await;
    if agents.is_some() {
        reporter.set_serving::<Agents>().await;
    }
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let scheduler = SchedulerServer::new(SchedulerService::new(config.settings, store, config.max_concurrent))
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES);
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
    Server::builder()
        .add_service(health)
        .add_service(reflection)
        .add_service(scheduler)
        .add_optional_service(agents)
        .serve_with_incoming_shutdown(TcpIncoming::from(listener), shutdown)
        .await?;
    Ok(())
}

/// Records a call's wall time (since `started`) and outcome on the current
/// span (an RPC's), and logs why a refused call was refused.
pub(crate) fn record_outcome<T>(started: std::time::Instant, result: &Result<T, tonic::Status>) {
    let span = tracing::Span::current();
    span.record("wall_ms", started.elapsed().as_secs_f64() * 1e3);
    match result {
        Ok(_) => {
            span.record("outcome", "ok");
        }
        Err(status) => {
            span.record("outcome", tracing::field::debug(status.code()));
            tracing::info!(message = status.message(), "refused");
        }
    }
}
