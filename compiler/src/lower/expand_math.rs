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
use std::collections::HashMap;

/// The rewrite, memoized by node (a subtree shared in the statement is
/// rewritten once and stays shared; each key is kept alive beside its
/// rewrite, so no address is reused while it is a key).
#[derive(Default)]
struct Expand(HashMap<usize, (Expr, Expr)>);

impl Mutator for Expand {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        if let Some((_, done)) = self.0.get(&e.address()) {
            return done.clone();
        }
        let out = mutate_expr_children(self, e);
        let out = match out.node() {
            ExprNode::Call { target: CallTarget::Math(MathFn::Exp), args, ty } if *ty == Type::f32() => expansion(args[0].clone()),
            _ => out,
        };
        self.0.insert(e.address(), (e.clone(), out.clone()));
        out
    }
}

/// `s` with its f32 `exp` calls expanded.
pub fn expand_math(s: &Stmt) -> Stmt {
    Expand::default().mutate_stmt(s)
}
