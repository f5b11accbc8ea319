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

use super::CodegenError;
use compiler::ir::expr::{BinOp, CallTarget, CmpOp, Expr, ExprNode, MathFn, Name};
use compiler::ir::stmt::{ForKind, Stmt, StmtNode};
use compiler::ir::types::{ScalarType, Type};
use compiler::ir::visit::{FreeVars, Visitor};
use compiler::lang::pipeline::buffer_vars;
use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::{Linkage, Module};
use inkwell::types::{BasicType, BasicTypeEnum, VectorType};
use inkwell::values::{BasicValue, BasicValueEnum, FunctionValue, IntValue, PointerValue, ValueKind};
use inkwell::{AddressSpace, FloatPredicate, IntPredicate};
use std::collections::BTreeSet;

mod memory;

/// Attaches `!llvm.loop` metadata to the back edge of a loop saying that
/// LLVM must neither vectorize nor unroll it: the schedule alone decides
/// which loops become vectors or straight code, as in Halide (a naive
/// schedule stays scalar). Loop IDs must refer to themselves, which the
/// inkwell API cannot build, hence the raw LLVM C calls.
fn mark_schedule_owned(ctx: &Context, back_edge: inkwell::values::InstructionValue<'_>) {
    use inkwell::llvm_sys::core::{
        LLVMConstInt, LLVMGetMDKindIDInContext, LLVMInt1TypeInContext, LLVMMDNodeInContext2, LLVMMDStringInContext2, LLVMMetadataAsValue,
        LLVMSetMetadata, LLVMValueAsMetadata,
    };
    use inkwell::llvm_sys::debuginfo::{LLVMMetadataReplaceAllUsesWith, LLVMTemporaryMDNode};
    use inkwell::values::AsValueRef;
    // SAFETY: every reference comes from the live context `ctx` and the
    // branch instruction built in it; the temporary node is consumed by the
    // replacement, which turns the loop ID into a self-referencing node.
    unsafe {
        let c = ctx.raw();
        let hint = |name: &str, value: u64| {
            let mut ops = [
                LLVMMDStringInContext2(c, name.as_ptr().cast(), name.len()),
                LLVMValueAsMetadata(LLVMConstInt(LLVMInt1TypeInContext(c), value, 0)),
            ];
            LLVMMDNodeInContext2(c, ops.as_mut_ptr(), ops.len())
        };
        let no_vectorize = hint("llvm.loop.vectorize.enable", 0);
        let disable_unroll = "llvm.loop.unroll.disable";
        let mut unroll_ops = [LLVMMDStringInContext2(c, disable_unroll.as_ptr().cast(), disable_unroll.len())];
        let no_unroll = LLVMMDNodeInContext2(c, unroll_ops.as_mut_ptr(), unroll_ops.len());
        let placeholder = LLVMTemporaryMDNode(c, std::ptr::null_mut(), 0);
        let mut ops = [placeholder, no_vectorize, no_unroll];
        let loop_id = LLVMMDNodeInContext2(c, ops.as_mut_ptr(), ops.len());
        LLVMMetadataReplaceAllUsesWith(placeholder, loop_id);
        let kind = "llvm.loop";
        let kind_id = LLVMGetMDKindIDInContext(c, kind.as_ptr().cast(), kind.len() as u32);
        LLVMSetMetadata(back_edge.as_value_ref(), kind_id, LLVMMetadataAsValue(c, loop_id));
    }
}

/// The return code of a failed heap allocation.
pub const ALLOCATION_FAILED: i32 = -1;

/// Name of the emitted entry function.
pub const ENTRY: &str = "pipeline";

/// The buffers (inputs, then outputs) and params the entry function takes,
/// in argument order.
#[derive(Clone, Debug)]
pub struct Signature {
    pub buffers: Vec<(Name, ScalarType, usize)>,
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
        }
    }

    fn ctx(&self) -> &'ctx Context {
        self.state.context
    }

    // ---- types and constants ----------------------------------------------

    fn scalar_type(&self, s: ScalarType) -> BasicTypeEnum<'ctx> {
        let c = self.ctx();
        match s {
            ScalarType::F32 => c.f32_type().into(),
            ScalarType::F64 => c.f64_type().into(),
            s => self.int_type(s.bits()).into(),
        }
    }

    fn int_type(&self, bits: u32) -> inkwell::types::IntType<'ctx> {
        let c = self.ctx();
        match bits {
            1 => c.bool_type(),
            8 => c.i8_type(),
            16 => c.i16_type(),
            32 => c.i32_type(),
            _ => c.i64_type(),
        }
    }

    fn llvm_type(&self, t: Type) -> BasicTypeEnum<'ctx> {
        let s = self.scalar_type(t.scalar);
        if t.lanes == 1 {
            return s;
        }
        match s {
            BasicTypeEnum::IntType(i) => i.vec_type(t.lanes).into(),
            BasicTypeEnum::FloatType(f) => f.vec_type(t.lanes).into(),
            other => other,
        }
    }

    /// The in-memory type of an element (bools take a byte).
    fn memory_type(&self, s: ScalarType) -> BasicTypeEnum<'ctx> {
        if s.is_bool() {
            self.ctx().i8_type().into()
        } else {
            self.scalar_type(s)
        }
    }

    fn i32_const(&self, v: i64) -> IntValue<'ctx> {
        self.ctx().i32_type().const_int(v as u64, true)
    }

    /// A constant of type `t` (broadcast when `t` is a vector).
    fn constant(&mut self, t: Type, int: i128, float: f64) -> Result<Value<'ctx>> {
        let s = match self.scalar_type(t.scalar) {
            BasicTypeEnum::IntType(i) => i.const_int(int as u64, t.scalar.is_signed_int()).as_basic_value_enum(),
            BasicTypeEnum::FloatType(f) => f.const_float(float).as_basic_value_enum(),
            other => return Err(CodegenError::Unsupported(format!("constant of type {other:?}"))),
        };
        if t.lanes == 1 {
            Ok(s)
        } else {
            self.splat(s, t.lanes)
        }
    }

    fn splat(&mut self, v: Value<'ctx>, lanes: u32) -> Result<Value<'ctx>> {
        let vt = vector_of(v.get_type(), lanes);
        let poison = vt.get_poison();
        let one = self.builder.build_insert_element(poison, v, self.i32_const(0), "")?;
        let zeros: Vec<IntValue> = (0..lanes).map(|_| self.i32_const(0)).collect();
        let mask = VectorType::const_vector(&zeros);
        Ok(self.builder.build_shuffle_vector(one, poison, mask, "splat")?.into())
    }

    /// `e` evaluated and broadcast to `lanes` lanes if it is a scalar.
    fn widened(&mut self, v: Value<'ctx>, lanes: u32) -> Result<Value<'ctx>> {
        if lanes > 1 && !v.is_vector_value() {
            self.splat(v, lanes)
        } else {
            Ok(v)
        }
    }

    fn gep(&self, elem: BasicTypeEnum<'ctx>, base: PointerValue<'ctx>, index: u64) -> Result<PointerValue<'ctx>> {
        let i = self.ctx().i64_type().const_int(index, false);
        // SAFETY: in bounds of the argument arrays the caller passes.
        Ok(unsafe { self.builder.build_gep(elem, base, &[i], "")? })
    }

    // ---- scopes -------------------------------------------------------------

    fn var(&self, name: &str) -> Result<Value<'ctx>> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| &**n == name)
            .map(|(_, v)| *v)
            .ok_or_else(|| CodegenError::Unsupported(format!("variable {name} is not defined where it is used")))
    }

    fn buffer(&self, name: &str) -> Result<BufferRef<'ctx>> {
        self.buffers
            .iter()
            .rev()
            .find(|b| &*b.name == name)
            .cloned()
            .ok_or_else(|| CodegenError::Unsupported(format!("buffer {name} is not allocated where it is used")))
    }

    // ---- expressions ----------------------------------------------------------

    fn expr(&mut self, e: &Expr) -> Result<Value<'ctx>> {
        let ty = e.ty();
        match e.node() {
            ExprNode::IntImm { value, .. } => self.constant(ty, *value as i128, 0.0),
            ExprNode::UIntImm { value, .. } => self.constant(ty, *value as i128, 0.0),
            ExprNode::FloatImm { value, .. } => self.constant(ty, 0, *value),
            ExprNode::Var { name, .. } | ExprNode::Param { name, .. } => self.var(name),
            ExprNode::RVar { .. } => Err(CodegenError::Unsupported("a reduction variable survived lowering".into())),
            ExprNode::Cast { ty, value } => {
                let v = self.expr(value)?;
                self.cast(value.ty(), *ty, v)
            }
            ExprNode::Binary { op, a, b } => {
                let lanes = ty.lanes;
                let (x, y) = (self.expr(a)?, self.expr(b)?);
                let (x, y) = (self.widened(x, lanes)?, self.widened(y, lanes)?);
                self.binary(*op, ty, x, y)
            }
            ExprNode::Cmp { op, a, b } => {
                let lanes = ty.lanes;
                let (x, y) = (self.expr(a)?, self.expr(b)?);
                let (x, y) = (self.widened(x, lanes)?, self.widened(y, lanes)?);
                self.compare(*op, a.ty().scalar, x, y)
            }
            ExprNode::And { a, b } | ExprNode::Or { a, b } => {
                let lanes = ty.lanes;
                let (x, y) = (self.expr(a)?, self.expr(b)?);
                let (x, y) = (self.widened(x, lanes)?, self.widened(y, lanes)?);
                let op = if matches!(e.node(), ExprNode::And { .. }) {
                    inkwell::values::InstructionOpcode::And
                } else {
                    inkwell::values::InstructionOpcode::Or
                };
                Ok(self.builder.build_binop(op, x, y, "")?)
            }
            ExprNode::Not { a } => {
                let x = self.expr(a)?;
                let ones = self.constant(a.ty(), 1, 0.0)?;
                Ok(self.builder.build_binop(inkwell::values::InstructionOpcode::Xor, x, ones, "")?)
            }
            ExprNode::Select { cond, t, f } => {
                let c = self.expr(cond)?;
                let (x, y) = (self.expr(t)?, self.expr(f)?);
                let lanes = ty.lanes;
                let (x, y) = (self.widened(x, lanes)?, self.widened(y, lanes)?);
                self.select(c, x, y)
            }
            ExprNode::Let { name, value, body } => {
                let v = self.expr(value)?;
                self.vars.push((name.clone(), v));
                let r = self.expr(body);
                self.vars.pop();
                r
            }
            ExprNode::Call { target: CallTarget::Math(f), args, ty } => self.math(*f, args, *ty),
            ExprNode::Call { target, .. } => Err(CodegenError::Unsupported(format!(
                "a call of {} survived lowering",
                match target {
                    CallTarget::Func(r) => r.name.to_string(),
                    CallTarget::Input(r) => r.name.to_string(),
                    CallTarget::Math(f) => f.name().to_string(),
                }
            ))),
            ExprNode::Load { buffer, index, ty } => self.load(buffer, index, *ty),
            ExprNode::Ramp { base, stride, lanes } => {
                let b = self.expr(base)?;
                let s = self.expr(stride)?;
                let (b, s) = (self.splat(b, *lanes)?, self.splat(s, *lanes)?);
                let bits = base.ty().scalar.bits();
                let steps: Vec<IntValue> = (0..*lanes).map(|k| self.int_type(bits).const_int(k as u64, false)).collect();
                let steps: Value = VectorType::const_vector(&steps).into();
                let offsets = self.builder.build_binop(inkwell::values::InstructionOpcode::Mul, s, steps, "")?;
                Ok(self.builder.build_binop(inkwell::values::InstructionOpcode::Add, b, offsets, "ramp")?)
            }
            ExprNode::Broadcast { value, lanes } => {
                let v = self.expr(value)?;
                self.splat(v, *lanes)
            }
        }
    }

    fn select(&mut self, c: Value<'ctx>, x: Value<'ctx>, y: Value<'ctx>) -> Result<Value<'ctx>> {
        Ok(match c {
            BasicValueEnum::IntValue(c) => self.builder.build_select(c, x, y, "")?,
            BasicValueEnum::VectorValue(c) => self.builder.build_select(c, x, y, "")?,
            other => return Err(CodegenError::Unsupported(format!("select condition {other:?}"))),
        })
    }

    fn icmp(&mut self, p: IntPredicate, x: Value<'ctx>, y: Value<'ctx>) -> Result<Value<'ctx>> {
        Ok(match (x, y) {
            (BasicValueEnum::IntValue(a), BasicValueEnum::IntValue(b)) => self.builder.build_int_compare(p, a, b, "")?.into(),
            (BasicValueEnum::VectorValue(a), BasicValueEnum::VectorValue(b)) => self.builder.build_int_compare(p, a, b, "")?.into(),
            _ => return Err(CodegenError::Unsupported("integer comparison of mismatched operands".into())),
        })
    }

    fn fcmp(&mut self, p: FloatPredicate, x: Value<'ctx>, y: Value<'ctx>) -> Result<Value<'ctx>> {
        Ok(match (x, y) {
            (BasicValueEnum::FloatValue(a), BasicValueEnum::FloatValue(b)) => self.builder.build_float_compare(p, a, b, "")?.into(),
            (BasicValueEnum::VectorValue(a), BasicValueEnum::VectorValue(b)) => self.builder.build_float_compare(p, a, b, "")?.into(),
            _ => return Err(CodegenError::Unsupported("float comparison of mismatched operands".into())),
        })
    }

    fn compare(&mut self, op: CmpOp, s: ScalarType, x: Value<'ctx>, y: Value<'ctx>) -> Result<Value<'ctx>> {
        if s.is_float() {
            // Rust's comparisons: ordered, except != which is true for NaN.
            let p = match op {
                CmpOp::Eq => FloatPredicate::OEQ,
                CmpOp::Ne => FloatPredicate::UNE,
                CmpOp::Lt => FloatPredicate::OLT,
                CmpOp::Le => FloatPredicate::OLE,
                CmpOp::Gt => FloatPredicate::OGT,
                CmpOp::Ge => FloatPredicate::OGE,
            };
            return self.fcmp(p, x, y);
        }
        let signed = s.is_signed_int();
        let p = match op {
            CmpOp::Eq => IntPredicate::EQ,
            CmpOp::Ne => IntPredicate::NE,
            CmpOp::Lt if signed => IntPredicate::SLT,
            CmpOp::Le if signed => IntPredicate::SLE,
            CmpOp::Gt if signed => IntPredicate::SGT,
            CmpOp::Ge if signed => IntPredicate::SGE,
            CmpOp::Lt => IntPredicate::ULT,
            CmpOp::Le => IntPredicate::ULE,
            CmpOp::Gt => IntPredicate::UGT,
            CmpOp::Ge => IntPredicate::UGE,
        };
        self.icmp(p, x, y)
    }

    fn binary(&mut self, op: BinOp, ty: Type, x: Value<'ctx>, y: Value<'ctx>) -> Result<Value<'ctx>> {
        use inkwell::values::InstructionOpcode as Op;
        let s = ty.scalar;
        if s.is_float() {
            return match op {
                BinOp::Add => Ok(self.builder.build_binop(Op::FAdd, x, y, "")?),
                BinOp::Sub => Ok(self.builder.build_binop(Op::FSub, x, y, "")?),
                BinOp::Mul => Ok(self.builder.build_binop(Op::FMul, x, y, "")?),
                BinOp::Div => Ok(self.builder.build_binop(Op::FDiv, x, y, "")?),
                BinOp::Mod => {
                    // x - y * floor(x / y), in f64 and rounded once, as the interpreter does.
                    let wide = Type { scalar: ScalarType::F64, lanes: ty.lanes };
                    let (a, b) = (self.cast(ty, wide, x)?, self.cast(ty, wide, y)?);
                    let q = self.builder.build_binop(Op::FDiv, a, b, "")?;
                    let q = self.intrinsic("llvm.floor", &[q])?;
                    let p = self.builder.build_binop(Op::FMul, b, q, "")?;
                    let r = self.builder.build_binop(Op::FSub, a, p, "")?;
                    self.cast(wide, ty, r)
                }
                BinOp::Min | BinOp::Max => {
                    // x if x < y (x > y for max) or y is NaN, else y.
                    let p = if op == BinOp::Min { FloatPredicate::OLT } else { FloatPredicate::OGT };
                    let better = self.fcmp(p, x, y)?;
                    let nan = self.fcmp(FloatPredicate::UNO, y, y)?;
                    let pick = self.builder.build_binop(Op::Or, better, nan, "")?;
                    self.select(pick, x, y)
                }
            };
        }
        let signed = s.is_signed_int();
        let index_math = |e: &Self, v: Value<'ctx>| -> Value<'ctx> {
            if e.in_index && s == ScalarType::I32 {
                if let Some(i) = v.as_instruction_value() {
                    let _ = i.set_no_signed_wrap_flag(true);
                }
            }
            v
        };
        match op {
            BinOp::Add => Ok(index_math(self, self.builder.build_binop(Op::Add, x, y, "")?)),
            BinOp::Sub => Ok(index_math(self, self.builder.build_binop(Op::Sub, x, y, "")?)),
            BinOp::Mul => Ok(index_math(self, self.builder.build_binop(Op::Mul, x, y, "")?)),
            BinOp::Min | BinOp::Max => {
                let p = match (op, signed) {
                    (BinOp::Min, true) => IntPredicate::SLT,
                    (BinOp::Min, false) => IntPredicate::ULT,
                    (_, true) => IntPredicate::SGT,
                    (_, false) => IntPredicate::UGT,
                };
                let c = self.icmp(p, x, y)?;
                self.select(c, x, y)
            }
            BinOp::Div | BinOp::Mod => self.euclidean(op, ty, x, y),
        }
    }

    /// Euclidean division or modulo; a zero divisor gives zero, and
    /// `MIN / -1` wraps, without the undefined behaviour of LLVM's `sdiv`.
    fn euclidean(&mut self, op: BinOp, ty: Type, x: Value<'ctx>, y: Value<'ctx>) -> Result<Value<'ctx>> {
        use inkwell::values::InstructionOpcode as Op;
        let zero = self.constant(ty, 0, 0.0)?;
        let one = self.constant(ty, 1, 0.0)?;
        let y_is_zero = self.icmp(IntPredicate::EQ, y, zero)?;
        if !ty.scalar.is_signed_int() {
            let safe = self.select(y_is_zero, one, y)?;
            let r = self.builder.build_binop(if op == BinOp::Div { Op::UDiv } else { Op::URem }, x, safe, "")?;
            return self.select(y_is_zero, zero, r);
        }
        let minus_one = self.constant(ty, -1, 0.0)?;
        let y_is_minus_one = self.icmp(IntPredicate::EQ, y, minus_one)?;
        let special = self.builder.build_binop(Op::Or, y_is_zero, y_is_minus_one, "")?;
        let safe = self.select(special, one, y)?;
        let q = self.builder.build_binop(Op::SDiv, x, safe, "")?;
        let r = self.builder.build_binop(Op::SRem, x, safe, "")?;
        // A negative remainder moves the quotient one step away from the
        // divisor's sign and the remainder up by |y|.
        let r_negative = self.icmp(IntPredicate::SLT, r, zero)?;
        let y_positive = self.icmp(IntPredicate::SGT, safe, zero)?;
        if op == BinOp::Div {
            let step = self.select(y_positive, minus_one, one)?;
            let adjusted = self.builder.build_binop(Op::Add, q, step, "")?;
            let q = self.select(r_negative, adjusted, q)?;
            let negated = self.builder.build_binop(Op::Sub, zero, x, "")?;
            let q = self.select(y_is_minus_one, negated, q)?;
            self.select(y_is_zero, zero, q)
        } else {
            let neg_y = self.builder.build_binop(Op::Sub, zero, safe, "")?;
            let abs_y = self.select(y_positive, safe, neg_y)?;
            let up = self.builder.build_binop(Op::Add, r, abs_y, "")?;
            let r = self.select(r_negative, up, r)?;
            self.select(special, zero, r)
        }
    }

    fn cast(&mut self, from: Type, to: Type, v: Value<'ctx>) -> Result<Value<'ctx>> {
        use inkwell::values::InstructionOpcode as Op;
        let (fs, ts) = (from.scalar, to.scalar);
        let target = self.llvm_type(to);
        if fs == ts {
            return Ok(v);
        }
        if ts.is_bool() {
            let zero = self.constant(from, 0, 0.0)?;
            return if fs.is_float() { self.fcmp(FloatPredicate::UNE, v, zero) } else { self.icmp(IntPredicate::NE, v, zero) };
        }
        if fs.is_float() && ts.is_float() {
            let op = if ts.bits() > fs.bits() { Op::FPExt } else { Op::FPTrunc };
            return Ok(self.builder.build_cast(op, v, target, "")?);
        }
        if ts.is_float() {
            // The interpreter converts through f64: do the same for integers
            // too wide for f64 to hold exactly before rounding to f32.
            let op = if fs.is_signed_int() { Op::SIToFP } else { Op::UIToFP };
            if ts == ScalarType::F32 && fs.bits() > 32 {
                let wide = self.llvm_type(Type { scalar: ScalarType::F64, lanes: to.lanes });
                let d = self.builder.build_cast(op, v, wide, "")?;
                return Ok(self.builder.build_cast(Op::FPTrunc, d, target, "")?);
            }
            return Ok(self.builder.build_cast(op, v, target, "")?);
        }
        if fs.is_float() {
            let name = if ts.is_signed_int() { "llvm.fptosi.sat" } else { "llvm.fptoui.sat" };
            let intrinsic = Intrinsic::find(name).ok_or_else(|| CodegenError::Llvm(format!("no intrinsic {name}")))?;
            let decl = intrinsic
                .get_declaration(self.state.module, &[target, v.get_type()])
                .ok_or_else(|| CodegenError::Llvm(format!("no declaration of {name}")))?;
            return self.call_value(decl, &[v]);
        }
        // Integer to integer: bools and unsigned sources zero-extend.
        let op = match ts.bits().cmp(&fs.bits()) {
            std::cmp::Ordering::Less => Op::Trunc,
            std::cmp::Ordering::Equal => return Ok(self.builder.build_cast(Op::BitCast, v, target, "")?),
            std::cmp::Ordering::Greater if fs.is_signed_int() => Op::SExt,
            std::cmp::Ordering::Greater => Op::ZExt,
        };
        Ok(self.builder.build_cast(op, v, target, "")?)
    }

    fn call_value(&mut self, f: FunctionValue<'ctx>, args: &[Value<'ctx>]) -> Result<Value<'ctx>> {
        let args: Vec<_> = args.iter().map(|a| (*a).into()).collect();
        match self.builder.build_call(f, &args, "")?.try_as_basic_value() {
            ValueKind::Basic(v) => Ok(v),
            ValueKind::Instruction(_) => Err(CodegenError::Llvm(format!("{} returns nothing", f.get_name().to_string_lossy()))),
        }
    }

    /// Calls an overloaded LLVM intrinsic on arguments of one type.
    fn intrinsic(&mut self, name: &str, args: &[Value<'ctx>]) -> Result<Value<'ctx>> {
        let intrinsic = Intrinsic::find(name).ok_or_else(|| CodegenError::Llvm(format!("no intrinsic {name}")))?;
        let decl = intrinsic
            .get_declaration(self.state.module, &[args[0].get_type()])
            .ok_or_else(|| CodegenError::Llvm(format!("no declaration of {name}")))?;
        self.call_value(decl, args)
    }

    /// Calls a C math function (`tanhf`, `tanh`) lane by lane.
    fn libm(&mut self, name: &str, ty: Type, x: Value<'ctx>) -> Result<Value<'ctx>> {
        let scalar = self.scalar_type(ty.scalar);
        let f = self
            .state
            .module
            .get_function(name)
            .unwrap_or_else(|| self.state.module.add_function(name, scalar.fn_type(&[scalar.into()], false), Some(Linkage::External)));
        if ty.lanes == 1 {
            return self.call_value(f, &[x]);
        }
        let BasicValueEnum::VectorValue(vec) = x else {
            return Err(CodegenError::Unsupported("vector math on a scalar".into()));
        };
        let mut out = vec.get_type().get_poison();
        for k in 0..ty.lanes {
            let lane = self.builder.build_extract_element(vec, self.i32_const(k as i64), "")?;
            let r = self.call_value(f, &[lane])?;
            out = self.builder.build_insert_element(out, r, self.i32_const(k as i64), "")?;
        }
        Ok(out.into())
    }

    fn math(&mut self, f: MathFn, args: &[Expr], ty: Type) -> Result<Value<'ctx>> {
        if args.len() != f.arity() {
            return Err(CodegenError::Unsupported(format!("{} takes {} arguments, got {}", f.name(), f.arity(), args.len())));
        }
        let lanes = ty.lanes;
        let mut values = vec![];
        for a in args {
            let v = self.expr(a)?;
            values.push(self.widened(v, lanes)?);
        }
        let x = values[0];
        if !ty.scalar.is_float() {
            return match f {
                MathFn::PromiseClamped => Ok(x),
                MathFn::Abs if ty.scalar.is_signed_int() => {
                    let no_poison = self.ctx().bool_type().const_int(0, false).into();
                    let intrinsic = Intrinsic::find("llvm.abs").ok_or_else(|| CodegenError::Llvm("no llvm.abs".into()))?;
                    let decl = intrinsic
                        .get_declaration(self.state.module, &[x.get_type()])
                        .ok_or_else(|| CodegenError::Llvm("no declaration of llvm.abs".into()))?;
                    self.call_value(decl, &[x, no_poison])
                }
                MathFn::Abs => Ok(x),
                _ => Err(CodegenError::Unsupported(format!("{} of an integer", f.name()))),
            };
        }
        match f {
            MathFn::Abs => self.intrinsic("llvm.fabs", &[x]),
            MathFn::Sqrt => self.intrinsic("llvm.sqrt", &[x]),
            MathFn::Exp => self.intrinsic("llvm.exp", &[x]),
            MathFn::Log => self.intrinsic("llvm.log", &[x]),
            MathFn::Pow => self.intrinsic("llvm.pow", &[x, values[1]]),
            MathFn::Sin => self.intrinsic("llvm.sin", &[x]),
            MathFn::Cos => self.intrinsic("llvm.cos", &[x]),
            MathFn::Floor => self.intrinsic("llvm.floor", &[x]),
            MathFn::Ceil => self.intrinsic("llvm.ceil", &[x]),
            MathFn::Round => self.intrinsic("llvm.roundeven", &[x]),
            MathFn::Tanh => self.libm(if ty.scalar == ScalarType::F32 { "tanhf" } else { "tanh" }, ty, x),
            MathFn::PromiseClamped => Ok(x),
        }
    }

    // ---- statements -------------------------------------------------------------

    /// Frees the live heap allocations and returns `code`.
    fn return_code(&mut self, code: i32) -> Result<()> {
        let v = self.ctx().i32_type().const_int(code as u64, true);
        self.return_value(v)
    }

    fn return_value(&mut self, v: IntValue<'ctx>) -> Result<()> {
        for p in self.heap.clone().into_iter().rev() {
            self.free(p)?;
        }
        self.builder.build_return(Some(&v))?;
        Ok(())
    }

    fn runtime_function(&self, name: &str, ret: Option<BasicTypeEnum<'ctx>>, params: &[BasicTypeEnum<'ctx>]) -> FunctionValue<'ctx> {
        if let Some(f) = self.state.module.get_function(name) {
            return f;
        }
        let params: Vec<_> = params.iter().map(|p| (*p).into()).collect();
        let ty = match ret {
            Some(r) => r.fn_type(&params, false),
            None => self.ctx().void_type().fn_type(&params, false),
        };
        self.state.module.add_function(name, ty, Some(Linkage::External))
    }

    fn free(&mut self, p: PointerValue<'ctx>) -> Result<()> {
        let ptr = self.ctx().ptr_type(AddressSpace::default());
        let f = self.runtime_function("hl_free", None, &[ptr.into()]);
        self.builder.build_call(f, &[p.into()], "")?;
        Ok(())
    }

    /// Branches to a new block that returns `code` when `failed` holds.
    fn fail_if(&mut self, failed: IntValue<'ctx>, code: IntValue<'ctx>) -> Result<()> {
        let ctx = self.ctx();
        let bail = ctx.append_basic_block(self.function, "fail");
        let next = ctx.append_basic_block(self.function, "ok");
        self.builder.build_conditional_branch(failed, bail, next)?;
        self.builder.position_at_end(bail);
        self.return_value(code)?;
        self.builder.position_at_end(next);
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<()> {
        match s.node() {
            StmtNode::NoOp => Ok(()),
            StmtNode::Block { stmts } => stmts.iter().try_for_each(|x| self.stmt(x)),
            StmtNode::LetStmt { name, value, body } => {
                // Statement lets come from lowering: loop, bounds and
                // address arithmetic, under the same no-overflow rule.
                let v = self.index(value)?;
                self.vars.push((name.clone(), v));
                self.let_values.push((name.clone(), value.clone()));
                let r = self.stmt(body);
                self.let_values.pop();
                self.vars.pop();
                r
            }
            StmtNode::ProducerConsumer { produce, consume, .. } => {
                self.stmt(produce)?;
                self.stmt(consume)
            }
            StmtNode::Assert { cond, message } => {
                // A vector condition (an access check in a vectorized loop)
                // must hold in every lane.
                let c = match self.expr(cond)? {
                    BasicValueEnum::VectorValue(lanes) => self.intrinsic("llvm.vector.reduce.and", &[lanes.into()])?.into_int_value(),
                    c => c.into_int_value(),
                };
                let failed = self.builder.build_not(c, "")?;
                self.state.asserts.push(message.clone());
                let code = self.ctx().i32_type().const_int(self.state.asserts.len() as u64, false);
                self.fail_if(failed, code)
            }
            StmtNode::IfThenElse { cond, then_case, else_case } => {
                let c = self.expr(cond)?.into_int_value();
                let ctx = self.ctx();
                let then_bb = ctx.append_basic_block(self.function, "then");
                let else_bb = ctx.append_basic_block(self.function, "else");
                let after = ctx.append_basic_block(self.function, "endif");
                self.builder.build_conditional_branch(c, then_bb, else_bb)?;
                self.builder.position_at_end(then_bb);
                self.stmt(then_case)?;
                self.builder.build_unconditional_branch(after)?;
                self.builder.position_at_end(else_bb);
                if let Some(e) = else_case {
                    self.stmt(e)?;
                }
                self.builder.build_unconditional_branch(after)?;
                self.builder.position_at_end(after);
                Ok(())
            }
            StmtNode::Store { buffer, index, value } => self.store(buffer, index, value),
            StmtNode::Allocate { buffer, ty, size, body } => self.allocate(buffer, ty.scalar, size, body),
            StmtNode::For { name, min, extent, kind, body } => {
                let (lo, n) = (self.expr(min)?.into_int_value(), self.expr(extent)?.into_int_value());
                if matches!(kind, ForKind::Parallel | ForKind::GpuBlock) {
                    self.parallel_loop(name, lo, n, body)
                } else {
                    self.serial_loop(name, lo, n, body)
                }
            }
            StmtNode::Realize { func, .. } | StmtNode::Provide { func, .. } => {
                Err(CodegenError::Unsupported(format!("{func} was not flattened before code generation")))
            }
        }
    }

    fn serial_loop(&mut self, name: &Name, lo: IntValue<'ctx>, n: IntValue<'ctx>, body: &Stmt) -> Result<()> {
        let ctx = self.ctx();
        let i32t = ctx.i32_type();
        let pre = self.builder.get_insert_block().expect("positioned");
        let header = ctx.append_basic_block(self.function, &format!("{name}.header"));
        let body_bb = ctx.append_basic_block(self.function, &format!("{name}.body"));
        let exit = ctx.append_basic_block(self.function, &format!("{name}.exit"));
        // Loop bounds are index arithmetic, and `i + 1` cannot overflow
        // while `i < end`: both `nsw`, so LLVM can widen the counter.
        let end = self.builder.build_int_nsw_add(lo, n, "")?;
        self.builder.build_unconditional_branch(header)?;
        self.builder.position_at_end(header);
        let phi = self.builder.build_phi(i32t, name)?;
        phi.add_incoming(&[(&lo, pre)]);
        let i = phi.as_basic_value().into_int_value();
        let more = self.builder.build_int_compare(IntPredicate::SLT, i, end, "")?;
        self.builder.build_conditional_branch(more, body_bb, exit)?;
        self.builder.position_at_end(body_bb);
        self.vars.push((name.clone(), i.into()));
        self.stmt(body)?;
        self.vars.pop();
        let next = self.builder.build_int_nsw_add(i, i32t.const_int(1, false), "")?;
        let latch = self.builder.get_insert_block().expect("positioned");
        phi.add_incoming(&[(&next, latch)]);
        let back_edge = self.builder.build_unconditional_branch(header)?;
        mark_schedule_owned(ctx, back_edge);
        self.builder.position_at_end(exit);
        Ok(())
    }

    /// Outlines `body` into `i32 body(ptr closure, i32 i)` and calls the
    /// runtime's `hl_parallel_for` on it.
    fn parallel_loop(&mut self, name: &Name, lo: IntValue<'ctx>, n: IntValue<'ctx>, body: &Stmt) -> Result<()> {
        let ctx = self.ctx();
        let ptr = ctx.ptr_type(AddressSpace::default());
        let i32t = ctx.i32_type();
        let i64t = ctx.i64_type();
        // What the body uses from here: scalars and buffers.
        let mut free = FreeVars::default();
        free.visit_stmt(body);
        let scalars: Vec<(Name, Value<'ctx>)> = self.vars.iter().rev().filter(|(n, _)| free.names.contains(n) && n != name).fold(
            Vec::<(Name, Value<'ctx>)>::new(),
            |mut acc, (n, v)| {
                if !acc.iter().any(|(m, _)| m == n) {
                    acc.push((n.clone(), *v));
                }
                acc
            },
        );
        if let Some((n, _)) = scalars.iter().find(|(_, v)| v.is_vector_value()) {
            return Err(CodegenError::Unsupported(format!("parallel loop {name} captures the vector {n}")));
        }
        let used_buffers = buffers_used(body);
        let buffers: Vec<BufferRef<'ctx>> = used_buffers.iter().filter_map(|b| self.buffer(b).ok()).collect();
        let slots = (scalars.len() + buffers.len()).max(1) as u32;
        let closure = self.entry_alloca(i64t.array_type(slots).into(), "closure")?;
        for (k, (_, v)) in scalars.iter().enumerate() {
            let p = self.gep(i64t.into(), closure, k as u64)?;
            self.builder.build_store(p, *v)?;
        }
        for (k, b) in buffers.iter().enumerate() {
            let p = self.gep(i64t.into(), closure, (scalars.len() + k) as u64)?;
            self.builder.build_store(p, b.host)?;
        }
        // The outlined function.
        self.state.outlined += 1;
        let fname = format!("{ENTRY}.par.{}.{}", self.state.outlined, sanitize(name));
        let fty = i32t.fn_type(&[ptr.into(), i32t.into()], false);
        let outlined = self.state.module.add_function(&fname, fty, Some(Linkage::Internal));
        let saved_block = self.builder.get_insert_block().expect("positioned");
        {
            let mut inner = FunctionEmitter::new(self.state, outlined);
            let cl = outlined.get_nth_param(0).expect("2 params").into_pointer_value();
            for (k, (n, v)) in scalars.iter().enumerate() {
                let p = inner.gep(i64t.into(), cl, k as u64)?;
                let x = inner.builder.build_load(v.get_type(), p, n)?;
                inner.vars.push((n.clone(), x));
            }
            for (k, b) in buffers.iter().enumerate() {
                let p = inner.gep(i64t.into(), cl, (scalars.len() + k) as u64)?;
                let host = inner.builder.build_load(ptr, p, &b.name)?.into_pointer_value();
                inner.buffers.push(BufferRef { name: b.name.clone(), host, elem: b.elem });
            }
            let i = outlined.get_nth_param(1).expect("2 params");
            inner.vars.push((name.clone(), i));
            inner.stmt(body)?;
            inner.return_code(0)?;
        }
        self.builder.position_at_end(saved_block);
        let runner = self.runtime_function("hl_parallel_for", Some(i32t.into()), &[ptr.into(), ptr.into(), i32t.into(), i32t.into()]);
        let fptr = outlined.as_global_value().as_pointer_value();
        let code = self.call_value(runner, &[fptr.into(), closure.into(), lo.into(), n.into()])?.into_int_value();
        let failed = self.builder.build_int_compare(IntPredicate::NE, code, i32t.const_zero(), "")?;
        self.fail_if(failed, code)
    }

    fn entry_alloca(&mut self, ty: BasicTypeEnum<'ctx>, name: &str) -> Result<PointerValue<'ctx>> {
        let here = self.builder.get_insert_block().expect("positioned");
        match self.entry.get_first_instruction() {
            Some(i) => self.builder.position_before(&i),
            None => self.builder.position_at_end(self.entry),
        }
        let p = self.builder.build_alloca(ty, name)?;
        if let Some(i) = p.as_instruction_value() {
            let _ = i.set_alignment(64);
        }
        self.builder.position_at_end(here);
        Ok(p)
    }

    fn allocate(&mut self, buffer: &Name, elem: ScalarType, size: &Expr, body: &Stmt) -> Result<()> {
        let ctx = self.ctx();
        let mem = self.memory_type(elem);
        let bytes = elem.bytes() as i64;
        let constant = compiler::simplify::simplify(size).as_int();
        // Under the guard-page debug allocator every allocation is on the
        // heap, so that every one is guarded.
        let on_stack = crate::guard_pages::mode().is_none() && constant.is_some_and(|n| n >= 0 && n * bytes <= MAX_STACK_BYTES);
        let host = if let (true, Some(n)) = (on_stack, constant) {
            self.entry_alloca(mem.array_type(n.max(1) as u32).into(), buffer)?
        } else {
            let n = self.expr(size)?;
            let i64t = ctx.i64_type();
            let n = self.builder.build_cast(inkwell::values::InstructionOpcode::SExt, n, i64t, "")?.into_int_value();
            let total = self.builder.build_int_mul(n, i64t.const_int(bytes as u64, false), "")?;
            let ptr = ctx.ptr_type(AddressSpace::default());
            let malloc = self.runtime_function("hl_malloc", Some(ptr.into()), &[i64t.into()]);
            let p = self.call_value(malloc, &[total.into()])?.into_pointer_value();
            let null = self.builder.build_is_null(p, "")?;
            let code = ctx.i32_type().const_int(ALLOCATION_FAILED as u64, true);
            self.fail_if(null, code)?;
            self.heap.push(p);
            p
        };
        self.buffers.push(BufferRef { name: buffer.clone(), host, elem });
        self.stmt(body)?;
        self.buffers.pop();
        if !on_stack {
            let p = self.heap.pop().expect("pushed above");
            self.free(p)?;
        }
        Ok(())
    }
}

/// Realizations up to this size with a constant size live on the stack.
const MAX_STACK_BYTES: i64 = 16 * 1024;

fn vector_of(t: BasicTypeEnum<'_>, lanes: u32) -> VectorType<'_> {
    match t {
        BasicTypeEnum::IntType(i) => i.vec_type(lanes),
        BasicTypeEnum::FloatType(f) => f.vec_type(lanes),
        BasicTypeEnum::PointerType(p) => p.vec_type(lanes),
        BasicTypeEnum::VectorType(v) => v,
        other => panic!("no vector of {other:?}"),
    }
}

fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

/// Names of the buffers a statement loads from, stores to (but does not allocate).
fn buffers_used(s: &Stmt) -> BTreeSet<Name> {
    struct Used {
        names: BTreeSet<Name>,
        allocated: Vec<Name>,
    }
    impl Visitor for Used {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprNode::Load { buffer, .. } = e.node() {
                if !self.allocated.contains(buffer) {
                    self.names.insert(buffer.clone());
                }
            }
            compiler::ir::visit::walk_expr(self, e);
        }
        fn visit_stmt(&mut self, s: &Stmt) {
            match s.node() {
                StmtNode::Store { buffer, .. } if !self.allocated.contains(buffer) => {
                    self.names.insert(buffer.clone());
                    compiler::ir::visit::walk_stmt(self, s);
                }
                StmtNode::Allocate { buffer, .. } => {
                    self.allocated.push(buffer.clone());
                    compiler::ir::visit::walk_stmt(self, s);
                    self.allocated.pop();
                }
                _ => compiler::ir::visit::walk_stmt(self, s),
            }
        }
    }
    let mut u = Used { names: BTreeSet::new(), allocated: vec![] };
    u.visit_stmt(s);
    u.names
}
