//! Shorthand for writing f32 math as IR nodes, shared by our own `exp`,
//! `log` and `pow` ([`crate::ir::exp`], [`crate::ir::log`]) and the fast
//! math functions ([`crate::lang::fast_math`]): constants, the arithmetic
//! nodes, and a float's bits and fields.

use crate::ir::expr::{BinOp, CmpOp, Expr};
use crate::ir::types::Type;

/// An f32's sign bit.
pub(crate) const SIGN: u32 = 0x8000_0000;
/// An f32's exponent field.
pub(crate) const EXPONENT: u32 = 0x7F80_0000;
/// An f32's mantissa field.
pub(crate) const MANTISSA: u32 = 0x007F_FFFF;
/// The bits of 1.0 (the exponent field of `[1, 2)`).
pub(crate) const ONE: u32 = 0x3F80_0000;
/// The bits of the quiet NaN.
pub(crate) const QUIET_NAN: u32 = 0x7FC0_0000;

/// An f32 constant.
pub(crate) fn f32c(v: f64) -> Expr {
    Expr::float(v, Type::f32())
}

/// A u32 constant.
pub(crate) fn u32c(v: u32) -> Expr {
    Expr::int(v.into(), Type::u32())
}

/// `a + b`.
pub(crate) fn add(a: Expr, b: Expr) -> Expr {
    Expr::binary(BinOp::Add, a, b)
}

/// `a - b`.
pub(crate) fn sub(a: Expr, b: Expr) -> Expr {
    Expr::binary(BinOp::Sub, a, b)
}

/// `a * b`.
pub(crate) fn mul(a: Expr, b: Expr) -> Expr {
    Expr::binary(BinOp::Mul, a, b)
}

/// `a op b`.
pub(crate) fn cmp(op: CmpOp, a: &Expr, b: Expr) -> Expr {
    Expr::cmp(op, a.clone(), b)
}

/// A NaN, as the bits of the quiet NaN: a NaN constant would make the
/// expression unequal to itself (constants compare as numbers), and a
/// pipeline is compared structurally (the wire format's round trip).
pub(crate) fn quiet_nan() -> Expr {
    from_bits(u32c(QUIET_NAN))
}

/// The bits of the f32 `x`, as a `u32` (unsigned, so that the bit
/// arithmetic wraps and shifts logically).
pub(crate) fn bits(x: &Expr) -> Expr {
    Expr::reinterpret(Type::u32(), x.clone())
}

/// The f32 whose bits are the `u32` `b`.
pub(crate) fn from_bits(b: Expr) -> Expr {
    Expr::reinterpret(Type::f32(), b)
}
