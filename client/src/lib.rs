//! The client's side of the `Schedule` RPC for the apps and for any
//! pipeline: the request for an app's pipeline (estimated at the size it
//! runs at) or a user's own (run at its estimates), the reply's schedule
//! (accepted only if the reply's fingerprint is the pipeline's), and that
//! schedule timed with the LLVM JIT beside the app's naive and expert
//! schedules, as `benchmark` times them (every output compared bit for
//! bit with the naive schedule's).
//!
//! # Example
//!
//! The request for an app, and a reply checked against it.
//!
//! ```
//! use client::AppRequest;
//!
//! let request = AppRequest::new("unsharp", apps::Size::Small, &compiler::Target::host())?;
//! let reply = proto::v1::ScheduleReply {
//!     pipeline_fingerprint: request.fingerprint.0.to_vec(),
//!     schedule: Some(proto::v1::Schedule::from(request.app.expert.as_ref().unwrap())),
//!     ..Default::default()
//! };
//! assert_eq!(Some(request.schedule_of(&reply)?), request.app.expert);
//! # Ok::<(), client::ClientError>(())
//! ```

#![warn(missing_docs)]

use apps::{App, Size};
use benchmark::{measure, naive_schedule, BenchError, BenchRow, SamplingOptions};
use compiler::{PipelineDef, Schedule, Target};
use proto::v1::ScheduleReply;
use proto::Fingerprint;
use thiserror::Error;

/// The name of the served schedule's row beside `naive` and `expert`.
pub const SERVED: &str = "served";

/// Why an app could not be scheduled or timed through the service.
#[derive(Debug, Error)]
pub enum ClientError {
    /// No app has the name.
    #[error("unknown app `{0}` (apps: {apps})", apps = apps::names().collect::<Vec<_>>().join(", "))]
    UnknownApp(String),
    /// The app's pipeline cannot be sent.
    #[error("the pipeline has no wire form: {0}")]
    ToWire(#[from] proto::ToWireError),
    /// A pipeline that cannot run at its estimates (one lacks).
    #[error("the pipeline cannot be run at its estimates: {0}")]
    Estimates(#[from] apps::MissingEstimate),
    /// The reply's fingerprint is not the request's pipeline's.
    #[error("the reply is for pipeline {reply}, not {expected}")]
    Fingerprint {
        /// The reply's fingerprint, in hex.
        reply: String,
        /// The request's pipeline's.
        expected: Fingerprint,
    },
    /// The reply has no schedule.
    #[error("the reply carries no schedule")]
    NoSchedule,
    /// The reply's schedule is not a valid schedule.
    #[error("the reply's schedule: {0}")]
    FromWire(#[from] proto::FromWireError),
    /// Timing the schedules failed, or their outputs differ.
    #[error(transparent)]
    Bench(Box<BenchError>),
}

/// An app and the pipeline sent for it, with that pipeline's fingerprint.
pub struct AppRequest {
    /// The app, as `apps::build` builds it.
    pub app: App,
    /// The app's pipeline with its estimates set to the regions it runs at.
    pub pipeline: PipelineDef,
    /// The fingerprint of `pipeline`.
    pub fingerprint: Fingerprint,
}

impl AppRequest {
    /// App `name` at `size`, built for `host`.
    pub fn new(name: &str, size: Size, host: &Target) -> Result<AppRequest, ClientError> {
        let app = apps::build(name, size, host).ok_or_else(|| ClientError::UnknownApp(name.to_string()))?;
        let pipeline = app.pipeline_estimated_as_run();
        let fingerprint = proto::fingerprint(&pipeline)?;
        Ok(AppRequest { app, pipeline, fingerprint })
    }

    /// A pipeline of the user's own (read from JSON), to be timed at its
    /// estimates (every input and the output need them); it has no expert
    /// schedule.
    pub fn of_pipeline(pipeline: PipelineDef) -> Result<AppRequest, ClientError> {
        let fingerprint = proto::fingerprint(&pipeline)?;
        let app = App::at_estimates(pipeline.clone())?;
        Ok(AppRequest { app, pipeline, fingerprint })
    }

    /// The reply's schedule, if the reply is for this pipeline.
    pub fn schedule_of(&self, reply: &ScheduleReply) -> Result<Schedule, ClientError> {
        if reply.pipeline_fingerprint != self.fingerprint.0 {
            let reply = reply.pipeline_fingerprint.iter().map(|b| format!("{b:02x}")).collect();
            return Err(ClientError::Fingerprint { reply, expected: self.fingerprint });
        }
        Ok(Schedule::try_from(reply.schedule.as_ref().ok_or(ClientError::NoSchedule)?)?)
    }

    /// Times the app under its naive schedule, its expert schedule (where
    /// it has one: the suite's pipelines have none) and `served` (rows in
    /// that order), checking that all compute the same output.
    pub fn time_beside_baselines(&self, served: Schedule, options: &SamplingOptions) -> Result<Vec<BenchRow>, ClientError> {
        let app = &self.app;
        let mut schedules = vec![("naive", naive_schedule(&app.pipeline))];
        schedules.extend(app.expert.clone().map(|e| ("expert", e)));
        schedules.push((SERVED, served));
        Ok(measure(app, &schedules, options).map_err(|e| ClientError::Bench(Box::new(e)))?.rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unsharp() -> AppRequest {
        AppRequest::new("unsharp", Size::Small, &Target::host()).unwrap()
    }

    #[test]
    fn an_unknown_app_is_named() {
        let e = AppRequest::new("sharpen", Size::Small, &Target::host()).err().unwrap();
        assert!(matches!(&e, ClientError::UnknownApp(n) if n == "sharpen"), "{e}");
        assert!(e.to_string().contains("unsharp"), "{e}");
    }

    #[test]
    fn a_reply_for_another_pipeline_is_refused() {
        let request = unsharp();
        let other = AppRequest::new("blur", Size::Small, &Target::host()).unwrap();
        let schedule = Some(proto::v1::Schedule::from(request.app.expert.as_ref().unwrap()));
        let reply = ScheduleReply { pipeline_fingerprint: other.fingerprint.0.to_vec(), schedule, ..Default::default() };
        let e = request.schedule_of(&reply).unwrap_err();
        assert!(matches!(e, ClientError::Fingerprint { expected, .. } if expected == request.fingerprint), "{e}");
    }

    #[test]
    fn a_users_pipeline_is_timed_at_its_estimates_or_refused_naming_what_it_lacks() {
        let pipeline = apps::build("blur", Size::Small, &Target::host()).unwrap().pipeline;
        let request = AppRequest::of_pipeline(pipeline.clone()).unwrap();
        assert!(request.app.expert.is_none());
        assert_eq!(request.fingerprint, proto::fingerprint(&pipeline).unwrap());
        let rows = request.time_beside_baselines(naive_schedule(&pipeline), &SamplingOptions::once()).unwrap();
        assert_eq!(rows.iter().map(|r| r.schedule.as_str()).collect::<Vec<_>>(), ["naive", SERVED]);

        let mut unestimated = pipeline;
        unestimated.inputs[0].estimates.iter_mut().for_each(|e| *e = None);
        let e = AppRequest::of_pipeline(unestimated).err().unwrap();
        assert!(matches!(e, ClientError::Estimates(_)), "{e}");
    }

    #[test]
    fn a_reply_for_this_pipeline_gives_its_schedule() {
        let request = unsharp();
        let mut reply = ScheduleReply { pipeline_fingerprint: request.fingerprint.0.to_vec(), ..Default::default() };
        assert!(matches!(request.schedule_of(&reply), Err(ClientError::NoSchedule)));
        reply.schedule = Some(proto::v1::Schedule::from(request.app.expert.as_ref().unwrap()));
        assert_eq!(Some(request.schedule_of(&reply).unwrap()), request.app.expert);
    }
}
