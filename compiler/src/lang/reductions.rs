//! Inline reductions: `sum`, `product`, `minimum`, `maximum`, `argmin` and
//! `argmax` over the reduction domain an expression mentions. Each makes an
//! anonymous Func over the expression's free pure variables (initial value
//! plus one update over the domain; a Tuple Func for `argmin`/`argmax`)
//! and returns a call of it. When the pipeline is collected
//! (`Pipeline::new`) the helper's dimensions are put in the order of the
//! calling Func's variables, as Halide's are, and it is named after that
//! Func (`blur_sum`).

use crate::ir::expr::{BinOp, CmpOp, Expr, ExprNode, RDomDef};
use crate::ir::types::Type;
use crate::ir::visit::Visitor;
use crate::lang::checks::VarsUsed;
use crate::lang::handles::Made;
use crate::lang::ops::AsExpr;
use crate::lang::{Func, Var};
use std::sync::Arc;

struct Reduction {
    func: Func,
    vars: Vec<Var>,
    rdom: Option<Arc<RDomDef>>,
}

fn reduction_over(prefix: &str, e: &Expr) -> Reduction {
    let mut used = VarsUsed::default();
    used.visit_expr(e);
    Reduction {
        func: Func::made_by(Made::Reduction, prefix),
        vars: used.vars.iter().map(|v| Var::new(v)).collect(),
        rdom: used.rvars.values().next().cloned(),
    }
}

impl Reduction {
    fn var_refs(&self) -> Vec<&Var> {
        self.vars.iter().collect()
    }
    fn args(&self) -> Vec<Expr> {
        self.vars.iter().map(Var::expr).collect()
    }
    fn call(&self) -> Expr {
        self.func.at(self.args())
    }
}

fn fold(prefix: &str, e: impl AsExpr, init: impl Fn(Type) -> Expr, combine: impl Fn(Expr, Expr) -> Expr) -> Expr {
    let e = e.as_expr();
    let r = reduction_over(prefix, &e);
    r.func.define(&r.var_refs(), init(e.ty()));
    r.func.update(r.args(), combine(r.call(), e));
    r.call()
}

fn type_min(t: Type) -> Expr {
    match t.scalar {
        s if s.is_float() => Expr::float(f64::NEG_INFINITY, t),
        s => Expr::int(s.int_min() as i64, t),
    }
}

fn type_max(t: Type) -> Expr {
    match t.scalar {
        s if s.is_float() => Expr::float(f64::INFINITY, t),
        s if s.is_unsigned_int() && s.bits() == 64 => Expr::int(-1, t),
        s => Expr::int(s.int_max() as i64, t),
    }
}

/// The sum of `e` over its reduction domain, in `e`'s type.
pub fn sum(e: impl AsExpr) -> Expr {
    fold("sum", e, |t| Expr::int(0, t), |acc, v| Expr::binary(BinOp::Add, acc, v))
}

/// The product of `e` over its reduction domain.
pub fn product(e: impl AsExpr) -> Expr {
    fold("product", e, |t| Expr::int(1, t), |acc, v| Expr::binary(BinOp::Mul, acc, v))
}

/// The smallest value of `e` over its reduction domain.
pub fn minimum(e: impl AsExpr) -> Expr {
    fold("minimum", e, type_max, Expr::min)
}

/// The largest value of `e` over its reduction domain.
pub fn maximum(e: impl AsExpr) -> Expr {
    fold("maximum", e, type_min, Expr::max)
}

/// Where `e` is largest over its reduction domain, and its value there: a
/// Tuple of the coordinates (one per reduction dimension) of the first
/// point in iteration order with the largest value, then that value.
pub fn argmax(e: impl AsExpr) -> Vec<Expr> {
    arg_extreme("argmax", e.as_expr(), type_min, CmpOp::Gt)
}

/// Where `e` is smallest, and its value there (see [`argmax`]).
pub fn argmin(e: impl AsExpr) -> Vec<Expr> {
    arg_extreme("argmin", e.as_expr(), type_max, CmpOp::Lt)
}

/// A Tuple reduction: the helper holds (coordinates..., best value), starts
/// at the domain's first point with the type's worst value, and moves to a
/// point only where `e` is strictly better, so the first best point wins.
fn arg_extreme(prefix: &str, e: Expr, worst: fn(Type) -> Expr, better: CmpOp) -> Vec<Expr> {
    let r = reduction_over(prefix, &e);
    let Some(rdom) = r.rdom.clone() else {
        // No domain: the only point is "here"; no coordinates, just the value.
        return vec![e];
    };
    let init = rdom.dims.iter().map(|d| d.min.clone()).chain([worst(e.ty())]);
    r.func.define_tuple(&r.var_refs(), init);
    let current = r.func.tuple_at(r.args());
    let best = current.last().cloned().expect("the value is the last element");
    let here = Expr::cmp(better, e.clone(), best);
    let candidate = (0..rdom.dims.len()).map(|d| Expr::new(ExprNode::RVar { rdom: rdom.clone(), dim: d })).chain([e]);
    let next: Vec<Expr> = candidate.zip(&current).map(|(new, old)| Expr::select(here.clone(), new, old.clone())).collect();
    r.func.update_tuple(r.args(), next);
    r.func.tuple_at(r.args())
}
