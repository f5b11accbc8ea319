//! Scalar values and the operations on them, with the language's semantics
//! (see [`crate::ir::semantics`]). Constant folding, the reference evaluator and
//! the IR interpreter all compute through these functions, so they agree.
//!
//! Floats of type f32 are rounded to f32 after every operation; casts from
//! float to integer truncate toward zero and saturate (NaN gives 0).

use crate::ir::expr::{BinOp, CmpOp, Expr, ExprNode, MathFn};
use crate::ir::semantics::{bit_op, div_euclid, mod_euclid, wrap_signed, wrap_unsigned};
use crate::ir::types::{ScalarType, Type};

/// One scalar value. Its type is kept alongside (in the expression or buffer).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// Signed integers.
    Int(i64),
    /// Unsigned integers and bools (0 or 1).
    UInt(u64),
    /// Floats (an f32 value held exactly as an f64).
    Float(f64),
}

impl Scalar {
    /// The value as a wide integer (floats truncate).
    pub fn as_i128(self) -> i128 {
        match self {
            Scalar::Int(v) => v as i128,
            Scalar::UInt(v) => v as i128,
            Scalar::Float(v) => v as i128,
        }
    }

    /// The value as an f64 (integers convert to the nearest f64).
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Int(v) => v as f64,
            Scalar::UInt(v) => v as f64,
            Scalar::Float(v) => v,
        }
    }

    /// Truthiness of a bool (any non-zero value is true).
    pub fn as_bool(self) -> bool {
        match self {
            Scalar::Int(v) => v != 0,
            Scalar::UInt(v) => v != 0,
            Scalar::Float(v) => v != 0.0,
        }
    }

    /// A bool value: `UInt(1)` for true, `UInt(0)` for false.
    pub fn from_bool(b: bool) -> Scalar {
        Scalar::UInt(b as u64)
    }

    /// Makes a value of type `ty` from a wide integer, wrapping it.
    pub fn from_i128(v: i128, ty: ScalarType) -> Scalar {
        if ty.is_float() {
            round_float(v as f64, ty)
        } else if ty.is_signed_int() {
            Scalar::Int(wrap_signed(v, ty.bits()))
        } else {
            Scalar::UInt(wrap_unsigned(v, ty.bits()))
        }
    }

    /// Bit-exact equality (NaNs with equal bits are equal), for comparing outputs.
    pub fn bit_eq(self, other: Scalar) -> bool {
        match (self, other) {
            (Scalar::Float(a), Scalar::Float(b)) => a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            (a, b) => a == b,
        }
    }
}

fn round_float(v: f64, ty: ScalarType) -> Scalar {
    if ty == ScalarType::F32 {
        Scalar::Float(v as f32 as f64)
    } else {
        Scalar::Float(v)
    }
}

/// `a op b` for operands of type `ty`.
pub fn binary(op: BinOp, ty: ScalarType, a: Scalar, b: Scalar) -> Scalar {
    if ty.is_float() {
        let (x, y) = (a.as_f64(), b.as_f64());
        let r = match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => x / y,
            BinOp::Mod => x - y * (x / y).floor(),
            BinOp::Min => {
                if x < y || y.is_nan() {
                    x
                } else {
                    y
                }
            }
            BinOp::Max => {
                if x > y || y.is_nan() {
                    x
                } else {
                    y
                }
            }
            // Ill-typed (the language's checks reject it): no value.
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => f64::NAN,
        };
        return round_float(r, ty);
    }
    let (x, y) = (a.as_i128(), b.as_i128());
    let r = match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x.wrapping_mul(y),
        BinOp::Div => div_euclid(x, y),
        BinOp::Mod => mod_euclid(x, y),
        BinOp::Min => x.min(y),
        BinOp::Max => x.max(y),
        op => bit_op(op, ty, x, y),
    };
    Scalar::from_i128(r, ty)
}

/// `a op b` for operands of type `ty`.
pub fn compare(op: CmpOp, ty: ScalarType, a: Scalar, b: Scalar) -> bool {
    if ty.is_float() {
        op.holds(a.as_f64(), b.as_f64())
    } else {
        op.holds(a.as_i128(), b.as_i128())
    }
}

/// Converts `v` of type `from` to type `to`.
pub fn cast(from: ScalarType, to: ScalarType, v: Scalar) -> Scalar {
    if to.is_bool() {
        return Scalar::from_bool(v.as_bool());
    }
    if to.is_float() {
        return round_float(v.as_f64(), to);
    }
    if from.is_float() {
        let f = v.as_f64();
        if f.is_nan() {
            return Scalar::from_i128(0, to);
        }
        let t = f.trunc();
        let clamped = t.clamp(to.int_min() as f64, to.int_max() as f64);
        // f64 cannot represent every i64/u64 bound; clamp again as integers.
        let i = (clamped as i128).clamp(to.int_min(), to.int_max());
        return Scalar::from_i128(i, to);
    }
    Scalar::from_i128(v.as_i128(), to)
}

/// The bits of `v` (of type `from`) read as a value of `to`, a type of the
/// same width. An f32 travels as an f64 between operations, which keeps
/// every f32 bit pattern but for a signalling NaN's payload (the conversion
/// quiets it); types of different widths (rejected by the language's
/// checks) give the bits truncated or zero-extended.
pub fn reinterpret(from: ScalarType, to: ScalarType, v: Scalar) -> Scalar {
    let bits: u64 = match (from, v) {
        (ScalarType::F32, v) => (v.as_f64() as f32).to_bits().into(),
        (ScalarType::F64, v) => v.as_f64().to_bits(),
        (from, v) => wrap_unsigned(v.as_i128(), from.bits()),
    };
    match to {
        ScalarType::F32 => Scalar::Float(f32::from_bits(bits as u32).into()),
        ScalarType::F64 => Scalar::Float(f64::from_bits(bits)),
        to => Scalar::from_i128(bits.into(), to),
    }
}

/// A math intrinsic on arguments of type `ty`.
pub fn math(f: MathFn, ty: ScalarType, args: &[Scalar]) -> Scalar {
    if f == MathFn::PromiseClamped {
        return args[0];
    }
    if f == MathFn::Abs && !ty.is_float() {
        return Scalar::from_i128(args[0].as_i128().abs(), ty);
    }
    if f.is_bit_count() {
        // The operand's bits, as an unsigned value of its width.
        let bits = ty.bits();
        let v = (args[0].as_i128() as u128) & (u128::MAX >> (128 - bits));
        let n = match f {
            MathFn::Popcount => v.count_ones(),
            MathFn::CountLeadingZeros => v.leading_zeros() - (128 - bits),
            _ => v.trailing_zeros().min(bits),
        };
        return Scalar::from_i128(n.into(), ty);
    }
    if f.is_float_class() {
        let x = args[0].as_f64();
        return Scalar::from_bool(match f {
            MathFn::IsNan => x.is_nan(),
            MathFn::IsInf => x.is_infinite(),
            _ => x.is_finite(),
        });
    }
    let x = args[0].as_f64();
    let single = ty == ScalarType::F32;
    // Compute f32 math in f32 so results match what f32 code would produce.
    let r = if single {
        let xs = x as f32;
        (match f {
            MathFn::Abs => xs.abs(),
            MathFn::Sqrt => xs.sqrt(),
            MathFn::Exp => crate::ir::exp::exp_f32(xs),
            MathFn::Log => crate::ir::log::log_f32(xs),
            MathFn::Pow => crate::ir::log::pow_f32(xs, args[1].as_f64() as f32),
            MathFn::Sin => xs.sin(),
            MathFn::Cos => xs.cos(),
            MathFn::Tanh => xs.tanh(),
            MathFn::Floor => xs.floor(),
            MathFn::Ceil => xs.ceil(),
            MathFn::Round => xs.round_ties_even(),
            MathFn::Trunc => xs.trunc(),
            _ => xs,
        }) as f64
    } else {
        match f {
            MathFn::Abs => x.abs(),
            MathFn::Sqrt => x.sqrt(),
            MathFn::Exp => x.exp(),
            MathFn::Log => x.ln(),
            MathFn::Pow => x.powf(args[1].as_f64()),
            MathFn::Sin => x.sin(),
            MathFn::Cos => x.cos(),
            MathFn::Tanh => x.tanh(),
            MathFn::Floor => x.floor(),
            MathFn::Ceil => x.ceil(),
            MathFn::Round => x.round_ties_even(),
            MathFn::Trunc => x.trunc(),
            _ => x,
        }
    };
    round_float(r, ty)
}

/// The value of a constant expression.
pub fn const_value(e: &Expr) -> Option<Scalar> {
    match e.node() {
        ExprNode::IntImm { value, .. } => Some(Scalar::Int(*value)),
        ExprNode::UIntImm { value, .. } => Some(Scalar::UInt(*value)),
        ExprNode::FloatImm { value, .. } => Some(Scalar::Float(*value)),
        _ => None,
    }
}

/// A constant expression of type `ty` holding `v`.
pub fn const_expr(v: Scalar, ty: Type) -> Expr {
    match v {
        Scalar::Int(i) if ty.is_signed_int() => Expr::new(ExprNode::IntImm { value: i, ty }),
        Scalar::UInt(u) if ty.is_unsigned_int() || ty.is_bool() => Expr::new(ExprNode::UIntImm { value: u, ty }),
        Scalar::Float(f) if ty.is_float() => Expr::new(ExprNode::FloatImm { value: f, ty }),
        other => const_expr(cast(widest_type(other), ty.scalar, other), ty),
    }
}

/// The widest type of a value's own kind (i64, u64 or f64), the type to
/// convert it from when its precise type is not known.
pub fn widest_type(v: Scalar) -> ScalarType {
    match v {
        Scalar::Int(_) => ScalarType::I64,
        Scalar::UInt(_) => ScalarType::U64,
        Scalar::Float(_) => ScalarType::F64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_arithmetic_wraps_and_floors() {
        let u8t = ScalarType::U8;
        assert_eq!(binary(BinOp::Add, u8t, Scalar::UInt(250), Scalar::UInt(10)), Scalar::UInt(4));
        assert_eq!(binary(BinOp::Sub, u8t, Scalar::UInt(3), Scalar::UInt(5)), Scalar::UInt(254));
        let i8t = ScalarType::I8;
        assert_eq!(binary(BinOp::Mul, i8t, Scalar::Int(100), Scalar::Int(3)), Scalar::Int(44));
        assert_eq!(binary(BinOp::Div, ScalarType::I32, Scalar::Int(-7), Scalar::Int(2)), Scalar::Int(-4));
        assert_eq!(binary(BinOp::Mod, ScalarType::I32, Scalar::Int(-7), Scalar::Int(2)), Scalar::Int(1));
        assert_eq!(binary(BinOp::Div, ScalarType::I32, Scalar::Int(7), Scalar::Int(0)), Scalar::Int(0));
    }

    #[test]
    fn casts_saturate_from_float_and_wrap_between_ints() {
        assert_eq!(cast(ScalarType::F32, ScalarType::U8, Scalar::Float(300.7)), Scalar::UInt(255));
        assert_eq!(cast(ScalarType::F32, ScalarType::I8, Scalar::Float(-3.9)), Scalar::Int(-3));
        assert_eq!(cast(ScalarType::F32, ScalarType::I32, Scalar::Float(f64::NAN)), Scalar::Int(0));
        assert_eq!(cast(ScalarType::I32, ScalarType::U8, Scalar::Int(-1)), Scalar::UInt(255));
        assert_eq!(cast(ScalarType::U16, ScalarType::Bool, Scalar::UInt(7)), Scalar::UInt(1));
    }

    #[test]
    fn reinterpret_keeps_the_bits() {
        let one = reinterpret(ScalarType::F32, ScalarType::U32, Scalar::Float(1.0));
        assert_eq!(one, Scalar::UInt(0x3F80_0000));
        assert_eq!(reinterpret(ScalarType::I32, ScalarType::F32, Scalar::Int(0x4049_0FDB)), Scalar::Float(std::f32::consts::PI.into()));
        assert_eq!(reinterpret(ScalarType::F64, ScalarType::I64, Scalar::Float(-2.0)), Scalar::Int(0xC000_0000_0000_0000u64 as i64));
        assert_eq!(reinterpret(ScalarType::U8, ScalarType::I8, Scalar::UInt(200)), Scalar::Int(-56));
        assert_eq!(reinterpret(ScalarType::I16, ScalarType::U16, Scalar::Int(-1)), Scalar::UInt(0xFFFF));
    }

    #[test]
    fn f32_rounds_every_step() {
        let a = binary(BinOp::Add, ScalarType::F32, Scalar::Float(16777216.0), Scalar::Float(1.0));
        assert_eq!(a, Scalar::Float(16777216.0));
        let b = binary(BinOp::Add, ScalarType::F64, Scalar::Float(16777216.0), Scalar::Float(1.0));
        assert_eq!(b, Scalar::Float(16777217.0));
    }
}
