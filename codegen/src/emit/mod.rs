//! LLVM IR emission: one lowered, flattened statement becomes one LLVM
//! function `i32 pipeline(ptr hosts, ptr fields, ptr params)`.
//!
//! Requires: the output of [`compiler::lower::lower`] (flattened: `Load`,
//! `Store` and `Allocate`, no `Realize`, `Provide` or Func calls; vector
//! loops already turned into ramps and broadcasts). Guarantees: the
//! function computes exactly what the IR interpreter computes (the value
//! semantics of [`compiler::ir::value`]: wrapping integers, Euclidean division and
//! modulo with zero for a zero divisor, saturating float-to-int casts, NaN
//! rules of min/max); it returns 0, or `k + 1` when assertion `k` fails, or
//! [`ALLOCATION_FAILED`]; heap allocations are freed on every exit path.
//!
//! Arguments: `hosts[i]` is the data pointer of buffer `i` of the
//! [`Signature`]; `fields` holds, per buffer and dimension, the i32 min,
//! extent and stride; `params[j]` is an 8-byte slot holding param `j` in its
//! own type. Parallel loops are outlined into `i32 body(ptr closure, i32 i)`
//! functions that the runtime's `hl_parallel_for` calls.
//!
//! This module holds the entry point, the emitter state and its scopes; the
//! emitter's methods are grouped by concern in the submodules: `types`
//! (LLVM types and constants), `expr` (the expression walk), `arith`
//! (arithmetic, comparisons, casts), `math` (math functions), `calls`
//! (intrinsics and runtime calls), `memory` (loads, stores, addresses),
//! `stmt` (statements and serial loops), `parallel` (outlined parallel
//! loops), `alloc` (stack and heap allocations) and `kernel` (a GPU
//! kernel's entry, its block and thread indices, barriers and shared
//! memory: the same statements and expressions, emitted for NVPTX).

use super::CodegenError;
use compiler::ir::expr::{Expr, Name};
use compiler::ir::stmt::Stmt;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::pipeline::buffer_vars;
use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, FunctionValue, PointerValue};
use inkwell::AddressSpace;

mod alloc;
mod arith;
mod calls;
mod expr;
mod kernel;
mod math;
mod memory;
mod parallel;
mod stmt;
mod types;

/// The return code of a failed heap allocation.
pub const ALLOCATION_FAILED: i32 = -1;

/// Name of the emitted entry function.
pub const ENTRY: &str = "pipeline";

pub use kernel::emit_kernel;

/// The buffers (inputs, then outputs) and params the entry function takes,
/// in argument order.
#[derive(Clone, Debug)]
pub struct Signature {
    /// Each buffer's name, element type and dimension count.
    pub buffers: Vec<(Name, ScalarType, usize)>,
    /// Each param's name and type.
    pub params: Vec<(Name, Type)>,
}

type Value<'ctx> = BasicValueEnum<'ctx>;
type Result<T> = std::result::Result<T, CodegenError>;

/// Shared state of the functions of one module.
struct ModuleState<'ctx, 'm> {
    context: &'ctx Context,
    module: &'m Module<'ctx>,
    asserts: Vec<String>,
    outlined: usize,
}

/// A buffer visible in the function being emitted.
#[derive(Clone)]
struct BufferRef<'ctx> {
    name: Name,
    host: PointerValue<'ctx>,
    elem: ScalarType,
}

/// Emits one function body.
struct FunctionEmitter<'ctx, 'm, 's> {
    state: &'s mut ModuleState<'ctx, 'm>,
    builder: Builder<'ctx>,
    function: FunctionValue<'ctx>,
    entry: BasicBlock<'ctx>,
    vars: Vec<(Name, Value<'ctx>)>,
    buffers: Vec<BufferRef<'ctx>>,
    /// Heap allocations live at the current point, innermost last.
    heap: Vec<PointerValue<'ctx>>,
    /// Whether the expression being emitted is index arithmetic (a buffer
    /// index, or a statement let, which lowering makes for loop variables,
    /// bounds and addresses): its i32 arithmetic is assumed not to
    /// overflow, as the simplifier and Halide assume for index types, and is
    /// marked `nsw`, so that LLVM can widen it to 64-bit addresses.
    in_index: bool,
    /// The scalar i32 statement lets in scope in this function, with their
    /// definitions, so that an address can be computed in i64 from loop
    /// variables up (see [`Self::address`]).
    let_values: Vec<(Name, Expr)>,
    /// Set when the function is a GPU kernel.
    kernel: Option<kernel::KernelState<'ctx>>,
}

/// Emits the entry function of `stmt` into `module`; returns the assertion
/// messages, indexed by return code minus one.
pub fn emit_pipeline<'ctx>(context: &'ctx Context, module: &Module<'ctx>, stmt: &Stmt, sig: &Signature) -> Result<Vec<String>> {
    let mut state = ModuleState { context, module, asserts: vec![], outlined: 0 };
    let ptr = context.ptr_type(AddressSpace::default());
    let fn_type = context.i32_type().fn_type(&[ptr.into(), ptr.into(), ptr.into()], false);
    let function = module.add_function(ENTRY, fn_type, Some(Linkage::External));
    let mut f = FunctionEmitter::new(&mut state, function);
    let hosts = function.get_nth_param(0).expect("3 params").into_pointer_value();
    let fields = function.get_nth_param(1).expect("3 params").into_pointer_value();
    let params = function.get_nth_param(2).expect("3 params").into_pointer_value();
    let i32t = context.i32_type();
    let mut field_index = 0u64;
    for (i, (name, elem, dims)) in sig.buffers.iter().enumerate() {
        let slot = f.gep(ptr.into(), hosts, i as u64)?;
        let host = f.builder.build_load(ptr, slot, name)?.into_pointer_value();
        f.buffers.push(BufferRef { name: name.clone(), host, elem: *elem });
        for d in 0..*dims {
            for field in [buffer_vars::min(name, d), buffer_vars::extent(name, d), buffer_vars::stride(name, d)] {
                let slot = f.gep(i32t.into(), fields, field_index)?;
                let v = f.builder.build_load(i32t, slot, &field)?;
                f.vars.push((field.into(), v));
                field_index += 1;
            }
        }
    }
    for (j, (name, ty)) in sig.params.iter().enumerate() {
        let slot = f.gep(context.i64_type().into(), params, j as u64)?;
        let v = f.builder.build_load(f.llvm_type(*ty), slot, name)?;
        f.vars.push((name.clone(), v));
    }
    f.stmt(stmt)?;
    f.return_code(0)?;
    Ok(state.asserts)
}

impl<'ctx, 'm, 's> FunctionEmitter<'ctx, 'm, 's> {
    fn new(state: &'s mut ModuleState<'ctx, 'm>, function: FunctionValue<'ctx>) -> Self {
        let builder = state.context.create_builder();
        let entry = state.context.append_basic_block(function, "entry");
        builder.position_at_end(entry);
        FunctionEmitter {
            state,
            builder,
            function,
            entry,
            vars: vec![],
            buffers: vec![],
            heap: vec![],
            in_index: false,
            let_values: vec![],
            kernel: None,
        }
    }

    fn ctx(&self) -> &'ctx Context {
        self.state.context
    }

    fn gep(&self, elem: BasicTypeEnum<'ctx>, base: PointerValue<'ctx>, index: u64) -> Result<PointerValue<'ctx>> {
        let i = self.ctx().i64_type().const_int(index, false);
        // SAFETY: in bounds of the argument arrays the caller passes.
        Ok(unsafe { self.builder.build_gep(elem, base, &[i], "")? })
    }

    /// The innermost binding of variable `name`.
    fn var(&self, name: &str) -> Result<Value<'ctx>> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| &**n == name)
            .map(|(_, v)| *v)
            .ok_or_else(|| CodegenError::Unsupported(format!("variable {name} is not defined where it is used")))
    }

    /// The innermost buffer called `name`.
    fn buffer(&self, name: &str) -> Result<BufferRef<'ctx>> {
        self.buffers
            .iter()
            .rev()
            .find(|b| &*b.name == name)
            .cloned()
            .ok_or_else(|| CodegenError::Unsupported(format!("buffer {name} is not allocated where it is used")))
    }
}
