//! The scheduling service: a gRPC server (tonic) whose `Schedule` RPC
//! turns a wire pipeline into a schedule with the autoscheduler and the
//! learned cost model, and whose `Tune` RPC tunes one for a host (timed on
//! an agent of that host, or on the server's own), beside gRPC health checking and reflection.
//!
//! [`deadline`] turns a call's `grpc-timeout` into the search budget,
//! [`scheduler`] implements the RPC (conversion, admission, search slots, model
//! choice, the search on a thread of its own, the early answer, the
//! reply), [`tuning`] the `Tune` RPC (the pipeline's schedules timed in the
//! server's isolated runner, the model fine-tuned on them round after
//! round, progress streamed), [`priority`] keeps search threads below the server's own in CPU
//! priority, [`agent`] the
//! benchmark agents' protocol (register, lease, heartbeat, report, fetch
//! weights) over the store's work queue, [`timing_board`] the tunings'
//! timings handed to agents of the host they tune for, [`retraining`] retrains a host's
//! cost model from the store as its agents' samples arrive, [`messages`]
//! bounds what crosses the wire and records each call's outcome, [`server`]
//! puts the services together with message size limits and graceful
//! shutdown ([`spawn`] runs one inside a program). The client side for the apps is
//! the `client` crate. The server links the code generator for `Tune`
//! alone (through `benchmark-agent`'s tuning loop): it times schedules in
//! the isolated runner's child process, never in its own.
//!
//! It lives in its own crate rather than in `search` (as the design's
//! table has it) because it needs `trainer` (the learned model), which
//! depends on `search`: a server inside `search` would make a cycle.
//!
//! Invariants: bad input is `INVALID_ARGUMENT` naming the problem, never a
//! panic; a call with a deadline is answered within it (the budget is
//! clamped to leave room for the checks that follow the search); the same
//! request, weights and seed give the same schedule when the search
//! completes within its budget; at most `max_in_flight` calls are admitted
//! at once (more are `RESOURCE_EXHAUSTED` at once) and at most
//! `max_concurrent` searches run at once; an admitted call whose search
//! slot does not come in time is answered within its budget with every
//! Func at the root.
//!
//! # Example
//!
//! A server on a free loopback port, and a `Schedule` call to it.
//!
//! ```
//! use proto::v1::{scheduler_client::SchedulerClient, Pipeline, ScheduleRequest};
//! use service::{SchedulerSettings, ServerConfig};
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let config = ServerConfig {
//!     settings: SchedulerSettings::new("example".into()),
//!     store: None,
//!     max_concurrent: 1,
//!     agents: None,
//!     retrainer: None,
//!     tls: None,
//! };
//! let server = service::spawn(tokio::net::TcpListener::bind("127.0.0.1:0").await?, config)?;
//! let mut client = SchedulerClient::connect(format!("http://{}", server.addr)).await?;
//! let request = ScheduleRequest {
//!     pipeline: Some(Pipeline::try_from(&compiler::examples::blur())?),
//!     budget_ms: 200,
//!     ..Default::default()
//! };
//! let reply = client.schedule(request).await?.into_inner();
//! println!("{}", reply.schedule_text);
//! assert!(!reply.schedule_text.is_empty());
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

pub mod agent;
pub mod deadline;
pub mod messages;
pub mod priority;
pub mod retraining;
pub mod scheduler;
pub mod server;
pub mod timing_board;
pub mod tuning;

pub use agent::{AgentGate, AgentService, AgentSettings, WorkSource};
pub use messages::{MAX_MESSAGE_BYTES, MAX_REQUEST_BYTES, MAX_STATUS_MESSAGE_BYTES};
pub use retraining::{RetrainFailure, RetrainSettings, Retrained, Retrainer, RetrainingError};
pub use scheduler::SchedulerService;
pub use scheduler::SchedulerSettings;
pub use server::{serve, spawn, tls_identity, Running, ServeError, ServerConfig};
pub use tuning::TuneSettings;

/// The message a panic carried, when it was a string.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> Option<&str> {
    panic.downcast_ref::<String>().map(String::as_str).or_else(|| panic.downcast_ref::<&str>().copied())
}
