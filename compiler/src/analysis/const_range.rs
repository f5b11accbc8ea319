//! Constant bounds of an integer expression through `min` and `max`: the
//! size of a region the simplifier cannot reduce to a constant is often
//! bounded by one (`max(min(b + 8, e) - 2, b) - b + 1` is at most 7, for
//! any `b` and `e`). A sum with a `min` or `max` term is split into the
//! sums of each operand, so that the other terms cancel in each (`b`
//! above; a constant multiple of a `min` or `max` is split the same way),
//! and the simplifier bounds what is left, knowing the ranges of the
//! variables given.

use crate::ir::expr::{BinOp, Expr, ExprNode, Name};
use crate::simplify::{const_bounds_with, simplify};
use std::collections::HashMap;

/// Sums examined before giving up on a tighter bound: splitting doubles
/// the work at each `min` or `max` of a sum.
const BUDGET: u32 = 256;

/// Constant lower and upper bounds of the integer expression `e`, where
/// they can be derived, each variable of `ranges` lying in its closed
/// interval.
pub fn const_range(e: &Expr, ranges: &HashMap<Name, (i64, i64)>) -> (Option<i64>, Option<i64>) {
    let mut budget = BUDGET;
    range(&simplify(e), ranges, &mut budget)
}

/// `min` or `max` with its operands, as a term of a sum: itself, or a
/// constant multiple of one (`min(a, b) * c` is `min(a * c, b * c)` for a
/// positive `c`, the `max` of them for a negative one).
fn min_max_term(e: &Expr) -> Option<(BinOp, Expr, Expr)> {
    match e.node() {
        ExprNode::Binary { op: op @ (BinOp::Min | BinOp::Max), a, b } => Some((*op, a.clone(), b.clone())),
        ExprNode::Binary { op: BinOp::Mul, a, b } => {
            let c = b.as_int().filter(|c| *c != 0)?;
            let (op, x, y) = min_max_term(a)?;
            let op = if c > 0 { op } else { flip(op) };
            Some((op, x * b.clone(), y * b.clone()))
        }
        _ => None,
    }
}

fn flip(op: BinOp) -> BinOp {
    if op == BinOp::Min {
        BinOp::Max
    } else {
        BinOp::Min
    }
}

fn range(e: &Expr, ranges: &HashMap<Name, (i64, i64)>, budget: &mut u32) -> (Option<i64>, Option<i64>) {
    if *budget == 0 {
        return const_bounds_with(e, ranges);
    }
    *budget -= 1;
    match e.node() {
        ExprNode::Binary { op: op @ (BinOp::Min | BinOp::Max), a, b } => combine(*op, range(a, ranges, budget), range(b, ranges, budget)),
        ExprNode::Binary { op: BinOp::Mul, a, b } if min_max_term(e).is_none() => {
            let ((alo, ahi), (blo, bhi)) = (range(a, ranges, budget), range(b, ranges, budget));
            // Products past 64 bits bound nothing.
            let products = match (alo, ahi, blo, bhi) {
                (Some(p), Some(q), Some(r), Some(s)) => [p.checked_mul(r), p.checked_mul(s), q.checked_mul(r), q.checked_mul(s)],
                _ => [None; 4],
            };
            match products {
                [Some(a), Some(b), Some(c), Some(d)] => (Some(a.min(b).min(c).min(d)), Some(a.max(b).max(c).max(d))),
                _ => const_bounds_with(e, ranges),
            }
        }
        ExprNode::Binary { op: BinOp::Add | BinOp::Sub | BinOp::Mul, .. } => {
            let mut terms = vec![];
            sum_terms(e, true, &mut terms);
            let Some((i, (op, a, b))) = terms.iter().enumerate().find_map(|(i, (_, t))| Some((i, min_max_term(t)?))) else {
                return const_bounds_with(e, ranges);
            };
            let with = |operand: &Expr| {
                let mut t = terms.clone();
                t[i].1 = operand.clone();
                simplify(&rebuild(&t))
            };
            // Subtracting a max is adding the min of the negations.
            let op = if terms[i].0 { op } else { flip(op) };
            combine(op, range(&with(&a), ranges, budget), range(&with(&b), ranges, budget))
        }
        _ => const_bounds_with(e, ranges),
    }
}

/// The bounds of `op(a, b)` from the bounds of `a` and `b`.
fn combine(op: BinOp, (alo, ahi): (Option<i64>, Option<i64>), (blo, bhi): (Option<i64>, Option<i64>)) -> (Option<i64>, Option<i64>) {
    let both = |x: Option<i64>, y: Option<i64>, f: fn(i64, i64) -> i64| Some(f(x?, y?));
    let either = |x: Option<i64>, y: Option<i64>, f: fn(i64, i64) -> i64| match (x, y) {
        (Some(x), Some(y)) => Some(f(x, y)),
        (x, y) => x.or(y),
    };
    match op {
        BinOp::Max => (either(alo, blo, i64::max), both(ahi, bhi, i64::max)),
        _ => (both(alo, blo, i64::min), either(ahi, bhi, i64::min)),
    }
}

/// The terms of a sum, each with its sign (`true` for added).
fn sum_terms(e: &Expr, positive: bool, out: &mut Vec<(bool, Expr)>) {
    match e.node() {
        ExprNode::Binary { op: BinOp::Add, a, b } => {
            sum_terms(a, positive, out);
            sum_terms(b, positive, out);
        }
        ExprNode::Binary { op: BinOp::Sub, a, b } => {
            sum_terms(a, positive, out);
            sum_terms(b, !positive, out);
        }
        _ => out.push((positive, e.clone())),
    }
}

fn rebuild(terms: &[(bool, Expr)]) -> Expr {
    let zero = Expr::int(0, terms[0].1.ty());
    terms.iter().fold(zero, |acc, (positive, t)| Expr::binary(if *positive { BinOp::Add } else { BinOp::Sub }, acc, t.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::types::Type;

    #[test]
    fn a_clamped_extent_is_bounded_by_a_constant() {
        let (b, e) = (Expr::var("b", Type::i32()), Expr::var("e", Type::i32()));
        // A guarded tile's extent, as bounds inference writes it:
        // max(max(min(b + 8, e) - 2, b) + 1, min(b + 7, e - 1)) - b + 1,
        // at most 8 (and at least 2).
        let hi = Expr::max(
            Expr::max(Expr::min(b.clone() + Expr::i32(8), e.clone()) - Expr::i32(2), b.clone()) + Expr::i32(1),
            Expr::min(b.clone() + Expr::i32(7), e.clone() - Expr::i32(1)),
        );
        let extent = hi - b.clone() + Expr::i32(1);
        let none = HashMap::new();
        assert_eq!(crate::simplify::const_bounds(&extent).1, None, "the simplifier alone does not bound it");
        assert_eq!(const_range(&extent, &none), (Some(2), Some(8)));
        // Twice as many rows of it; eight times a clamped coordinate less
        // eight times its base.
        let area = Expr::max(extent, Expr::i32(0)) * Expr::i32(2);
        assert_eq!(const_range(&area, &none).1, Some(16));
        let scaled = Expr::min(b.clone() + Expr::i32(3), e.clone()) * Expr::i32(8) - b.clone() * Expr::i32(8);
        assert_eq!(const_range(&scaled, &none).1, Some(24));
        // Bounded only through a variable's range.
        let t = Expr::var("t", Type::i32());
        let shrinking = Expr::i32(3) - t * Expr::i32(3);
        assert_eq!(const_range(&shrinking, &none).1, None);
        assert_eq!(const_range(&shrinking, &HashMap::from([("t".into(), (0, 7))])).1, Some(3));
        assert_eq!(const_range(&(b.clone() - e.clone()), &none), (None, None));
        // A product whose bounds overflow 64 bits is not bounded by them.
        let huge = Expr::min(Expr::max(b.clone(), Expr::i32(0)), Expr::i32(i32::MAX.into()));
        let cube = huge.clone() * huge.clone() * huge.clone() * huge;
        assert_eq!(const_range(&cube, &none).1, None);
    }
}
