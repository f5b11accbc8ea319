//! The f32 exponential, as every executor computes it: range reduction
//! (`x = k ln 2 + r`, `k` the nearest integer to `x / ln 2`), a degree-5
//! polynomial for `e^r` on `|r| <= ln(2)/2`, and `2^k` built in a float's
//! exponent field. Relative error below 2e-7 on `[-87, 88]` (the test
//! `compiler/tests/fast_math.rs` measures it); 0 below -87, `+inf` above 88,
//! NaN stays NaN.
//!
//! One definition in two forms that agree bit for bit: [`expansion`], the
//! same steps as IR nodes (lowering replaces every f32 `exp` call by it, so
//! compiled code computes it in vector registers rather than calling the C
//! library lane by lane; `fast_exp` is it too), and [`exp_f32`], the steps
//! on one `f32` (the reference evaluator, the interpreter and constant
//! folding). `compiler/tests/exp.rs` checks that they agree on a sweep.

use crate::ir::expr::{BinOp, CmpOp, Expr, MathFn};
use crate::ir::f32_nodes::f32c;
use crate::ir::types::Type;

/// `exp(r)` on `r` in `[-ln(2)/2, ln(2)/2]`, constant term first: 1
/// exactly (so `exp(0) = 1`), the rest fitted to `exp(r) - 1` (relative
/// error 9.1e-8 before rounding to f32).
const POLYNOMIAL: [f64; 6] =
    [1.0, 0.999_999_701_976_776_1, 0.499_991_506_338_119_5, 0.166_676_357_388_496_4, 0.041_897_933_930_158_615, 0.008_290_315_046_906_471];

/// `ln(2)` split so that `k * LN2_HIGH` is exact for the `|k| <= 128` met
/// (the high part has 16 significant bits).
pub(crate) const LN2_HIGH: f64 = 0.693_145_751_953_125;
pub(crate) const LN2_LOW: f64 = 1.428_606_765_330_187e-6;

/// The range computed; below it 0, above it `+inf`.
pub(crate) const LOW: f64 = -87.0;
pub(crate) const HIGH: f64 = 88.0;

/// `body(v)` where `v` names `value`, bound once by a `let` called `name`
/// (a variable or a constant is used as it is).
pub(crate) fn bind(name: &str, value: Expr, body: impl FnOnce(Expr) -> Expr) -> Expr {
    if value.as_var().is_some() || value.is_const() {
        return body(value);
    }
    let v = Expr::var(name, value.ty());
    Expr::let_in(name, value, body(v))
}

/// `c[0] + t * (c[1] + t * (...))` as nodes.
pub(crate) fn horner(t: &Expr, c: &[f64]) -> Expr {
    c.iter().rev().skip(1).fold(f32c(c[c.len() - 1]), |acc, &k| Expr::binary(BinOp::Add, f32c(k), Expr::binary(BinOp::Mul, t.clone(), acc)))
}

/// `e^x` for the f32 expression `x`, as nodes (`x` bound once).
pub fn expansion(x: Expr) -> Expr {
    bind("fast_exp$x", x, |x| {
        let (add, sub, mul) =
            (|a, b| Expr::binary(BinOp::Add, a, b), |a, b| Expr::binary(BinOp::Sub, a, b), |a, b| Expr::binary(BinOp::Mul, a, b));
        let cmp = |op, a: &Expr, b| Expr::cmp(op, a.clone(), b);
        let clamped = Expr::clamp(x.clone(), f32c(LOW), f32c(HIGH));
        let y = bind("fast_exp$c", clamped, |c| {
            let k = Expr::math(MathFn::Floor, vec![add(mul(c.clone(), f32c(std::f64::consts::LOG2_E)), f32c(0.5))]);
            bind("fast_exp$k", k, |k| {
                let r = sub(sub(c, mul(k.clone(), f32c(LN2_HIGH))), mul(k.clone(), f32c(LN2_LOW)));
                let exponent = Expr::cast(Type::u32(), add(Expr::cast(Type::i32(), k), Expr::i32(127)));
                let scale = Expr::reinterpret(Type::f32(), Expr::shift(BinOp::Shl, exponent, Expr::i32(23)));
                bind("fast_exp$r", r, |r| mul(horner(&r, &POLYNOMIAL), scale))
            })
        });
        let inside = Expr::select(cmp(CmpOp::Le, &x, f32c(HIGH)), y, f32c(f64::INFINITY));
        let outside = Expr::select(cmp(CmpOp::Lt, &x, f32c(LOW)), f32c(0.0), x.clone());
        Expr::select(cmp(CmpOp::Ge, &x, f32c(LOW)), inside, outside)
    })
}

/// `e^x`, computed as [`expansion`]'s nodes compute it.
pub fn exp_f32(x: f32) -> f32 {
    let (low, high) = (LOW as f32, HIGH as f32);
    if x >= low {
        if x <= high {
            // The clamp leaves such an `x` as it is.
            let k = (x * std::f64::consts::LOG2_E as f32 + 0.5).floor();
            let r = (x - k * LN2_HIGH as f32) - k * LN2_LOW as f32;
            // A float in [-126, 128] converts exactly; the sum wraps as i32
            // arithmetic does, then is read as u32.
            let exponent = (k as i32).wrapping_add(127) as u32;
            let scale = f32::from_bits(exponent.wrapping_shl(23));
            let p = POLYNOMIAL.iter().rev().skip(1).fold(POLYNOMIAL[POLYNOMIAL.len() - 1] as f32, |acc, &c| c as f32 + r * acc);
            p * scale
        } else {
            f32::INFINITY
        }
    } else if x < low {
        0.0
    } else {
        x
    }
}
