//! Interval arithmetic over expressions: the range of values an expression
//! takes when its variables range over intervals.
//!
//! An [`Interval`] has symbolic bounds (`None` means unbounded). Variables in
//! the [`Scope`] range over intervals (loop variables, lets inside the
//! analysed statement); every other variable is a single symbolic point. This
//! is the bounds inference of the thesis: it works through arithmetic,
//! clamps, selects, min/max, divisions and data-dependent loads (bounded by
//! their type), where polyhedral analysis would give up. The box a whole
//! statement touches is built on this in [`crate::analysis::footprint`].

use crate::ir::expr::{BinOp, CallTarget, Expr, ExprNode, Name};
use crate::ir::semantics::bit_op_range;
use crate::ir::types::{ScalarType, Type};
use crate::simplify::simplify;
use std::collections::HashMap;

/// A closed interval `[min, max]`; `None` bounds are infinite.
#[derive(Clone, Debug, PartialEq)]
pub struct Interval {
    /// The lower bound; `None` for negative infinity.
    pub min: Option<Expr>,
    /// The upper bound; `None` for positive infinity.
    pub max: Option<Expr>,
}

impl Interval {
    /// The interval holding `e` alone.
    pub fn point(e: Expr) -> Interval {
        Interval { min: Some(e.clone()), max: Some(e) }
    }

    /// The interval `[min, max]`.
    pub fn new(min: Expr, max: Expr) -> Interval {
        Interval { min: Some(min), max: Some(max) }
    }

    /// The unbounded interval.
    pub fn everything() -> Interval {
        Interval { min: None, max: None }
    }

    /// Whether both bounds are finite.
    pub fn is_bounded(&self) -> bool {
        self.min.is_some() && self.max.is_some()
    }

    /// The smallest interval containing both.
    pub fn union(&self, other: &Interval) -> Interval {
        Interval { min: both(&self.min, &other.min, Expr::min), max: both(&self.max, &other.max, Expr::max) }
    }

    /// Both bounds simplified.
    pub(super) fn simplified(self) -> Interval {
        Interval { min: self.min.map(|e| simplify(&e)), max: self.max.map(|e| simplify(&e)) }
    }
}

fn both(a: &Option<Expr>, b: &Option<Expr>, f: fn(Expr, Expr) -> Expr) -> Option<Expr> {
    match (a, b) {
        (Some(a), Some(b)) if a == b => Some(a.clone()),
        (Some(a), Some(b)) => Some(f(a.clone(), b.clone())),
        _ => None,
    }
}

fn lift(a: &Option<Expr>, b: &Option<Expr>, f: impl Fn(Expr, Expr) -> Expr) -> Option<Expr> {
    Some(f(a.clone()?, b.clone()?))
}

/// Variables that range over intervals, with shadowing.
#[derive(Clone, Default)]
pub struct Scope {
    vars: HashMap<Name, Vec<Interval>>,
}

impl Scope {
    /// Makes `name` range over `i`, shadowing any earlier interval of it
    /// until [`Scope::pop`].
    pub fn push(&mut self, name: Name, i: Interval) {
        self.vars.entry(name).or_default().push(i);
    }

    /// Removes the latest interval of `name`, uncovering the one it shadowed.
    pub fn pop(&mut self, name: &str) {
        if let Some(v) = self.vars.get_mut(name) {
            v.pop();
            if v.is_empty() {
                self.vars.remove(name);
            }
        }
    }

    /// The interval `name` ranges over, if it is in scope.
    pub fn get(&self, name: &str) -> Option<&Interval> {
        self.vars.get(name).and_then(|v| v.last())
    }

    /// Whether `name` ranges over an interval here.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    fn depends_on_ranged(&self, e: &Expr) -> bool {
        let mut fv = crate::ir::visit::FreeVars::default();
        crate::ir::visit::Visitor::visit_expr(&mut fv, e);
        fv.names.iter().any(|n| self.contains(n))
    }

    /// Whether `e` may take different values in the region: it mentions a
    /// ranged variable, or it reads a Func, an input or a buffer. A bound
    /// never names a read: its value may not exist yet where the bound is
    /// evaluated (a Func computed at the same loop level as the one whose
    /// region the bound is), so reads count as varying.
    fn varies(&self, e: &Expr) -> bool {
        self.depends_on_ranged(e) || reads_memory(e)
    }
}

/// Whether `e` reads a Func, an input or a buffer.
fn reads_memory(e: &Expr) -> bool {
    e.reads_memory()
        && crate::ir::visit::expr_any_node(e, |n| {
            matches!(n, ExprNode::Call { target: CallTarget::Func(_) | CallTarget::Input(_), .. } | ExprNode::Load { .. })
        })
}

/// The range of values a `ty` value can take, when it is small enough to
/// bound an index (integers of at most 16 bits and bools).
fn type_range(ty: Type) -> Interval {
    let s = ty.scalar;
    if (s.is_int() && s.bits() <= 16) || s.is_bool() {
        Interval::new(Expr::int(s.int_min() as i64, ty), Expr::int(s.int_max() as i64, ty))
    } else {
        Interval::everything()
    }
}

/// The interval of values `e` takes when the variables of `scope` range over
/// their intervals.
pub fn bounds_of(e: &Expr, scope: &Scope) -> Interval {
    raw_bounds(e, scope).simplified()
}

/// Whether `e` has one value throughout the region: it mentions no ranged
/// variable, and no load or call whose value the bound could not name.
fn is_fixed(e: &Expr, scope: &Scope) -> bool {
    e.ty().lanes == 1 && !scope.varies(e)
}

/// [`bounds_of`] without the final simplification.
pub(super) fn raw_bounds(e: &Expr, scope: &Scope) -> Interval {
    if is_fixed(e, scope) {
        return Interval::point(e.clone());
    }
    match e.node() {
        ExprNode::IntImm { .. } | ExprNode::UIntImm { .. } | ExprNode::FloatImm { .. } => Interval::point(e.clone()),
        ExprNode::Var { name, .. } => scope.get(name).cloned().unwrap_or_else(|| Interval::point(e.clone())),
        ExprNode::Param { name, ty, .. } => Interval::point(Expr::var(name.clone(), *ty)),
        ExprNode::RVar { .. } => Interval::point(e.clone()),
        ExprNode::Cast { ty, value } => cast_bounds(*ty, value, scope),
        ExprNode::Reinterpret { ty, .. } => type_range(*ty),
        ExprNode::Binary { op, a, b } => binary_bounds(*op, a, b, scope),
        ExprNode::Cmp { .. } | ExprNode::And { .. } | ExprNode::Or { .. } | ExprNode::Not { .. } => {
            if scope.varies(e) {
                Interval::new(Expr::bool(false), Expr::bool(true))
            } else {
                Interval::point(e.clone())
            }
        }
        ExprNode::Select { cond, t, f } => {
            let (ti, fi) = (raw_bounds(t, scope), raw_bounds(f, scope));
            if scope.varies(cond) {
                ti.union(&fi)
            } else {
                // The condition is the same everywhere in the region: keep it.
                Interval {
                    min: lift(&ti.min, &fi.min, |a, b| Expr::select(cond.clone(), a, b)),
                    max: lift(&ti.max, &fi.max, |a, b| Expr::select(cond.clone(), a, b)),
                }
            }
        }
        ExprNode::Let { name, value, body } => let_bounds(name, value, body, scope),
        ExprNode::Call { target: CallTarget::Math(f), args, ty } => math_bounds(*f, args, *ty, scope),
        ExprNode::Call { ty, .. } | ExprNode::Load { ty, .. } => type_range(*ty),
        ExprNode::Ramp { .. } | ExprNode::Broadcast { .. } => Interval::everything(),
    }
}

/// The bounds of `let name = value in body`. Each end of the value's
/// interval that is not a constant or a variable stays behind a name of its
/// own, defined around the body's bounds by a `let`: written out at each use
/// instead, a body that uses the variable twice would double it, and a
/// chain of such lets (the bounds of a chain of clamped stencils) would
/// grow exponentially.
fn let_bounds(name: &Name, value: &Expr, body: &Expr, scope: &Scope) -> Interval {
    let vi = raw_bounds(value, scope);
    let mut named = vec![];
    let mut end = |e: Option<Expr>, which: &str| {
        e.map(|e| {
            if e.as_var().is_some() || e.is_const() {
                return e;
            }
            let n: Name = format!("{name}.{which}").into();
            named.push((n.clone(), e.clone()));
            Expr::var(n, e.ty())
        })
    };
    let interval = Interval { min: end(vi.min, "lowest"), max: end(vi.max, "highest") };
    let mut inner = scope.clone();
    inner.push(name.clone(), interval);
    let bi = raw_bounds(body, &inner);
    Interval { min: bi.min.map(|e| with_lets(e, &named)), max: bi.max.map(|e| with_lets(e, &named)) }
}

/// `e` inside `let` expressions defining those of `lets` (outermost first,
/// each value free to name the ones before it) that it uses, directly or
/// through another.
///
/// One walk of `e` and of each let it needs, innermost first, whatever the
/// number of lets: testing each let against the expression wrapped so far
/// walked that growing expression once per let, quadratic in a long chain
/// of bounds.
pub(crate) fn with_lets(e: Expr, lets: &[(Name, Expr)]) -> Expr {
    let mut needed = crate::ir::visit::free_vars(&e);
    let mut used = vec![];
    for (n, v) in lets.iter().rev() {
        if needed.remove(n) {
            needed.extend(crate::ir::visit::free_vars(v));
            used.push((n, v));
        }
    }
    used.into_iter().fold(e, |b, (n, v)| Expr::let_in(n.clone(), v.clone(), b))
}

fn cast_bounds(ty: Type, value: &Expr, scope: &Scope) -> Interval {
    let from = value.ty();
    let inner = raw_bounds(value, scope);
    let cast = |e: Option<Expr>| e.map(|e| Expr::cast(ty, e));
    let widening = if from.is_float() || ty.is_float() {
        // Float conversions are monotone (float-to-int truncates and saturates).
        true
    } else {
        let (fs, ts) = (from.scalar, ty.scalar);
        ts.int_min() <= fs.int_min() && ts.int_max() >= fs.int_max()
    };
    if widening {
        // Where the value is unbounded, the result is still within what
        // the conversion can give: the target type's range for a float
        // converted to an integer (it saturates), the source type's range
        // for a widened integer.
        let fallback = if from.is_float() { type_range(ty) } else { type_range(from) };
        return Interval { min: cast(inner.min.or(fallback.min)), max: cast(inner.max.or(fallback.max)) };
    }
    // A narrowing conversion may wrap: the target type bounds the result,
    // and so do the constant bounds the simplifier proves of the converted
    // value (`i32(x / u32(2))` of a u32 `x` never wraps below 0).
    let (lo, hi) = crate::simplify::const_bounds(&Expr::cast(ty, value.clone()));
    let range = type_range(ty);
    Interval { min: lo.map(|v| Expr::int(v, ty)).or(range.min), max: hi.map(|v| Expr::int(v, ty)).or(range.max) }
}

fn binary_bounds(op: BinOp, a: &Expr, b: &Expr, scope: &Scope) -> Interval {
    let (ai, bi) = (raw_bounds(a, scope), raw_bounds(b, scope));
    let bin = |op: BinOp| move |x: Expr, y: Expr| Expr::binary(op, x, y);
    match op {
        BinOp::Add => Interval { min: lift(&ai.min, &bi.min, bin(BinOp::Add)), max: lift(&ai.max, &bi.max, bin(BinOp::Add)) },
        BinOp::Sub => Interval { min: lift(&ai.min, &bi.max, bin(BinOp::Sub)), max: lift(&ai.max, &bi.min, bin(BinOp::Sub)) },
        BinOp::Min => Interval { min: both(&ai.min, &bi.min, Expr::min), max: one_or_both(&ai.max, &bi.max, Expr::min) },
        BinOp::Max => Interval { min: one_or_both(&ai.min, &bi.min, Expr::max), max: both(&ai.max, &bi.max, Expr::max) },
        BinOp::Mul => mul_bounds(&ai, &bi, b),
        BinOp::Div => match const_of(b) {
            Some(c) if c > 0.0 => Interval { min: ai.min.map(|x| x / b.clone()), max: ai.max.map(|x| x / b.clone()) },
            Some(c) if c < 0.0 => Interval { min: ai.max.map(|x| x / b.clone()), max: ai.min.map(|x| x / b.clone()) },
            // For a fixed divisor, division is monotone in the dividend.
            _ if bi.is_bounded() && bi.min == bi.max && ai.is_bounded() => {
                let d = bi.min.unwrap();
                let (lo, hi) = (ai.min.unwrap() / d.clone(), ai.max.unwrap() / d);
                Interval::new(Expr::min(lo.clone(), hi.clone()), Expr::max(lo, hi))
            }
            _ => Interval::everything(),
        },
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => bitwise_bounds(op, a.ty(), &ai, &bi),
        BinOp::Mod => {
            if a.ty().is_float() {
                return Interval::everything();
            }
            let ty = a.ty();
            match (bi.min.as_ref().and_then(|m| m.as_int()), bi.max.as_ref().and_then(|m| m.as_int())) {
                (Some(lo), Some(hi)) => {
                    let m = lo.abs().max(hi.abs());
                    if m == 0 {
                        return Interval::point(Expr::int(0, ty));
                    }
                    Interval::new(Expr::int(0, ty), Expr::int(m - 1, ty))
                }
                _ => match (&bi.min, &bi.max) {
                    (Some(lo), Some(hi)) => Interval::new(
                        Expr::int(0, ty),
                        Expr::max(
                            Expr::math(crate::ir::expr::MathFn::Abs, vec![lo.clone()]),
                            Expr::math(crate::ir::expr::MathFn::Abs, vec![hi.clone()]),
                        ) - 1,
                    ),
                    _ => Interval { min: Some(Expr::int(0, ty)), max: None },
                },
            }
        }
    }
}

/// Bounds of a bitwise operator or shift of `ty` values: exact ranges
/// ([`bit_op_range`]) for constant operand bounds; `x & m` within `[0, m]`
/// for a non-negative `m`; a shift by a constant count as a monotone map
/// of the bounds (a left shift only of index types, whose arithmetic is
/// assumed not to overflow, as for `*`); otherwise the type's range.
fn bitwise_bounds(op: BinOp, ty: Type, ai: &Interval, bi: &Interval) -> Interval {
    let int = |e: &Option<Expr>| e.as_ref().and_then(|e| simplify(e).as_int()).map(i128::from);
    let constant = |i: &Interval| int(&i.min).zip(int(&i.max));
    let of = |v: i128| Expr::int(v as i64, ty);
    if let (Some(x), Some(y)) = (constant(ai), constant(bi)) {
        let (lo, hi) = bit_op_range(op, ty.scalar, x, y);
        return Interval::new(of(lo), of(hi));
    }
    let non_negative = |i: &Interval| int(&i.min).is_some_and(|m| m >= 0) && i.max.is_some();
    // A constant count, as a shift left by it, clamped to [-bits, bits]
    // (every count beyond gives the same result).
    let bits = ty.bits() as i128;
    let count = constant(bi).filter(|(lo, hi)| lo == hi).map(|(n, _)| if op == BinOp::Shr { -n } else { n }.clamp(-bits, bits));
    match op {
        BinOp::BitAnd if non_negative(ai) || non_negative(bi) => {
            let max = |i: &Interval| if non_negative(i) { i.max.clone() } else { None };
            Interval { min: Some(of(0)), max: one_or_both(&max(ai), &max(bi), Expr::min) }
        }
        BinOp::Shl | BinOp::Shr => match count {
            Some(n) if n <= 0 => {
                let shift = |e: &Option<Expr>| e.clone().map(|e| Expr::shift(BinOp::Shr, e, of(-n)));
                Interval { min: shift(&ai.min), max: shift(&ai.max) }
            }
            Some(n) if n < bits - 1 && matches!(ty.scalar, ScalarType::I32 | ScalarType::I64) => {
                mul_bounds(ai, &Interval::point(of(1 << n)), &of(1 << n))
            }
            _ => type_range(ty),
        },
        _ => type_range(ty),
    }
}

/// min(x, unbounded) keeps x as an upper bound (and max keeps a lower bound).
pub(super) fn one_or_both(a: &Option<Expr>, b: &Option<Expr>, f: fn(Expr, Expr) -> Expr) -> Option<Expr> {
    match (a, b) {
        (Some(_), Some(_)) => both(a, b, f),
        (Some(x), None) | (None, Some(x)) => Some(x.clone()),
        (None, None) => None,
    }
}

fn const_of(e: &Expr) -> Option<f64> {
    let e = simplify(e);
    e.as_int().map(|v| v as f64).or(e.as_float())
}

fn mul_bounds(ai: &Interval, bi: &Interval, b: &Expr) -> Interval {
    if let Some(c) = const_of(b) {
        let scale = |x: &Option<Expr>| x.clone().map(|x| x * b.clone());
        return if c >= 0.0 {
            Interval { min: scale(&ai.min), max: scale(&ai.max) }
        } else {
            Interval { min: scale(&ai.max), max: scale(&ai.min) }
        };
    }
    if !(ai.is_bounded() && bi.is_bounded()) {
        return Interval::everything();
    }
    let (a0, a1, b0, b1) = (ai.min.clone().unwrap(), ai.max.clone().unwrap(), bi.min.clone().unwrap(), bi.max.clone().unwrap());
    if a0 == a1 && b0 == b1 {
        return Interval::point(a0 * b0);
    }
    let products = [a0.clone() * b0.clone(), a0 * b1.clone(), a1.clone() * b0, a1 * b1];
    let lo = products.iter().cloned().reduce(Expr::min).unwrap();
    let hi = products.iter().cloned().reduce(Expr::max).unwrap();
    Interval::new(lo, hi)
}

fn math_bounds(f: crate::ir::expr::MathFn, args: &[Expr], ty: Type, scope: &Scope) -> Interval {
    use crate::ir::expr::MathFn::*;
    match f {
        Floor | Ceil | Round | Trunc | Sqrt | Exp | Log | Tanh => {
            let i = raw_bounds(&args[0], scope);
            let apply = |x: Option<Expr>| x.map(|x| Expr::math(f, vec![x]));
            Interval { min: apply(i.min), max: apply(i.max) }
        }
        Sin | Cos if ty.is_float() => Interval::new(Expr::float(-1.0, ty), Expr::float(1.0, ty)),
        Popcount | CountLeadingZeros | CountTrailingZeros => Interval::new(Expr::int(0, ty), Expr::int(ty.bits().into(), ty)),
        IsNan | IsInf | IsFinite => type_range(ty),
        PromiseClamped => promise_bounds(args, scope),
        _ => Interval::everything(),
    }
}

/// The bounds of `promise_clamped(value, lo, hi)`, which loop synthesis
/// wraps around a value that sweeps `[lo, hi]` as one loop runs (the start
/// of a split's tile, a fused dimension). Where that loop ranges here (a
/// variable of `value` that `lo` and `hi` do not mention), the promise is
/// the bound: `[lo, hi]`, short and exact. Where it is fixed (the walk
/// starts inside the loop, or the loop was substituted away), the value's
/// own bounds are the tile's, and the promise only fills a side they leave
/// open.
fn promise_bounds(args: &[Expr], scope: &Scope) -> Interval {
    let promised = || Interval { min: raw_bounds(&args[1], scope).min, max: raw_bounds(&args[2], scope).max };
    let mut ends = crate::ir::visit::FreeVars::default();
    crate::ir::visit::Visitor::visit_expr(&mut ends, &args[1]);
    crate::ir::visit::Visitor::visit_expr(&mut ends, &args[2]);
    let mut iterations = crate::ir::visit::FreeVars::default();
    crate::ir::visit::Visitor::visit_expr(&mut iterations, &args[0]);
    if iterations.names.iter().any(|n| !ends.names.contains(n) && scope.contains(n)) {
        return promised();
    }
    let own = raw_bounds(&args[0], scope);
    if own.min.is_some() && own.max.is_some() {
        return own;
    }
    let p = promised();
    Interval { min: own.min.or(p.min), max: own.max.or(p.max) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_variables_range_and_outer_variables_stay_symbolic() {
        let mut scope = Scope::default();
        scope.push("x".into(), Interval::new(Expr::i32(0), Expr::i32(7)));
        let e = Expr::ivar("x") * 2 + Expr::ivar("n");
        let i = bounds_of(&e, &scope);
        assert!(i.is_bounded());
        let i = bounds_of(&Expr::clamp(Expr::ivar("z"), Expr::i32(0), Expr::i32(9)), &scope);
        assert!(i.is_bounded(), "{i:?}");
    }

    #[test]
    fn loads_of_wide_types_are_unbounded() {
        let scope = Scope::default();
        let load = Expr::load("b", Expr::i32(0), Type::i32());
        assert!(!bounds_of(&load, &scope).is_bounded());
        let small = Expr::load("b", Expr::i32(0), Type::u8());
        assert!(bounds_of(&small, &scope).is_bounded());
    }

    #[test]
    fn bit_counts_lie_within_the_width_and_trunc_is_monotone() {
        use crate::ir::expr::MathFn;
        let scope = Scope::default();
        let load = Expr::load("b", Expr::i32(0), Type::i64());
        for f in [MathFn::Popcount, MathFn::CountLeadingZeros, MathFn::CountTrailingZeros] {
            assert_eq!(constant_bounds(&Expr::math(f, vec![load.clone()]), &scope), Some((0, 64)), "{f:?}");
        }
        let mut scope = Scope::default();
        scope.push("v".into(), Interval::new(Expr::float(-2.5, Type::f32()), Expr::float(3.5, Type::f32())));
        let i = bounds_of(&Expr::math(MathFn::Trunc, vec![Expr::var("v", Type::f32())]), &scope);
        assert_eq!((i.min.and_then(|e| e.as_float()), i.max.and_then(|e| e.as_float())), (Some(-2.0), Some(3.0)));
    }

    fn constant_bounds(e: &Expr, scope: &Scope) -> Option<(i64, i64)> {
        let i = bounds_of(e, scope);
        i.min.and_then(|m| m.as_int()).zip(i.max.and_then(|m| m.as_int()))
    }

    #[test]
    fn bitwise_operators_and_shifts_are_bounded() {
        let mut scope = Scope::default();
        scope.push("x".into(), Interval::new(Expr::i32(-1000), Expr::i32(1000)));
        let x = Expr::ivar("x");
        let and = |a: Expr, b: Expr| Expr::bitwise(BinOp::BitAnd, a, b);
        // A non-negative mask bounds the result whatever the sign of the other operand.
        assert_eq!(constant_bounds(&and(x.clone(), Expr::i32(255)), &scope), Some((0, 255)));
        let shr = Expr::shift(BinOp::Shr, x.clone(), Expr::i32(2));
        assert_eq!(constant_bounds(&shr, &scope), Some((-250, 250)));
        let shl = Expr::shift(BinOp::Shl, x.clone(), Expr::i32(3));
        assert_eq!(constant_bounds(&shl, &scope), Some((-8000, 8000)));
        // A negative count shifts the other way.
        assert_eq!(constant_bounds(&Expr::shift(BinOp::Shl, x.clone(), Expr::i32(-1)), &scope), Some((-500, 500)));
        // Symbolic bounds of a shift right by a constant stay symbolic.
        let mut outer = Scope::default();
        outer.push("y".into(), Interval::new(Expr::ivar("lo"), Expr::ivar("hi")));
        let i = bounds_of(&Expr::shift(BinOp::Shr, Expr::ivar("y"), Expr::i32(1)), &outer);
        assert!(i.is_bounded(), "{i:?}");
        // Otherwise the type's range: bounded for narrow types only.
        let narrow = Expr::cast(Type::u8(), x.clone());
        let xor = Expr::bitwise(BinOp::BitXor, x.clone(), Expr::ivar("k"));
        assert!(!bounds_of(&xor, &scope).is_bounded(), "an i32 operand of unknown sign");
        let xor = Expr::bitwise(BinOp::BitXor, narrow.clone(), Expr::cast(Type::u8(), Expr::ivar("k")));
        assert_eq!(constant_bounds(&Expr::cast(Type::i32(), xor), &scope), Some((0, 255)));
        let by_var = Expr::shift(BinOp::Shl, x.clone(), Expr::ivar("k"));
        assert!(!bounds_of(&by_var, &scope).is_bounded());
    }
}
