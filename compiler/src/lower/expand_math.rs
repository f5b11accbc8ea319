//! Expands every f32 `exp` call into plain nodes ([`crate::ir::exp`]): the
//! C library's `expf` is scalar, so a vectorized loop calling it calls it
//! lane by lane, while the expansion is a few vector operations. The
//! evaluators compute the same function ([`crate::ir::exp::exp_f32`]), so
//! the results are the same bits either way.
//!
//! Requires: a flattened statement whose expressions are still scalar
//! (before vectorization), simplified (constants already folded).
//! Guarantees: no scalar f32 `exp` call remains; each is replaced by its
//! expansion.

use crate::ir::exp::expansion;
use crate::ir::expr::{CallTarget, Expr, ExprNode, MathFn};
use crate::ir::stmt::Stmt;
use crate::ir::types::Type;
use crate::ir::visit::{mutate_expr_children, Mutator};

struct Expand;

impl Mutator for Expand {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e = mutate_expr_children(self, e);
        match e.node() {
            ExprNode::Call { target: CallTarget::Math(MathFn::Exp), args, ty } if *ty == Type::f32() => expansion(args[0].clone()),
            _ => e,
        }
    }
}

/// `s` with its f32 `exp` calls expanded.
pub fn expand_math(s: &Stmt) -> Stmt {
    Expand.mutate_stmt(s)
}
