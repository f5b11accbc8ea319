//! The linear canonical form of scalar integer expressions: a sum of
//! `coefficient * term` plus a constant, where the terms are the
//! non-linear subexpressions (variables, loads, min/max, divisions, products
//! of two non-constants, ...).
//!
//! Coefficients and the constant are kept modulo `2^bits` of the type (as
//! their signed representative), so every rewrite through this form is a
//! ring identity that also holds under wrapping arithmetic.

use crate::ir::expr::{BinOp, Expr, ExprNode};
use crate::ir::semantics::wrap_signed;
use crate::ir::types::Type;

/// `sum(coefficient * term) + constant`, with terms in order of first appearance.
#[derive(Clone, Debug)]
pub struct Linear {
    /// The non-linear terms with their coefficients (never 0), in order of
    /// first appearance.
    pub terms: Vec<(Expr, i128)>,
    /// The constant, modulo `2^bits` of `ty` (its signed representative).
    pub constant: i128,
    /// The type of the expression.
    pub ty: Type,
}

impl Linear {
    fn constant(value: i128, ty: Type) -> Linear {
        Linear { terms: vec![], constant: wrap(value, ty), ty }
    }

    fn atom(e: &Expr) -> Linear {
        Linear { terms: vec![(e.clone(), 1)], constant: 0, ty: e.ty() }
    }

    /// `self + sign * other`.
    pub fn add(mut self, other: &Linear, sign: i128) -> Linear {
        for (t, c) in &other.terms {
            match self.terms.iter_mut().find(|(s, _)| s == t) {
                Some((_, sc)) => *sc = wrap(*sc + sign * c, self.ty),
                None => self.terms.push((t.clone(), wrap(sign * c, self.ty))),
            }
        }
        self.constant = wrap(self.constant + sign * other.constant, self.ty);
        self.terms.retain(|(_, c)| *c != 0);
        self
    }

    /// `k * self`.
    pub fn scale(mut self, k: i128) -> Linear {
        let k = wrap(k, self.ty);
        for (_, c) in &mut self.terms {
            *c = wrap(*c * k, self.ty);
        }
        self.constant = wrap(self.constant * k, self.ty);
        self.terms.retain(|(_, c)| *c != 0);
        self
    }

    /// The coefficient of the variable `var` (0 when it is not a term).
    /// Meaningful when [`Linear::is_affine`] holds for the variables of
    /// interest: otherwise `var` may also occur inside a non-linear term.
    pub fn coefficient(&self, var: &str) -> i128 {
        self.terms.iter().filter(|(t, _)| t.as_var().is_some_and(|v| &**v == var)).map(|(_, k)| *k).sum()
    }

    /// Whether every term is a variable accepted by `is_var` or mentions
    /// none of them: the form is then affine in those variables, with exact
    /// coefficients.
    pub fn is_affine(&self, is_var: impl Fn(&str) -> bool) -> bool {
        self.terms.iter().all(|(t, _)| match t.as_var() {
            Some(_) => true,
            None => !crate::ir::visit::expr_any_node(t, |n| matches!(n, ExprNode::Var { name, .. } if is_var(name))),
        })
    }

    /// The value, when there are no terms.
    pub fn as_const(&self) -> Option<i128> {
        self.terms.is_empty().then_some(self.constant)
    }

    /// Splits off the terms whose coefficient `keep` accepts.
    pub fn partition(&self, keep: impl Fn(i128) -> bool) -> (Linear, Linear) {
        let (kept, rest): (Vec<_>, Vec<_>) = self.terms.iter().cloned().partition(|(_, c)| keep(*c));
        (Linear { terms: kept, constant: 0, ty: self.ty }, Linear { terms: rest, constant: 0, ty: self.ty })
    }

    /// The same terms with another constant.
    pub fn with_constant(mut self, constant: i128) -> Linear {
        self.constant = wrap(constant, self.ty);
        self
    }

    /// The expression: positive terms, then negative terms, then the constant
    /// (`x*2 + y - z + 3`); a leading constant when no term is positive (`3 - x`).
    pub fn to_expr(&self) -> Expr {
        let ty = self.ty;
        let min_coef = -(1i128 << (ty.bits() - 1));
        let negative = |c: i128| c < 0 && c != min_coef;
        let scaled = |t: &Expr, c: i128| {
            if c == 1 {
                t.clone()
            } else {
                node(BinOp::Mul, t.clone(), Expr::int(c as i64, ty))
            }
        };
        let mut acc: Option<Expr> = None;
        for (t, c) in self.terms.iter().filter(|(_, c)| !negative(*c)) {
            let term = scaled(t, *c);
            acc = Some(match acc {
                Some(a) => node(BinOp::Add, a, term),
                None => term,
            });
        }
        let mut constant_done = false;
        for (t, c) in self.terms.iter().filter(|(_, c)| negative(*c)) {
            let a = acc.unwrap_or_else(|| {
                constant_done = true;
                Expr::int(self.constant as i64, ty)
            });
            acc = Some(node(BinOp::Sub, a, scaled(t, -c)));
        }
        match acc {
            None => Expr::int(self.constant as i64, ty),
            Some(a) if constant_done || self.constant == 0 => a,
            Some(a) if negative(self.constant) => node(BinOp::Sub, a, Expr::int((-self.constant) as i64, ty)),
            Some(a) => node(BinOp::Add, a, Expr::int(self.constant as i64, ty)),
        }
    }
}

/// The linear form of a scalar integer expression whose children are simplified.
pub fn linearize(e: &Expr) -> Linear {
    let ty = e.ty();
    match e.node() {
        ExprNode::IntImm { value, .. } => Linear::constant(*value as i128, ty),
        ExprNode::UIntImm { value, .. } => Linear::constant(*value as i128, ty),
        ExprNode::Binary { op: BinOp::Add, a, b } => linearize(a).add(&linearize(b), 1),
        ExprNode::Binary { op: BinOp::Sub, a, b } => linearize(a).add(&linearize(b), -1),
        ExprNode::Binary { op: BinOp::Mul, a, b } => {
            let (la, lb) = (linearize(a), linearize(b));
            match (la.as_const(), lb.as_const()) {
                (_, Some(k)) => la.scale(k),
                (Some(k), None) => lb.scale(k),
                (None, None) => Linear::atom(e),
            }
        }
        _ => Linear::atom(e),
    }
}

/// A binary node built as is (operands already have the same type).
pub(crate) fn node(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::new(ExprNode::Binary { op, a, b })
}

/// `v` reduced to the signed representative of the type's width.
fn wrap(v: i128, ty: Type) -> i128 {
    wrap_signed(v, ty.bits()) as i128
}
