//! Fast approximate math on `f32` — `fast_exp`, `fast_log`, `fast_pow`,
//! `fast_inverse`, `fast_inverse_sqrt` — written as ordinary expressions:
//! `reinterpret` to take a float's exponent and mantissa apart or put
//! them together, range reduction, and short polynomials or Newton steps.
//! Nothing here is a new node, so the reference evaluator, the interpreter,
//! the JIT, the analyses and the wire format handle them as the nodes they
//! expand to, and every executor computes the same bits.
//!
//! The polynomials were fitted for this module (a weighted least-squares
//! fit iterated towards the minimax error on Chebyshev-spaced points, the
//! coefficients then rounded to f32), and the initial-guess constants of
//! the two inverses found by searching for the smallest error after the
//! two Newton steps used. The accuracies stated on each function are
//! measured by `compiler/tests/fast_math.rs` (maximum relative error
//! against the f64 functions of the standard library, over a sweep of the
//! stated range).
//!
//! Each argument is bound once to a `let` (named after the function, `$`
//! keeping it apart from user names), so a large argument is evaluated
//! once however many times the approximation reads it.

use crate::error::LangError;
use crate::ir::exp::{bind, expansion, horner};
use crate::ir::expr::{BinOp, CmpOp, Expr};
use crate::ir::f32_nodes::{add, bits, cmp, f32c, from_bits, mul, quiet_nan, sub, u32c, EXPONENT, MANTISSA, ONE, SIGN};
use crate::ir::types::Type;
use crate::lang::ops::AsExpr;

/// `log(1 + t) / t` on `t` in `[sqrt(1/2) - 1, sqrt(2) - 1]`, constant
/// term first (relative error 1.1e-6 before rounding to f32).
const LOG_QUOTIENT: [f64; 7] = [
    1.000_000_953_674_316_4,
    -0.500_011_146_068_573,
    0.333_145_081_996_917_7,
    -0.249_097_421_765_327_45,
    0.204_963_356_256_484_99,
    -0.186_678_841_710_090_64,
    0.118_961_229_920_387_27,
];

/// The bits whose difference with a float's bits approximate its inverse,
/// and with half its bits its inverse square root (searched for the least
/// error after two Newton steps).
const INVERSE_GUESS: u32 = 0x7EF3_1062;
const INVERSE_SQRT_GUESS: u32 = 0x5F37_50E6;

/// The argument of the function `name` as an f32: an f32 as it is, an
/// integer converted (as the math functions do); anything else is an error.
fn argument(name: &'static str, x: &dyn AsExpr) -> Result<Expr, LangError> {
    let x = x.as_expr();
    match x.ty() {
        t if t == Type::f32() => Ok(x),
        t if t.is_int() => Ok(Expr::cast(Type::f32(), x)),
        t => Err(LangError::Intrinsic { name, why: format!("it approximates f32 math; {x} is a {t} (cast it to f32)") }),
    }
}

/// An approximation of `e^x` for f32 `x` (an integer is converted), with a
/// relative error below 2e-7 for `x` in `[-87, 88]` (measured: see the
/// module's documentation). Below -87 it is 0, above 88 `+inf` (the true
/// value is still finite up to 88.72), NaN stays NaN.
///
/// `x = k ln 2 + r` with `k` the nearest integer to `x / ln 2`; `e^r`, for
/// `|r| <= ln(2)/2`, is a degree-5 polynomial, and `2^k` is built in the
/// exponent field of a float.
pub fn fast_exp(x: impl AsExpr) -> Result<Expr, LangError> {
    Ok(expansion(argument("fast_exp", &x)?))
}

/// An approximation of `ln(x)` for f32 `x` (an integer is converted), with
/// a relative error below 1.5e-6 for normal positive `x` (`2^-126` to
/// `f32::MAX`; measured: see the module's documentation). `ln(0)` is
/// `-inf`, `ln(+inf)` is `+inf`, a negative `x` or NaN gives NaN; a
/// subnormal `x` gives about -88 (its exponent field is read as `2^-127`).
///
/// `x = m 2^e` with `m` in `[sqrt(1/2), sqrt(2))` from the float's fields;
/// `ln(m) = t q(t)` for `t = m - 1`, `q` a degree-6 polynomial.
pub fn fast_log(x: impl AsExpr) -> Result<Expr, LangError> {
    Ok(bind("fast_log$x", argument("fast_log", &x)?, log_of))
}

fn log_of(x: Expr) -> Expr {
    let y = bind("fast_log$b", bits(&x), |b| {
        let biased = Expr::cast(Type::i32(), Expr::shift(BinOp::Shr, b.clone(), Expr::i32(23)));
        let fraction = from_bits(Expr::bitwise(BinOp::BitOr, Expr::bitwise(BinOp::BitAnd, b, u32c(MANTISSA)), u32c(ONE)));
        bind("fast_log$m", fraction, |m| {
            let high = cmp(CmpOp::Gt, &m, f32c(std::f64::consts::SQRT_2));
            let e = sub(biased, Expr::select(high.clone(), Expr::i32(126), Expr::i32(127)));
            let t = sub(Expr::select(high, mul(m.clone(), f32c(0.5)), m), f32c(1.0));
            bind("fast_log$t", t, |t| {
                add(mul(Expr::cast(Type::f32(), e), f32c(std::f64::consts::LN_2)), mul(t.clone(), horner(&t, &LOG_QUOTIENT)))
            })
        })
    });
    let positive = Expr::select(cmp(CmpOp::Lt, &x, f32c(f64::INFINITY)), y, x.clone());
    let other = Expr::select(cmp(CmpOp::Eq, &x, f32c(0.0)), f32c(f64::NEG_INFINITY), quiet_nan());
    Expr::select(cmp(CmpOp::Gt, &x, f32c(0.0)), positive, other)
}

/// An approximation of `x^y` for f32 `x` and `y` (integers are converted):
/// `fast_exp(y * fast_log(x))`, with `x^0 = 1^y = 1`. Its relative error
/// grows with `|y ln x|` (the error of `fast_log` is scaled by it): below
/// 5e-6 for `x` in `[1/64, 64]` and `y` in `[-4, 4]` (measured: see the
/// module's documentation). `0^y` is 0 for `y > 0` and `+inf` for
/// `y < 0`; a negative `x` gives NaN.
pub fn fast_pow(x: impl AsExpr, y: impl AsExpr) -> Result<Expr, LangError> {
    let x = argument("fast_pow", &x)?;
    let y = argument("fast_pow", &y)?;
    Ok(bind("fast_pow$x", x, |x| {
        bind("fast_pow$y", y, |y| {
            let trivial = Expr::or(cmp(CmpOp::Eq, &y, f32c(0.0)), cmp(CmpOp::Eq, &x, f32c(1.0)));
            let power = expansion(mul(y, bind("fast_log$x", x, log_of)));
            Expr::select(trivial, f32c(1.0), power)
        })
    }))
}

/// An approximation of `1/x` for f32 `x` (an integer is converted), with a
/// relative error below 7e-6 for `|x|` in `[2^-125, 2^125]` (measured: see
/// the module's documentation). `1/±0` is `±inf`, `1/±inf` is `±0`, NaN
/// stays NaN; beyond `2^125` the guess is subnormal and the error larger.
///
/// The guess is a constant less the float's bits (which negates the
/// exponent and roughly inverts the mantissa), refined by two Newton steps
/// `y (2 - x y)`.
pub fn fast_inverse(x: impl AsExpr) -> Result<Expr, LangError> {
    Ok(bind("fast_inverse$x", argument("fast_inverse", &x)?, |x| {
        bind("fast_inverse$b", bits(&x), |b| {
            let step = |y: Expr| bind("fast_inverse$y", y, |y| mul(y.clone(), sub(f32c(2.0), mul(x.clone(), y))));
            let y = step(step(from_bits(sub(u32c(INVERSE_GUESS), b.clone()))));
            let magnitude = Expr::bitwise(BinOp::BitAnd, b.clone(), u32c(!SIGN));
            let sign = Expr::bitwise(BinOp::BitAnd, b, u32c(SIGN));
            let infinite = cmp(CmpOp::Eq, &magnitude, u32c(EXPONENT));
            let at_infinity = Expr::select(infinite, from_bits(sign.clone()), y);
            let zero = cmp(CmpOp::Eq, &magnitude, u32c(0));
            Expr::select(zero, from_bits(Expr::bitwise(BinOp::BitOr, sign, u32c(EXPONENT))), at_infinity)
        })
    }))
}

/// An approximation of `1/sqrt(x)` for f32 `x` (an integer is converted),
/// with a relative error below 5e-6 for normal positive `x` (measured: see
/// the module's documentation). `1/sqrt(±0)` is `±inf`, `1/sqrt(+inf)` is
/// 0, a negative `x` or NaN gives NaN.
///
/// The guess is a constant less half the float's bits (which halves and
/// negates the exponent), refined by two Newton steps
/// `y (3/2 - x/2 y^2)`.
pub fn fast_inverse_sqrt(x: impl AsExpr) -> Result<Expr, LangError> {
    Ok(bind("fast_inverse_sqrt$x", argument("fast_inverse_sqrt", &x)?, |x| {
        bind("fast_inverse_sqrt$b", bits(&x), |b| {
            let half = mul(x.clone(), f32c(0.5));
            let step = |y: Expr| bind("fast_inverse_sqrt$y", y, |y| mul(y.clone(), sub(f32c(1.5), mul(half.clone(), mul(y.clone(), y)))));
            let guess = from_bits(sub(u32c(INVERSE_SQRT_GUESS), Expr::shift(BinOp::Shr, b.clone(), Expr::i32(1))));
            let y = step(step(guess));
            let positive = Expr::select(cmp(CmpOp::Lt, &x, f32c(f64::INFINITY)), y, f32c(0.0));
            let signed_infinity = from_bits(Expr::bitwise(BinOp::BitOr, Expr::bitwise(BinOp::BitAnd, b, u32c(SIGN)), u32c(EXPONENT)));
            let other = Expr::select(cmp(CmpOp::Eq, &x, f32c(0.0)), signed_infinity, quiet_nan());
            Expr::select(cmp(CmpOp::Gt, &x, f32c(0.0)), positive, other)
        })
    }))
}
