//! LLVM types and constants of the emitted function: the LLVM type of an
//! IR type (bools are `i1` in registers and a byte in memory), scalar and
//! broadcast constants, and splatting a scalar across vector lanes.

use super::{CodegenError, FunctionEmitter, Result, Value};
use compiler::ir::types::{ScalarType, Type};
use inkwell::context::Context;
use inkwell::types::{BasicTypeEnum, VectorType};
use inkwell::values::{BasicValue, IntValue};

/// The LLVM type of a scalar in registers.
pub(super) fn scalar_type_in(c: &Context, s: ScalarType) -> BasicTypeEnum<'_> {
    match s {
        ScalarType::F32 => c.f32_type().into(),
        ScalarType::F64 => c.f64_type().into(),
        s => int_type_in(c, s.bits()).into(),
    }
}

fn int_type_in(c: &Context, bits: u32) -> inkwell::types::IntType<'_> {
    match bits {
        1 => c.bool_type(),
        8 => c.i8_type(),
        16 => c.i16_type(),
        32 => c.i32_type(),
        _ => c.i64_type(),
    }
}

impl<'ctx> FunctionEmitter<'ctx, '_, '_> {
    pub(super) fn scalar_type(&self, s: ScalarType) -> BasicTypeEnum<'ctx> {
        scalar_type_in(self.ctx(), s)
    }

    pub(super) fn int_type(&self, bits: u32) -> inkwell::types::IntType<'ctx> {
        int_type_in(self.ctx(), bits)
    }

    pub(super) fn llvm_type(&self, t: Type) -> BasicTypeEnum<'ctx> {
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
    pub(super) fn memory_type(&self, s: ScalarType) -> BasicTypeEnum<'ctx> {
        if s.is_bool() {
            self.ctx().i8_type().into()
        } else {
            self.scalar_type(s)
        }
    }

    pub(super) fn i32_const(&self, v: i64) -> IntValue<'ctx> {
        self.ctx().i32_type().const_int(v as u64, true)
    }

    /// A constant of type `t` (broadcast when `t` is a vector).
    pub(super) fn constant(&mut self, t: Type, int: i128, float: f64) -> Result<Value<'ctx>> {
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

    pub(super) fn splat(&mut self, v: Value<'ctx>, lanes: u32) -> Result<Value<'ctx>> {
        let vt = vector_of(v.get_type(), lanes);
        let poison = vt.get_poison();
        let one = self.builder.build_insert_element(poison, v, self.i32_const(0), "")?;
        let zeros: Vec<IntValue> = (0..lanes).map(|_| self.i32_const(0)).collect();
        let mask = VectorType::const_vector(&zeros);
        Ok(self.builder.build_shuffle_vector(one, poison, mask, "splat")?.into())
    }

    /// `e` evaluated and broadcast to `lanes` lanes if it is a scalar.
    pub(super) fn widened(&mut self, v: Value<'ctx>, lanes: u32) -> Result<Value<'ctx>> {
        if lanes > 1 && !v.is_vector_value() {
            self.splat(v, lanes)
        } else {
            Ok(v)
        }
    }
}

pub(super) fn vector_of(t: BasicTypeEnum<'_>, lanes: u32) -> VectorType<'_> {
    match t {
        BasicTypeEnum::IntType(i) => i.vec_type(lanes),
        BasicTypeEnum::FloatType(f) => f.vec_type(lanes),
        BasicTypeEnum::PointerType(p) => p.vec_type(lanes),
        BasicTypeEnum::VectorType(v) => v,
        other => panic!("no vector of {other:?}"),
    }
}
