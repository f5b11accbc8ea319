//! The simplifier of expressions and statements.
//!
//! It works on any IR (before or after flattening and vectorization) and
//! guarantees an equivalent result under the language's exact semantics
//! ([`crate::ir::value`]): constants fold through `value.rs` itself; integer
//! `+ - *` go through a linear canonical form (ring identities, exact under
//! wrapping: `(x + 8) - x` is `8`); floats only fold constants. Decisions of
//! `min`/`max`/comparisons use constant bounds of subterms (loop ranges and
//! lets included), which are sound under wrapping for narrow types; for the
//! index types i32 and i64 it also cancels common terms of the two sides
//! (`x + 1 > x`) and splits divisions (`(x*8 + y)/8` is `x + y/8`), assuming
//! like Halide that index arithmetic does not overflow. It never decides
//! anything about the values of loads or calls beyond their type's range.
//!
//! Statements lose loops of zero extent, single-iteration loops, branches on
//! constant conditions, asserts that always hold, no-ops and unused lets.

mod bounds;
mod rules;
#[cfg(test)]
mod tests;

use crate::ir::expr::{BinOp, Expr, ExprNode, Name};
use crate::ir::stmt::{ForKind, Stmt, StmtNode};
use crate::ir::visit::{
    binder_counts, expr_uses_var, mutate_expr_children, mutate_stmt_children, stmt_children, substitute, substitute_stmt, walk_expr,
    walk_stmt, FreeVars, Mutator, Visitor,
};
use bounds::Interval;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Simplifies an expression.
pub fn simplify(e: &Expr) -> Expr {
    Simplifier::default().mutate_expr(e)
}

/// Simplifies an expression knowing that each variable of `ranges` lies in
/// the closed interval `[lo, hi]`.
pub fn simplify_with(e: &Expr, ranges: &HashMap<Name, (i64, i64)>) -> Expr {
    let mut s = Simplifier::default();
    for (name, (lo, hi)) in ranges {
        s.push_range(name, Some(Interval::new(*lo as i128, *hi as i128)));
    }
    s.mutate_expr(e)
}

/// Simplifies a statement and every expression in it.
pub fn simplify_stmt(s: &Stmt) -> Stmt {
    Simplifier { binders: Some(binder_counts(s)), ..Simplifier::default() }.mutate_stmt(s)
}

/// Whether the bool expression `e` simplifies to constant true.
pub fn can_prove(e: &Expr) -> bool {
    rules::const_bool(&simplify(e)) == Some(true)
}

/// Whether the bool expression `e` simplifies to constant true when each
/// variable of `ranges` lies in its closed interval.
pub fn can_prove_with(e: &Expr, ranges: &HashMap<Name, (i64, i64)>) -> bool {
    rules::const_bool(&simplify_with(e, ranges)) == Some(true)
}

/// Constant lower and upper bounds of an integer expression, where they can
/// be derived (a bound at the limit of the type is reported as `None`, except
/// the lower bound 0 of unsigned types).
pub fn const_bounds(e: &Expr) -> (Option<i64>, Option<i64>) {
    const_bounds_with(e, &HashMap::new())
}

/// [`const_bounds`] knowing that each variable of `ranges` lies in the
/// closed interval `[lo, hi]`.
pub fn const_bounds_with(e: &Expr, ranges: &HashMap<Name, (i64, i64)>) -> (Option<i64>, Option<i64>) {
    let mut s = Simplifier::default();
    for (name, (lo, hi)) in ranges {
        s.push_range(name, Some(Interval::new(*lo as i128, *hi as i128)));
    }
    let e = s.mutate_expr(e);
    let t = e.ty().scalar;
    let Some(b) = s.bounds(&e) else {
        return (None, None);
    };
    let lo = (b.lo > t.int_min() || !t.is_signed_int()).then(|| i64::try_from(b.lo).ok()).flatten();
    let hi = (b.hi < t.int_max()).then(|| i64::try_from(b.hi).ok()).flatten();
    (lo, hi)
}

/// The simplifier's state: the known ranges of variables in scope (`None`
/// shadows an outer range with an unknown value), and the bounds already
/// derived under those ranges, by node. Rules ask for the bounds of whole
/// subtrees at every node they rebuild; the cache makes that linear in the
/// size of the tree. It holds each node it has a bound for (so no address
/// is reused while it is a key) and empties whenever a range changes.
///
/// Two more tables keep a statement's simplification linear in its size
/// where a long chain of lets (the bounds of a deep pipeline) would make it
/// quadratic: the lets replaced by their values are substituted as the walk
/// meets their variables (`inlined`), not by rewriting the body once per
/// let, which is safe for a name bound once in the whole statement
/// (`binders` counts them); and the variables each simplified statement
/// mentions are remembered by node (`mentions`, holding its node), so that
/// dropping unused lets does not walk the body once per let.
#[derive(Default)]
struct Simplifier {
    ranges: HashMap<Name, Vec<Option<Interval>>>,
    bounds_cache: HashMap<usize, (Expr, Option<Interval>)>,
    binders: Option<HashMap<Name, usize>>,
    inlined: HashMap<Name, Expr>,
    mentions: HashMap<usize, (Stmt, Rc<HashSet<Name>>)>,
}

impl Simplifier {
    fn push_range(&mut self, name: &Name, r: Option<Interval>) {
        self.forget_bounds();
        self.ranges.entry(name.clone()).or_default().push(r);
    }

    fn pop_range(&mut self, name: &Name) {
        self.forget_bounds();
        if let Some(stack) = self.ranges.get_mut(name) {
            stack.pop();
            if stack.is_empty() {
                self.ranges.remove(name);
            }
        }
    }

    /// Empties the bounds cache (dropping it, so that emptying costs what
    /// filling it did, not its capacity).
    fn forget_bounds(&mut self) {
        if !self.bounds_cache.is_empty() {
            self.bounds_cache = HashMap::new();
        }
    }

    fn range_of(&self, name: &Name) -> Option<Interval> {
        self.ranges.get(name).and_then(|s| s.last().copied().flatten())
    }

    fn let_expr(&mut self, name: &Name, value: &Expr, body: &Expr) -> Expr {
        let value = self.mutate_expr(value);
        if is_inlinable(&value) && !rebinds(&value, |n| binds_in_expr(body, n)) {
            return self.mutate_expr(&substitute(name, &value, body));
        }
        if let Some(v) = VectorShape::of(name, &value).filter(|v| !binds_in_expr(body, &v.scalar_name)) {
            return self.let_expr(&v.scalar_name, &v.scalar, &substitute(name, &v.shape, body));
        }
        let r = self.bounds(&value);
        self.push_range(name, r);
        let body = self.mutate_expr(body);
        self.pop_range(name);
        if expr_uses_var(&body, name) {
            Expr::let_in(name.clone(), value, body)
        } else {
            body
        }
    }

    /// Whether `name`, inlined as `value` into a body it encloses, may be
    /// substituted as the walk meets it: its only binder is this let, and
    /// the variable `value` may be is bound nowhere or only outside.
    fn inlines_in_walk(&self, name: &Name, value: &Expr) -> bool {
        let Some(binders) = &self.binders else {
            return false;
        };
        let count = |n: &Name| binders.get(n).copied().unwrap_or(0);
        count(name) == 1 && inlined_var(value).is_none_or(|v| count(v) == 0 || (count(v) == 1 && self.ranges.contains_key(v)))
    }

    /// The variables `s` mentions (as `stmt_uses_var` sees them).
    fn mentioned(&mut self, s: &Stmt) -> Rc<HashSet<Name>> {
        let key = s.node() as *const StmtNode as usize;
        if let Some((_, names)) = self.mentions.get(&key) {
            return names.clone();
        }
        let (exprs, stmts) = stmt_children(s);
        let children: Vec<Rc<HashSet<Name>>> = stmts.iter().map(|c| self.mentioned(c)).collect();
        let names = match (exprs.is_empty(), children.as_slice()) {
            (true, [only]) => only.clone(),
            _ => {
                let mut fv = FreeVars::default();
                exprs.iter().for_each(|e| fv.visit_expr(e));
                children.iter().for_each(|c| fv.names.extend(c.iter().cloned()));
                Rc::new(fv.names)
            }
        };
        self.mentions.insert(key, (s.clone(), names.clone()));
        names
    }

    fn let_stmt(&mut self, name: &Name, value: &Expr, body: &Stmt) -> Stmt {
        let value = self.mutate_expr(value);
        if is_inlinable(&value) && self.inlines_in_walk(name, &value) {
            self.inlined.insert(name.clone(), value);
            let body = self.mutate_stmt(body);
            self.inlined.remove(name);
            return body;
        }
        if is_inlinable(&value) && !rebinds(&value, |n| binds_in_stmt(body, n)) {
            return self.mutate_stmt(&substitute_stmt(name, &value, body));
        }
        if let Some(v) = VectorShape::of(name, &value).filter(|v| !binds_in_stmt(body, &v.scalar_name)) {
            return self.let_stmt(&v.scalar_name, &v.scalar, &substitute_stmt(name, &v.shape, body));
        }
        let r = self.bounds(&value);
        self.push_range(name, r);
        let body = self.mutate_stmt(body);
        self.pop_range(name);
        if self.mentioned(&body).contains(name) {
            Stmt::let_stmt(name.clone(), value, body)
        } else {
            body
        }
    }

    fn for_loop(&mut self, s: &Stmt) -> Stmt {
        let StmtNode::For { name, min, extent, kind, body } = s.node() else {
            return s.clone();
        };
        let (min, extent) = (self.mutate_expr(min), self.mutate_expr(extent));
        let extent_bounds = self.bounds(&extent);
        if extent_bounds.is_some_and(|b| b.hi <= 0) {
            return Stmt::no_op();
        }
        // A GPU loop of one iteration stays a loop: it still says where a
        // kernel or a thread nest is.
        if extent.is_const_int(1) && !matches!(kind, ForKind::GpuBlock | ForKind::GpuThread) {
            return self.let_stmt(name, &min, body);
        }
        // The loop variable runs over [min, min + extent - 1].
        let range = match (self.bounds(&min), extent_bounds) {
            (Some(m), Some(e)) => Some(Interval::new(m.lo, m.hi + e.hi - 1).intersect(Interval::of_type(min.ty().scalar))),
            _ => None,
        };
        self.push_range(name, range);
        let body = self.mutate_stmt(body);
        self.pop_range(name);
        if body.is_no_op() {
            return body;
        }
        Stmt::for_loop(name.clone(), min, extent, *kind, body)
    }
}

impl Mutator for Simplifier {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        match e.node() {
            ExprNode::Var { name, .. } if self.inlined.contains_key(name) => self.inlined[name].clone(),
            ExprNode::Let { name, value, body } => self.let_expr(name, value, body),
            _ => {
                let e = mutate_expr_children(self, e);
                self.rewrite(&e)
            }
        }
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::For { .. } => self.for_loop(s),
            StmtNode::LetStmt { name, value, body } => self.let_stmt(name, value, body),
            StmtNode::IfThenElse { cond, then_case, else_case } => {
                let cond = self.mutate_expr(cond);
                match rules::const_bool(&cond) {
                    Some(true) => self.mutate_stmt(then_case),
                    Some(false) => else_case.as_ref().map_or_else(Stmt::no_op, |e| self.mutate_stmt(e)),
                    None => {
                        let then_case = self.mutate_stmt(then_case);
                        let else_case = else_case.as_ref().map(|e| self.mutate_stmt(e)).filter(|e| !e.is_no_op());
                        if then_case.is_no_op() && else_case.is_none() {
                            Stmt::no_op()
                        } else {
                            Stmt::new(StmtNode::IfThenElse { cond, then_case, else_case })
                        }
                    }
                }
            }
            StmtNode::Assert { cond, message } => {
                let cond = self.mutate_expr(cond);
                if rules::const_bool(&cond) == Some(true) {
                    Stmt::no_op()
                } else {
                    Stmt::assert(cond, message.clone())
                }
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}

/// Values that a let may be replaced by: constants (and constant vectors),
/// plain variables and scalar variables shifted by a constant (`f.x.min + 15`, so that the
/// difference of two bounds of one tile folds to its width).
fn is_inlinable(value: &Expr) -> bool {
    matches!(value.node(), ExprNode::Var { .. } | ExprNode::Param { .. })
        || value.is_const()
        || matches!(value.node(), ExprNode::Broadcast { value, .. } if value.is_const())
        || matches!(value.node(), ExprNode::Ramp { base, stride, .. } if base.is_const() && stride.is_const())
        || shifted_var(value).is_some()
}

/// The variable of a scalar integer `v + c` (`c` constant).
fn shifted_var(value: &Expr) -> Option<&Name> {
    match value.node() {
        ExprNode::Binary { op: BinOp::Add, a, b } if value.ty().lanes == 1 && b.as_int().is_some() => a.as_var(),
        _ => None,
    }
}

/// The variable an inlinable value mentions, if any.
fn inlined_var(value: &Expr) -> Option<&Name> {
    value.as_var().or_else(|| shifted_var(value))
}

/// A vector let value `ramp(b, s)` (constant stride) or `broadcast(b)`,
/// seen as a scalar let of `b` and the same shape around its variable, so
/// that uses of the vector see its shape: `v + x8(1)` with `v = ramp(b, 1,
/// 8)` becomes the dense `ramp(v.base + 1, 1, 8)`.
struct VectorShape {
    scalar_name: Name,
    scalar: Expr,
    shape: Expr,
}

impl VectorShape {
    fn of(name: &Name, value: &Expr) -> Option<VectorShape> {
        let scalar_name: Name = format!("{name}.base").into();
        let (scalar, shape) = match value.node() {
            ExprNode::Ramp { base, stride, lanes } if stride.is_const() && !base.is_const() => {
                (base.clone(), Expr::ramp(Expr::var(scalar_name.clone(), base.ty()), stride.clone(), *lanes))
            }
            ExprNode::Broadcast { value, lanes } if !value.is_const() => {
                (value.clone(), Expr::broadcast(Expr::var(scalar_name.clone(), value.ty()), *lanes))
            }
            _ => return None,
        };
        Some(VectorShape { scalar_name, scalar, shape })
    }
}

/// Whether the variable of an inlinable `value` is one `binds` reports as re-bound
/// (substituting it there would capture it).
fn rebinds(value: &Expr, binds: impl Fn(&Name) -> bool) -> bool {
    inlined_var(value).is_some_and(binds)
}

/// Finds a let, loop or let statement binding a given name.
struct BinderFinder<'a> {
    name: &'a Name,
    found: bool,
}

impl Visitor for BinderFinder<'_> {
    fn visit_expr(&mut self, e: &Expr) {
        if let ExprNode::Let { name, .. } = e.node() {
            self.found |= name == self.name;
        }
        walk_expr(self, e)
    }

    fn visit_stmt(&mut self, s: &Stmt) {
        if let StmtNode::For { name, .. } | StmtNode::LetStmt { name, .. } = s.node() {
            self.found |= name == self.name;
        }
        walk_stmt(self, s)
    }
}

fn binds_in_expr(e: &Expr, name: &Name) -> bool {
    let mut f = BinderFinder { name, found: false };
    f.visit_expr(e);
    f.found
}

fn binds_in_stmt(s: &Stmt, name: &Name) -> bool {
    let mut f = BinderFinder { name, found: false };
    f.visit_stmt(s);
    f.found
}
