//! The footprint of a statement: the box (one interval per dimension) of a
//! Func or an input that a statement reads or writes, as bounds inference,
//! storage folding and the buffer checks of lowering ask for it.
//!
//! The walk goes down the statement keeping a [`Scope`]: a loop's variable
//! ranges over its bounds, a let's variable over the bounds of its value
//! (and stands for its value, expanded, so that correlated bounds cancel),
//! and an `if` narrows the variables its condition compares. Only the
//! statements that touch the Func or input are visited. Each access adds the
//! bounds of its coordinates ([`crate::analysis::interval`]) to the box.

use crate::analysis::interval::{one_or_both, raw_bounds, Interval, Scope};
use crate::ir::expr::{CallTarget, CmpOp, Expr, ExprNode, Name};
use crate::ir::stmt::{Stmt, StmtNode};
use crate::simplify::simplify;
use std::collections::HashSet;

/// Which accesses a walk looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access<'a> {
    /// Reads and writes of a Func.
    Func(&'a str),
    /// Reads of a Func only (calls, not provides).
    FuncReads(&'a str),
    /// Reads of an input buffer.
    Input(&'a str),
}

/// The box (one interval per dimension) that the accesses of `s` that
/// `access` looks for touch, with the variables of `scope` ranging over
/// their intervals. `None` if `s` makes no such access.
pub fn box_touched(s: &Stmt, access: Access<'_>, scope: &mut Scope) -> Option<Vec<Interval>> {
    let mut touching = HashSet::new();
    mark_touching(s, access, &mut touching);
    let mut w = BoxWalker { access, scope, result: None, definitions: vec![], touching, consumer: None, unbounded: None };
    w.stmt(s);
    w.result.map(|b| b.into_iter().map(Interval::simplified).collect())
}

/// An access whose coordinate has no finite range: the Func whose
/// definition makes it (`None` for a loop bound or condition), the
/// dimension and the coordinate expression.
#[derive(Clone, Debug, PartialEq)]
pub struct UnboundedAccess {
    pub consumer: Option<Name>,
    pub dim: usize,
    pub index: Expr,
}

/// The first access of `s` that `access` looks for whose coordinate in
/// some dimension [`box_touched`] cannot bound, to name it in an error.
pub fn unbounded_access(s: &Stmt, access: Access<'_>, scope: &mut Scope) -> Option<UnboundedAccess> {
    let mut touching = HashSet::new();
    mark_touching(s, access, &mut touching);
    let mut w = BoxWalker { access, scope, result: None, definitions: vec![], touching, consumer: None, unbounded: None };
    w.stmt(s);
    w.unbounded
}

/// Whether a call is one of the accesses `access` looks for.
fn call_matches(call: &CallTarget, access: Access<'_>) -> bool {
    match (call, access) {
        (CallTarget::Func(r), Access::Func(n) | Access::FuncReads(n)) => &*r.name == n,
        (CallTarget::Input(r), Access::Input(n)) => &*r.name == n,
        _ => false,
    }
}

/// Records in `set` every statement node under `s` (itself included) that
/// makes such an access, so that the walk skips the others: their lets and
/// loops cannot matter, and bounding them is most of the work in long
/// pipelines. Returns whether `s` makes one.
fn mark_touching(s: &Stmt, access: Access<'_>, set: &mut HashSet<*const StmtNode>) -> bool {
    let (exprs, stmts) = crate::ir::visit::stmt_children(s);
    let mut hit = false;
    for c in &stmts {
        hit |= mark_touching(c, access, set);
    }
    hit = hit
        || matches!((s.node(), access), (StmtNode::Provide { func, .. }, Access::Func(n)) if &**func == n)
        || exprs
            .iter()
            .any(|e| crate::ir::visit::expr_any_node(e, |n| matches!(n, ExprNode::Call { target: t, .. } if call_matches(t, access))));
    if hit {
        set.insert(s.node() as *const StmtNode);
    }
    hit
}

/// Expanded definitions larger than this many nodes stay behind their name.
const MAX_EXPANDED_NODES: usize = 400;

struct BoxWalker<'a, 's> {
    access: Access<'a>,
    scope: &'s mut Scope,
    result: Option<Vec<Interval>>,
    /// Let-bound variables in scope, innermost last, with their values
    /// expanded down to loop variables and free names, and simplified; `None`
    /// where the variable must stay opaque (an if-guard refined its interval,
    /// or the expansion grew too large).
    definitions: Vec<(Name, Option<Expr>)>,
    /// The statement nodes that make such an access (see [`mark_touching`]).
    touching: HashSet<*const StmtNode>,
    /// The Func whose `Provide` is being walked.
    consumer: Option<Name>,
    /// The first access with an unbounded coordinate.
    unbounded: Option<UnboundedAccess>,
}

impl BoxWalker<'_, '_> {
    /// `e` with let-bound variables replaced by their expanded definitions,
    /// simplified, so that correlated bounds cancel (`x.min + x.extent - 1`
    /// with `x.extent = x.max - x.min + 1` becomes `x.max`).
    fn expand(&self, e: &Expr) -> Expr {
        struct Expand<'d>(&'d [(Name, Option<Expr>)]);
        impl crate::ir::visit::Mutator for Expand<'_> {
            fn mutate_expr(&mut self, e: &Expr) -> Expr {
                if let ExprNode::Var { name, .. } = e.node() {
                    if let Some((_, Some(d))) = self.0.iter().rev().find(|(n, _)| n == name) {
                        return d.clone();
                    }
                    return e.clone();
                }
                crate::ir::visit::mutate_expr_children(self, e)
            }
        }
        if self.definitions.is_empty() {
            return e.clone();
        }
        simplify(&crate::ir::visit::Mutator::mutate_expr(&mut Expand(&self.definitions), e))
    }

    fn bounds(&self, e: &Expr) -> Interval {
        raw_bounds(&self.expand(e), self.scope)
    }

    fn define(&mut self, name: &Name, value: &Expr) {
        let expanded = self.expand(value);
        let small = crate::ir::visit::node_count(&expanded) <= MAX_EXPANDED_NODES;
        self.scope.push(name.clone(), raw_bounds(&expanded, self.scope).simplified());
        self.definitions.push((name.clone(), small.then_some(expanded)));
    }

    fn undefine(&mut self, name: &Name) {
        self.scope.pop(name);
        if let Some(i) = self.definitions.iter().rposition(|(n, _)| n == name) {
            self.definitions.remove(i);
        }
    }

    fn add(&mut self, args: &[Expr]) {
        let b: Vec<Interval> = args.iter().map(|a| self.bounds(a)).collect();
        if self.unbounded.is_none() {
            if let Some(dim) = b.iter().position(|i| i.min.is_none() || i.max.is_none()) {
                self.unbounded = Some(UnboundedAccess { consumer: self.consumer.clone(), dim, index: args[dim].clone() });
            }
        }
        self.result = Some(match self.result.take() {
            None => b,
            Some(old) => old.iter().zip(&b).map(|(x, y)| x.union(y)).collect(),
        });
    }

    fn matches_call(&self, t: &CallTarget) -> bool {
        call_matches(t, self.access)
    }

    fn expr(&mut self, e: &Expr) {
        match e.node() {
            ExprNode::Call { target, args, .. } => {
                args.iter().for_each(|a| self.expr(a));
                if self.matches_call(target) {
                    self.add(args);
                }
            }
            ExprNode::Let { name, value, body } => {
                self.expr(value);
                self.define(name, value);
                self.expr(body);
                self.undefine(name);
            }
            _ => {
                crate::ir::visit::expr_children(e).iter().for_each(|c| self.expr(c));
            }
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        if !self.touching.contains(&(s.node() as *const StmtNode)) {
            return;
        }
        match s.node() {
            StmtNode::For { name, min, extent, body, .. } => {
                self.expr(min);
                self.expr(extent);
                let lo = self.bounds(min);
                let hi = self.bounds(&(min.clone() + extent.clone() - 1));
                self.scope.push(name.clone(), Interval { min: lo.min, max: hi.max }.simplified());
                self.definitions.push((name.clone(), None));
                self.stmt(body);
                self.undefine(name);
            }
            StmtNode::LetStmt { name, value, body } => {
                self.expr(value);
                self.define(name, value);
                self.stmt(body);
                self.undefine(name);
            }
            StmtNode::IfThenElse { cond, then_case, else_case } => {
                self.expr(cond);
                let refined = refinements(cond, self.scope);
                for (n, i) in &refined {
                    self.scope.push(n.clone(), i.clone());
                    self.definitions.push((n.clone(), None));
                }
                self.stmt(then_case);
                for (n, _) in &refined {
                    self.undefine(n);
                }
                if let Some(e) = else_case {
                    self.stmt(e);
                }
            }
            StmtNode::Provide { func, args, value } => {
                let outer = self.consumer.replace(func.clone());
                args.iter().for_each(|a| self.expr(a));
                self.expr(value);
                if self.access == Access::Func(func) {
                    self.add(args);
                }
                self.consumer = outer;
            }
            _ => {
                let (exprs, stmts) = crate::ir::visit::stmt_children(s);
                exprs.iter().for_each(|e| self.expr(e));
                stmts.iter().for_each(|c| self.stmt(c));
            }
        }
    }
}

/// Narrower intervals for ranged variables that a condition of the form
/// `v <= e`, `v < e`, `v >= e`, `v > e` (or a conjunction) implies.
fn refinements(cond: &Expr, scope: &Scope) -> Vec<(Name, Interval)> {
    let mut out = vec![];
    let mut conds = vec![cond.clone()];
    while let Some(c) = conds.pop() {
        match c.node() {
            ExprNode::And { a, b } => {
                conds.push(a.clone());
                conds.push(b.clone());
            }
            ExprNode::Cmp { op, a, b } => {
                let Some(name) = a.as_var() else { continue };
                let Some(current) = scope.get(name) else {
                    continue;
                };
                let bound = raw_bounds(b, scope);
                let one = Expr::int(1, a.ty());
                let mut i = current.clone();
                match op {
                    CmpOp::Le => i.max = one_or_both(&i.max, &bound.max, Expr::min),
                    CmpOp::Lt => i.max = one_or_both(&i.max, &bound.max.map(|m| m - one.clone()), Expr::min),
                    CmpOp::Ge => i.min = one_or_both(&i.min, &bound.min, Expr::max),
                    CmpOp::Gt => i.min = one_or_both(&i.min, &bound.min.map(|m| m + one.clone()), Expr::max),
                    _ => continue,
                }
                out.push((name.clone(), i.simplified()));
            }
            _ => {}
        }
    }
    out
}
