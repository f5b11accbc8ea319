//! Halide's composite intrinsics — `absd`, `mux`, `lerp`, `saturating_cast` —
//! built from the IR's own nodes (selects, casts, wrapping unsigned
//! arithmetic), so that every executor, analysis, printer and the wire
//! format handle them as the nodes they expand to. Halide's own definitions
//! are the reference: `absd` and `mux` as documented in `IROperator.h`,
//! `lerp` as `lower_lerp` in `Lerp.cpp` computes it.

use crate::error::LangError;
use crate::ir::expr::{match_types, BinOp, CmpOp, Expr, MathFn};
use crate::ir::types::{ScalarType, Type};
use crate::lang::ops::AsExpr;

/// The unsigned integer type of `bits` bits.
fn unsigned(bits: u32) -> ScalarType {
    match bits {
        8 => ScalarType::U8,
        16 => ScalarType::U16,
        32 => ScalarType::U32,
        _ => ScalarType::U64,
    }
}

/// A constant of type `ty` (with its lanes) holding the unsigned `v`.
fn uint(v: u64, ty: Type) -> Expr {
    Expr::int(v as i64, ty)
}

fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::binary(op, a, b)
}

/// `|a - b|` without overflow: for integers an unsigned value of the
/// operands' width (the difference of two `i8` values can reach 255), for
/// floats `abs(a - b)` in their type, as Halide's `absd`.
pub fn absd(a: impl AsExpr, b: impl AsExpr) -> Expr {
    let (a, b) = match_types(a.as_expr(), b.as_expr());
    let ty = a.ty();
    if !ty.is_int() {
        return Expr::math(MathFn::Abs, vec![bin(BinOp::Sub, a, b)]);
    }
    // The difference of the unsigned images wraps to the exact distance,
    // which is below 2^bits.
    let u = Type::scalar(unsigned(ty.bits())).with_lanes(ty.lanes);
    let (ua, ub) = (Expr::cast(u, a.clone()), Expr::cast(u, b.clone()));
    Expr::select(Expr::cmp(CmpOp::Lt, a, b), bin(BinOp::Sub, ub.clone(), ua.clone()), bin(BinOp::Sub, ua, ub))
}

/// `values[id]`, the last value when `id` is out of range (negative or
/// past the end), as Halide's `mux`: a select chain. The values must have
/// one type, and there must be at least one.
pub fn mux(id: impl AsExpr, values: &[Expr]) -> Result<Expr, LangError> {
    let id = id.as_expr();
    let Some((last, rest)) = values.split_last() else {
        return Err(LangError::Intrinsic { name: "mux", why: "it needs at least one value".into() });
    };
    if !id.ty().is_int() {
        return Err(LangError::Intrinsic { name: "mux", why: format!("its index {id} is a {}, not an integer", id.ty()) });
    }
    if let Some(v) = rest.iter().find(|v| v.ty() != last.ty()) {
        return Err(LangError::Intrinsic {
            name: "mux",
            why: format!("its values must have one type, but {v} is a {} and {last} a {}", v.ty(), last.ty()),
        });
    }
    Ok(rest
        .iter()
        .enumerate()
        .rev()
        .fold(last.clone(), |acc, (i, v)| Expr::select(Expr::cmp(CmpOp::Eq, id.clone(), Expr::int(i as i64, id.ty())), v.clone(), acc)))
}

/// `e` converted to `ty` with out-of-range values clamped to the nearest
/// value of `ty`, as Halide's `saturating_cast`: integers are clamped to the
/// target's range (within their own type) before the cast; a float to an
/// integer needs nothing more than the cast (which saturates, NaN giving
/// 0); a float narrowed to `f32` is clamped to `[-f32::MAX, f32::MAX]`
/// (NaN stays NaN); everything else is the plain cast.
pub fn saturating_cast(ty: Type, e: impl AsExpr) -> Expr {
    let e = e.as_expr();
    let from = e.ty();
    let (f, t) = (from.scalar, ty.scalar);
    if f.is_int() && t.is_int() {
        let (lo, hi) = (t.int_min().max(f.int_min()), t.int_max().min(f.int_max()));
        let c = |v: i128| Expr::int(v as i64, from);
        let mut e = e;
        if hi < f.int_max() {
            e = Expr::min(e, c(hi));
        }
        if lo > f.int_min() {
            e = Expr::max(e, c(lo));
        }
        return Expr::cast(ty, e);
    }
    if f.is_float() && t.is_float() && t.bits() < f.bits() {
        // min and max drop a NaN operand, so NaN is passed around the clamp.
        let m = f64::from(f32::MAX);
        let clamped = Expr::max(Expr::min(e.clone(), Expr::float(m, from)), Expr::float(-m, from));
        return Expr::cast(ty, Expr::select(Expr::math(MathFn::IsNan, vec![e.clone()]), e, clamped));
    }
    Expr::cast(ty, e)
}

/// The unsigned weight `w` of `m` bits rescaled to `bits` bits,
/// `w * (2^bits - 1) / (2^m - 1)` rounded down, by the factor
/// `(2^k + 1)(2^2k + 1)...` of `lower_lerp` (multiplied when the weight is
/// narrower, divided when wider; the factor is kept exact for 64-bit
/// weights, where Halide's 32-bit copy of it wraps).
fn rescaled_weight(w: Expr, bits: u32) -> Expr {
    let wbits = w.ty().bits();
    let u = Type::scalar(unsigned(bits)).with_lanes(w.ty().lanes);
    if wbits == bits {
        return w;
    }
    let mut factor: u64 = 1;
    let mut shift = bits.min(wbits);
    let mut left = bits.abs_diff(wbits);
    while left > 0 {
        factor += factor << shift;
        left -= shift;
        shift *= 2;
    }
    if wbits < bits {
        bin(BinOp::Mul, Expr::cast(u, w), uint(factor, u))
    } else {
        let wt = w.ty();
        Expr::cast(u, bin(BinOp::Div, w, uint(factor, wt)))
    }
}

/// `zero * (1 - weight) + one * weight`, as Halide's `lerp`. `zero` and
/// `one` are matched to one type; the weight is a float (in `[0, 1]`) or an
/// unsigned integer (or bool) read as a fraction of its type's maximum.
///
/// - Floats: `zero * (1 - w) + one * w` in their type (an unsigned weight
///   divided by its maximum, in f32, in f64 for a 32-bit or wider weight).
/// - Integers of 8, 16 or 32 bits: in the unsigned type of their width
///   (signed values offset by their minimum), the weight scaled to that
///   width (`max * w` for a float), `zero * (max - w) + one * w` in the
///   double width, divided by `max` rounding to nearest as `lower_lerp`
///   does (`((p + 2^(b-1)) / 2^b + p + 2^(b-1)) / 2^b`).
/// - Bools: `one` when the weight is above half its range, else `zero`.
///
/// A signed integer weight, 64-bit integer values (Halide cannot lerp them
/// either) and a constant float weight outside `[0, 1]` for integer values
/// are [`LangError::Intrinsic`].
pub fn lerp(zero: impl AsExpr, one: impl AsExpr, weight: impl AsExpr) -> Result<Expr, LangError> {
    let (zero, one) = match_types(zero.as_expr(), one.as_expr());
    let w = weight.as_expr();
    let (ty, wt) = (zero.ty(), w.ty());
    let fail = |why: String| Err(LangError::Intrinsic { name: "lerp", why });
    if wt.is_signed_int() {
        return fail(format!("its weight {w} is a {wt}; weights are floats in [0, 1] or unsigned integers"));
    }
    if ty.is_int() && ty.bits() == 64 {
        return fail(format!("its values are {ty}; 64-bit integers cannot be interpolated (cast them to f64)"));
    }
    if let Some(c) = w.as_float().filter(|c| !ty.is_float() && !(0.0..=1.0).contains(c)) {
        return fail(format!("its constant weight {c} is outside [0, 1]"));
    }
    let lanes = ty.lanes.max(wt.lanes);
    if ty.is_float() {
        let w = if wt.is_float() {
            Expr::cast(ty.with_lanes(wt.lanes), w)
        } else {
            let div = if wt.bits() >= 32 { Type::f64() } else { Type::f32() };
            let max = (2f64).powi(wt.bits() as i32) - 1.0;
            Expr::cast(ty.with_lanes(wt.lanes), bin(BinOp::Div, Expr::cast(div.with_lanes(wt.lanes), w), Expr::float(max, div)))
        };
        let inverse = bin(BinOp::Sub, Expr::float(1.0, ty.element()), w.clone());
        return Ok(bin(BinOp::Add, bin(BinOp::Mul, zero, inverse), bin(BinOp::Mul, one, w)));
    }
    if ty.is_bool() {
        let half =
            if wt.is_float() { Expr::float(0.5, wt.element()) } else { uint((wt.element().scalar.int_max() / 2) as u64, wt.element()) };
        return Ok(Expr::select(Expr::cmp(CmpOp::Gt, w, half), one, zero));
    }
    let bits = ty.bits();
    let u = Type::scalar(unsigned(bits)).with_lanes(lanes);
    let max = u.scalar.int_max() as u64;
    // Signed values are offset by their minimum into the unsigned range.
    let bias = ty.is_signed_int().then(|| uint(ty.scalar.int_min() as u64, u));
    let offset = |v: Expr| match &bias {
        Some(b) => bin(BinOp::Sub, Expr::cast(u, v), b.clone()),
        None => Expr::cast(u, v),
    };
    let typed_weight = if wt.is_float() {
        let product = if bits == 32 {
            bin(BinOp::Mul, Expr::float(max as f64, Type::f64()), Expr::cast(Type::f64().with_lanes(wt.lanes), w))
        } else {
            bin(BinOp::Mul, Expr::float(max as f64, wt.element()), w)
        };
        Expr::cast(u, product)
    } else {
        // A bool weight is the fraction 0 or 1: as a u8, 0 or 255.
        let w = if wt.is_bool() { bin(BinOp::Mul, Expr::cast(Type::u8().with_lanes(wt.lanes), w), uint(255, Type::u8())) } else { w };
        Expr::cast(u, rescaled_weight(w, bits))
    };
    let inverse = bin(BinOp::Sub, uint(max, u), typed_weight.clone());
    let wide = Type::scalar(unsigned(2 * bits)).with_lanes(lanes);
    let widen = |v: Expr| Expr::cast(wide, v);
    let half = uint(1 << (bits - 1), wide);
    let divisor = uint(1 << bits, wide);
    let p = bin(
        BinOp::Add,
        bin(BinOp::Add, bin(BinOp::Mul, widen(offset(zero)), widen(inverse)), bin(BinOp::Mul, widen(offset(one)), widen(typed_weight))),
        half,
    );
    let divided = bin(BinOp::Div, bin(BinOp::Add, bin(BinOp::Div, p.clone(), divisor.clone()), p), divisor);
    let result = Expr::cast(u, divided);
    Ok(Expr::cast(
        ty.with_lanes(lanes),
        match bias {
            Some(b) => bin(BinOp::Add, result, b),
            None => result,
        },
    ))
}
