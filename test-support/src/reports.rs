//! Reports for the tests: a small pipeline, its schedules and their samples.

use data::{
    CacheInfo, FailureClass, Features, HostFingerprint, LayoutId, Outcome, PipelineRecord, PipelineSource, Report, Runtime, SampleRecord,
    ScheduleRecord,
};

/// The pipeline-feature layout of the reports' pipelines (made up).
pub const PIPELINE_LAYOUT: LayoutId = LayoutId { version: 1, names_hash: 0xdead_beef_f00d_cafe, len: 5 };
/// The schedule-feature layout of the reports' schedules (made up).
pub const SCHEDULE_LAYOUT: LayoutId = LayoutId { version: 3, names_hash: u64::MAX - 7, len: 39 };
/// Stages of every feature matrix of the reports.
pub const STAGES: u32 = 3;

/// A fixed fingerprint (2 logical cores, 1 physical, AVX2 and FMA) whose CPU model is `name`; distinct names give distinct host keys.
pub fn host(name: &str) -> HostFingerprint {
    HostFingerprint {
        cpu_model: name.to_string(),
        isa_features: vec!["avx2".into(), "fma".into()],
        logical_cores: 2,
        physical_cores: 1,
        caches: vec![CacheInfo { level: 1, kind: "Data".into(), size_bytes: 32 << 10 }],
        gpu: None,
    }
}

fn features(layout: LayoutId, seed: f32) -> Features {
    let n = (STAGES * layout.len) as usize;
    Features { layout, stages: STAGES, values: (0..n).map(|i| seed + i as f32 * 0.25).collect() }
}

/// Pipeline `pipeline` with `schedules` schedules, every third failing.
pub fn report(work_id: &str, host: &HostFingerprint, pipeline: u64, schedules: usize, round: u32) -> Report {
    let schedule = |s: usize| ScheduleRecord {
        hash: format!("s{pipeline}-{s}"),
        source: format!("out.split(y, yo, yi, {})", s + 1),
        features: features(SCHEDULE_LAYOUT, s as f32),
    };
    let sample = |s: usize| SampleRecord {
        schedule_hash: format!("s{pipeline}-{s}"),
        compile_time_s: Some(0.1),
        outcome: if s % 3 == 2 {
            Outcome::Failed(FailureClass::Timeout)
        } else {
            Outcome::Measured(Runtime { min_s: 1e-3 * (s + 1) as f64, median_s: 1.1e-3 * (s + 1) as f64, samples: 10 })
        },
    };
    Report {
        work_id: work_id.to_string(),
        host: host.clone(),
        agent: "agent-1".to_string(),
        round,
        pipeline: PipelineRecord {
            hash: format!("p{pipeline}"),
            source: PipelineSource::Generated { seed: pipeline, params: serde_json::json!({"max_stages": 8}) },
            features: features(PIPELINE_LAYOUT, pipeline as f32),
        },
        schedules: (0..schedules).map(schedule).collect(),
        samples: (0..schedules).map(sample).collect(),
    }
}
