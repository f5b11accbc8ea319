//! Monotonicity: how an expression moves as one variable steps forwards,
//! read from its structure (sums, products and quotients by constants,
//! `min`, `max`, widening casts, `promise_clamped`, lets, selects on a
//! condition that does not move, and a sliding start's `select(v > m, t,
//! f)` whose step from `f(m)` to `t(m + 1)` is proved not to go back). It proves what a prover of
//! `e(v + 1) >= e(v)` cannot when `e` holds the `min`/`max` of a split's
//! shifted tail: the sliding window asks it whether a required region
//! moves forwards. Wrap-around of fixed-width integers is not modelled (as
//! bounds inference assumes, index arithmetic does not overflow).

use crate::ir::expr::{BinOp, CallTarget, CmpOp, Expr, ExprNode, MathFn, Name};
use crate::ir::visit::{expr_uses_var, substitute};
use crate::lang::ops::CompareExt;
use crate::simplify::can_prove;

/// How an expression moves when the variable steps forwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Monotonic {
    /// It does not move.
    Constant,
    /// It never decreases.
    Increasing,
    /// It never increases.
    Decreasing,
    /// Nothing is known.
    Unknown,
}

use Monotonic::*;

impl Monotonic {
    /// Whether the expression never decreases.
    pub fn never_decreases(self) -> bool {
        matches!(self, Constant | Increasing)
    }

    fn flip(self) -> Monotonic {
        match self {
            Increasing => Decreasing,
            Decreasing => Increasing,
            other => other,
        }
    }

    /// The movement of a sum.
    fn plus(self, other: Monotonic) -> Monotonic {
        match (self, other) {
            (Constant, m) | (m, Constant) => m,
            (a, b) if a == b => a,
            _ => Unknown,
        }
    }

    /// The movement of a value that is one of two (`min`, `max`, a select
    /// on a fixed condition): both must move alike.
    fn either(self, other: Monotonic) -> Monotonic {
        self.plus(other)
    }
}

/// How `e` moves as `var` steps forwards, each name of `rising` (a value
/// known never to decrease from one step to the next) with it; every other
/// free name is taken as fixed.
pub fn monotonic(e: &Expr, var: &Name, rising: &[Name]) -> Monotonic {
    Walk { var, rising, scope: vec![] }.of(e)
}

struct Walk<'a> {
    var: &'a Name,
    rising: &'a [Name],
    /// The lets around the expression being read, innermost last.
    scope: Vec<(Name, Monotonic)>,
}

impl Walk<'_> {
    fn of(&mut self, e: &Expr) -> Monotonic {
        match e.node() {
            ExprNode::IntImm { .. } | ExprNode::UIntImm { .. } | ExprNode::FloatImm { .. } | ExprNode::Param { .. } => Constant,
            ExprNode::Var { name, .. } => self.of_name(name),
            ExprNode::Binary { op, a, b } => self.binary(*op, a, b),
            ExprNode::Cast { ty, value } => {
                let from = value.ty();
                let widening = ty.is_float()
                    || (from.is_float() && ty.is_int())
                    || (from.is_signed_int() == ty.is_signed_int() && from.is_int() && ty.is_int() && ty.bits() >= from.bits())
                    || (from.is_unsigned_int() && ty.is_signed_int() && ty.bits() > from.bits());
                self.preserved_if(widening, value)
            }
            ExprNode::Call { target: CallTarget::Math(MathFn::PromiseClamped), args, .. } => self.of(&args[0]),
            ExprNode::Select { cond, t, f } => {
                if self.of(cond) == Constant {
                    let (t, f) = (self.of(t), self.of(f));
                    t.either(f)
                } else if let Some(m) = self.after_the_first(cond) {
                    // `select(v > m, t, f)`: `f` up to `m`, then `t` (a
                    // sliding start: the whole region's start first, then
                    // past the previous iteration's end). It never
                    // decreases when neither does and the step from `f(m)`
                    // to `t(m + 1)` does not go back.
                    let at = |e: &Expr, value: Expr| substitute(self.var, &value, e);
                    let step = at(t, m.clone() + 1).ge(at(f, m.clone()));
                    if self.of(t).never_decreases() && self.of(f).never_decreases() && can_prove(&step) {
                        Increasing
                    } else {
                        Unknown
                    }
                } else {
                    self.fixed_or_unknown(e)
                }
            }
            ExprNode::Let { name, value, body } => {
                let value = self.of(value);
                self.scope.push((name.clone(), value));
                let body = self.of(body);
                self.scope.pop();
                body
            }
            _ => self.fixed_or_unknown(e),
        }
    }

    /// `m` where `cond` is `v > m` (or `m < v`) for a fixed `m`.
    fn after_the_first(&mut self, cond: &Expr) -> Option<Expr> {
        let is_var = |e: &Expr| e.as_var() == Some(self.var);
        let m = match cond.node() {
            ExprNode::Cmp { op: CmpOp::Gt, a, b } if is_var(a) => b,
            ExprNode::Cmp { op: CmpOp::Lt, a, b } if is_var(b) => a,
            _ => return None,
        };
        (self.of(m) == Constant).then(|| m.clone())
    }

    fn of_name(&self, name: &Name) -> Monotonic {
        if name == self.var || self.rising.contains(name) {
            return Increasing;
        }
        self.scope.iter().rev().find(|(n, _)| n == name).map_or(Constant, |(_, m)| *m)
    }

    fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr) -> Monotonic {
        match op {
            BinOp::Add | BinOp::Sub => {
                let mut terms = vec![];
                flatten_sum(a, 1, &mut terms);
                flatten_sum(b, if op == BinOp::Sub { -1 } else { 1 }, &mut terms);
                self.sum(&terms)
            }
            BinOp::Min | BinOp::Max => self.of(a).either(self.of(b)),
            BinOp::Mul => match (a.as_int(), b.as_int()) {
                (_, Some(k)) => self.scaled(a, k),
                (Some(k), _) => self.scaled(b, k),
                _ => self.fixed_or_unknown_pair(a, b),
            },
            // Floor division by a constant keeps the order (or reverses it).
            BinOp::Div => match b.as_int() {
                Some(k) if k != 0 => self.scaled(a, k),
                _ => self.fixed_or_unknown_pair(a, b),
            },
            _ => self.fixed_or_unknown_pair(a, b),
        }
    }

    /// A sum of signed terms. A pair `c * (x / k) + c * ((x % k + d) / k)`
    /// (what the simplifier makes of a rounded division's extent) is
    /// `c * ((x + d) / k)`, which moves as `x` does when `d` does not.
    fn sum(&mut self, terms: &[(Expr, i64)]) -> Monotonic {
        let mut paired = vec![false; terms.len()];
        let mut total = Constant;
        for i in 0..terms.len() {
            let Some((x, k, c)) = scaled_division(&terms[i].0).filter(|_| !paired[i]) else {
                continue;
            };
            let partner = (0..terms.len()).find(|&j| {
                !paired[j]
                    && j != i
                    && terms[j].1 == terms[i].1
                    && scaled_division(&terms[j].0)
                        .is_some_and(|(y, k2, c2)| k2 == k && c2 == c && remainder_plus(&y, &x, k).is_some_and(|d| self.of(&d) == Constant))
            });
            if let Some(j) = partner {
                paired[i] = true;
                paired[j] = true;
                let m = self.scaled(&x, c * terms[i].1);
                total = total.plus(m);
            }
        }
        for (i, (term, sign)) in terms.iter().enumerate() {
            if !paired[i] {
                let m = self.scaled(term, *sign);
                total = total.plus(m);
            }
        }
        total
    }

    fn scaled(&mut self, e: &Expr, k: i64) -> Monotonic {
        match k.signum() {
            0 => Constant,
            1 => self.of(e),
            _ => self.of(e).flip(),
        }
    }

    fn preserved_if(&mut self, preserved: bool, e: &Expr) -> Monotonic {
        let m = self.of(e);
        if preserved || m == Constant {
            m
        } else {
            Unknown
        }
    }

    fn fixed_or_unknown_pair(&mut self, a: &Expr, b: &Expr) -> Monotonic {
        if self.of(a) == Constant && self.of(b) == Constant {
            Constant
        } else {
            Unknown
        }
    }

    /// `Constant` when nothing that moves appears in `e`, else `Unknown`.
    fn fixed_or_unknown(&self, e: &Expr) -> Monotonic {
        let moving = std::iter::once(self.var)
            .chain(self.rising)
            .chain(self.scope.iter().filter(|(_, m)| *m != Constant).map(|(n, _)| n))
            .any(|n| expr_uses_var(e, n));
        if moving {
            Unknown
        } else {
            Constant
        }
    }
}

/// The terms of a sum (through `+` and `-`), each with its sign.
fn flatten_sum(e: &Expr, sign: i64, out: &mut Vec<(Expr, i64)>) {
    match e.node() {
        ExprNode::Binary { op: BinOp::Add, a, b } => {
            flatten_sum(a, sign, out);
            flatten_sum(b, sign, out);
        }
        ExprNode::Binary { op: BinOp::Sub, a, b } => {
            flatten_sum(a, sign, out);
            flatten_sum(b, -sign, out);
        }
        _ => out.push((e.clone(), sign)),
    }
}

/// `c * (x / k)` (or `x / k`, `c` 1) with constants `k > 0` and `c`.
fn scaled_division(e: &Expr) -> Option<(Expr, i64, i64)> {
    let division = |e: &Expr| match e.node() {
        ExprNode::Binary { op: BinOp::Div, a, b } => b.as_int().filter(|k| *k > 0).map(|k| (a.clone(), k)),
        _ => None,
    };
    if let Some((x, k)) = division(e) {
        return Some((x, k, 1));
    }
    let ExprNode::Binary { op: BinOp::Mul, a, b } = e.node() else {
        return None;
    };
    let (product, c) = match (a.as_int(), b.as_int()) {
        (_, Some(c)) => (a, c),
        (Some(c), _) => (b, c),
        _ => return None,
    };
    division(product).map(|(x, k)| (x, k, c))
}

/// `d` where `e` is a sum of `x % k` and the terms of `d`, in any order.
fn remainder_plus(e: &Expr, x: &Expr, k: i64) -> Option<Expr> {
    let is_remainder = |t: &Expr| matches!(t.node(), ExprNode::Binary { op: BinOp::Mod, a, b } if a == x && b.as_int() == Some(k));
    let mut terms = vec![];
    flatten_sum(e, 1, &mut terms);
    let i = terms.iter().position(|(t, sign)| *sign == 1 && is_remainder(t))?;
    terms.remove(i);
    let zero = Expr::int(0, e.ty());
    Some(terms.into_iter().fold(zero, |d, (t, sign)| if sign > 0 { d + t } else { d - t }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::types::Type;

    fn v(name: &str) -> Expr {
        Expr::ivar(name)
    }

    fn of(e: &Expr) -> Monotonic {
        monotonic(e, &Name::from("v"), &[Name::from("s")])
    }

    #[test]
    fn a_shifted_tail_moves_forwards() {
        // The base of a split with its last tile shifted inwards.
        let base = v("lo") + Expr::max(Expr::min(v("v") * Expr::i32(8), v("extent") - Expr::i32(8)), Expr::i32(0));
        let clamped = Expr::math(MathFn::PromiseClamped, vec![base, v("lo"), v("hi")]);
        assert_eq!(of(&(clamped - Expr::i32(1))), Increasing);
        assert_eq!(of(&(v("s") + v("v") / Expr::i32(2))), Increasing);
    }

    #[test]
    fn a_rounded_division_split_by_the_simplifier_moves_as_its_numerator() {
        // 2 * (a / 20) + 2 * ((a % 20 + 10) / 20) + 7 is 2 * ((a + 10) / 20) + 7.
        let a = v("v") * Expr::i32(10) + v("lo");
        let rem = Expr::binary(BinOp::Mod, a.clone(), Expr::i32(20));
        let split =
            (a.clone() / Expr::i32(20)) * Expr::i32(2) + ((rem.clone() + Expr::i32(10)) / Expr::i32(20)) * Expr::i32(2) + Expr::i32(7);
        assert_eq!(of(&split), Increasing);
        // The remainder anywhere in the numerator's sum.
        let nested = a.clone() / Expr::i32(20) + ((rem.clone() + v("d") * Expr::i32(10)) + Expr::i32(10)) / Expr::i32(20);
        assert_eq!(of(&nested), Increasing);
        // Unpaired, a remainder says nothing.
        assert_eq!(of(&((rem + Expr::i32(10)) / Expr::i32(20))), Unknown);
    }

    #[test]
    fn what_moves_both_ways_or_scales_by_a_variable_is_unknown() {
        assert_eq!(of(&(v("v") - v("s"))), Unknown);
        assert_eq!(of(&(v("v") * v("k"))), Unknown);
        assert_eq!(of(&(Expr::i32(3) - v("v") * Expr::i32(2))), Decreasing);
        assert_eq!(of(&(v("k") * v("k"))), Constant);
        assert_eq!(of(&Expr::cast(Type::u8(), v("v"))), Unknown);
        assert_eq!(of(&Expr::cast(Type::i64(), v("v"))), Increasing);
    }

    #[test]
    fn lets_and_fixed_selects_carry_movement() {
        let e = Expr::let_in("t", v("v") * Expr::i32(4), v("t") + Expr::i32(1));
        assert_eq!(of(&e), Increasing);
        let fixed = Expr::select(v("c").gt(Expr::i32(0)), v("v"), v("v") + Expr::i32(1));
        assert_eq!(of(&fixed), Increasing);
        let moving = Expr::select(v("v").gt(Expr::i32(0)), Expr::i32(-1), v("v"));
        assert_eq!(of(&moving), Unknown);
        let settling = Expr::select(v("v").gt(Expr::i32(0)), Expr::i32(0), v("v"));
        assert_eq!(of(&settling), Increasing);
        // A sliding start: the whole region's start [4v, 4v + 5] first,
        // then past the previous iteration's end.
        let slid = Expr::select(v("v").gt(v("m")), (v("v") - Expr::i32(1)) * Expr::i32(4) + Expr::i32(6), v("v") * Expr::i32(4));
        assert_eq!(of(&slid), Increasing);
        let back = Expr::select(v("v").gt(v("m")), v("v") * Expr::i32(4) - Expr::i32(9), v("v") * Expr::i32(4));
        assert_eq!(of(&back), Unknown);
    }
}
