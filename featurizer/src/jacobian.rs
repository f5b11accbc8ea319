//! Load Jacobians: how each coordinate of an access moves when each loop
//! variable of the accessing stage moves by one.
//!
//! An entry is an exact rational (`x / 2` moves by 1/2 per step of `x`), or
//! "not affine" when the coordinate depends on the variable in any other way
//! (through a load, a product of two variables, a min of two moving sides,
//! ...). A clamp to bounds that do not move is seen through: its entry is
//! the derivative inside the bounds. A variable the coordinate does not
//! mention has derivative 0. Identical matrices of one edge merge into one
//! with a count.

use compiler::ir::expr::{BinOp, Expr, ExprNode};
use compiler::ir::visit::expr_uses_var;
use serde::{Deserialize, Serialize};
use std::fmt;

/// An exact rational `num / den` with `den > 0`, in lowest terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Rational {
    /// The numerator.
    pub num: i64,
    /// The denominator, positive.
    pub den: i64,
}

impl Rational {
    /// 0.
    pub const ZERO: Rational = Rational { num: 0, den: 1 };
    /// 1.
    pub const ONE: Rational = Rational { num: 1, den: 1 };

    /// `num / den` in lowest terms with a positive denominator; `None` when
    /// `den` is 0.
    pub fn new(num: i64, den: i64) -> Option<Rational> {
        if den == 0 {
            return None;
        }
        let g = gcd(num.unsigned_abs(), den.unsigned_abs()).max(1) as i64;
        let sign = if den < 0 { -1 } else { 1 };
        Some(Rational { num: sign * num / g, den: sign * den / g })
    }

    /// Whether the value is 0.
    pub fn is_zero(self) -> bool {
        self.num == 0
    }

    /// The sum; `None` on `i64` overflow.
    pub fn checked_add(self, o: Rational) -> Option<Rational> {
        Rational::new(self.num.checked_mul(o.den)?.checked_add(o.num.checked_mul(self.den)?)?, self.den.checked_mul(o.den)?)
    }

    fn scale(self, num: i64, den: i64) -> Option<Rational> {
        Rational::new(self.num.checked_mul(num)?, self.den.checked_mul(den)?)
    }

    /// The product; `None` on `i64` overflow.
    pub fn checked_mul(self, o: Rational) -> Option<Rational> {
        self.scale(o.num, o.den)
    }

    /// The value as the nearest `f64`.
    pub fn as_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

impl fmt::Display for Rational {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The derivative of `e` with respect to the variable `var`: exact when
/// `e` is affine in it, `None` otherwise. A `min` or `max` against a bound
/// that does not move with `var` (a clamp to an edge) takes the derivative
/// of its other side: exact away from the bound, where the code generator
/// reads such a coordinate as it reads the unclamped one.
pub fn derivative(e: &Expr, var: &str) -> Option<Rational> {
    if !expr_uses_var(e, var) {
        return Some(Rational::ZERO);
    }
    match e.node() {
        ExprNode::Var { name, .. } if &**name == var => Some(Rational::ONE),
        ExprNode::Binary { op: BinOp::Add, a, b } => derivative(a, var)?.checked_add(derivative(b, var)?),
        ExprNode::Binary { op: BinOp::Sub, a, b } => derivative(a, var)?.checked_add(derivative(b, var)?.scale(-1, 1)?),
        ExprNode::Binary { op: BinOp::Mul, a, b } => match (a.as_int(), b.as_int()) {
            (_, Some(k)) => derivative(a, var)?.scale(k, 1),
            (Some(k), _) => derivative(b, var)?.scale(k, 1),
            _ => None,
        },
        ExprNode::Binary { op: BinOp::Div, a, b } if !e.ty().is_float() => derivative(a, var)?.scale(1, b.as_int()?),
        ExprNode::Binary { op: BinOp::Min | BinOp::Max, a, b } => match (expr_uses_var(a, var), expr_uses_var(b, var)) {
            (true, false) => derivative(a, var),
            (false, true) => derivative(b, var),
            _ => None,
        },
        ExprNode::Cast { value, ty } if ty.is_int() && value.ty().is_int() && ty.bits() >= value.ty().bits() => derivative(value, var),
        ExprNode::Let { name, value, body } => {
            let through_value = derivative(value, var)?;
            let direct = derivative(body, var)?;
            let via_let = derivative(body, name)?;
            direct.checked_add(via_let.scale(through_value.num, through_value.den)?)
        }
        _ => None,
    }
}

/// The Jacobian of one access: `rows[i][j]` is the derivative of the
/// access's coordinate `i` with respect to the stage's loop `j` (innermost
/// first); `None` where it is not affine.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LoadJacobian {
    /// One row per access coordinate, one entry per loop (innermost first);
    /// `None` where not affine.
    pub rows: Vec<Vec<Option<Rational>>>,
    /// How many accesses of the edge have this matrix.
    pub count: u32,
}

impl LoadJacobian {
    /// The Jacobian of the access with coordinates `args`, over `loops`.
    pub fn of(args: &[Expr], loops: &[&str]) -> LoadJacobian {
        LoadJacobian { rows: args.iter().map(|a| loops.iter().map(|v| derivative(a, v)).collect()).collect(), count: 1 }
    }

    /// Entry `(coordinate, loop)`.
    pub fn get(&self, coordinate: usize, loop_index: usize) -> Option<Rational> {
        self.rows[coordinate][loop_index]
    }

    fn unit_or_zero(entry: &Option<Rational>) -> Option<bool> {
        match entry {
            Some(r) if *r == Rational::ONE => Some(true),
            Some(r) if r.is_zero() => Some(false),
            _ => None,
        }
    }

    /// Whether every row is a single 1 (the rest 0), every column at most
    /// one 1, and the matrix is square and the identity.
    pub fn is_pointwise(&self) -> bool {
        let n = self.rows.len();
        n > 0
            && self.rows.iter().all(|r| r.len() == n)
            && self.rows.iter().enumerate().all(|(i, r)| r.iter().enumerate().all(|(j, e)| Self::unit_or_zero(e) == Some(i == j)))
    }

    /// Each coordinate follows exactly one loop and each loop moves at most
    /// one coordinate (a permutation, possibly with unused loops), square.
    pub fn is_transpose(&self) -> bool {
        let square = self.rows.first().is_some_and(|r| r.len() == self.rows.len());
        square && self.rows_are_single_units() && self.columns_have_at_most_one_unit()
    }

    /// Every coordinate follows exactly one loop, and every loop moves
    /// exactly one coordinate.
    pub fn is_broadcast(&self) -> bool {
        self.rows_are_single_units() && self.columns_have_exactly_one_unit()
    }

    /// Every coordinate follows at most one loop, and every loop moves
    /// exactly one coordinate.
    pub fn is_slice(&self) -> bool {
        let rows_ok = self.rows.iter().all(|r| {
            let units: Option<Vec<bool>> = r.iter().map(Self::unit_or_zero).collect();
            units.is_some_and(|u| u.iter().filter(|b| **b).count() <= 1)
        });
        rows_ok && self.columns_have_exactly_one_unit()
    }

    fn rows_are_single_units(&self) -> bool {
        self.rows.iter().all(|r| {
            let units: Option<Vec<bool>> = r.iter().map(Self::unit_or_zero).collect();
            units.is_some_and(|u| u.iter().filter(|b| **b).count() == 1)
        })
    }

    fn column_units(&self) -> Option<Vec<usize>> {
        let loops = self.rows.first().map_or(0, |r| r.len());
        (0..loops)
            .map(|j| {
                let col: Option<Vec<bool>> = self.rows.iter().map(|r| Self::unit_or_zero(&r[j])).collect();
                col.map(|c| c.iter().filter(|b| **b).count())
            })
            .collect()
    }

    fn columns_have_exactly_one_unit(&self) -> bool {
        self.column_units().is_some_and(|c| c.iter().all(|n| *n == 1))
    }

    fn columns_have_at_most_one_unit(&self) -> bool {
        self.column_units().is_some_and(|c| c.iter().all(|n| *n <= 1))
    }
}

/// The Jacobian of a composed access: `outer` gives coordinates of `p` by
/// the loops of `g` (a pure Func, its loops its dimensions in order),
/// `inner` coordinates of `g` by the loops of `c`; the result gives
/// coordinates of `p` by the loops of `c`. An entry is exact when every
/// product contributing to it is (a zero factor makes its product zero).
pub fn compose(outer: &[Vec<Option<Rational>>], inner: &[Vec<Option<Rational>>]) -> Vec<Vec<Option<Rational>>> {
    let loops = inner.first().map_or(0, |r| r.len());
    outer
        .iter()
        .map(|row| {
            (0..loops)
                .map(|j| {
                    row.iter().zip(inner).try_fold(Rational::ZERO, |acc, (a, inner_row)| {
                        let term = match (a, inner_row[j]) {
                            (Some(a), _) if a.is_zero() => Rational::ZERO,
                            (_, Some(b)) if b.is_zero() => Rational::ZERO,
                            (Some(a), Some(b)) => a.checked_mul(b)?,
                            _ => return None,
                        };
                        acc.checked_add(term)
                    })
                })
                .collect()
        })
        .collect()
}

impl fmt::Display for LoadJacobian {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rows: Vec<String> = self
            .rows
            .iter()
            .map(|r| r.iter().map(|e| e.map_or("_".to_string(), |r| r.to_string())).collect::<Vec<_>>().join(" "))
            .collect();
        write!(f, "[{}]", rows.join("; "))?;
        if self.count > 1 {
            write!(f, " x{}", self.count)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use compiler::ir::types::Type;

    fn x() -> Expr {
        Expr::ivar("x")
    }
    fn y() -> Expr {
        Expr::ivar("y")
    }

    #[test]
    fn affine_coordinates_have_exact_rational_derivatives() {
        assert_eq!(derivative(&(x() * 2 + 1), "x"), Rational::new(2, 1));
        assert_eq!(derivative(&(x() / 2), "x"), Rational::new(1, 2));
        assert_eq!(derivative(&(x() * 3 / 6), "x"), Rational::new(1, 2));
        assert_eq!(derivative(&(x() - y()), "y"), Rational::new(-1, 1));
        assert_eq!(derivative(&(y() + 4), "x"), Some(Rational::ZERO));
        assert_eq!(derivative(&(x() * y()), "x"), None);
    }

    #[test]
    fn clamps_to_fixed_bounds_take_the_derivative_inside_them() {
        let three = || Expr::int(3, Type::i32());
        assert_eq!(derivative(&Expr::min(x() * 2, three()), "x"), Rational::new(2, 1));
        assert_eq!(derivative(&Expr::max(three(), x() - y()), "y"), Rational::new(-1, 1));
        assert_eq!(derivative(&Expr::clamp(x() + 1, Expr::int(0, Type::i32()), y()), "x"), Some(Rational::ONE));
        assert_eq!(derivative(&Expr::clamp(x() + 1, Expr::int(0, Type::i32()), y()), "y"), Some(Rational::ONE));
        assert_eq!(derivative(&Expr::min(x(), x() / 2), "x"), None);
        assert_eq!(derivative(&Expr::min(y(), three()), "x"), Some(Rational::ZERO));
    }

    #[test]
    fn composed_accesses_multiply_their_jacobians() {
        // g(x) = p(2x); c(x, y) = g(x / 2 + y): p is read at x + 2y.
        let outer = LoadJacobian::of(&[x() * 2], &["x"]).rows;
        let inner = LoadJacobian::of(&[x() / 2 + y()], &["x", "y"]).rows;
        assert_eq!(compose(&outer, &inner), vec![vec![Rational::new(1, 1), Rational::new(2, 1)]]);
        let opaque = vec![vec![None]];
        assert_eq!(compose(&opaque, &inner), vec![vec![None, None]]);
        let zero = vec![vec![Some(Rational::ZERO)]];
        assert_eq!(compose(&zero, &[vec![None, None]]), vec![vec![Some(Rational::ZERO), Some(Rational::ZERO)]]);
    }

    #[test]
    fn access_patterns_are_classified() {
        let j = LoadJacobian::of(&[x(), y()], &["x", "y"]);
        assert!(j.is_pointwise() && j.is_transpose() && j.is_broadcast() && j.is_slice());
        let t = LoadJacobian::of(&[y(), x()], &["x", "y"]);
        assert!(!t.is_pointwise() && t.is_transpose());
        let b = LoadJacobian::of(&[x()], &["x", "y"]);
        assert!(!b.is_broadcast() && !b.is_transpose());
        let s = LoadJacobian::of(&[x(), y(), Expr::int(0, Type::i32())], &["x", "y"]);
        assert!(s.is_slice() && !s.is_pointwise());
        let d = LoadJacobian::of(&[x() * 2], &["x"]);
        assert!(!d.is_pointwise() && !d.is_slice());
        assert_eq!(d.to_string(), "[2]");
    }
}
