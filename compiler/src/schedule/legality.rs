//! Legality at the estimates: whether a schedule that validates will also
//! run, on buffers of the sizes the pipeline's estimates give.
//!
//! Validation (the first pass of [`crate::lower`](mod@crate::lower)) proves what holds for every
//! region; a schedule can still fail at run time for the regions it is
//! made for. Over-compute from round-up or shift-inwards splits can read
//! past an input that has no padding (the failure of Halide's Adams2019
//! schedules on camera_pipe and harris), a round-up split of an output
//! writes past the output buffer unless its factor divides the extent, and
//! an intermediate allocation can be far too large (Li2018's 133 GB
//! histogram). [`check_at_estimates`] lowers the pipeline and evaluates
//! what it touches and allocates with every buffer field set to its
//! estimate; each failure is a typed [`EstimateError`] naming the Func (or
//! input), stage, dimension and directive. A search calls it on every
//! candidate it would return, and random schedules use it, so that "legal"
//! means "runs".

use crate::error::LowerError;
use crate::ir::expr::{Expr, Name};
use crate::ir::visit::substitute_map_stmt;
use crate::lang::pipeline::{buffer_vars, Estimate, PipelineDef};
use crate::lower::{lower_with, LowerOptions, Lowered};
use crate::schedule::{resolve_stage, Schedule, SplitRecord, TailStrategy};
use crate::simplify::simplify;
use std::collections::HashMap;
use thiserror::Error;

/// Limits a schedule must respect at the estimates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest single allocation of an intermediate Func, in bytes.
    pub max_allocation_bytes: u64,
    /// When the check gives up ([`LowerError::Deadline`]): lowering
    /// a deep nest at a large size can take seconds, and a caller with a
    /// budget must not wait for it.
    pub deadline: Option<std::time::Instant>,
}

impl Default for Limits {
    /// 2 GiB: larger than any realization a sensible schedule of an image
    /// pipeline needs, and the most a 32-bit index can address in bytes.
    fn default() -> Limits {
        Limits { max_allocation_bytes: 1 << 31, deadline: None }
    }
}

/// Why a schedule would not run at the pipeline's estimates.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum EstimateError {
    /// The pipeline and schedule do not lower.
    #[error(transparent)]
    Lower(#[from] LowerError),
    /// An output or input dimension, or a param that is used, has no
    /// estimate.
    #[error("{what} has no estimate; estimates of every output and input dimension (and of every param used) are needed")]
    MissingEstimate {
        /// The output or input dimension, or the param.
        what: String,
    },
    /// The pipeline reads an input outside its estimated region (`suspects`
    /// lists the splits that may compute past their region).
    #[error(
        "input {input} is read over [{read_min}, {read_max}] in dimension {dim}, outside its estimated region [{min}, {max}]{suspects}"
    )]
    InputReadOutsideEstimate {
        /// The input.
        input: String,
        /// The dimension.
        dim: usize,
        /// The first coordinate read.
        read_min: i64,
        /// The last coordinate read.
        read_max: i64,
        /// The estimate's first coordinate.
        min: i64,
        /// The estimate's last coordinate.
        max: i64,
        /// The splits that may compute past their region, as text (empty if
        /// none).
        suspects: String,
    },
    /// The pipeline writes an output outside its estimated region.
    #[error("output {func} is written over [{write_min}, {write_max}] in dimension {dim}, outside its estimated region [{min}, {max}]")]
    OutputWriteOutsideEstimate {
        /// The output.
        func: String,
        /// The dimension.
        dim: usize,
        /// The first coordinate written.
        write_min: i64,
        /// The last coordinate written.
        write_max: i64,
        /// The estimate's first coordinate.
        min: i64,
        /// The estimate's last coordinate.
        max: i64,
    },
    /// A `round_up` split of an output whose factor does not divide the
    /// estimated extent: it would write past the output.
    #[error(
        "output {func}, stage {stage}: `split({var}, ..., {factor}, round_up)` writes past the output: the factor does not divide the extent {extent} of {var}"
    )]
    RoundUpDoesNotDivide {
        /// The output.
        func: String,
        /// The stage (0 for the pure definition).
        stage: usize,
        /// The loop split.
        var: String,
        /// The split factor.
        factor: i64,
        /// The loop's extent at the estimates.
        extent: i64,
    },
    /// A `shift_inwards` split of an output whose factor exceeds the
    /// estimated extent.
    #[error("output {func}, stage {stage}: `split({var}, ..., {factor}, shift_inwards)` needs at least {factor} iterations, but {var} has {extent}")]
    ShiftInwardsExceedsExtent {
        /// The output.
        func: String,
        /// The stage (0 for the pure definition).
        stage: usize,
        /// The loop split.
        var: String,
        /// The split factor.
        factor: i64,
        /// The loop's extent at the estimates.
        extent: i64,
    },
    /// A Func's largest allocation at the estimates exceeds the limit, in
    /// bytes.
    #[error("Func {func} allocates up to {bytes} bytes, more than the limit of {limit}")]
    AllocationTooLarge {
        /// The Func.
        func: String,
        /// Its largest allocation at the estimates, in bytes.
        bytes: u64,
        /// The limit, in bytes.
        limit: u64,
    },
    /// The size of a Func's allocation cannot be evaluated at the estimates.
    #[error("the size of Func {func}'s allocation cannot be bounded at the estimates")]
    AllocationUnbounded {
        /// The Func.
        func: String,
    },
    /// A region an input or output is touched over cannot be evaluated at the
    /// estimates.
    #[error("the region {what} cannot be evaluated at the estimates: {region}")]
    RegionUnknown {
        /// The buffer and dimension.
        what: String,
        /// The region, as expressions.
        region: String,
    },
}

impl EstimateError {
    /// The Func the error names, if it names one (an input read outside its
    /// estimate, a missing estimate or a region that cannot be evaluated
    /// names none).
    pub fn func(&self) -> Option<&str> {
        match self {
            EstimateError::Lower(e) => e.func(),
            EstimateError::OutputWriteOutsideEstimate { func, .. }
            | EstimateError::RoundUpDoesNotDivide { func, .. }
            | EstimateError::ShiftInwardsExceedsExtent { func, .. }
            | EstimateError::AllocationTooLarge { func, .. }
            | EstimateError::AllocationUnbounded { func } => Some(func),
            EstimateError::MissingEstimate { .. }
            | EstimateError::InputReadOutsideEstimate { .. }
            | EstimateError::RegionUnknown { .. } => None,
        }
    }
}

/// A schedule that runs at the estimates: its lowered pipeline and the
/// largest allocation of each Func it realizes, in bytes at the estimates
/// (over every iteration of the loops around it), in statement order.
#[derive(Clone, Debug)]
pub struct AtEstimates {
    /// The lowered pipeline.
    pub lowered: Lowered,
    /// Each realized Func and its largest allocation at the estimates, in
    /// bytes, in statement order.
    pub allocations: Vec<(Name, u64)>,
}

/// Lowers `p` under `s` and checks, at the estimates, that every input
/// read stays inside the input's estimated region, every output write
/// inside the output's, that round-up and shift-inwards splits of outputs
/// fit their extents, and that no allocation exceeds `limits`. Returns the
/// lowered pipeline and its allocations.
pub fn check_at_estimates(p: &PipelineDef, s: &Schedule, limits: &Limits) -> Result<AtEstimates, EstimateError> {
    let fields = estimated_fields(p)?;
    check_output_splits(p, s)?;
    let lowered = lower_with(p, s, &LowerOptions { deadline: limits.deadline, ..LowerOptions::default() })?;
    let value = |e: &Expr| simplify(&crate::ir::visit::substitute_map(&fields, e)).as_int();
    for f in &lowered.footprints {
        let estimates = match p.input(&f.buffer) {
            Some(i) => &i.estimates,
            None => &p.func(&f.buffer).expect("a footprint names an input or an output").estimates,
        };
        for (dim, ((lo, hi), est)) in f.region.iter().zip(estimates).enumerate() {
            let est = est.expect("checked by estimated_fields");
            let (Some(read_min), Some(read_max)) = (value(lo), value(hi)) else {
                return Err(EstimateError::RegionUnknown {
                    what: format!("{} touches in dimension {dim}", f.buffer),
                    region: format!("[{lo}, {hi}]"),
                });
            };
            let (min, max) = (est.min, est.min + est.extent - 1);
            if read_min <= read_max && (read_min < min || read_max > max) {
                return Err(if f.is_input {
                    EstimateError::InputReadOutsideEstimate {
                        input: f.buffer.to_string(),
                        dim,
                        read_min,
                        read_max,
                        min,
                        max,
                        suspects: over_computing_splits(s),
                    }
                } else {
                    EstimateError::OutputWriteOutsideEstimate {
                        func: f.buffer.to_string(),
                        dim,
                        write_min: read_min,
                        write_max: read_max,
                        min,
                        max,
                    }
                });
            }
        }
    }
    let stmt = substitute_map_stmt(&fields, &lowered.stmt);
    let allocations = super::allocations::largest_allocations(&stmt);
    let mut sized = vec![];
    for (func, bytes) in allocations {
        match bytes {
            None => return Err(EstimateError::AllocationUnbounded { func: func.to_string() }),
            Some(b) if b > limits.max_allocation_bytes => {
                return Err(EstimateError::AllocationTooLarge { func: func.to_string(), bytes: b, limit: limits.max_allocation_bytes })
            }
            Some(b) => sized.push((func, b)),
        }
    }
    Ok(AtEstimates { lowered, allocations: sized })
}

/// The value of every buffer field (min, extent, dense stride) of the
/// outputs and inputs, and of every param, at the estimates.
fn estimated_fields(p: &PipelineDef) -> Result<HashMap<Name, Expr>, EstimateError> {
    let mut fields = HashMap::new();
    let mut buffer = |name: &str, estimates: &[Option<Estimate>]| -> Result<(), EstimateError> {
        let mut stride = 1i64;
        for (d, e) in estimates.iter().enumerate() {
            let e = e.ok_or_else(|| EstimateError::MissingEstimate { what: format!("dimension {d} of {name}") })?;
            fields.insert(buffer_vars::min(name, d).into(), Expr::i32(e.min));
            fields.insert(buffer_vars::extent(name, d).into(), Expr::i32(e.extent));
            fields.insert(buffer_vars::stride(name, d).into(), Expr::i32(stride));
            stride = stride.saturating_mul(e.extent);
        }
        Ok(())
    };
    for o in &p.outputs {
        let f = p.func(o).expect("outputs are Funcs of the pipeline");
        buffer(o, &f.estimates)?;
    }
    for i in &p.inputs {
        buffer(&i.name, &i.estimates)?;
    }
    for prm in &p.params {
        if let Some(v) = prm.estimate {
            let value = if prm.ty.is_float() { Expr::float(v, prm.ty) } else { Expr::int(v as i64, prm.ty) };
            fields.insert(prm.name.clone(), value);
        }
    }
    Ok(fields)
}

/// Replays each output stage's splits over the estimated extents: a
/// round-up split must divide the extent it splits (or it writes past the
/// output), a shift-inwards split needs at least its factor.
fn check_output_splits(p: &PipelineDef, s: &Schedule) -> Result<(), EstimateError> {
    for o in &p.outputs {
        let f = p.func(o).expect("outputs are Funcs of the pipeline");
        let Some(fs) = s.funcs.get(&f.name) else { continue };
        for stage in 0..f.stages() {
            let r = resolve_stage(f, stage, fs).map_err(LowerError::from)?;
            let mut extents: HashMap<Name, i64> = HashMap::new();
            for d in &r.initial {
                let pure = f.args.iter().position(|a| *a == d.name).and_then(|i| f.estimates[i].map(|e| e.extent));
                if let Some(e) = pure.or(d.const_extent) {
                    extents.insert(d.name.clone(), e);
                }
            }
            for split in &r.splits {
                match split {
                    SplitRecord::Split { old, outer, inner, factor, tail } => {
                        let Some(&extent) = extents.get(old) else { continue };
                        let err = |var: &Name| (f.name.to_string(), stage, var.to_string(), *factor, extent);
                        match tail {
                            TailStrategy::RoundUp if extent % factor != 0 => {
                                let (func, stage, var, factor, extent) = err(old);
                                return Err(EstimateError::RoundUpDoesNotDivide { func, stage, var, factor, extent });
                            }
                            TailStrategy::ShiftInwards if extent < *factor => {
                                let (func, stage, var, factor, extent) = err(old);
                                return Err(EstimateError::ShiftInwardsExceedsExtent { func, stage, var, factor, extent });
                            }
                            _ => {}
                        }
                        extents.insert(outer.clone(), (extent + factor - 1) / factor);
                        extents.insert(inner.clone(), *factor);
                    }
                    SplitRecord::Fuse { inner, outer, fused } => {
                        if let (Some(a), Some(b)) = (extents.get(inner), extents.get(outer)) {
                            extents.insert(fused.clone(), a * b);
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// The splits of `s` that may compute more than their region (round-up and
/// shift-inwards), as a hint of where an over-read comes from.
fn over_computing_splits(s: &Schedule) -> String {
    let text = s.to_string();
    let splits = |l: &&str| {
        l.contains(".split(") || l.contains(".tile(") || ((l.contains(".vectorize(") || l.contains(".unroll(")) && l.contains(','))
    };
    let suspects: Vec<&str> = text.lines().filter(splits).filter(|l| !l.contains("guard_with_if")).collect();
    if suspects.is_empty() {
        String::new()
    } else {
        format!(" (splits that may compute past their region: {})", suspects.join("; "))
    }
}
