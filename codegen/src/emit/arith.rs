//! Arithmetic with the interpreter's value semantics: wrapping integer
//! operations (`nsw` on index arithmetic), Euclidean division and modulo
//! with zero for a zero divisor, bitwise operators, shifts defined for
//! every count, NaN rules of float min and max, ordered
//! float comparisons, selects, and casts (float-to-int saturating, wide
//! integers to f32 through f64).

use super::{CodegenError, FunctionEmitter, Result, Value};
use compiler::ir::expr::{BinOp, CmpOp};
use compiler::ir::types::{ScalarType, Type};
use inkwell::intrinsics::Intrinsic;
use inkwell::values::{BasicValue, BasicValueEnum};
use inkwell::{FloatPredicate, IntPredicate};

impl<'ctx> FunctionEmitter<'ctx, '_, '_> {
    pub(super) fn select(&mut self, c: Value<'ctx>, x: Value<'ctx>, y: Value<'ctx>) -> Result<Value<'ctx>> {
        Ok(match c {
            BasicValueEnum::IntValue(c) => self.builder.build_select(c, x, y, "")?,
            BasicValueEnum::VectorValue(c) => self.builder.build_select(c, x, y, "")?,
            other => return Err(CodegenError::Unsupported(format!("select condition {other:?}"))),
        })
    }

    pub(super) fn icmp(&mut self, p: IntPredicate, x: Value<'ctx>, y: Value<'ctx>) -> Result<Value<'ctx>> {
        Ok(match (x, y) {
            (BasicValueEnum::IntValue(a), BasicValueEnum::IntValue(b)) => self.builder.build_int_compare(p, a, b, "")?.into(),
            (BasicValueEnum::VectorValue(a), BasicValueEnum::VectorValue(b)) => self.builder.build_int_compare(p, a, b, "")?.into(),
            _ => return Err(CodegenError::Unsupported("integer comparison of mismatched operands".into())),
        })
    }

    pub(super) fn fcmp(&mut self, p: FloatPredicate, x: Value<'ctx>, y: Value<'ctx>) -> Result<Value<'ctx>> {
        Ok(match (x, y) {
            (BasicValueEnum::FloatValue(a), BasicValueEnum::FloatValue(b)) => self.builder.build_float_compare(p, a, b, "")?.into(),
            (BasicValueEnum::VectorValue(a), BasicValueEnum::VectorValue(b)) => self.builder.build_float_compare(p, a, b, "")?.into(),
            _ => return Err(CodegenError::Unsupported("float comparison of mismatched operands".into())),
        })
    }

    pub(super) fn compare(&mut self, op: CmpOp, s: ScalarType, x: Value<'ctx>, y: Value<'ctx>) -> Result<Value<'ctx>> {
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

    pub(super) fn binary(&mut self, op: BinOp, ty: Type, x: Value<'ctx>, y: Value<'ctx>) -> Result<Value<'ctx>> {
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
                BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => {
                    Err(CodegenError::Unsupported(format!("{op:?} of {ty} operands")))
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
            BinOp::BitAnd => Ok(self.builder.build_binop(Op::And, x, y, "")?),
            BinOp::BitOr => Ok(self.builder.build_binop(Op::Or, x, y, "")?),
            BinOp::BitXor => Ok(self.builder.build_binop(Op::Xor, x, y, "")?),
            BinOp::Shl | BinOp::Shr => self.shift(op, ty, x, y),
        }
    }

    /// `x << n` or `x >> n` with the language's semantics for every count
    /// (`compiler::ir::semantics::bit_op`): a negative count (of a signed
    /// type) shifts the other way, and a count of the width or more shifts
    /// every bit out. LLVM's shifts give poison for a count of the width or
    /// more, so the count is clamped to `width - 1` and the shifted-out
    /// result selected where it is that large (an arithmetic shift right
    /// by `width - 1` already is that result).
    fn shift(&mut self, op: BinOp, ty: Type, x: Value<'ctx>, n: Value<'ctx>) -> Result<Value<'ctx>> {
        use inkwell::values::InstructionOpcode as Op;
        let bits = ty.bits() as i128;
        let zero = self.constant(ty, 0, 0.0)?;
        let width = self.constant(ty, bits, 0.0)?;
        let last = self.constant(ty, bits - 1, 0.0)?;
        let signed = ty.is_signed_int();
        // The count's magnitude, as an unsigned value (`-MIN` is `MIN`,
        // whose unsigned value is at least the width).
        let (negative, magnitude) = if signed {
            let negative = self.icmp(IntPredicate::SLT, n, zero)?;
            let negated = self.builder.build_binop(Op::Sub, zero, n, "")?;
            (Some(negative), self.select(negative, negated, n)?)
        } else {
            (None, n)
        };
        let out = self.icmp(IntPredicate::UGE, magnitude, width)?;
        let amount = self.select(out, last, magnitude)?;
        let shl = self.builder.build_binop(Op::Shl, x, amount, "")?;
        let left = self.select(out, zero, shl)?;
        let right = if signed {
            self.builder.build_binop(Op::AShr, x, amount, "")?
        } else {
            let lshr = self.builder.build_binop(Op::LShr, x, amount, "")?;
            self.select(out, zero, lshr)?
        };
        let (forward, back) = if op == BinOp::Shl { (left, right) } else { (right, left) };
        match negative {
            Some(negative) => self.select(negative, back, forward),
            None => Ok(forward),
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

    pub(super) fn cast(&mut self, from: Type, to: Type, v: Value<'ctx>) -> Result<Value<'ctx>> {
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
        if fs.is_float() && ts.bits() <= 16 {
            return self.saturating_narrow_cast(from, to, v);
        }
        if fs.is_float() && to.lanes > 1 {
            return self.saturating_wide_cast(from, to, v);
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

    /// A float vector to 32- or 64-bit integers, saturating (NaN gives 0),
    /// as `fptosi.sat`/`fptoui.sat` define it: LLVM scalarizes those on
    /// x86 (a convert, two compares and two conditional moves per lane),
    /// where a plain conversion of the lanes in range and two selects stay
    /// in vector registers. The type's bounds past its range, `-2^(b-1)`
    /// and `2^(b-1)` (0 and `2^b` unsigned), are powers of two, exact in
    /// every float type (or infinite, past a narrow type's range, which
    /// compares the same): lanes outside them (and NaN lanes) convert 0,
    /// which is in range, and are then replaced by the bound they passed.
    fn saturating_wide_cast(&mut self, from: Type, to: Type, v: Value<'ctx>) -> Result<Value<'ctx>> {
        use inkwell::values::InstructionOpcode as Op;
        let ts = to.scalar;
        let lo = self.constant(from, 0, ts.int_min() as f64)?;
        let past = self.constant(from, 0, (ts.int_max() + 1) as f64)?;
        let zero = self.constant(from, 0, 0.0)?;
        let at_least_lo = self.fcmp(FloatPredicate::OGE, v, lo)?;
        let below_past = self.fcmp(FloatPredicate::OLT, v, past)?;
        let in_range = self.builder.build_and(at_least_lo.into_vector_value(), below_past.into_vector_value(), "")?;
        let safe = self.select(in_range.into(), v, zero)?;
        let op = if ts.is_signed_int() { Op::FPToSI } else { Op::FPToUI };
        let int = self.builder.build_cast(op, safe, self.llvm_type(to), "")?;
        let (min, max) = (self.constant(to, ts.int_min(), 0.0)?, self.constant(to, ts.int_max(), 0.0)?);
        let above = self.fcmp(FloatPredicate::OGE, v, past)?;
        let int = self.select(above, max, int)?;
        let below = self.fcmp(FloatPredicate::OLT, v, lo)?;
        self.select(below, min, int)
    }

    /// A float to an integer of at most 16 bits, saturating (NaN gives 0):
    /// the bounds of the type are exact floats, so the value is clamped in
    /// floating point, converted to i32 (which holds every clamped value)
    /// and truncated. LLVM's `fptosi.sat`/`fptoui.sat` to i8 or i16
    /// vectors is scalarized on x86 (a convert and an insert per lane);
    /// this stays in vector registers. The results are the same.
    fn saturating_narrow_cast(&mut self, from: Type, to: Type, v: Value<'ctx>) -> Result<Value<'ctx>> {
        use inkwell::values::InstructionOpcode as Op;
        let ts = to.scalar;
        let lo = self.constant(from, 0, ts.int_min() as f64)?;
        let hi = self.constant(from, 0, ts.int_max() as f64)?;
        let zero = self.constant(from, 0, 0.0)?;
        let below = self.fcmp(FloatPredicate::OLT, v, lo)?;
        let clamped = self.select(below, lo, v)?;
        let above = self.fcmp(FloatPredicate::OGT, clamped, hi)?;
        let clamped = self.select(above, hi, clamped)?;
        let is_nan = self.fcmp(FloatPredicate::UNO, v, v)?;
        let clamped = self.select(is_nan, zero, clamped)?;
        let wide = self.llvm_type(Type { scalar: ScalarType::I32, lanes: to.lanes });
        let int = self.builder.build_cast(Op::FPToSI, clamped, wide, "")?;
        Ok(self.builder.build_cast(Op::Trunc, int, self.llvm_type(to), "")?)
    }
}
