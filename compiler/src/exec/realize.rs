//! Running a lowered pipeline on the IR interpreter: checks the caller's
//! inputs and params against the pipeline, allocates the outputs over the
//! requested regions, runs, and returns the outputs.

use crate::exec::buffer::{Buffer, BufferError};
use crate::exec::interpret::{run, InterpretError};
use crate::ir::value::{cast, widest_type, Scalar};
use crate::lang::pipeline::PipelineDef;
use crate::lower::Lowered;
use std::collections::BTreeMap;
use thiserror::Error;

/// Why a pipeline could not be run.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum RealizeError {
    #[error("input {name} was not given")]
    MissingInput { name: String },
    #[error("input {name} has element type {got}, but the pipeline reads it as {expected}")]
    InputType { name: String, expected: String, got: String },
    #[error("input {name} has {got} dimensions, but the pipeline reads it with {expected}")]
    InputDimensions { name: String, expected: usize, got: usize },
    #[error("param {name} was not given")]
    MissingParam { name: String },
    #[error("{name} is not an output of this pipeline (outputs: {outputs})")]
    NotAnOutput { name: String, outputs: String },
    #[error("output {name} is {expected}-dimensional, but the region has {got} dimensions")]
    RegionDimensions { name: String, expected: usize, got: usize },
    #[error(transparent)]
    Buffer(#[from] BufferError),
    #[error(transparent)]
    Run(#[from] InterpretError),
}

/// The arguments of one run, checked against the pipeline: every buffer by
/// name (inputs, then freshly allocated outputs) and every param converted
/// to its declared type.
pub struct BoundArguments {
    pub buffers: BTreeMap<String, Buffer>,
    pub scalars: BTreeMap<String, Scalar>,
}

/// Runs `l` and returns each output realized over its region.
pub fn realize(
    l: &Lowered,
    inputs: &BTreeMap<String, Buffer>,
    params: &BTreeMap<String, Scalar>,
    regions: &[(&str, Vec<(i64, i64)>)],
) -> Result<BTreeMap<String, Buffer>, RealizeError> {
    let BoundArguments { mut buffers, scalars } = bind_arguments(&l.pipeline, inputs, params, regions)?;
    if !nothing_to_compute(regions) {
        run(&l.stmt, &mut buffers, &scalars)?;
    }
    Ok(take_outputs(buffers, regions))
}

/// Whether every requested output region is empty: then a run computes
/// nothing and its outputs are the empty buffers, whatever the schedule
/// (a split loop rounded up to its factor would otherwise still touch a
/// whole vector or tile of a zero-sized output).
pub fn nothing_to_compute(regions: &[(&str, Vec<(i64, i64)>)]) -> bool {
    regions.iter().all(|(_, region)| region.iter().any(|&(_, extent)| extent == 0))
}

/// The outputs named in `regions`, taken out of the run's buffers.
pub fn take_outputs(mut buffers: BTreeMap<String, Buffer>, regions: &[(&str, Vec<(i64, i64)>)]) -> BTreeMap<String, Buffer> {
    regions.iter().filter_map(|(n, _)| buffers.remove(*n).map(|b| (n.to_string(), b))).collect()
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
        buffers.insert(name.to_string(), Buffer::new(name, f.ty.scalar, region)?);
    }
    Ok(BoundArguments { buffers, scalars })
}
