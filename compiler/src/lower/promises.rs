//! Strips `promise_clamped` annotations once the passes that read them
//! (bounds inference, sliding window, storage folding) are done.
//!
//! Requires: nothing. Guarantees: no `promise_clamped` call remains; each is
//! replaced by its value, so later passes and back ends never see one.

use crate::ir::expr::{CallTarget, Expr, ExprNode, MathFn};
use crate::ir::stmt::Stmt;
use crate::ir::visit::{mutate_expr_children, Mutator};

struct Strip;

impl Mutator for Strip {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e = mutate_expr_children(self, e);
        match e.node() {
            ExprNode::Call { target: CallTarget::Math(MathFn::PromiseClamped), args, .. } => args[0].clone(),
            _ => e,
        }
    }
}

/// `s` without promises.
pub fn strip_promises(s: &Stmt) -> Stmt {
    Strip.mutate_stmt(s)
}
