//! The arithmetic semantics of the language, shared by every evaluator and by
//! constant folding: fixed-width integers wrap, integer division is Euclidean
//! (it rounds toward negative infinity for positive divisors) and modulo is
//! Euclidean (never negative), so `a == (a / b) * b + a % b`; division or
//! modulo by zero gives zero. Bitwise operators act on two's-complement bits,
//! and shifts by any count are defined ([`bit_op`]).

use crate::ir::expr::BinOp;
use crate::ir::types::ScalarType;

/// Wraps `v` to a signed integer of `bits` bits.
pub fn wrap_signed(v: i128, bits: u32) -> i64 {
    let shift = 128 - bits;
    ((v << shift) >> shift) as i64
}

/// Wraps `v` to an unsigned integer of `bits` bits (bool is 1 bit).
pub fn wrap_unsigned(v: i128, bits: u32) -> u64 {
    if bits >= 64 {
        v as u64
    } else {
        (v as u64) & ((1u64 << bits) - 1)
    }
}

/// Euclidean division; zero divisor gives zero.
pub fn div_euclid(a: i128, b: i128) -> i128 {
    if b == 0 {
        return 0;
    }
    a.div_euclid(b)
}

/// Euclidean modulo (result in `[0, |b|)`); zero divisor gives zero.
pub fn mod_euclid(a: i128, b: i128) -> i128 {
    if b == 0 {
        return 0;
    }
    a.rem_euclid(b)
}

/// A bitwise operator or shift on integers of type `ty`, operands given as
/// their values; the result is wrapped to `ty`.
///
/// `&`, `|` and `^` act on the two's-complement bits. `x << n` is
/// `x * 2^n` (wrapped) and `x >> n` is `floor(x / 2^n)`: arithmetic for
/// signed types, logical for unsigned ones (whose values are never
/// negative). As in Halide, a negative count shifts the other way by `-n`
/// (Halide's `lower_signed_shift_left`/`_right` in CodeGen_Internal.cpp).
/// Halide leaves a count of the type's width or more undefined (LLVM's
/// `shl`/`lshr`/`ashr` give poison); here it shifts every bit out, as
/// `width` shifts by one would: `<<` gives 0, `>>` gives 0, or -1 for a
/// negative signed value.
pub fn bit_op(op: BinOp, ty: ScalarType, x: i128, y: i128) -> i128 {
    let bits = ty.bits() as i128;
    // Beyond the width every count gives the same result.
    let shift_left = |x: i128, n: i128| {
        let n = n.clamp(-bits, bits);
        if n >= 0 {
            x << n
        } else {
            x >> -n
        }
    };
    let r = match op {
        BinOp::BitAnd => x & y,
        BinOp::BitOr => x | y,
        BinOp::BitXor => x ^ y,
        BinOp::Shl => shift_left(x, y),
        BinOp::Shr => shift_left(x, -y),
        _ => unreachable!("{op:?} is not a bitwise operator"),
    };
    if ty.is_signed_int() {
        wrap_signed(r, ty.bits()) as i128
    } else {
        wrap_unsigned(r, ty.bits()) as i128
    }
}

/// Bounds on `x op y` for a bitwise operator or shift on integers of type
/// `ty`, given bounds on `x` and `y` (each `(lo, hi)`, inside the type):
/// tight where the sign of the operands or the direction of a shift is
/// known, the whole type otherwise.
pub fn bit_op_range(op: BinOp, ty: ScalarType, x: (i128, i128), y: (i128, i128)) -> (i128, i128) {
    let full = (ty.int_min(), ty.int_max());
    // The smallest `2^k - 1` at least `v` (for `v >= 0`): every value of
    // at most that many bits.
    let ones = |v: i128| (1i128 << (128 - v.leading_zeros()).min(126)) - 1;
    match op {
        // Clearing bits of a non-negative value keeps it in [0, value].
        BinOp::BitAnd if x.0 >= 0 && y.0 >= 0 => (0, x.1.min(y.1)),
        BinOp::BitAnd if x.0 >= 0 => (0, x.1),
        BinOp::BitAnd if y.0 >= 0 => (0, y.1),
        // Setting bits never lowers a value; neither adds a higher bit.
        BinOp::BitOr if x.0 >= 0 && y.0 >= 0 => (x.0.max(y.0), ones(x.1.max(y.1))),
        BinOp::BitXor if x.0 >= 0 && y.0 >= 0 => (0, ones(x.1.max(y.1))),
        BinOp::Shl | BinOp::Shr => {
            // As a shift left by a count in [lo, hi] that does not change sign.
            let (lo, hi) = if op == BinOp::Shl { y } else { (-y.1, -y.0) };
            let bits = ty.bits() as i128;
            let counts = [lo.clamp(-bits, bits), hi.clamp(-bits, bits)];
            if lo < 0 && hi > 0 {
                return full;
            }
            // x * 2^n is monotone in x for each n, and in n for each x.
            let corners: Vec<i128> = counts.iter().flat_map(|&n| [x.0, x.1].map(|v| if n >= 0 { v << n } else { v >> -n })).collect();
            let (min, max) = (corners.iter().copied().min().unwrap_or(0), corners.iter().copied().max().unwrap_or(0));
            if min < full.0 || max > full.1 {
                full
            } else {
                (min, max)
            }
        }
        _ => full,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn division_and_modulo_are_euclidean() {
        assert_eq!(div_euclid(-7, 2), -4);
        assert_eq!(div_euclid(7, -2), -3);
        assert_eq!(div_euclid(-7, -2), 4);
        assert_eq!(mod_euclid(-7, 2), 1);
        assert_eq!(mod_euclid(7, -2), 1);
        assert_eq!(div_euclid(5, 0), 0);
        assert_eq!(mod_euclid(5, 0), 0);
        for a in -20..20 {
            for b in [-5i128, -3, 2, 7] {
                assert_eq!(div_euclid(a, b) * b + mod_euclid(a, b), a, "a={a} b={b}");
            }
        }
    }

    #[test]
    fn wrapping() {
        assert_eq!(wrap_signed(128, 8), -128);
        assert_eq!(wrap_signed(-129, 8), 127);
        assert_eq!(wrap_unsigned(256, 8), 0);
        assert_eq!(wrap_unsigned(-1, 16), 65535);
        assert_eq!(wrap_unsigned(-1, 64), u64::MAX);
        assert_eq!(wrap_signed(i64::MAX as i128 + 1, 64), i64::MIN);
    }

    #[test]
    fn shifts_are_defined_for_every_count() {
        let (i8t, u8t) = (ScalarType::I8, ScalarType::U8);
        assert_eq!(bit_op(BinOp::Shl, i8t, 3, 2), 12);
        assert_eq!(bit_op(BinOp::Shl, i8t, 3, 6), -64, "wraps");
        assert_eq!(bit_op(BinOp::Shl, i8t, 3, 7), -128);
        assert_eq!(bit_op(BinOp::Shl, i8t, 3, 8), 0);
        assert_eq!(bit_op(BinOp::Shl, i8t, 3, 1000), 0);
        assert_eq!(bit_op(BinOp::Shl, i8t, -64, -3), -8, "a negative count shifts right");
        assert_eq!(bit_op(BinOp::Shr, i8t, -7, 1), -4, "arithmetic, flooring");
        assert_eq!(bit_op(BinOp::Shr, i8t, -7, 7), -1);
        assert_eq!(bit_op(BinOp::Shr, i8t, -7, 8), -1);
        assert_eq!(bit_op(BinOp::Shr, i8t, 7, 100), 0);
        assert_eq!(bit_op(BinOp::Shr, i8t, 7, -2), 28, "a negative count shifts left");
        assert_eq!(bit_op(BinOp::Shr, i8t, 7, i64::MIN as i128), 0);
        assert_eq!(bit_op(BinOp::Shr, u8t, 200, 1), 100, "logical");
        assert_eq!(bit_op(BinOp::Shl, u8t, 200, 1), 144);
        assert_eq!(bit_op(BinOp::Shl, ScalarType::U64, u64::MAX as i128, 64), 0);
        assert_eq!(bit_op(BinOp::Shl, ScalarType::U64, 1, 63), 1 << 63);
        assert_eq!(bit_op(BinOp::Shr, ScalarType::I64, i64::MIN as i128, 63), -1);
    }

    #[test]
    fn bitwise_operators_act_on_twos_complement_bits() {
        assert_eq!(bit_op(BinOp::BitAnd, ScalarType::I16, -1, 0x0F0F), 0x0F0F);
        assert_eq!(bit_op(BinOp::BitOr, ScalarType::I8, -128, 1), -127);
        assert_eq!(bit_op(BinOp::BitXor, ScalarType::U8, 0xFF, 0x0F), 0xF0);
        assert_eq!(bit_op(BinOp::BitXor, ScalarType::I32, 5, -1), -6);
    }

    /// Every value of small operand ranges lies inside the computed range.
    #[test]
    fn bit_op_ranges_are_sound() {
        let ops = [BinOp::BitAnd, BinOp::BitOr, BinOp::BitXor, BinOp::Shl, BinOp::Shr];
        let ranges = [(-9, -3), (-5, 6), (0, 0), (0, 13), (3, 9), (-128, 127), (8, 10), (-10, -8)];
        for ty in [ScalarType::I8, ScalarType::U8, ScalarType::I16] {
            for op in ops {
                for x in ranges {
                    for y in ranges {
                        let clip = |r: (i128, i128)| (r.0.max(ty.int_min()), r.1.min(ty.int_max()));
                        let (x, y) = (clip(x), clip(y));
                        if x.0 > x.1 || y.0 > y.1 {
                            continue;
                        }
                        let (lo, hi) = bit_op_range(op, ty, x, y);
                        for a in x.0..=x.1 {
                            for b in y.0..=y.1 {
                                let r = bit_op(op, ty, a, b);
                                assert!(lo <= r && r <= hi, "{op:?} {ty}: {a}, {b} gives {r} outside [{lo}, {hi}]");
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(bit_op_range(BinOp::BitAnd, ScalarType::I32, (-1000, 1000), (255, 255)), (0, 255));
        assert_eq!(bit_op_range(BinOp::Shr, ScalarType::I32, (-1000, 1000), (2, 2)), (-250, 250));
        assert_eq!(bit_op_range(BinOp::Shl, ScalarType::I32, (0, 10), (3, 3)), (0, 80));
    }
}
