//! JIT compilation for the host CPU, and running compiled pipelines.
//!
//! The module is optimized with LLVM's `default<O3>` pipeline for a target
//! machine built from the host's CPU name and features, and every function
//! carries `target-cpu`/`target-features` attributes so that MCJIT's own
//! code generator also uses the host's vector units. As in Halide, the
//! emitted loops tell LLVM's loop vectorizer and unroller to leave them
//! alone (the schedule alone decides which loops become vectors or straight
//! code; a naive schedule stays scalar), while the SLP vectorizer still
//! packs neighbouring scalar work.

use super::emit::{emit_pipeline, Signature, ALLOCATION_FAILED, ENTRY};
use super::{runtime, CodegenError};
use compiler::exec::buffer::Buffer;
use compiler::exec::realize::{bind_arguments, check_footprints, nothing_to_compute, take_outputs, BoundArguments, RealizeError};
use compiler::ir::value::Scalar;
use compiler::lang::pipeline::PipelineDef;
use compiler::lower::{Footprint, Lowered};
use inkwell::context::Context;
use inkwell::execution_engine::ExecutionEngine;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine};
use inkwell::values::AnyValue;
use inkwell::OptimizationLevel;
use std::collections::BTreeMap;
use std::mem::ManuallyDrop;
use thiserror::Error;

/// The CPU code is generated for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HostTarget {
    /// The LLVM target triple (`x86_64-unknown-linux-gnu`, say).
    pub triple: String,
    /// The LLVM CPU name (`znver3`, say).
    pub cpu: String,
    /// The LLVM CPU feature string (`+avx2,+fma,...`).
    pub features: String,
}

impl HostTarget {
    /// The machine this process runs on, as LLVM detects it.
    pub fn detect() -> HostTarget {
        HostTarget {
            triple: TargetMachine::get_default_triple().as_str().to_string_lossy().into_owned(),
            cpu: TargetMachine::get_host_cpu_name().to_string(),
            features: TargetMachine::get_host_cpu_features().to_string(),
        }
    }

    fn machine(&self) -> Result<TargetMachine, CodegenError> {
        Target::initialize_native(&InitializationConfig::default()).map_err(CodegenError::Llvm)?;
        let triple = TargetMachine::get_default_triple();
        let target = Target::from_triple(&triple).map_err(|e| CodegenError::Llvm(e.to_string()))?;
        target
            .create_target_machine(
                &triple,
                &self.cpu,
                &self.features,
                OptimizationLevel::Aggressive,
                RelocMode::Default,
                CodeModel::JITDefault,
            )
            .ok_or_else(|| CodegenError::Llvm(format!("no target machine for {} ({})", self.triple, self.cpu)))
    }
}

/// Why a compiled pipeline could not run.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum RunError {
    /// The buffers or params given do not fit the pipeline.
    #[error(transparent)]
    Arguments(#[from] RealizeError),
    /// An assertion of the pipeline failed; the assertion's message.
    #[error("{0}")]
    AssertionFailed(String),
    /// A heap allocation of the pipeline failed.
    #[error("a heap allocation of the pipeline failed")]
    AllocationFailed,
    /// A buffer's min, extent or stride does not fit in 32 bits.
    #[error("{field} = {value} does not fit the 32-bit index type of generated code")]
    FieldOverflow {
        /// The field, as `buffer.min.d`, `buffer.extent.d` or `buffer.stride.d`
        /// (`d` the dimension).
        field: String,
        /// Its value.
        value: i64,
    },
    /// The pipeline returned a code that is neither 0, an assertion's nor the
    /// allocation failure's.
    #[error("the pipeline returned the unknown code {0}")]
    UnknownCode(i32),
}

type EntryFn = unsafe extern "C" fn(*const *mut u8, *const i32, *const u64) -> i32;

/// A pipeline compiled to machine code. Owns its LLVM context.
pub struct CompiledPipeline {
    // Drop order matters: the engine (which owns the module) before the context.
    engine: ManuallyDrop<ExecutionEngine<'static>>,
    context: ManuallyDrop<Box<Context>>,
    entry: EntryFn,
    signature: Signature,
    asserts: Vec<String>,
    pipeline: PipelineDef,
    /// The regions of each buffer the pipeline touches, checked before a run.
    footprints: Vec<Footprint>,
    /// The optimized LLVM IR and the host assembly, when asked for
    /// ([`CompileOptions::keep_text`]).
    pub text: Option<CompiledText>,
}

/// The text of compiled code, for inspection.
#[derive(Clone, Debug)]
pub struct CompiledText {
    /// The LLVM IR as code generation emitted it, before LLVM's passes:
    /// what is ours to decide (LLVM may still, say, turn lane-by-lane loads
    /// into a gather where the target's cost model prefers one).
    pub emitted_ir: String,
    /// The optimized LLVM IR.
    pub llvm_ir: String,
    /// The host assembly.
    pub assembly: String,
}

/// Options of [`compile_with`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompileOptions {
    /// Keep the LLVM IR (as emitted and optimized) and the assembly
    /// (printing them costs about as much as a second code generation).
    pub keep_text: bool,
    /// Let LLVM fuse multiplies and adds and multiply by a constant divisor's
    /// reciprocal ([`crate::float_mode`]); off, float results are
    /// bit-identical to the reference evaluator's.
    pub fast_float: bool,
}

// SAFETY: the compiled code is immutable and re-entrant; the context and
// engine are only touched again on drop.
unsafe impl Send for CompiledPipeline {}
unsafe impl Sync for CompiledPipeline {}

impl Drop for CompiledPipeline {
    fn drop(&mut self) {
        // SAFETY: dropped exactly once, engine first.
        unsafe {
            ManuallyDrop::drop(&mut self.engine);
            ManuallyDrop::drop(&mut self.context);
        }
    }
}

/// Compiles `lowered` for the host.
pub fn compile(lowered: &Lowered) -> Result<CompiledPipeline, CodegenError> {
    compile_with(lowered, &CompileOptions::default())
}

/// Compiles `lowered` for the host, with options.
pub fn compile_with(lowered: &Lowered, options: &CompileOptions) -> Result<CompiledPipeline, CodegenError> {
    let target = HostTarget::detect();
    let machine = target.machine()?;
    let context = Box::new(Context::create());
    // SAFETY: the context lives in the returned value, boxed (its address is
    // stable), and is dropped after everything that borrows it.
    let ctx: &'static Context = unsafe { &*(&*context as *const Context) };
    let module = ctx.create_module("pipeline");
    module.set_triple(&machine.get_triple());
    module.set_data_layout(&machine.get_target_data().get_data_layout());
    let signature = signature_of(&lowered.pipeline);
    let asserts = emit_pipeline(ctx, &module, &lowered.stmt, &signature)?;
    if options.fast_float {
        crate::float_mode::relax_to_fast_mode(&module);
    }
    let cpu = ctx.create_string_attribute("target-cpu", &target.cpu);
    let features = ctx.create_string_attribute("target-features", &target.features);
    for f in module.get_functions().filter(|f| f.count_basic_blocks() > 0) {
        f.add_attribute(inkwell::attributes::AttributeLoc::Function, cpu);
        f.add_attribute(inkwell::attributes::AttributeLoc::Function, features);
    }
    module.verify().map_err(|e| CodegenError::Llvm(format!("invalid module: {e}\n{}", module.print_to_string())))?;
    let emitted_ir = options.keep_text.then(|| module.print_to_string().to_string());
    module.run_passes("default<O3>", &machine, PassBuilderOptions::create()).map_err(|e| CodegenError::Llvm(e.to_string()))?;
    let text = emitted_ir.map(|emitted_ir| CompiledText {
        emitted_ir,
        llvm_ir: module.print_to_string().to_string(),
        assembly: machine
            .write_to_memory_buffer(&module, FileType::Assembly)
            .map(|b| String::from_utf8_lossy(b.as_slice()).into_owned())
            .unwrap_or_default(),
    });
    let engine = module.create_jit_execution_engine(OptimizationLevel::Aggressive).map_err(|e| CodegenError::Llvm(e.to_string()))?;
    map_runtime(&engine, &module);
    let address = engine.get_function_address(ENTRY).map_err(|e| CodegenError::Llvm(e.to_string()))?;
    // SAFETY: the entry function has exactly this signature (see emit).
    let entry: EntryFn = unsafe { std::mem::transmute::<usize, EntryFn>(address) };
    Ok(CompiledPipeline {
        engine: ManuallyDrop::new(engine),
        context: ManuallyDrop::new(context),
        entry,
        signature,
        asserts,
        pipeline: lowered.pipeline.clone(),
        footprints: lowered.footprints.clone(),
        text,
    })
}

extern "C" fn hl_exp_f32(x: f32) -> f32 {
    compiler::ir::exp::exp_f32(x)
}

extern "C" fn hl_log_f32(x: f32) -> f32 {
    compiler::ir::log::log_f32(x)
}

extern "C" fn hl_pow_f32(x: f32, y: f32) -> f32 {
    compiler::ir::log::pow_f32(x, y)
}

extern "C" fn hl_tanhf(x: f32) -> f32 {
    x.tanh()
}

extern "C" fn hl_tanh(x: f64) -> f64 {
    x.tanh()
}

/// Points the runtime's symbols at this process's functions (an executable
/// does not export them to the JIT's symbol lookup).
fn map_runtime(engine: &ExecutionEngine<'static>, module: &Module<'static>) {
    let symbols: [(&str, usize); 8] = [
        ("hl_parallel_for", runtime::hl_parallel_for as *const () as usize),
        ("hl_malloc", runtime::hl_malloc as *const () as usize),
        ("hl_free", runtime::hl_free as *const () as usize),
        ("tanhf", hl_tanhf as *const () as usize),
        ("hl_exp_f32", hl_exp_f32 as *const () as usize),
        ("hl_log_f32", hl_log_f32 as *const () as usize),
        ("hl_pow_f32", hl_pow_f32 as *const () as usize),
        ("tanh", hl_tanh as *const () as usize),
    ];
    for (name, address) in symbols {
        if let Some(f) = module.get_function(name) {
            engine.add_global_mapping(&f.as_any_value_enum(), address);
        }
    }
}

/// The argument signature of `p` as text (part of the cache key).
pub fn signature_key(p: &PipelineDef) -> String {
    format!("{:?}", signature_of(p))
}

fn signature_of(p: &PipelineDef) -> Signature {
    let mut buffers: Vec<_> = p.inputs.iter().map(|i| (i.name.clone(), i.ty, i.dims)).collect();
    for o in &p.outputs {
        if let Some(f) = p.func(o) {
            buffers.extend(f.buffers().into_iter().map(|(name, ty)| (name, ty.scalar, f.dims())));
        }
    }
    Signature { buffers, params: p.params.iter().map(|prm| (prm.name.clone(), prm.ty)).collect() }
}

/// The 8-byte little-endian slot of a param value of scalar type `ty`.
fn param_slot(v: Scalar, ty: compiler::ir::types::ScalarType) -> u64 {
    match v {
        Scalar::Float(f) if ty == compiler::ir::types::ScalarType::F32 => (f as f32).to_bits() as u64,
        Scalar::Float(f) => f.to_bits(),
        Scalar::Int(i) => i as u64,
        Scalar::UInt(u) => u,
    }
}

impl CompiledPipeline {
    /// Runs the pipeline on `inputs` and `params` and returns each output
    /// realized over its region (any min; dense strides).
    pub fn run(
        &self,
        inputs: &BTreeMap<String, Buffer>,
        params: &BTreeMap<String, Scalar>,
        regions: &[(&str, Vec<(i64, i64)>)],
    ) -> Result<BTreeMap<String, Buffer>, RunError> {
        let BoundArguments { mut buffers, scalars } = bind_arguments(&self.pipeline, inputs, params, regions)?;
        if !nothing_to_compute(regions) {
            check_footprints(&self.pipeline, &self.footprints, &buffers, &scalars)?;
            self.run_on(&mut buffers, &scalars)?;
        }
        Ok(take_outputs(&self.pipeline, buffers, regions))
    }

    /// Runs the pipeline on bound buffers (inputs and outputs by name).
    pub fn run_on(&self, buffers: &mut BTreeMap<String, Buffer>, scalars: &BTreeMap<String, Scalar>) -> Result<(), RunError> {
        let mut hosts = Vec::with_capacity(self.signature.buffers.len());
        let mut fields = vec![];
        for (name, _, dims) in &self.signature.buffers {
            let b = buffers.get_mut(&**name).ok_or_else(|| RealizeError::MissingInput { name: name.to_string() })?;
            b.check_layout().map_err(RealizeError::Buffer)?;
            for (d, dim) in b.dims.iter().enumerate().take(*dims) {
                for (what, value) in [("min", dim.min), ("extent", dim.extent), ("stride", dim.stride)] {
                    let v = i32::try_from(value).map_err(|_| RunError::FieldOverflow { field: format!("{name}.{what}.{d}"), value })?;
                    fields.push(v);
                }
            }
            hosts.push(b.bytes_mut().as_mut_ptr());
        }
        let slots: Vec<u64> = self
            .signature
            .params
            .iter()
            .map(|(name, ty)| {
                scalars.get(&**name).map(|v| param_slot(*v, ty.scalar)).ok_or_else(|| RealizeError::MissingParam { name: name.to_string() })
            })
            .collect::<Result<_, _>>()?;
        // SAFETY: hosts, fields and slots match the signature the function
        // was generated for; the assertions at its start check that every
        // buffer covers what it touches.
        let code = unsafe { (self.entry)(hosts.as_ptr(), fields.as_ptr(), slots.as_ptr()) };
        match code {
            0 => Ok(()),
            ALLOCATION_FAILED => Err(RunError::AllocationFailed),
            k if k > 0 && (k as usize) <= self.asserts.len() => Err(RunError::AssertionFailed(self.asserts[k as usize - 1].clone())),
            k => Err(RunError::UnknownCode(k)),
        }
    }
}
