//! What the agent-protocol tests share: a synthetic but well-formed report,
//! and authorized requests.

use proto::v1::{self, schedule_sample::Outcome};

/// A report of work item `item` (of the pipeline its generator parameters
/// make) with two schedules of its own (hashes `{work_id}/schedule-{i}`),
/// one timed and one failed.
pub fn synthetic_report(item: &v1::WorkItem) -> v1::ReportSamplesRequest {
    let params = random_pipelines::GeneratorParams::from(item.generator.as_ref().expect("a work item has generator parameters"));
    let pipeline = random_pipelines::generate(&params).expect("a queued item's pipeline generates").pipeline;
    let work_id = item.work_id.as_str();
    let features =
        |v: f32| v1::Features { layout: Some(v1::LayoutId { version: 1, names_hash: 7, len: 2 }), stages: 1, values: vec![v, 1.0] };
    let sample = |i: u32, outcome| v1::ScheduleSample {
        hash: format!("{work_id}/schedule-{i}"),
        text: format!("out.split({i})"),
        features: Some(features(i as f32)),
        compile_time_s: Some(0.1),
        outcome: Some(outcome),
    };
    v1::ReportSamplesRequest {
        work_id: work_id.into(),
        pipeline_hash: proto::definition_hash(&pipeline),
        pipeline_features: Some(features(0.5)),
        samples: vec![
            sample(0, Outcome::Runtime(v1::Runtime { min_s: 1e-3, median_s: 2e-3, samples: 3 })),
            sample(1, Outcome::Failure(v1::FailureClass::Crash.into())),
        ],
    }
}

/// `message` with `authorization: Bearer <token>`.
pub fn authorized<T>(message: T, token: &str) -> tonic::Request<T> {
    let mut r = tonic::Request::new(message);
    r.metadata_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
    r
}
