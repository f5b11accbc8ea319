//! Running a lowered pipeline on the IR interpreter: checks the caller's
//! inputs and params against the pipeline, allocates the outputs over the
//! requested regions, runs, and returns the outputs (one buffer per value of
//! a Tuple output, named `f.0`, `f.1`, ...).

use crate::exec::buffer::{Buffer, BufferError};
use crate::exec::interpret::{run, InterpretError};
use crate::ir::expr::{Expr, Name};
use crate::ir::value::{cast, const_expr, widest_type, Scalar};
use crate::ir::visit::substitute_map;
use crate::lang::pipeline::{buffer_vars, PipelineDef};
use crate::lower::{Footprint, Lowered};
use crate::simplify::simplify;
use std::collections::{BTreeMap, HashMap};
use thiserror::Error;

/// Why a pipeline could not be run.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum RealizeError {
    /// An input the pipeline reads was not given.
    #[error("input {name} was not given")]
    MissingInput {
        /// The input.
        name: String,
    },
    /// An input's element type is not the one the pipeline declares.
    #[error("input {name} has element type {got}, but the pipeline reads it as {expected}")]
    InputType {
        /// The input.
        name: String,
        /// The element type the pipeline declares.
        expected: String,
        /// The element type of the buffer given.
        got: String,
    },
    /// An input's dimension count is not the one the pipeline declares.
    #[error("input {name} has {got} dimensions, but the pipeline reads it with {expected}")]
    InputDimensions {
        /// The input.
        name: String,
        /// The dimensions the pipeline declares.
        expected: usize,
        /// The dimensions of the buffer given.
        got: usize,
    },
    /// A param of the pipeline was not given.
    #[error("param {name} was not given")]
    MissingParam {
        /// The param.
        name: String,
    },
    /// A region was requested of something that is not an output.
    #[error("{name} is not an output of this pipeline (outputs: {outputs})")]
    NotAnOutput {
        /// The name asked for.
        name: String,
        /// The pipeline's outputs, listed.
        outputs: String,
    },
    /// A requested region's dimension count is not the output's.
    #[error("output {name} is {expected}-dimensional, but the region has {got} dimensions")]
    RegionDimensions {
        /// The output.
        name: String,
        /// Its number of dimensions.
        expected: usize,
        /// The number of dimensions of the region.
        got: usize,
    },
    /// An input or output buffer does not hold the region the pipeline reads
    /// or writes of it.
    #[error(
        "buffer {buffer} is too small: the pipeline {verb} [{needed_min}, {needed_max}] in dimension {dim}, but the buffer holds [{min}, {max}] (the region {verb} is [{region}])"
    )]
    BufferTooSmall {
        /// The buffer.
        buffer: String,
        /// `reads` for an input, `writes` for an output.
        verb: &'static str,
        /// The dimension.
        dim: usize,
        /// The first coordinate the pipeline touches.
        needed_min: i64,
        /// The last coordinate the pipeline touches.
        needed_max: i64,
        /// The buffer's first coordinate.
        min: i64,
        /// The buffer's last coordinate.
        max: i64,
        /// The region touched, as expressions in the buffer fields and
        /// params.
        region: String,
    },
    /// An input buffer's strides address elements outside its data, or an
    /// output buffer could not be allocated.
    #[error(transparent)]
    Buffer(#[from] BufferError),
    /// The interpreter failed.
    #[error(transparent)]
    Run(#[from] InterpretError),
}

/// The arguments of one run, checked against the pipeline: every buffer by
/// name (inputs, then freshly allocated outputs) and every param converted
/// to its declared type.
pub struct BoundArguments {
    /// Every buffer by name: the inputs, then the freshly allocated outputs.
    pub buffers: BTreeMap<String, Buffer>,
    /// Every param by name, converted to its declared type.
    pub scalars: BTreeMap<String, Scalar>,
}

/// Runs `l` and returns each output realized over its region, by buffer
/// name (see [`crate::lang::pipeline::FuncDef::buffers`]).
pub fn realize(
    l: &Lowered,
    inputs: &BTreeMap<String, Buffer>,
    params: &BTreeMap<String, Scalar>,
    regions: &[(&str, Vec<(i64, i64)>)],
) -> Result<BTreeMap<String, Buffer>, RealizeError> {
    let BoundArguments { mut buffers, scalars } = bind_arguments(&l.pipeline, inputs, params, regions)?;
    if !nothing_to_compute(regions) {
        check_footprints(&l.pipeline, &l.footprints, &buffers, &scalars)?;
        run(&l.stmt, &mut buffers, &scalars)?;
    }
    Ok(take_outputs(&l.pipeline, buffers, regions))
}

/// Checks, before a run, that each buffer holds the region the pipeline
/// touches of it (`footprints`, in the buffers' fields and the params),
/// naming the concrete ranges needed and given. The statement asserts the
/// same at its start; this says how much. A region that does not evaluate
/// to constants, or buffer fields beyond the 32-bit index type (which the
/// executors refuse themselves), are left to those assertions.
pub fn check_footprints(
    p: &PipelineDef,
    footprints: &[Footprint],
    buffers: &BTreeMap<String, Buffer>,
    scalars: &BTreeMap<String, Scalar>,
) -> Result<(), RealizeError> {
    let fits = |v: i64| i32::try_from(v).is_ok();
    if buffers.values().flat_map(|b| &b.dims).any(|d| !(fits(d.min) && fits(d.extent) && fits(d.stride))) {
        return Ok(());
    }
    let mut fields: HashMap<Name, Expr> = HashMap::new();
    for (name, b) in buffers {
        for (d, dim) in b.dims.iter().enumerate() {
            fields.insert(buffer_vars::min(name, d).into(), Expr::i32(dim.min));
            fields.insert(buffer_vars::extent(name, d).into(), Expr::i32(dim.extent));
            fields.insert(buffer_vars::stride(name, d).into(), Expr::i32(dim.stride));
        }
    }
    for prm in &p.params {
        if let Some(v) = scalars.get(&*prm.name) {
            fields.insert(prm.name.clone(), const_expr(*v, prm.ty));
        }
    }
    // A Tuple output's loops name the Func's own bounds, those of its first
    // buffer (the statement asserts that its buffers share one shape).
    for f in p.funcs.iter().filter(|f| f.is_tuple() && p.is_output(&f.name)) {
        if let Some(b) = buffers.get(&*f.buffers()[0].0) {
            for (d, dim) in b.dims.iter().enumerate() {
                fields.insert(buffer_vars::min(&f.name, d).into(), Expr::i32(dim.min));
                fields.insert(buffer_vars::extent(&f.name, d).into(), Expr::i32(dim.extent));
            }
        }
    }
    let value = |e: &Expr| simplify(&substitute_map(&fields, e)).as_int();
    for f in footprints {
        let Some(b) = footprint_buffer(p, buffers, &f.buffer) else { continue };
        for (d, ((lo, hi), dim)) in f.region.iter().zip(&b.dims).enumerate() {
            let (Some(needed_min), Some(needed_max)) = (value(lo), value(hi)) else { continue };
            let (min, max) = (dim.min, dim.min + dim.extent - 1);
            if needed_min <= needed_max && (needed_min < min || needed_max > max) {
                return Err(RealizeError::BufferTooSmall {
                    buffer: f.buffer.to_string(),
                    verb: if f.is_input { "reads" } else { "writes" },
                    dim: d,
                    needed_min,
                    needed_max,
                    min,
                    max,
                    region: format!("{lo}, {hi}"),
                });
            }
        }
    }
    Ok(())
}

/// Whether every requested output region is empty: then a run computes
/// nothing and its outputs are the empty buffers, whatever the schedule
/// (a split loop rounded up to its factor would otherwise still touch a
/// whole vector or tile of a zero-sized output).
pub fn nothing_to_compute(regions: &[(&str, Vec<(i64, i64)>)]) -> bool {
    regions.iter().all(|(_, region)| region.iter().any(|&(_, extent)| extent == 0))
}

/// The buffer a footprint of `name` is checked against: the input or
/// output of that name, or the first buffer of a Tuple output.
fn footprint_buffer<'b>(p: &PipelineDef, buffers: &'b BTreeMap<String, Buffer>, name: &str) -> Option<&'b Buffer> {
    match p.func(name) {
        Some(f) if f.is_tuple() => buffers.get(&*f.buffers()[0].0),
        _ => buffers.get(name),
    }
}

/// The buffers of the outputs named in `regions`, taken out of the run's
/// buffers.
pub fn take_outputs(
    p: &PipelineDef,
    mut buffers: BTreeMap<String, Buffer>,
    regions: &[(&str, Vec<(i64, i64)>)],
) -> BTreeMap<String, Buffer> {
    let names = regions.iter().flat_map(|(n, _)| match p.func(n) {
        Some(f) => f.buffers().into_iter().map(|(b, _)| b.to_string()).collect(),
        None => vec![n.to_string()],
    });
    names.filter_map(|n| buffers.remove(&n).map(|b| (n, b))).collect()
}

/// Checks the inputs and params given for `p` and allocates its outputs over
/// `regions`; errors name the missing or mismatched argument.
pub fn bind_arguments(
    p: &PipelineDef,
    inputs: &BTreeMap<String, Buffer>,
    params: &BTreeMap<String, Scalar>,
    regions: &[(&str, Vec<(i64, i64)>)],
) -> Result<BoundArguments, RealizeError> {
    let mut buffers = BTreeMap::new();
    for i in &p.inputs {
        let b = inputs.get(&*i.name).ok_or_else(|| RealizeError::MissingInput { name: i.name.to_string() })?;
        if b.ty != i.ty {
            return Err(RealizeError::InputType { name: i.name.to_string(), expected: i.ty.to_string(), got: b.ty.to_string() });
        }
        if b.dims.len() != i.dims {
            return Err(RealizeError::InputDimensions { name: i.name.to_string(), expected: i.dims, got: b.dims.len() });
        }
        b.check_layout()?;
        let mut b = b.clone();
        b.name = i.name.to_string();
        buffers.insert(i.name.to_string(), b);
    }
    let mut scalars = BTreeMap::new();
    for prm in &p.params {
        let v = params.get(&*prm.name).ok_or_else(|| RealizeError::MissingParam { name: prm.name.to_string() })?;
        scalars.insert(prm.name.to_string(), cast(widest_type(*v), prm.ty.scalar, *v));
    }
    for (name, region) in regions {
        let f = p.func(name).filter(|_| p.is_output(name)).ok_or_else(|| RealizeError::NotAnOutput {
            name: name.to_string(),
            outputs: p.outputs.iter().map(|o| &**o).collect::<Vec<_>>().join(", "),
        })?;
        if region.len() != f.dims() {
            return Err(RealizeError::RegionDimensions { name: name.to_string(), expected: f.dims(), got: region.len() });
        }
        for (buffer, ty) in f.buffers() {
            buffers.insert(buffer.to_string(), Buffer::new(&buffer, ty.scalar, region)?);
        }
    }
    Ok(BoundArguments { buffers, scalars })
}
