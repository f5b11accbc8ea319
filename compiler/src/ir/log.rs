//! The f32 natural logarithm and power, as every executor computes them.
//!
//! `log(x)`: `x = m 2^e` with `m` in `[sqrt(1/2), sqrt(2))` read from the
//! float's fields (a subnormal `x` is first scaled by `2^23`, exactly);
//! `ln(m) = t - t^2/2 + t^3 P(t)` for `t = m - 1` (exact), `P` a degree-7
//! polynomial fitted to `(ln(1 + t) - t + t^2/2) / t^3` on that interval
//! (no division: a vector division costs several multiplications); then
//! `e ln 2` added in two parts, the low part first, the high one (exact)
//! last. Relative error below 1e-7 on every positive float. `log(+0) =
//! log(-0) = -inf`, `log(+inf) = +inf`, a negative `x` or NaN gives NaN.
//!
//! `pow(x, y)`: `exp(y log|x|)` ([`crate::ir::exp`]), negated for a negative
//! `x` and an odd integer `y`, NaN for a negative `x` and a `y` that is not
//! an integer; `x^0 = 1^y = (-1)^(±inf) = 1` (NaN included). The sign of a
//! zero `x` is not looked at (`(-0)^3` is `+0`). Its relative error grows
//! with `|y ln x|`: the logarithm's is multiplied by it.
//!
//! The accuracies are measured by `compiler/tests/fast_math.rs` (printed with
//! `--nocapture`). As for `exp`, one definition in two forms that agree bit
//! for bit: [`log_expansion`] and [`pow_expansion`], the steps as IR nodes
//! (lowering replaces every f32 `log` and `pow` call by them, so compiled
//! code computes them in vector registers rather than calling the C
//! library lane by lane), and [`log_f32`] and [`pow_f32`], the steps on
//! `f32` values (the reference evaluator, the interpreter and constant
//! folding). `codegen/tests/intrinsic_edges.rs` checks that every executor
//! agrees.

use crate::ir::exp::{bind, exp_f32, expansion, LN2_HIGH, LN2_LOW};
use crate::ir::expr::{BinOp, CmpOp, Expr, MathFn};
use crate::ir::f32_nodes::{add, cmp, f32c, mul, quiet_nan, sub, MANTISSA, ONE, QUIET_NAN};
use crate::ir::types::Type;

/// `(ln(1 + t) - t + t^2/2) / t^3` on `t` in `[sqrt(1/2) - 1, sqrt(2) - 1]`,
/// constant term first: a least-squares fit on Chebyshev nodes, reweighted
/// towards the smallest largest relative error of the logarithm (8.4e-8
/// with every step rounded to f32).
const LOG1P_CUBIC_TERM: [f64; 8] = [
    0.333_333_153_862_619_2,
    -0.250_005_043_286_401_05,
    0.200_027_437_298_280_43,
    -0.166_353_113_600_381_3,
    0.141_714_213_479_955_33,
    -0.130_135_434_253_977_8,
    0.129_284_586_002_022_03,
    -0.082_407_613_756_529_33,
];

/// `2^23`, which brings a subnormal float into the normal range exactly.
const SUBNORMAL_SCALE: f64 = 8_388_608.0;

/// `c[0] + z * (c[1] + z * (...))` rounded to f32 at each step, as the
/// nodes of [`crate::ir::exp::horner`] compute it.
fn horner_f32(z: f32, c: &[f64]) -> f32 {
    c.iter().rev().skip(1).fold(c[c.len() - 1] as f32, |acc, &k| k as f32 + z * acc)
}

/// `ln(x)` for the f32 expression `x`, as nodes (`x` bound once).
pub fn log_expansion(x: Expr) -> Expr {
    bind("log$x", x, |x| {
        let small = cmp(CmpOp::Lt, &x, f32c(f32::MIN_POSITIVE.into()));
        let scaled = Expr::select(small.clone(), mul(x.clone(), f32c(SUBNORMAL_SCALE)), x.clone());
        let finite = bind("log$b", Expr::reinterpret(Type::u32(), scaled), |b| {
            let biased = Expr::cast(Type::i32(), Expr::shift(BinOp::Shr, b.clone(), Expr::i32(23)));
            let fraction = Expr::bitwise(
                BinOp::BitOr,
                Expr::bitwise(BinOp::BitAnd, b, Expr::int(MANTISSA.into(), Type::u32())),
                Expr::int(ONE.into(), Type::u32()),
            );
            bind("log$f", Expr::reinterpret(Type::f32(), fraction), |f| {
                let high = cmp(CmpOp::Gt, &f, f32c(std::f64::consts::SQRT_2));
                let unbias =
                    add(Expr::select(high.clone(), Expr::i32(126), Expr::i32(127)), Expr::select(small, Expr::i32(23), Expr::i32(0)));
                let m = Expr::select(high, mul(f.clone(), f32c(0.5)), f);
                bind("log$t", sub(m, f32c(1.0)), |t| {
                    bind("log$z", mul(t.clone(), t.clone()), |z| {
                        let cubic = mul(mul(t.clone(), z.clone()), crate::ir::exp::horner(&t, &LOG1P_CUBIC_TERM));
                        bind("log$e", Expr::cast(Type::f32(), sub(biased, unbias)), |e| {
                            let low = sub(add(cubic, mul(e.clone(), f32c(LN2_LOW))), mul(f32c(0.5), z));
                            add(add(t, low), mul(e, f32c(LN2_HIGH)))
                        })
                    })
                })
            })
        });
        let positive = Expr::select(cmp(CmpOp::Lt, &x, f32c(f64::INFINITY)), finite, x.clone());
        let other = Expr::select(cmp(CmpOp::Eq, &x, f32c(0.0)), f32c(f64::NEG_INFINITY), quiet_nan());
        Expr::select(cmp(CmpOp::Gt, &x, f32c(0.0)), positive, other)
    })
}

/// `ln(x)`, computed as [`log_expansion`]'s nodes compute it.
pub fn log_f32(x: f32) -> f32 {
    if x > 0.0 {
        if x < f32::INFINITY {
            let small = x < f32::MIN_POSITIVE;
            let scaled = if small { x * SUBNORMAL_SCALE as f32 } else { x };
            let b = scaled.to_bits();
            let biased = (b >> 23) as i32;
            let f = f32::from_bits((b & MANTISSA) | ONE);
            let high = f > std::f64::consts::SQRT_2 as f32;
            let unbias = if high { 126 } else { 127 } + if small { 23 } else { 0 };
            let m = if high { f * 0.5 } else { f };
            let t = m - 1.0;
            let z = t * t;
            let cubic = (t * z) * horner_f32(t, &LOG1P_CUBIC_TERM);
            let e = (biased - unbias) as f32;
            let low = (cubic + e * LN2_LOW as f32) - 0.5 * z;
            (t + low) + e * LN2_HIGH as f32
        } else {
            x
        }
    } else if x == 0.0 {
        f32::NEG_INFINITY
    } else {
        f32::from_bits(QUIET_NAN)
    }
}

/// `x^y` for the f32 expressions `x` and `y`, as nodes (each bound once).
pub fn pow_expansion(x: Expr, y: Expr) -> Expr {
    bind("pow$x", x, |x| {
        bind("pow$y", y, |y| {
            let magnitude = Expr::math(MathFn::Abs, vec![x.clone()]);
            let power = bind("pow$p", expansion(mul(y.clone(), log_expansion(magnitude.clone()))), |p| {
                let floor = |v: Expr| Expr::math(MathFn::Floor, vec![v]);
                let integer = cmp(CmpOp::Eq, &floor(y.clone()), y.clone());
                let odd = cmp(CmpOp::Ne, &mul(floor(mul(y.clone(), f32c(0.5))), f32c(2.0)), y.clone());
                let negative = Expr::select(integer, Expr::select(odd, mul(f32c(-1.0), p.clone()), p.clone()), quiet_nan());
                Expr::select(cmp(CmpOp::Lt, &x, f32c(0.0)), negative, p)
            });
            let one = Expr::or(
                Expr::or(cmp(CmpOp::Eq, &y, f32c(0.0)), cmp(CmpOp::Eq, &x, f32c(1.0))),
                Expr::and(cmp(CmpOp::Eq, &magnitude, f32c(1.0)), Expr::math(MathFn::IsInf, vec![y.clone()])),
            );
            Expr::select(one, f32c(1.0), power)
        })
    })
}

/// `x^y`, computed as [`pow_expansion`]'s nodes compute it.
pub fn pow_f32(x: f32, y: f32) -> f32 {
    let magnitude = x.abs();
    if y == 0.0 || x == 1.0 || (magnitude == 1.0 && y.is_infinite()) {
        return 1.0;
    }
    let p = exp_f32(y * log_f32(magnitude));
    if x < 0.0 {
        if y.floor() == y {
            if (y * 0.5).floor() * 2.0 != y {
                -p
            } else {
                p
            }
        } else {
            f32::from_bits(QUIET_NAN)
        }
    } else {
        p
    }
}
