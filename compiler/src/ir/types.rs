//! Scalar and vector types of the language and of the lowered IR.
//!
//! A [`Type`] is a scalar kind plus a lane count; user-facing expressions are
//! always scalar (one lane), vector types appear only after vectorization.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The scalar element kinds of the language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ScalarType {
    /// A truth value, 0 or 1 (one byte in memory).
    Bool,
    /// Unsigned 8-bit integer.
    U8,
    /// Unsigned 16-bit integer.
    U16,
    /// Unsigned 32-bit integer.
    U32,
    /// Unsigned 64-bit integer.
    U64,
    /// Signed 8-bit integer.
    I8,
    /// Signed 16-bit integer.
    I16,
    /// Signed 32-bit integer: the type of coordinates and loop variables.
    I32,
    /// Signed 64-bit integer.
    I64,
    /// 32-bit IEEE float.
    F32,
    /// 64-bit IEEE float.
    F64,
}

impl ScalarType {
    /// Every scalar type, in declaration order.
    pub const ALL: [ScalarType; 11] = [
        ScalarType::Bool,
        ScalarType::U8,
        ScalarType::U16,
        ScalarType::U32,
        ScalarType::U64,
        ScalarType::I8,
        ScalarType::I16,
        ScalarType::I32,
        ScalarType::I64,
        ScalarType::F32,
        ScalarType::F64,
    ];

    /// Width in bits (bool counts as 1).
    pub fn bits(self) -> u32 {
        match self {
            ScalarType::Bool => 1,
            ScalarType::U8 | ScalarType::I8 => 8,
            ScalarType::U16 | ScalarType::I16 => 16,
            ScalarType::U32 | ScalarType::I32 | ScalarType::F32 => 32,
            ScalarType::U64 | ScalarType::I64 | ScalarType::F64 => 64,
        }
    }

    /// Size of one element in memory, in bytes.
    pub fn bytes(self) -> usize {
        (self.bits().max(8) / 8) as usize
    }

    /// Whether this is `f32` or `f64`.
    pub fn is_float(self) -> bool {
        matches!(self, ScalarType::F32 | ScalarType::F64)
    }

    /// Whether this is a signed integer type (`i8` to `i64`).
    pub fn is_signed_int(self) -> bool {
        matches!(self, ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64)
    }

    /// Whether this is an unsigned integer type (`u8` to `u64`; not bool).
    pub fn is_unsigned_int(self) -> bool {
        matches!(self, ScalarType::U8 | ScalarType::U16 | ScalarType::U32 | ScalarType::U64)
    }

    /// Signed or unsigned integer (not bool, not float).
    pub fn is_int(self) -> bool {
        self.is_signed_int() || self.is_unsigned_int()
    }

    /// Whether this is `bool`.
    pub fn is_bool(self) -> bool {
        self == ScalarType::Bool
    }

    /// Whether the bits of a value of this type can be read as a value of
    /// `to` (`reinterpret`): one width, and neither is a bool.
    pub fn reinterprets_as(self, to: ScalarType) -> bool {
        self.bits() == to.bits() && !self.is_bool() && !to.is_bool()
    }

    /// Smallest representable value of an integer or bool type, as i128.
    pub fn int_min(self) -> i128 {
        match self {
            ScalarType::Bool => 0,
            t if t.is_unsigned_int() => 0,
            t if t.is_signed_int() => -(1i128 << (t.bits() - 1)),
            _ => i128::MIN,
        }
    }

    /// Largest representable value of an integer or bool type, as i128.
    pub fn int_max(self) -> i128 {
        match self {
            ScalarType::Bool => 1,
            t if t.is_unsigned_int() => (1i128 << t.bits()) - 1,
            t if t.is_signed_int() => (1i128 << (t.bits() - 1)) - 1,
            _ => i128::MAX,
        }
    }

    /// The source-level name (`u8`, `f32`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::U8 => "u8",
            ScalarType::U16 => "u16",
            ScalarType::U32 => "u32",
            ScalarType::U64 => "u64",
            ScalarType::I8 => "i8",
            ScalarType::I16 => "i16",
            ScalarType::I32 => "i32",
            ScalarType::I64 => "i64",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
        }
    }

    /// Parses a source-level name.
    pub fn from_name(name: &str) -> Option<ScalarType> {
        ScalarType::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// A scalar type with a lane count (1 for scalars).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Type {
    /// The type of each lane.
    pub scalar: ScalarType,
    /// The number of lanes (1 for scalars).
    pub lanes: u32,
}

impl Type {
    /// The one-lane type of `scalar`.
    pub const fn scalar(scalar: ScalarType) -> Type {
        Type { scalar, lanes: 1 }
    }
    /// Scalar `bool`.
    pub const fn bool() -> Type {
        Type::scalar(ScalarType::Bool)
    }
    /// Scalar `u8`.
    pub const fn u8() -> Type {
        Type::scalar(ScalarType::U8)
    }
    /// Scalar `u16`.
    pub const fn u16() -> Type {
        Type::scalar(ScalarType::U16)
    }
    /// Scalar `u32`.
    pub const fn u32() -> Type {
        Type::scalar(ScalarType::U32)
    }
    /// Scalar `u64`.
    pub const fn u64() -> Type {
        Type::scalar(ScalarType::U64)
    }
    /// Scalar `i8`.
    pub const fn i8() -> Type {
        Type::scalar(ScalarType::I8)
    }
    /// Scalar `i16`.
    pub const fn i16() -> Type {
        Type::scalar(ScalarType::I16)
    }
    /// Scalar `i32`.
    pub const fn i32() -> Type {
        Type::scalar(ScalarType::I32)
    }
    /// Scalar `i64`.
    pub const fn i64() -> Type {
        Type::scalar(ScalarType::I64)
    }
    /// Scalar `f32`.
    pub const fn f32() -> Type {
        Type::scalar(ScalarType::F32)
    }
    /// Scalar `f64`.
    pub const fn f64() -> Type {
        Type::scalar(ScalarType::F64)
    }

    /// The same element type with `lanes` lanes.
    pub fn with_lanes(self, lanes: u32) -> Type {
        Type { scalar: self.scalar, lanes }
    }

    /// The one-lane type of the same element.
    pub fn element(self) -> Type {
        self.with_lanes(1)
    }

    /// Whether it has more than one lane.
    pub fn is_vector(self) -> bool {
        self.lanes > 1
    }
    /// Whether the element is a float.
    pub fn is_float(self) -> bool {
        self.scalar.is_float()
    }
    /// Whether the element is a signed or unsigned integer (not bool).
    pub fn is_int(self) -> bool {
        self.scalar.is_int()
    }
    /// Whether the element is bool.
    pub fn is_bool(self) -> bool {
        self.scalar.is_bool()
    }
    /// Whether the element is a signed integer.
    pub fn is_signed_int(self) -> bool {
        self.scalar.is_signed_int()
    }
    /// Whether the element is an unsigned integer (not bool).
    pub fn is_unsigned_int(self) -> bool {
        self.scalar.is_unsigned_int()
    }
    /// The element's width in bits (bool counts as 1).
    pub fn bits(self) -> u32 {
        self.scalar.bits()
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.lanes == 1 {
            write!(f, "{}", self.scalar)
        } else {
            write!(f, "{}x{}", self.scalar, self.lanes)
        }
    }
}
