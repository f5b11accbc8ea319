//! The arithmetic semantics of the language, shared by every evaluator and by
//! constant folding: fixed-width integers wrap, integer division is Euclidean
//! (it rounds toward negative infinity for positive divisors) and modulo is
//! Euclidean (never negative), so `a == (a / b) * b + a % b`; division or
//! modulo by zero gives zero.

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
}
