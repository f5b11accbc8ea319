//! The server: the `Scheduler` service with message size limits, gRPC
//! health (the Scheduler and the server as a whole reported SERVING while
//! it serves, NOT_SERVING once shutdown begins) and reflection (v1, over the proto crate's
//! descriptor set), on a listener the caller bound, until a shutdown
//! future completes (in-flight calls finish first).

use crate::scheduler::{SchedulerService, SchedulerSettings};
use data::Store;
use proto::v1::scheduler_server::SchedulerServer;
use std::future::Future;
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
}

/// Why the server could not start or stopped with an error.
#[derive(Debug, Error)]
pub enum ServeError {
    #[error("reflection: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    #[error("transport: {0}")]
    Transport(#[from] tonic::transport::Error),
}

/// Serves on `listener` until `shutdown` completes.
pub async fn serve(listener: TcpListener, config: ServerConfig, shutdown: impl Future<Output = ()>) -> Result<(), ServeError> {
    type Service = SchedulerServer<SchedulerService>;
    let (reporter, health) = tonic_health::server::health_reporter();
    reporter.set_serving::<Service>().await;
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let scheduler = SchedulerServer::new(SchedulerService::new(config.settings, config.store, config.max_concurrent))
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES);
    let shutdown = async move {
        shutdown.await;
        reporter.set_not_serving::<Service>().await;
        reporter.set_service_status("", ServingStatus::NotServing).await;
        tracing::info!("shutting down: in-flight calls finish first");
    };
    Server::builder()
        .add_service(health)
        .add_service(reflection)
        .add_service(scheduler)
        .serve_with_incoming_shutdown(TcpIncoming::from(listener), shutdown)
        .await?;
    Ok(())
}
