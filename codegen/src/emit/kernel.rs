//! GPU kernels: one kernel of a GPU-lowered statement
//! ([`compiler::lower::GpuLowered`]) becomes one NVPTX entry function
//! `void kernel(ptr addrspace(1) buffers..., scalars..., ptr addrspace(1)
//! error)`.
//!
//! Requires: the kernel's statement as the GPU kernels pass leaves it (its
//! outer block loops, then thread nests over the kernel's thread space
//! named [`THREAD_IDS`], storage of constant size). Guarantees: each block
//! loop variable is its min plus the block index in its dimension
//! (`ctaid`), each thread loop variable the thread index (`tid`); a
//! barrier (`bar.sync 0`) follows every outermost thread nest; storage
//! outside the thread nests is in shared memory (address space 3), inside
//! them a local array; buffers are global memory (address space 1). A
//! failed assertion stores its code (`k + 1`) to `error` and returns.
//! Expressions are emitted as for the CPU: the same semantics, bit for bit.

use super::types::scalar_type_in;
use super::{BufferRef, CodegenError, FunctionEmitter, ModuleState, Result};
use compiler::exec::kernels::KernelSignature;
use compiler::ir::expr::{Expr, Name};
use compiler::ir::stmt::{ForKind, Stmt};
use compiler::ir::types::ScalarType;
use compiler::lower::{Kernel, THREAD_IDS};
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::types::BasicType;
use inkwell::values::{IntValue, PointerValue};
use inkwell::AddressSpace;

/// The address space of global memory in NVPTX.
const GLOBAL: u16 = 1;
/// The address space of shared memory in NVPTX.
const SHARED: u16 = 3;
/// LLVM's calling convention number of PTX kernels (`ptx_kernel`).
const PTX_KERNEL: u32 = 71;

/// The state of a function that is a kernel.
pub(super) struct KernelState<'ctx> {
    /// The block loop variables, x first.
    blocks: Vec<Name>,
    /// Where a failed assertion's code goes.
    error: PointerValue<'ctx>,
    /// Thread loops around the point of emission.
    thread_depth: usize,
}

/// Emits `stmt`, the statement of `kernel`, as the kernel entry `name` of
/// `module`; returns the assertion messages, indexed by error code minus
/// one.
pub fn emit_kernel<'ctx>(
    context: &'ctx Context,
    module: &Module<'ctx>,
    name: &str,
    kernel: &Kernel,
    stmt: &Stmt,
    sig: &KernelSignature,
) -> Result<Vec<String>> {
    let mut state = ModuleState { context, module, asserts: vec![], outlined: 0 };
    let global = context.ptr_type(AddressSpace::from(GLOBAL));
    let mut params: Vec<inkwell::types::BasicMetadataTypeEnum> = vec![global.into(); sig.buffers.len()];
    for (s, t) in &sig.scalars {
        if t.lanes != 1 {
            return Err(CodegenError::Unsupported(format!("kernel {name} takes the vector {s}")));
        }
        params.push(scalar_type_in(context, t.scalar).into());
    }
    params.push(global.into());
    let function = module.add_function(name, context.void_type().fn_type(&params, false), Some(Linkage::External));
    function.set_call_conventions(PTX_KERNEL);
    let mut f = FunctionEmitter::new(&mut state, function);
    for (i, (b, elem)) in sig.buffers.iter().enumerate() {
        let host = function.get_nth_param(i as u32).expect("a buffer parameter").into_pointer_value();
        host.set_name(b);
        f.buffers.push(BufferRef { name: b.clone(), host, elem: *elem });
    }
    for (j, (s, _)) in sig.scalars.iter().enumerate() {
        let v = function.get_nth_param((sig.buffers.len() + j) as u32).expect("a scalar parameter");
        v.set_name(s);
        f.vars.push((s.clone(), v));
    }
    let error = function.get_last_param().expect("the error parameter").into_pointer_value();
    f.kernel = Some(KernelState { blocks: kernel.blocks.iter().map(|b| b.var.clone()).collect(), error, thread_depth: 0 });
    f.stmt(stmt)?;
    f.builder.build_return(None)?;
    Ok(state.asserts)
}

impl<'ctx> FunctionEmitter<'ctx, '_, '_> {
    fn kernel_state(&self) -> Result<&KernelState<'ctx>> {
        self.kernel.as_ref().ok_or_else(|| CodegenError::Unsupported("a GPU loop outside a kernel".into()))
    }

    /// Reads the PTX special register `llvm.nvvm.read.ptx.sreg.{reg}.{x,y,z}`.
    fn special_register(&mut self, reg: &str, dim: usize) -> Result<IntValue<'ctx>> {
        let name = format!("llvm.nvvm.read.ptx.sreg.{reg}.{}", ["x", "y", "z"][dim]);
        let i32t = self.ctx().i32_type();
        let f =
            self.state.module.get_function(&name).unwrap_or_else(|| self.state.module.add_function(&name, i32t.fn_type(&[], false), None));
        Ok(self.call_value(f, &[])?.into_int_value())
    }

    /// A block loop (its variable is its min plus the block index) or a
    /// thread loop (its variable is the thread index; a barrier follows
    /// the outermost one of a nest).
    pub(super) fn gpu_loop(&mut self, name: &Name, min: &Expr, kind: ForKind, body: &Stmt) -> Result<()> {
        let index = match kind {
            ForKind::GpuBlock => {
                let dim =
                    self.kernel_state()?.blocks.iter().position(|b| b == name).ok_or_else(|| {
                        CodegenError::Unsupported(format!("block loop {name} is not one of its kernel's outer block loops"))
                    })?;
                let block = self.special_register("ctaid", dim)?;
                let lo = self.index(min)?.into_int_value();
                self.builder.build_int_nsw_add(lo, block, name)?
            }
            _ => {
                let dim = THREAD_IDS
                    .iter()
                    .position(|t| **t == **name)
                    .ok_or_else(|| CodegenError::Unsupported(format!("thread loop {name} is not over the kernel's thread space")))?;
                self.special_register("tid", dim)?
            }
        };
        self.vars.push((name.clone(), index.into()));
        let outermost_thread = kind == ForKind::GpuThread && self.kernel_state()?.thread_depth == 0;
        if kind == ForKind::GpuThread {
            self.kernel.as_mut().expect("checked").thread_depth += 1;
        }
        self.stmt(body)?;
        if kind == ForKind::GpuThread {
            self.kernel.as_mut().expect("checked").thread_depth -= 1;
        }
        self.vars.pop();
        if outermost_thread {
            let barrier = "llvm.nvvm.barrier0";
            let f = self
                .state
                .module
                .get_function(barrier)
                .unwrap_or_else(|| self.state.module.add_function(barrier, self.ctx().void_type().fn_type(&[], false), None));
            self.builder.build_call(f, &[], "")?;
        }
        Ok(())
    }

    /// Storage in a kernel: shared memory outside the thread nests, a
    /// local array inside them. Its size is a constant (the GPU kernels
    /// pass made it one).
    pub(super) fn kernel_allocate(&mut self, buffer: &Name, elem: ScalarType, size: &Expr, body: &Stmt) -> Result<()> {
        let elems = size.as_int().ok_or_else(|| CodegenError::Unsupported(format!("storage {buffer} in a kernel has no constant size")))?;
        let array = self.memory_type(elem).array_type(elems.max(1) as u32);
        let host = if self.kernel_state()?.thread_depth == 0 {
            let g = self.state.module.add_global(array, Some(AddressSpace::from(SHARED)), &format!("{buffer}.shared"));
            g.set_linkage(Linkage::Internal);
            g.set_initializer(&array.get_undef());
            g.set_alignment(16);
            g.as_pointer_value()
        } else {
            self.entry_alloca(array.as_basic_type_enum(), buffer)?
        };
        self.buffers.push(BufferRef { name: buffer.clone(), host, elem });
        self.stmt(body)?;
        self.buffers.pop();
        Ok(())
    }

    /// A kernel's exit with `code`: a nonzero code (a failed assertion) is
    /// stored to the error word first.
    pub(super) fn kernel_return(&mut self, code: IntValue<'ctx>) -> Result<()> {
        let error = self.kernel_state()?.error;
        if code.get_zero_extended_constant() != Some(0) {
            self.builder.build_store(error, code)?;
        }
        self.builder.build_return(None)?;
        Ok(())
    }
}
