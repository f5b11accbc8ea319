//! Rewriting one kind of node with knowledge of what encloses it: the loops,
//! lets and realizations between the root and the node. Several passes
//! (bounds inference, sliding window, storage folding) are "find this node,
//! look at its context, replace it"; this module is that traversal, once.

use crate::ir::expr::{Expr, Name};
use crate::ir::stmt::{ForKind, Stmt, StmtNode};
use crate::ir::visit::{mutate_stmt_children, substitute, Mutator};

/// A node enclosing the one being rewritten, outermost first.
#[derive(Clone, Debug)]
pub enum Enclosing {
    /// A `For` loop: its variable, first value and kind.
    Loop { name: Name, min: Expr, kind: ForKind },
    /// A `LetStmt`: the name it binds and its value.
    Let { name: Name, value: Expr },
    /// The `Realize` of a Func.
    Realize { func: Name },
}

/// The chain of enclosing nodes.
#[derive(Clone, Debug, Default)]
pub struct Context {
    /// The enclosing nodes, outermost first.
    pub chain: Vec<Enclosing>,
}

impl Context {
    /// Index of the innermost enclosing loop.
    pub fn innermost_loop(&self) -> Option<usize> {
        self.chain.iter().rposition(|e| matches!(e, Enclosing::Loop { .. }))
    }

    /// Index of the Realize of `func`, if one encloses the node.
    pub fn realize_index(&self, func: &str) -> Option<usize> {
        self.chain.iter().position(|e| matches!(e, Enclosing::Realize { func: f } if &**f == func))
    }

    /// Substitutes the lets of the chain from index `from` inwards into `e`,
    /// giving an expression in terms of what is defined outside them.
    pub fn expand_lets_from(&self, from: usize, e: &Expr) -> Expr {
        self.chain[from..].iter().rev().fold(e.clone(), |out, item| match item {
            Enclosing::Let { name, value } => substitute(name, value, &out),
            _ => out,
        })
    }

    /// Substitutes the lets of the chain whose values are constants (the
    /// extents of split loops) into `e`, innermost first.
    pub fn expand_constant_lets(&self, e: &Expr) -> Expr {
        self.chain.iter().rev().fold(e.clone(), |out, item| match item {
            Enclosing::Let { name, value } if value.is_const() => substitute(name, value, &out),
            _ => out,
        })
    }
}

/// Rewrites every node for which `matches` is true with `rewrite`, which sees
/// the node's context. Matched nodes are not descended into.
pub fn rewrite_matching<E>(
    s: &Stmt,
    matches: impl Fn(&Stmt) -> bool,
    rewrite: impl FnMut(&Context, &Stmt) -> Result<Stmt, E>,
) -> Result<Stmt, E> {
    let mut r = Rewriter { ctx: Context::default(), matches, rewrite, error: None };
    let out = r.mutate_stmt(s);
    match r.error {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

struct Rewriter<M, R, E> {
    ctx: Context,
    matches: M,
    rewrite: R,
    error: Option<E>,
}

impl<M: Fn(&Stmt) -> bool, R: FnMut(&Context, &Stmt) -> Result<Stmt, E>, E> Mutator for Rewriter<M, R, E> {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if self.error.is_some() {
            return s.clone();
        }
        if (self.matches)(s) {
            return match (self.rewrite)(&self.ctx, s) {
                Ok(n) => n,
                Err(e) => {
                    self.error = Some(e);
                    s.clone()
                }
            };
        }
        let pushed = match s.node() {
            StmtNode::For { name, min, kind, .. } => Some(Enclosing::Loop { name: name.clone(), min: min.clone(), kind: *kind }),
            StmtNode::LetStmt { name, value, .. } => Some(Enclosing::Let { name: name.clone(), value: value.clone() }),
            StmtNode::Realize { func, .. } => Some(Enclosing::Realize { func: func.clone() }),
            _ => None,
        };
        let has = pushed.is_some();
        if let Some(p) = pushed {
            self.ctx.chain.push(p);
        }
        let out = mutate_stmt_children(self, s);
        if has {
            self.ctx.chain.pop();
        }
        out
    }
}

/// The context of the first node for which `matches` is true.
pub fn find_context(s: &Stmt, matches: impl Fn(&Stmt) -> bool) -> Option<Context> {
    let mut found = None;
    let _ = rewrite_matching::<()>(s, &matches, |ctx, node| {
        if found.is_none() {
            found = Some(ctx.clone());
        }
        Ok(node.clone())
    });
    found
}
