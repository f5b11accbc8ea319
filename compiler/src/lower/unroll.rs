//! Unrolling: a loop marked unrolled, of constant extent `n`, becomes `n`
//! copies of its body with the loop variable replaced by `min + i`.
//!
//! Requires: simplified IR (unrolled extents are constants). Guarantees: no
//! unrolled `For` remains; a loop whose extent is not constant runs as a
//! serial loop (and a warning is logged).

use crate::ir::expr::Expr;
use crate::ir::stmt::{ForKind, Stmt, StmtNode};
use crate::ir::visit::{mutate_stmt_children, substitute_stmt, Mutator};
use crate::simplify::simplify;

struct Unroll;

impl Mutator for Unroll {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let s = mutate_stmt_children(self, s);
        let StmtNode::For { name, min, extent, kind: ForKind::Unrolled, body } = s.node() else {
            return s;
        };
        match simplify(extent).as_int().filter(|&n| (0..=1 << 12).contains(&n)) {
            Some(n) => Stmt::block((0..n).map(|i| substitute_stmt(name, &(min.clone() + Expr::i32(i)), body)).collect()),
            None => {
                tracing::warn!(loop_var = %name, "unrolled loop has no constant extent; running it as a serial loop");
                Stmt::for_loop(name.clone(), min.clone(), extent.clone(), ForKind::Serial, body.clone())
            }
        }
    }
}

/// Unrolls every unrolled loop of `s`.
pub fn unroll(s: &Stmt) -> Stmt {
    Unroll.mutate_stmt(s)
}
