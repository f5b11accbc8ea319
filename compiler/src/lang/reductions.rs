//! Inline reductions: `sum`, `product`, `minimum`, `maximum`, `argmin` and
//! `argmax` over the reduction domain an expression mentions. Each makes an
//! anonymous Func over the expression's free pure variables (initial value
//! plus one update over the domain) and returns a call of it. The helper's
//! dimensions are put in the order of the calling Func's variables when
//! the pipeline is collected (`Pipeline::new`), as Halide's are.

use crate::ir::expr::{BinOp, CmpOp, Expr, ExprNode, RDomDef};
use crate::ir::types::Type;
use crate::ir::visit::Visitor;
use crate::lang::checks::VarsUsed;
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
        func: Func::reduction_helper(prefix),
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

/// The coordinates (one per reduction dimension) of the first point, in
/// iteration order, where `e` is largest.
pub fn argmax(e: impl AsExpr) -> Vec<Expr> {
    arg_extreme("argmax", e.as_expr(), maximum)
}

/// The coordinates of the first point where `e` is smallest.
pub fn argmin(e: impl AsExpr) -> Vec<Expr> {
    arg_extreme("argmin", e.as_expr(), minimum)
}

/// Finds the smallest linear position (first dimension fastest) where `e`
/// equals its extreme value, then decodes it into coordinates.
fn arg_extreme(prefix: &str, e: Expr, extreme: fn(Expr) -> Expr) -> Vec<Expr> {
    let best = extreme(e.clone());
    let r = reduction_over(prefix, &e);
    let Some(rdom) = r.rdom.clone() else {
        // No domain: the only point is "here"; report no coordinates.
        return vec![];
    };
    let rvar = |d: usize| Expr::new(ExprNode::RVar { rdom: rdom.clone(), dim: d });
    let mut linear = Expr::i32(0);
    for d in (0..rdom.dims.len()).rev() {
        linear = linear * rdom.dims[d].extent.clone() + (rvar(d) - rdom.dims[d].min.clone());
    }
    let none = Expr::i32(i32::MAX as i64);
    r.func.define(&r.var_refs(), none.clone());
    let here = Expr::select(Expr::cmp(CmpOp::Eq, e, best), linear, none);
    r.func.update(r.args(), Expr::min(r.call(), here));
    let found = r.call();
    let mut coords = vec![];
    let mut stride = Expr::i32(1);
    for d in &rdom.dims {
        coords.push(found.clone() / stride.clone() % d.extent.clone() + d.min.clone());
        stride = stride * d.extent.clone();
    }
    coords
}
