//! The footprint of a statement: the box (one interval per dimension) of a
//! Func or an input that a statement reads or writes, as bounds inference,
//! storage folding and the buffer checks of lowering ask for it.
//!
//! The walk goes down the statement keeping a [`Scope`]: a loop's variable
//! ranges over its bounds, a let's variable over the bounds of its value
//! (and stands for its value, expanded, so that correlated bounds cancel;
//! a value too large to expand stays behind its name, and the ends of its
//! interval behind names of their own, which the box defines as `let`
//! expressions), and an `if` narrows the variables its condition compares. Only the
//! statements that touch the Func or input are visited. Each access adds the
//! bounds of its coordinates ([`crate::analysis::interval`]) to the box.

use crate::analysis::interval::{one_or_both, raw_bounds, with_lets, Interval, Scope};
use crate::ir::expr::{CallTarget, CmpOp, Expr, ExprNode, Name};
use crate::ir::share::Sharer;
use crate::ir::stmt::{Stmt, StmtNode};
use crate::simplify::simplify;
use std::collections::{HashMap, HashSet};

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
    let (b, named) = box_touched_naming(s, access, scope, "bound");
    b.map(|b| b.into_iter().map(|i| with_named_bounds(i, &named).simplified()).collect())
}

/// As [`box_touched`], but the interval ends of lets too large to expand
/// stay behind their names in the box, returned beside it with their
/// values (in the order to define them, each `{tag}.lowest{k}` or
/// `{tag}.highest{k}`): a caller that defines them as let statements in front
/// of what uses the box keeps them shared, where `let` expressions around
/// each end would be copied into every value that names the box.
pub fn box_touched_naming(s: &Stmt, access: Access<'_>, scope: &mut Scope, tag: &str) -> (Option<Vec<Interval>>, Vec<(Name, Expr)>) {
    let mut w = BoxWalker::walker(s, access, scope);
    w.tag = tag.to_string();
    w.stmt(s);
    let named = std::mem::take(&mut w.named_bounds);
    (w.result.map(|b| b.into_iter().map(Interval::simplified).collect()), named)
}

/// `i` with the named bounds it mentions defined around each end, as
/// `let` expressions (innermost last, as they were named).
fn with_named_bounds(i: Interval, named: &[(Name, Expr)]) -> Interval {
    Interval { min: i.min.map(|e| with_lets(e, named)), max: i.max.map(|e| with_lets(e, named)) }
}

/// An access whose coordinate has no finite range: the Func whose
/// definition makes it (`None` for a loop bound or condition), the
/// dimension and the coordinate expression.
#[derive(Clone, Debug, PartialEq)]
pub struct UnboundedAccess {
    /// The Func whose definition makes the access; `None` for a loop bound or
    /// condition.
    pub consumer: Option<Name>,
    /// The dimension whose coordinate has no finite range.
    pub dim: usize,
    /// The coordinate expression.
    pub index: Expr,
}

/// The first access of `s` that `access` looks for whose coordinate in
/// some dimension [`box_touched`] cannot bound, to name it in an error.
pub fn unbounded_access(s: &Stmt, access: Access<'_>, scope: &mut Scope) -> Option<UnboundedAccess> {
    let mut w = BoxWalker::walker(s, access, scope);
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

/// What the walk knows of a let-bound (or loop) variable in scope.
enum Definition {
    /// A let whose value has not been needed yet: it is expanded and
    /// bounded when an expression the walk bounds first mentions it, since
    /// most lets on the way to an access (the bounds of other Funcs) never
    /// are.
    Pending(Expr),
    /// Expanded down to loop variables and free names, and simplified;
    /// `expansion` is `None` where it grew too large and the variable stays
    /// behind its name. Its interval is on the scope (`bounded`) when
    /// something reads it there: always for a variable that stays a name,
    /// and for one an if-guard compares.
    Expanded { value: Expr, expansion: Option<Expr>, bounded: bool },
    /// A loop variable, or one an if-guard refined: it stays a name.
    Opaque,
}

struct BoxWalker<'a, 's> {
    access: Access<'a>,
    scope: &'s mut Scope,
    result: Option<Vec<Interval>>,
    /// Variables in scope, innermost last.
    definitions: Vec<(Name, Definition)>,
    /// The indices in `definitions` of the lets expanded or bounded so far,
    /// in the order they were, so that those expanded under an if-guard's
    /// refinements are returned to `Pending` when the guard's scope ends.
    expanded: Vec<usize>,
    /// The statement nodes that make such an access (see [`mark_touching`]).
    touching: HashSet<*const StmtNode>,
    /// The Func whose `Provide` is being walked.
    consumer: Option<Name>,
    /// The first access with an unbounded coordinate.
    unbounded: Option<UnboundedAccess>,
    /// The ends of the intervals of lets too large to expand, each behind a
    /// name of its own (see [`BoxWalker::bound_by_name`]), in the order
    /// they were named.
    named_bounds: Vec<(Name, Expr)>,
    /// The named ends by value: an end equal to one named before takes its
    /// name (the same let reached along many paths, or copies of it under
    /// the loops of each tile, would otherwise name it anew each time, and
    /// each walk of a producer inside would name every copy's ends again).
    /// Keyed by the address of the end's shared node.
    names_by_value: HashMap<usize, Name>,
    sharer: Sharer,
    /// What the named ends are tagged with (see [`box_touched_naming`]).
    tag: String,
}

/// `e` with the variables of `definitions` that have an expansion replaced
/// by it, simplified, so that correlated bounds cancel (`x.min + x.extent -
/// 1` with `x.extent = x.max - x.min + 1` becomes `x.max`).
fn expand_with(definitions: &[(Name, Definition)], e: &Expr) -> Expr {
    struct Expand<'d>(&'d [(Name, Definition)]);
    impl crate::ir::visit::Mutator for Expand<'_> {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            if let ExprNode::Var { name, .. } = e.node() {
                if let Some((_, Definition::Expanded { expansion: Some(d), .. })) = self.0.iter().rev().find(|(n, _)| n == name) {
                    return d.clone();
                }
                return e.clone();
            }
            crate::ir::visit::mutate_expr_children(self, e)
        }
    }
    if definitions.is_empty() {
        return e.clone();
    }
    simplify(&crate::ir::visit::Mutator::mutate_expr(&mut Expand(definitions), e))
}

impl BoxWalker<'_, '_> {
    fn walker<'a, 's>(s: &Stmt, access: Access<'a>, scope: &'s mut Scope) -> BoxWalker<'a, 's> {
        let mut touching = HashSet::new();
        mark_touching(s, access, &mut touching);
        BoxWalker {
            access,
            scope,
            result: None,
            definitions: vec![],
            expanded: vec![],
            touching,
            consumer: None,
            unbounded: None,
            named_bounds: vec![],
            names_by_value: HashMap::new(),
            sharer: Sharer::default(),
            tag: String::new(),
        }
    }

    /// Expands (and pushes the interval of) every pending let among the
    /// first `upto` definitions that `e` mentions, and those their values
    /// mention.
    fn expand_mentioned(&mut self, e: &Expr, upto: usize) {
        for i in self.mentioned_definitions(e, upto) {
            self.expand_definition(i);
        }
    }

    /// The indices among the first `upto` definitions of the variables `e`
    /// mentions (the innermost binding of each).
    fn mentioned_definitions(&self, e: &Expr, upto: usize) -> Vec<usize> {
        let mut mentioned = crate::ir::visit::FreeVars::default();
        crate::ir::visit::Visitor::visit_expr(&mut mentioned, e);
        mentioned.names.iter().filter_map(|name| self.definitions[..upto].iter().rposition(|(n, _)| n == name)).collect()
    }

    /// Expands definition `i` if it is pending.
    fn expand_definition(&mut self, i: usize) {
        let Definition::Pending(value) = &self.definitions[i].1 else {
            return;
        };
        let value = value.clone();
        self.expand_mentioned(&value, i);
        let expanded = expand_with(&self.definitions[..i], &value);
        let small = crate::ir::visit::node_count(&expanded) <= MAX_EXPANDED_NODES;
        self.definitions[i].1 = Definition::Expanded { value, expansion: Some(expanded), bounded: false };
        self.expanded.push(i);
        if !small {
            self.bound_by_name(i);
        }
    }

    /// Puts the interval of expanded definition `i`, too large to expand
    /// where it is used, on the scope with each end behind a name of its
    /// own, and leaves the definition behind its name. An end written out
    /// at every use would double with every let that uses the variable
    /// twice (a chain of Funcs each reading its producer at two clamped
    /// offsets): named, the ends grow with the length of the chain, and
    /// the box carries their definitions as `let` expressions.
    fn bound_by_name(&mut self, i: usize) {
        let Definition::Expanded { expansion: Some(expanded), .. } = &self.definitions[i].1 else {
            return;
        };
        let interval = raw_bounds(expanded, self.scope).simplified();
        let name = self.definitions[i].0.clone();
        let mut name_end = |end: Option<Expr>, which: &str| {
            end.map(|e| {
                if e.as_var().is_some() || e.is_const() {
                    return e;
                }
                let e = self.sharer.share(&e);
                let n = self.names_by_value.entry(e.address()).or_insert_with(|| {
                    let n: Name = format!("{}.{which}{}", self.tag, self.named_bounds.len()).into();
                    self.named_bounds.push((n.clone(), e.clone()));
                    n
                });
                Expr::var(n.clone(), e.ty())
            })
        };
        let interval = Interval { min: name_end(interval.min, "lowest"), max: name_end(interval.max, "highest") };
        self.scope.push(name, interval);
        if let Definition::Expanded { expansion, bounded, .. } = &mut self.definitions[i].1 {
            *expansion = None;
            *bounded = true;
        }
        self.expanded.push(i);
    }

    /// Pushes the interval of expanded definition `i` on the scope if it is
    /// not there yet.
    fn bound_definition(&mut self, i: usize) {
        let Definition::Expanded { expansion: Some(expanded), bounded: false, .. } = &self.definitions[i].1 else {
            return;
        };
        let interval = raw_bounds(expanded, self.scope).simplified();
        self.scope.push(self.definitions[i].0.clone(), interval);
        if let Definition::Expanded { bounded, .. } = &mut self.definitions[i].1 {
            *bounded = true;
        }
        self.expanded.push(i);
    }

    /// Expands and bounds the lets an if-guard compares, for
    /// [`refinements`] to read on the scope.
    fn bound_mentioned(&mut self, cond: &Expr) {
        for i in self.mentioned_definitions(cond, self.definitions.len()) {
            self.expand_definition(i);
            self.bound_definition(i);
        }
    }

    /// The last value of a loop's variable, `min + extent - 1`, with the
    /// extent's let read first: an extent written as `max - min + 1` (a
    /// sliding window's, whose `min` is a large `select`) then cancels its
    /// `min` by name, where bounding the two apart would lose that they
    /// move together. The extent's let is read only where nothing it
    /// mentions was bound again since.
    fn last_iteration(&self, min: &Expr, extent: &Expr) -> Expr {
        let value = extent.as_var().and_then(|name| {
            let i = self.definitions.iter().rposition(|(n, _)| n == name)?;
            let (Definition::Pending(value) | Definition::Expanded { value, .. }) = &self.definitions[i].1 else {
                return None;
            };
            let mut mentioned = crate::ir::visit::FreeVars::default();
            crate::ir::visit::Visitor::visit_expr(&mut mentioned, value);
            let rebound = self.definitions[i + 1..].iter().any(|(n, _)| mentioned.names.contains(n));
            (!rebound).then(|| value.clone())
        });
        simplify(&(min.clone() + value.unwrap_or_else(|| extent.clone()) - 1))
    }

    fn bounds(&mut self, e: &Expr) -> Interval {
        self.expand_mentioned(e, self.definitions.len());
        raw_bounds(&expand_with(&self.definitions, e), self.scope)
    }

    /// Before `name` is bound again inside its own scope: expands every
    /// pending let now, so that the intervals stack on the scope in binding
    /// order.
    fn before_binding(&mut self, name: &Name) {
        if self.definitions.iter().any(|(n, _)| n == name) {
            (0..self.definitions.len()).for_each(|i| self.expand_definition(i));
        }
    }

    fn define(&mut self, name: &Name, value: &Expr) {
        self.before_binding(name);
        self.definitions.push((name.clone(), Definition::Pending(value.clone())));
    }

    fn define_opaque(&mut self, name: &Name, interval: Interval) {
        self.before_binding(name);
        self.scope.push(name.clone(), interval);
        self.definitions.push((name.clone(), Definition::Opaque));
    }

    fn undefine(&mut self, name: &Name) {
        if let Some(i) = self.definitions.iter().rposition(|(n, _)| n == name) {
            if matches!(self.definitions[i].1, Definition::Opaque | Definition::Expanded { bounded: true, .. }) {
                self.scope.pop(name);
            }
            self.definitions.remove(i);
            self.expanded.retain(|&k| k < i);
        }
    }

    /// Returns the lets expanded since `mark` (an earlier length of
    /// `expanded`) to `Pending`: their intervals were taken under scopes that
    /// end now.
    fn forget_expansions_since(&mut self, mark: usize) {
        for i in self.expanded.split_off(mark).into_iter().rev() {
            let (name, definition) = &mut self.definitions[i];
            if let Definition::Expanded { value, bounded, .. } = definition {
                if *bounded {
                    self.scope.pop(name);
                }
                *definition = Definition::Pending(value.clone());
            }
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
                let hi = self.bounds(&self.last_iteration(min, extent));
                self.define_opaque(name, Interval { min: lo.min, max: hi.max }.simplified());
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
                self.bound_mentioned(cond);
                let refined = refinements(cond, self.scope);
                for (n, i) in &refined {
                    self.define_opaque(n, i.clone());
                }
                let mark = self.expanded.len();
                self.stmt(then_case);
                self.forget_expansions_since(mark);
                for (n, _) in refined.iter().rev() {
                    self.undefine(n);
                }
                if let Some(e) = else_case {
                    self.stmt(e);
                }
            }
            StmtNode::Provide { func, args, values } => {
                let outer = self.consumer.replace(func.clone());
                args.iter().for_each(|a| self.expr(a));
                values.iter().for_each(|v| self.expr(v));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::expr::DefRef;
    use crate::ir::stmt::ForKind;
    use crate::ir::types::Type;

    /// A value of `i` too large to expand: a sum of clamps against distinct
    /// params, which no rule folds.
    fn large(i: &Expr) -> Expr {
        (0..100).map(|k| Expr::min(i.clone() + k, Expr::ivar(format!("n{k}")))).reduce(|a, b| a + b).expect("terms")
    }

    /// `copies` loops, each binding the same large let and reading `f` at
    /// it (a Func's bounds reached along several paths: each tile loop's
    /// guarded tail, each consumer computed inside).
    fn copies(copies: usize) -> Stmt {
        let i = Expr::ivar("i");
        let read = Expr::call(CallTarget::Func(DefRef::unlinked("f".into(), 0)), vec![Expr::ivar("a")], Type::i32());
        let one = Stmt::for_loop(
            "i",
            Expr::i32(0),
            Expr::i32(10),
            ForKind::Serial,
            Stmt::let_stmt("a", large(&i), Stmt::store("out", Expr::i32(0), read)),
        );
        Stmt::block(vec![one; copies])
    }

    #[test]
    fn an_end_reached_twice_keeps_its_name() {
        let (one, named_once) = box_touched_naming(&copies(1), Access::FuncReads("f"), &mut Scope::default(), "f.required");
        let (five, named) = box_touched_naming(&copies(5), Access::FuncReads("f"), &mut Scope::default(), "f.required");
        assert_eq!(named_once.len(), 2, "the let's two ends are named");
        assert!(named == named_once, "five copies of the let name {} ends, one copy {}", named.len(), named_once.len());
        assert_eq!(five, one);
    }
}
