//! Scalar types on the wire. Algorithms are scalar, so a compiler `Type`
//! with more than one lane has no wire form.

use crate::error::{FromWireError, ToWireError};
use crate::v1;
use compiler::{ScalarType, Type};

pub(crate) fn scalar_to_wire(t: ScalarType) -> v1::ScalarType {
    match t {
        ScalarType::Bool => v1::ScalarType::Bool,
        ScalarType::U8 => v1::ScalarType::U8,
        ScalarType::U16 => v1::ScalarType::U16,
        ScalarType::U32 => v1::ScalarType::U32,
        ScalarType::U64 => v1::ScalarType::U64,
        ScalarType::I8 => v1::ScalarType::I8,
        ScalarType::I16 => v1::ScalarType::I16,
        ScalarType::I32 => v1::ScalarType::I32,
        ScalarType::I64 => v1::ScalarType::I64,
        ScalarType::F32 => v1::ScalarType::F32,
        ScalarType::F64 => v1::ScalarType::F64,
    }
}

/// The wire value of a scalar type (`at` names where, for the error).
pub(crate) fn type_to_wire(t: Type, at: &str) -> Result<i32, ToWireError> {
    if t.lanes != 1 {
        return Err(ToWireError::NotAnAlgorithm { at: at.to_string(), what: format!("the vector type {t:?}") });
    }
    Ok(scalar_to_wire(t.scalar) as i32)
}

/// The scalar type a wire value names; unspecified or unknown is an error.
pub(crate) fn scalar_from_wire(value: i32, at: &str, field: &'static str) -> Result<ScalarType, FromWireError> {
    let t = v1::ScalarType::try_from(value).map_err(|_| FromWireError::UnknownEnum { at: at.to_string(), field, value })?;
    Ok(match t {
        v1::ScalarType::Unspecified => return Err(FromWireError::missing(at, field)),
        v1::ScalarType::Bool => ScalarType::Bool,
        v1::ScalarType::U8 => ScalarType::U8,
        v1::ScalarType::U16 => ScalarType::U16,
        v1::ScalarType::U32 => ScalarType::U32,
        v1::ScalarType::U64 => ScalarType::U64,
        v1::ScalarType::I8 => ScalarType::I8,
        v1::ScalarType::I16 => ScalarType::I16,
        v1::ScalarType::I32 => ScalarType::I32,
        v1::ScalarType::I64 => ScalarType::I64,
        v1::ScalarType::F32 => ScalarType::F32,
        v1::ScalarType::F64 => ScalarType::F64,
    })
}

pub(crate) fn type_from_wire(value: i32, at: &str, field: &'static str) -> Result<Type, FromWireError> {
    scalar_from_wire(value, at, field).map(Type::scalar)
}
