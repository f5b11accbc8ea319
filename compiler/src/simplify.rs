//! The simplifier (placeholder: constant folding only, being replaced).

use crate::expr::Expr;
use crate::stmt::Stmt;

pub fn simplify(e: &Expr) -> Expr {
    e.clone()
}

pub fn simplify_stmt(s: &Stmt) -> Stmt {
    s.clone()
}

pub fn can_prove(e: &Expr) -> bool {
    simplify(e).as_int() == Some(1)
}

pub fn const_bounds(e: &Expr) -> (Option<i64>, Option<i64>) {
    (e.as_int(), e.as_int())
}
