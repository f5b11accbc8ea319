//! Loop partitioning: an innermost serial loop over the outer variable of a
//! shift-inwards split runs its steady state without the clamp that only
//! the last iteration needs.
//!
//! Loop synthesis places the split's outer iteration `o` (of
//! `ceil(n / c)`) at `max(min(o * c, n - c), 0)`. For every `o` but the
//! last, `o * c <= (ceil(n / c) - 2) * c < n - c` and `o * c >= 0`, so the
//! clamp is just `o * c`. This pass checks exactly that shape (the loop
//! starts at 0, its extent is `(n + c - 1) / c` through the enclosing lets,
//! and the clamp names the same `n` and `c`) and splits the loop into
//! `[0, e - 1)` with the clamp replaced, then the last iteration as it was.
//!
//! Requires: simplified, vectorized and unrolled IR. Guarantees: the same
//! iterations in the same order with the same values; only loops without
//! inner loops are split, so code grows at most twofold.

use crate::ir::expr::{BinOp, Expr, ExprNode, Name};
use crate::ir::stmt::{ForKind, Stmt, StmtNode};
use crate::ir::visit::{mutate_expr_children, mutate_stmt_children, walk_stmt, Mutator, Visitor};
use crate::simplify::simplify;

/// Partitions every loop of `s` that the shape above allows.
pub fn partition_loops(s: &Stmt) -> Stmt {
    Partition { lets: vec![] }.mutate_stmt(s)
}

struct Partition {
    /// Enclosing let statements, innermost last.
    lets: Vec<(Name, Expr)>,
}

impl Partition {
    fn value_of(&self, e: &Expr) -> Expr {
        match e.as_var().and_then(|n| self.lets.iter().rev().find(|(m, _)| m == n)) {
            Some((_, v)) => v.clone(),
            None => e.clone(),
        }
    }

    /// The loop split into its steady state and its last iteration, when
    /// its body clamps a shift-inwards split of its variable.
    fn partition(&self, var: &Name, extent: &Expr, body: &Stmt) -> Option<Stmt> {
        let (n, c) = ceil_division(&self.value_of(extent))?;
        let o = Expr::ivar(var.clone());
        let clamp = simplify(&Expr::max(Expr::min(o.clone() * Expr::i32(c), n.clone() - Expr::i32(c)), Expr::i32(0)));
        let mut replace = Replace { from: clamp, to: simplify(&(o * Expr::i32(c))), replaced: false };
        let steady = replace.mutate_stmt(body);
        if !replace.replaced {
            return None;
        }
        let split = simplify(&Expr::max(extent.clone() - Expr::i32(1), Expr::i32(0)));
        Some(Stmt::block(vec![
            Stmt::for_loop(var.clone(), Expr::i32(0), split.clone(), ForKind::Serial, steady),
            Stmt::for_loop(var.clone(), split.clone(), simplify(&(extent.clone() - split)), ForKind::Serial, body.clone()),
        ]))
    }
}

impl Mutator for Partition {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::LetStmt { name, value, body } => {
                self.lets.push((name.clone(), value.clone()));
                let body = self.mutate_stmt(body);
                self.lets.pop();
                Stmt::let_stmt(name.clone(), value.clone(), body)
            }
            StmtNode::For { name, min, extent, kind: ForKind::Serial, body } if min.as_int() == Some(0) && !has_loop(body) => {
                self.partition(name, extent, body).unwrap_or_else(|| s.clone())
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}

/// `(n, c)` when `e` is `(n + (c - 1)) / c` for a constant `c > 1`.
fn ceil_division(e: &Expr) -> Option<(Expr, i64)> {
    let ExprNode::Binary { op: BinOp::Div, a, b } = e.node() else {
        return None;
    };
    let c = b.as_int().filter(|c| *c > 1)?;
    let ExprNode::Binary { op: BinOp::Add, a: n, b: k } = a.node() else {
        return None;
    };
    (k.as_int() == Some(c - 1)).then(|| (n.clone(), c))
}

fn has_loop(s: &Stmt) -> bool {
    struct Finder(bool);
    impl Visitor for Finder {
        fn visit_stmt(&mut self, s: &Stmt) {
            self.0 |= matches!(s.node(), StmtNode::For { .. });
            walk_stmt(self, s);
        }
    }
    let mut f = Finder(false);
    walk_stmt(&mut f, s);
    f.0
}

/// Replaces every occurrence of one expression by another.
struct Replace {
    from: Expr,
    to: Expr,
    replaced: bool,
}

impl Mutator for Replace {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        if *e == self.from {
            self.replaced = true;
            return self.to.clone();
        }
        mutate_expr_children(self, e)
    }
}
