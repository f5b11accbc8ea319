//! The agent protocol's messages as the training store's values: host
//! fingerprints, feature matrices, samples, work items and reports, both
//! ways ([`ToWire`], [`FromWire`]). A wire message that does not make a
//! valid store value is a [`FromWireError`] naming the field
//! (`samples[3].features: ...`).
//!
//! It is the one crate that knows both the wire (`proto`) and the store
//! (`data`), so that neither depends on the other.
//!
//! ```
//! use agent_protocol::{FromWire, ToWire};
//! use data::LayoutId;
//!
//! let layout = LayoutId { version: 3, names_hash: 42, len: 39 };
//! let wire = layout.to_wire();
//! assert_eq!(LayoutId::from_wire(&wire)?, layout);
//! # Ok::<(), proto::FromWireError>(())
//! ```

#![warn(missing_docs)]

use data::{
    FailureClass, Features, HostFingerprint, LayoutId, Outcome, Runtime, SampleRecord, SamplingSettings, ScheduleRecord, WorkResult,
};
use proto::limits::{
    check_id, quote, MAX_FEATURE_MAGNITUDE, MAX_REPORTED_SECONDS, MAX_REPORT_SAMPLES, MAX_SCHEDULE_TEXT_BYTES, MAX_TIMING_SAMPLES,
    MIN_REPORTED_SECONDS,
};
use proto::{v1, FromWireError};
use random_pipelines::GeneratorParams;

/// A store value's wire message.
pub trait ToWire {
    /// The message.
    type Wire;
    /// The value as its message.
    fn to_wire(&self) -> Self::Wire;
}

/// A store value from its wire message, checked.
pub trait FromWire<W>: Sized {
    /// The value `w` carries, or the field that makes it invalid.
    fn from_wire(w: &W) -> Result<Self, FromWireError>;
}

impl ToWire for HostFingerprint {
    type Wire = v1::HostFingerprint;
    fn to_wire(&self) -> v1::HostFingerprint {
        let h = self;
        v1::HostFingerprint {
            cpu_model: h.cpu_model.clone(),
            isa_features: h.isa_features.clone(),
            logical_cores: h.logical_cores,
            physical_cores: h.physical_cores,
            caches: h
                .caches
                .iter()
                .map(|c| v1::CacheInfo { level: u32::from(c.level), kind: c.kind.clone(), size_bytes: c.size_bytes })
                .collect(),
            gpu: h.gpu.clone(),
        }
    }
}

impl FromWire<v1::HostFingerprint> for HostFingerprint {
    /// The fingerprint as sent (the agent detected it; its key is computed
    /// from these fields, so they are taken as they are), refused unless it
    /// would read back from the store exactly ([`HostFingerprint::check`]).
    fn from_wire(h: &v1::HostFingerprint) -> Result<Self, FromWireError> {
        if h.cpu_model.is_empty() {
            return Err(FromWireError::missing("host", "cpu_model"));
        }
        if h.logical_cores == 0 || h.physical_cores == 0 {
            return Err(FromWireError::invalid("host", "logical_cores and physical_cores must be at least 1"));
        }
        let caches = h
            .caches
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let level = u8::try_from(c.level)
                    .map_err(|_| FromWireError::invalid(&format!("host caches[{i}]"), format!("level {}", c.level)))?;
                Ok(data::CacheInfo { level, kind: c.kind.clone(), size_bytes: c.size_bytes })
            })
            .collect::<Result<_, FromWireError>>()?;
        let host = HostFingerprint {
            cpu_model: h.cpu_model.clone(),
            isa_features: h.isa_features.clone(),
            logical_cores: h.logical_cores,
            physical_cores: h.physical_cores,
            caches,
            gpu: h.gpu.clone(),
        };
        host.check().map_err(|e| FromWireError::invalid("host", e.to_string()))?;
        Ok(host)
    }
}

impl ToWire for LayoutId {
    type Wire = v1::LayoutId;
    fn to_wire(&self) -> v1::LayoutId {
        let l = self;
        v1::LayoutId { version: l.version, names_hash: l.names_hash, len: l.len }
    }
}

impl FromWire<v1::LayoutId> for LayoutId {
    fn from_wire(l: &v1::LayoutId) -> Result<Self, FromWireError> {
        Ok(LayoutId { version: l.version, names_hash: l.names_hash, len: l.len })
    }
}

impl ToWire for Features {
    type Wire = v1::Features;
    fn to_wire(&self) -> v1::Features {
        let f = self;
        v1::Features { layout: Some(f.layout.to_wire()), stages: f.stages, values: f.values.clone() }
    }
}

/// The features of `at`, checked to fill their stages.
fn features(f: Option<&v1::Features>, at: &str) -> Result<Features, FromWireError> {
    let f = f.ok_or_else(|| FromWireError::invalid(at, "missing"))?;
    let layout = f.layout.as_ref().ok_or_else(|| FromWireError::missing(at, "layout"))?;
    let features = Features { layout: LayoutId::from_wire(layout)?, stages: f.stages, values: f.values.clone() };
    features.check_shape(at).map_err(|e| FromWireError::invalid(at, e.to_string()))?;
    if let Some(i) = features.values.iter().position(|v| !(v.is_finite() && v.abs() <= MAX_FEATURE_MAGNITUDE)) {
        return Err(FromWireError::invalid(
            at,
            format!("value {i} is {}, not a finite feature of magnitude at most {MAX_FEATURE_MAGNITUDE:e}", features.values[i]),
        ));
    }
    Ok(features)
}

impl ToWire for FailureClass {
    type Wire = v1::FailureClass;
    fn to_wire(&self) -> v1::FailureClass {
        match self {
            FailureClass::CompileError => v1::FailureClass::CompileError,
            FailureClass::Crash => v1::FailureClass::Crash,
            FailureClass::Timeout => v1::FailureClass::Timeout,
            FailureClass::WrongOutput => v1::FailureClass::WrongOutput,
            FailureClass::Other => v1::FailureClass::Other,
        }
    }
}

/// A measured outcome on the wire: a runtime, or the class of failure.
enum WireOutcome {
    Runtime(v1::Runtime),
    Failure(i32),
}

fn outcome_to_wire(outcome: &Outcome) -> WireOutcome {
    match *outcome {
        Outcome::Measured(r) => WireOutcome::Runtime(v1::Runtime { min_s: r.min_s, median_s: r.median_s, samples: r.samples }),
        Outcome::Failed(c) => WireOutcome::Failure(c.to_wire().into()),
    }
}

/// A compile time and outcome from the wire, checked as measurements
/// (`at` names them in errors).
fn measurement_from_wire(compile_time_s: Option<f64>, outcome: Option<WireOutcome>, at: &str) -> Result<Outcome, FromWireError> {
    if let Some(t) = compile_time_s {
        if !(0.0..=MAX_REPORTED_SECONDS).contains(&t) {
            return Err(FromWireError::invalid(at, format!("compile_time_s {t} is not a time from 0 to {MAX_REPORTED_SECONDS} s")));
        }
    }
    Ok(match outcome.ok_or_else(|| FromWireError::missing(at, "outcome"))? {
        WireOutcome::Runtime(r) => {
            let seconds = MIN_REPORTED_SECONDS..=MAX_REPORTED_SECONDS;
            if !(seconds.contains(&r.min_s)
                && seconds.contains(&r.median_s)
                && r.min_s <= r.median_s
                && (1..=MAX_TIMING_SAMPLES).contains(&r.samples))
            {
                return Err(FromWireError::invalid(
                    &format!("{at}.runtime"),
                    format!(
                        "{r:?} is not a timing (min_s <= median_s, both from {MIN_REPORTED_SECONDS:e} to {MAX_REPORTED_SECONDS} s, 1 to {MAX_TIMING_SAMPLES} samples)"
                    ),
                ));
            }
            Outcome::Measured(Runtime { min_s: r.min_s, median_s: r.median_s, samples: r.samples })
        }
        WireOutcome::Failure(value) => Outcome::Failed(match v1::FailureClass::try_from(value) {
            Ok(v1::FailureClass::CompileError) => FailureClass::CompileError,
            Ok(v1::FailureClass::Crash) => FailureClass::Crash,
            Ok(v1::FailureClass::Timeout) => FailureClass::Timeout,
            Ok(v1::FailureClass::WrongOutput) => FailureClass::WrongOutput,
            Ok(v1::FailureClass::Other) => FailureClass::Other,
            Ok(v1::FailureClass::Unspecified) | Err(_) => {
                return Err(FromWireError::UnknownEnum { at: at.to_string(), field: "failure", value })
            }
        }),
    })
}

/// One schedule of a report and its sample, on the wire.
pub fn sample_to_wire(schedule: &ScheduleRecord, sample: &SampleRecord) -> v1::ScheduleSample {
    let outcome = match outcome_to_wire(&sample.outcome) {
        WireOutcome::Runtime(r) => v1::schedule_sample::Outcome::Runtime(r),
        WireOutcome::Failure(c) => v1::schedule_sample::Outcome::Failure(c),
    };
    v1::ScheduleSample {
        hash: schedule.hash.clone(),
        text: schedule.source.clone(),
        features: Some(schedule.features.to_wire()),
        compile_time_s: sample.compile_time_s,
        outcome: Some(outcome),
    }
}

/// A wire sample as the store's schedule and sample records; `at` names it in errors.
fn sample_from_wire(s: &v1::ScheduleSample, at: &str) -> Result<(ScheduleRecord, SampleRecord), FromWireError> {
    if s.hash.is_empty() {
        return Err(FromWireError::missing(at, "hash"));
    }
    check_id(&s.hash, "the schedule hash", at)?;
    if s.text.len() > MAX_SCHEDULE_TEXT_BYTES {
        return Err(FromWireError::invalid(at, format!("a schedule text of {} bytes, more than {MAX_SCHEDULE_TEXT_BYTES}", s.text.len())));
    }
    let wire = s.outcome.as_ref().map(|o| match o {
        v1::schedule_sample::Outcome::Runtime(r) => WireOutcome::Runtime(*r),
        v1::schedule_sample::Outcome::Failure(c) => WireOutcome::Failure(*c),
    });
    let outcome = measurement_from_wire(s.compile_time_s, wire, at)?;
    let schedule = ScheduleRecord {
        hash: s.hash.clone(),
        source: s.text.clone(),
        features: features(s.features.as_ref(), &format!("{at}.features"))?,
    };
    Ok((schedule, SampleRecord { schedule_hash: s.hash.clone(), compile_time_s: s.compile_time_s, outcome }))
}

/// A timing work item's times (a compile time and outcome per schedule, in
/// the item's order) as their report.
pub fn timings_to_wire(work_id: &str, timed: &[(Option<f64>, Outcome)]) -> v1::ReportTimingsRequest {
    let timings = timed
        .iter()
        .map(|(compile_time_s, outcome)| v1::Timing {
            compile_time_s: *compile_time_s,
            outcome: Some(match outcome_to_wire(outcome) {
                WireOutcome::Runtime(r) => v1::timing::Outcome::Runtime(r),
                WireOutcome::Failure(c) => v1::timing::Outcome::Failure(c),
            }),
        })
        .collect();
    v1::ReportTimingsRequest { work_id: work_id.to_string(), timings }
}

/// A timing report's times, each checked as a measurement; at most `limit`
/// of them (the item's schedules).
pub fn timings_from_wire(r: &v1::ReportTimingsRequest, limit: usize) -> Result<Vec<(Option<f64>, Outcome)>, FromWireError> {
    if r.timings.len() > limit {
        return Err(FromWireError::invalid("report", format!("{} timings for the item's {limit} schedules", r.timings.len())));
    }
    r.timings
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let wire = t.outcome.as_ref().map(|o| match o {
                v1::timing::Outcome::Runtime(r) => WireOutcome::Runtime(*r),
                v1::timing::Outcome::Failure(c) => WireOutcome::Failure(*c),
            });
            Ok((t.compile_time_s, measurement_from_wire(t.compile_time_s, wire, &format!("timings[{i}]"))?))
        })
        .collect()
}

impl ToWire for WorkResult {
    type Wire = v1::ReportSamplesRequest;
    fn to_wire(&self) -> v1::ReportSamplesRequest {
        let r = self;
        v1::ReportSamplesRequest {
            work_id: r.work_id.clone(),
            pipeline_hash: r.pipeline_hash.clone(),
            pipeline_features: Some(r.pipeline_features.to_wire()),
            samples: r.schedules.iter().zip(&r.samples).map(|(schedule, sample)| sample_to_wire(schedule, sample)).collect(),
        }
    }
}

impl FromWire<v1::ReportSamplesRequest> for WorkResult {
    /// The report as the store takes it; every sample's schedule is carried
    /// with it, and no schedule twice.
    fn from_wire(r: &v1::ReportSamplesRequest) -> Result<Self, FromWireError> {
        if r.work_id.is_empty() {
            return Err(FromWireError::missing("report", "work_id"));
        }
        check_id(&r.work_id, "work_id", "report")?;
        if r.pipeline_hash.is_empty() {
            return Err(FromWireError::missing("report", "pipeline_hash"));
        }
        if !proto::is_content_hash(&r.pipeline_hash) {
            return Err(FromWireError::invalid("report", format!("pipeline_hash {:?} is not a SHA-256 in hex", quote(&r.pipeline_hash))));
        }
        if r.samples.len() > MAX_REPORT_SAMPLES {
            return Err(FromWireError::invalid(
                "report",
                format!("{} samples, more than the {MAX_REPORT_SAMPLES} a report may carry", r.samples.len()),
            ));
        }
        let pipeline_features = features(r.pipeline_features.as_ref(), "pipeline_features")?;
        let mut seen = std::collections::HashSet::new();
        let mut schedules = Vec::with_capacity(r.samples.len());
        let mut samples = Vec::with_capacity(r.samples.len());
        for (i, s) in r.samples.iter().enumerate() {
            let at = format!("samples[{i}]");
            if !seen.insert(s.hash.as_str()) {
                return Err(FromWireError::invalid(&at, format!("schedule {} is reported twice", s.hash)));
            }
            let (schedule, sample) = sample_from_wire(s, &at)?;
            schedules.push(schedule);
            samples.push(sample);
        }
        Ok(WorkResult { work_id: r.work_id.clone(), pipeline_hash: r.pipeline_hash.clone(), pipeline_features, schedules, samples })
    }
}

impl ToWire for SamplingSettings {
    type Wire = v1::SamplingSettings;
    fn to_wire(&self) -> v1::SamplingSettings {
        let s = self;
        v1::SamplingSettings {
            schedules: s.schedules,
            beam: s.beam,
            random_dropout: s.random_dropout,
            budget_ms: s.budget_ms,
            sliding: s.sliding,
        }
    }
}

impl FromWire<v1::SamplingSettings> for SamplingSettings {
    fn from_wire(s: &v1::SamplingSettings) -> Result<Self, FromWireError> {
        Ok(SamplingSettings {
            schedules: s.schedules,
            beam: s.beam,
            random_dropout: s.random_dropout,
            budget_ms: s.budget_ms,
            sliding: s.sliding,
        })
    }
}

/// A work item from a lease of the store, whose generator parameters are
/// the random pipeline generator's (as the server queued them).
pub fn work_item(lease: &data::WorkLease) -> Result<v1::WorkItem, serde_json::Error> {
    let generator: GeneratorParams = serde_json::from_value(lease.generator.clone())?;
    Ok(v1::WorkItem {
        work_id: lease.work_id.clone(),
        round: lease.round,
        generator: Some((&generator).into()),
        sampling: Some(lease.sampling.to_wire()),
        weights_version: lease.weights_version,
        lease_expires_unix_ms: lease.expires_ms,
        attempt: lease.attempt,
        timing: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    fn result() -> WorkResult {
        let layout = LayoutId { version: 2, names_hash: u64::MAX - 3, len: 2 };
        let features = |v: f32| Features { layout, stages: 2, values: vec![v, 1.0, 2.0, f32::MIN_POSITIVE] };
        let schedule = |i: usize| ScheduleRecord { hash: format!("h{i}"), source: format!("f.split({i})"), features: features(i as f32) };
        WorkResult {
            work_id: "round0/seed3".into(),
            pipeline_hash: proto::content_hash("p"),
            pipeline_features: features(0.5),
            schedules: (0..2).map(schedule).collect(),
            samples: vec![
                SampleRecord {
                    schedule_hash: "h0".into(),
                    compile_time_s: Some(0.25),
                    outcome: Outcome::Measured(Runtime { min_s: 1e-3, median_s: 2e-3, samples: 5 }),
                },
                SampleRecord { schedule_hash: "h1".into(), compile_time_s: None, outcome: Outcome::Failed(FailureClass::WrongOutput) },
            ],
        }
    }

    #[test]
    fn reports_and_fingerprints_round_trip_through_bytes() {
        let r = result();
        let bytes = r.to_wire().encode_to_vec();
        assert_eq!(WorkResult::from_wire(&v1::ReportSamplesRequest::decode(bytes.as_slice()).unwrap()).unwrap(), r);
        let host = HostFingerprint::detect().unwrap();
        let bytes = host.to_wire().encode_to_vec();
        let back = HostFingerprint::from_wire(&v1::HostFingerprint::decode(bytes.as_slice()).unwrap()).unwrap();
        assert_eq!(back.key(), host.key());
    }

    #[test]
    fn a_bad_report_names_the_field() {
        let mut wire = result().to_wire();
        wire.samples[1].features.as_mut().unwrap().values.pop();
        let err = WorkResult::from_wire(&wire).unwrap_err().to_string();
        assert!(err.starts_with("samples[1].features:"), "{err}");
        let mut wire = result().to_wire();
        wire.samples[0].outcome = Some(v1::schedule_sample::Outcome::Failure(17));
        assert!(WorkResult::from_wire(&wire).unwrap_err().to_string().contains("samples[0]: failure has unknown value 17"));
        let mut wire = result().to_wire();
        wire.samples[1].hash = "h0".into();
        assert!(WorkResult::from_wire(&wire).unwrap_err().to_string().contains("schedule h0 is reported twice"));
        let mut wire = result().to_wire();
        wire.samples[0].outcome = Some(v1::schedule_sample::Outcome::Runtime(v1::Runtime { min_s: -1.0, median_s: 1.0, samples: 1 }));
        assert!(WorkResult::from_wire(&wire).unwrap_err().to_string().starts_with("samples[0].runtime:"));
        let mut wire = result().to_wire();
        wire.work_id.clear();
        assert_eq!(WorkResult::from_wire(&wire).unwrap_err().to_string(), "report: missing work_id");
    }

    #[test]
    fn numbers_no_measurement_gives_are_refused() {
        let refused = |change: &dyn Fn(&mut v1::ReportSamplesRequest)| {
            let mut wire = result().to_wire();
            change(&mut wire);
            WorkResult::from_wire(&wire).unwrap_err().to_string()
        };
        let timing = |min_s, median_s, samples| Some(v1::schedule_sample::Outcome::Runtime(v1::Runtime { min_s, median_s, samples }));
        for t in [-5.0, f64::INFINITY, f64::NAN, 1e9] {
            assert!(refused(&|w| w.samples[0].compile_time_s = Some(t)).contains("compile_time_s"), "{t}");
        }
        for (min_s, median_s, samples) in [(1e-300, 1e-3, 5), (1e-3, 1e300, 5), (1e-3, 2e-3, u32::MAX), (f64::NAN, 1.0, 1), (2.0, 1.0, 1)] {
            let err = refused(&|w| w.samples[0].outcome = timing(min_s, median_s, samples));
            assert!(err.starts_with("samples[0].runtime:"), "{err}");
        }
        for v in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 3e38] {
            let err = refused(&|w| w.samples[1].features.as_mut().unwrap().values[0] = v);
            assert!(err.starts_with("samples[1].features:"), "{v}: {err}");
            let err = refused(&|w| w.pipeline_features.as_mut().unwrap().values[1] = v);
            assert!(err.starts_with("pipeline_features:"), "{v}: {err}");
        }
        assert!(refused(&|w| w.pipeline_hash = "another item's pipeline".into()).contains("not a SHA-256"));
        assert!(refused(&|w| w.work_id = "w".repeat(1 << 20)).contains("1048576 bytes"));
        assert!(refused(&|w| w.samples[0].hash = "h\n".into()).contains("control"));
    }

    #[test]
    fn timings_round_trip_and_are_checked_as_measurements() {
        let timed = vec![
            (Some(0.5), Outcome::Measured(Runtime { min_s: 1e-3, median_s: 2e-3, samples: 9 })),
            (None, Outcome::Failed(FailureClass::Timeout)),
        ];
        let wire = timings_to_wire("tune/abc/round1", &timed);
        assert_eq!(timings_from_wire(&wire, 2).expect("valid"), timed);
        let err = timings_from_wire(&wire, 1).unwrap_err().to_string();
        assert!(err.contains("2 timings for the item's 1 schedules"), "{err}");
        let mut bad = wire.clone();
        bad.timings[0].outcome = Some(v1::timing::Outcome::Runtime(v1::Runtime { min_s: 2.0, median_s: 1.0, samples: 1 }));
        assert!(timings_from_wire(&bad, 2).unwrap_err().to_string().starts_with("timings[0].runtime:"));
        let mut bad = wire.clone();
        bad.timings[1].outcome = None;
        assert_eq!(timings_from_wire(&bad, 2).unwrap_err().to_string(), "timings[1]: missing outcome");
        let mut bad = wire;
        bad.timings[1].compile_time_s = Some(f64::NAN);
        assert!(timings_from_wire(&bad, 2).unwrap_err().to_string().contains("compile_time_s"));
    }
}
