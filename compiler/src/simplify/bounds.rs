//! Constant bounds of integer (and bool) expressions. They are sound under
//! the wrapping semantics (an operation that could leave its type's range
//! gives the whole range of the type), except that i32/i64 arithmetic on
//! values not read from memory is assumed not to overflow, as in Halide.

use super::Simplifier;
use crate::ir::expr::{BinOp, CallTarget, Expr, ExprNode, MathFn};
use crate::ir::semantics::bit_op_range;
use crate::ir::types::{ScalarType, Type};

/// Whether the simplifier assumes no overflow (scalar i32 and i64, the index types).
pub(super) fn assumes_no_overflow(ty: Type) -> bool {
    !ty.is_vector() && matches!(ty.scalar, ScalarType::I32 | ScalarType::I64)
}

/// A closed interval `[lo, hi]` of integer values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Interval {
    /// The smallest value.
    pub lo: i128,
    /// The largest value.
    pub hi: i128,
}

impl Interval {
    /// The interval `[lo, hi]`.
    pub fn new(lo: i128, hi: i128) -> Interval {
        Interval { lo, hi }
    }

    /// The interval holding `v` alone.
    pub fn point(v: i128) -> Interval {
        Interval::new(v, v)
    }

    /// Every value of an integer or bool type.
    pub fn of_type(t: ScalarType) -> Interval {
        Interval::new(t.int_min(), t.int_max())
    }

    /// Whether every value of this interval lies in `outer`.
    pub fn within(self, outer: Interval) -> bool {
        outer.lo <= self.lo && self.hi <= outer.hi
    }

    /// The values in both intervals (`lo > hi` when they do not overlap).
    pub fn intersect(self, other: Interval) -> Interval {
        Interval::new(self.lo.max(other.lo), self.hi.min(other.hi))
    }

    /// The smallest interval containing both.
    pub fn union(self, other: Interval) -> Interval {
        Interval::new(self.lo.min(other.lo), self.hi.max(other.hi))
    }

    /// This interval when it fits type `t`, else all of `t` (the value may wrap).
    pub fn fit(self, t: ScalarType) -> Interval {
        let full = Interval::of_type(t);
        if self.within(full) {
            self
        } else {
            full
        }
    }
}

impl Simplifier {
    /// Bounds of an integer or bool expression (over all its lanes); `None`
    /// for floats.
    pub(super) fn bounds(&mut self, e: &Expr) -> Option<Interval> {
        let t = e.ty().scalar;
        if t.is_float() {
            return None;
        }
        let leaf = matches!(e.node(), ExprNode::IntImm { .. } | ExprNode::UIntImm { .. } | ExprNode::Var { .. });
        if leaf {
            return self.derive_bounds(e);
        }
        if let Some((_, cached)) = self.bounds_cache.get(&e.address()) {
            return *cached;
        }
        let b = self.derive_bounds(e);
        self.bounds_cache.insert(e.address(), (e.clone(), b));
        b
    }

    /// [`Simplifier::bounds`] of a node not in the cache.
    fn derive_bounds(&mut self, e: &Expr) -> Option<Interval> {
        let t = e.ty().scalar;
        let full = Interval::of_type(t);
        let b = match e.node() {
            ExprNode::IntImm { value, .. } => Interval::point(*value as i128),
            ExprNode::UIntImm { value, .. } => Interval::point(*value as i128),
            ExprNode::Var { name, .. } => self.range_of(name).map_or(full, |r| r.intersect(full)),
            ExprNode::Cast { value, .. } => self.cast_bounds(t, value),
            ExprNode::Binary { op, a, b } => self.binary_bounds(*op, e.ty(), a, b),
            ExprNode::Call { target: CallTarget::Math(f), .. } if f.is_bit_count() => Interval::new(0, t.bits().into()),
            ExprNode::Call { target: CallTarget::Math(MathFn::PromiseClamped), args, .. } => {
                let promised = match (self.bounds(&args[1]), self.bounds(&args[2])) {
                    (Some(lo), Some(hi)) => Interval::new(lo.lo, hi.hi),
                    _ => full,
                };
                self.bounds(&args[0]).map_or(promised, |own| own.intersect(promised))
            }
            ExprNode::Select { t: a, f: b, .. } => match (self.bounds(a), self.bounds(b)) {
                (Some(x), Some(y)) => x.union(y),
                _ => full,
            },
            ExprNode::Let { name, value, body } => {
                let r = self.bounds(value);
                self.push_range(name, r);
                let b = self.bounds(body);
                self.pop_range(name);
                b.unwrap_or(full)
            }
            ExprNode::Broadcast { value, .. } => self.bounds(value).unwrap_or(full),
            ExprNode::Ramp { base, stride, lanes } => match (self.bounds(base), self.bounds(stride)) {
                (Some(b), Some(s)) => {
                    let n = *lanes as i128 - 1;
                    Interval::new(b.lo + (s.lo * n).min(0), b.hi + (s.hi * n).max(0)).fit(t)
                }
                _ => full,
            },
            _ => full,
        };
        Some(b)
    }

    fn cast_bounds(&mut self, to: ScalarType, value: &Expr) -> Interval {
        let full = Interval::of_type(to);
        let Some(b) = self.bounds(value) else {
            return full;
        };
        if to.is_bool() {
            if b.lo > 0 || b.hi < 0 {
                Interval::point(1)
            } else if b == Interval::point(0) {
                b
            } else {
                full
            }
        } else {
            b.fit(to)
        }
    }

    fn binary_bounds(&mut self, op: BinOp, ty: Type, a: &Expr, b: &Expr) -> Interval {
        let t = ty.scalar;
        let full = Interval::of_type(t);
        let (Some(x), Some(y)) = (self.bounds(a), self.bounds(b)) else {
            return full;
        };
        // Index arithmetic is assumed not to overflow (unless it involves
        // unknown values from memory); everything else may wrap.
        let no_overflow = assumes_no_overflow(ty) && !a.reads_memory() && !b.reads_memory();
        let limit = |r: Interval| {
            if no_overflow {
                r.intersect(full)
            } else {
                r.fit(t)
            }
        };
        match op {
            BinOp::Add => limit(Interval::new(x.lo + y.lo, x.hi + y.hi)),
            BinOp::Sub => limit(Interval::new(x.lo - y.hi, x.hi - y.lo)),
            BinOp::Mul => {
                let corners = [x.lo.checked_mul(y.lo), x.lo.checked_mul(y.hi), x.hi.checked_mul(y.lo), x.hi.checked_mul(y.hi)];
                match corners.into_iter().collect::<Option<Vec<i128>>>() {
                    Some(c) => limit(Interval::new(c.iter().copied().min().unwrap_or(0), c.iter().copied().max().unwrap_or(0))),
                    None => full,
                }
            }
            BinOp::Div => div_bounds(x, y).fit(t),
            BinOp::Mod => mod_bounds(x, y).intersect(full),
            BinOp::Min => Interval::new(x.lo.min(y.lo), x.hi.min(y.hi)),
            BinOp::Max => Interval::new(x.lo.max(y.lo), x.hi.max(y.hi)),
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => {
                let (lo, hi) = bit_op_range(op, t, (x.lo, x.hi), (y.lo, y.hi));
                Interval::new(lo, hi)
            }
        }
    }
}

/// Euclidean quotient bounds (a zero divisor gives 0).
fn div_bounds(x: Interval, y: Interval) -> Interval {
    if y.lo == y.hi {
        let c = y.lo;
        return match c.signum() {
            0 => Interval::point(0),
            1 => Interval::new(x.lo.div_euclid(c), x.hi.div_euclid(c)),
            _ => Interval::new(-x.hi.div_euclid(-c), -x.lo.div_euclid(-c)),
        };
    }
    // |a div b| <= |a| for every nonzero b.
    let m = x.lo.abs().max(x.hi.abs());
    Interval::new(-m, m)
}

/// Euclidean remainder bounds: in `[0, |b| - 1]`, at most `a` for `a >= 0`,
/// and `a` itself when it already lies in `[0, |c| - 1]` for a constant `c`.
fn mod_bounds(x: Interval, y: Interval) -> Interval {
    let m = y.lo.abs().max(y.hi.abs());
    let hi = (m - 1).max(0);
    let r = Interval::new(0, hi);
    if y.lo == y.hi && x.within(r) {
        x
    } else if x.lo >= 0 {
        Interval::new(0, hi.min(x.hi))
    } else {
        r
    }
}
