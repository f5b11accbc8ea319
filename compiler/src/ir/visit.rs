//! Traversal, written once: a read-only [`Visitor`] and a rebuilding
//! [`Mutator`] over expressions and statements, plus the small utilities every
//! pass needs (substitution, free-variable queries).
//!
//! A pass overrides the node kinds it cares about and calls the `walk_*` /
//! `mutate_*_children` functions for the rest. Mutators preserve sharing: a
//! node whose children did not change is returned as the same handle.

use crate::ir::expr::{Expr, ExprNode, Name};
use crate::ir::stmt::{Range, Stmt, StmtNode};
use std::collections::{HashMap, HashSet};

/// A read-only traversal.
pub trait Visitor {
    /// Visits `e`; by default, its children (`walk_expr`).
    fn visit_expr(&mut self, e: &Expr) {
        walk_expr(self, e)
    }
    /// Visits `s`; by default, its children (`walk_stmt`).
    fn visit_stmt(&mut self, s: &Stmt) {
        walk_stmt(self, s)
    }
}

/// Visits the children of `e`.
pub fn walk_expr<V: Visitor + ?Sized>(v: &mut V, e: &Expr) {
    for_each_child(e.node(), |child| v.visit_expr(child));
}

/// Calls `f` on each child expression of `node`, in evaluation order.
pub fn for_each_child(node: &ExprNode, mut f: impl FnMut(&Expr)) {
    match node {
        ExprNode::IntImm { .. }
        | ExprNode::UIntImm { .. }
        | ExprNode::FloatImm { .. }
        | ExprNode::Var { .. }
        | ExprNode::Param { .. }
        | ExprNode::RVar { .. } => {}
        ExprNode::Cast { value, .. } | ExprNode::Reinterpret { value, .. } => f(value),
        ExprNode::Binary { a, b, .. } | ExprNode::Cmp { a, b, .. } | ExprNode::And { a, b } | ExprNode::Or { a, b } => {
            f(a);
            f(b);
        }
        ExprNode::Not { a } => f(a),
        ExprNode::Select { cond, t, f: otherwise } => {
            f(cond);
            f(t);
            f(otherwise);
        }
        ExprNode::Let { value, body, .. } => {
            f(value);
            f(body);
        }
        ExprNode::Call { args, .. } => args.iter().for_each(f),
        ExprNode::Load { index, .. } => f(index),
        ExprNode::Ramp { base, stride, .. } => {
            f(base);
            f(stride);
        }
        ExprNode::Broadcast { value, .. } => f(value),
    }
}

/// Visits the children of `s`.
pub fn walk_stmt<V: Visitor + ?Sized>(v: &mut V, s: &Stmt) {
    match s.node() {
        StmtNode::For { min, extent, body, .. } => {
            v.visit_expr(min);
            v.visit_expr(extent);
            v.visit_stmt(body);
        }
        StmtNode::LetStmt { value, body, .. } => {
            v.visit_expr(value);
            v.visit_stmt(body);
        }
        StmtNode::Block { stmts } => stmts.iter().for_each(|s| v.visit_stmt(s)),
        StmtNode::IfThenElse { cond, then_case, else_case } => {
            v.visit_expr(cond);
            v.visit_stmt(then_case);
            if let Some(e) = else_case {
                v.visit_stmt(e);
            }
        }
        StmtNode::Assert { cond, .. } => v.visit_expr(cond),
        StmtNode::ProducerConsumer { produce, consume, .. } => {
            v.visit_stmt(produce);
            v.visit_stmt(consume);
        }
        StmtNode::Realize { bounds, body, .. } => {
            for r in bounds {
                v.visit_expr(&r.min);
                v.visit_expr(&r.extent);
            }
            v.visit_stmt(body);
        }
        StmtNode::Provide { args, values, .. } => {
            args.iter().for_each(|a| v.visit_expr(a));
            values.iter().for_each(|x| v.visit_expr(x));
        }
        StmtNode::Allocate { size, body, .. } => {
            v.visit_expr(size);
            v.visit_stmt(body);
        }
        StmtNode::Store { index, value, .. } => {
            v.visit_expr(index);
            v.visit_expr(value);
        }
        StmtNode::NoOp => {}
    }
}

/// The direct children of `e`.
pub fn expr_children(e: &Expr) -> Vec<Expr> {
    struct Children(Vec<Expr>);
    impl Visitor for Children {
        fn visit_expr(&mut self, e: &Expr) {
            self.0.push(e.clone());
        }
    }
    let mut c = Children(vec![]);
    walk_expr(&mut c, e);
    c.0
}

/// The direct child expressions and statements of a statement.
pub fn stmt_children(s: &Stmt) -> (Vec<Expr>, Vec<Stmt>) {
    struct Children {
        exprs: Vec<Expr>,
        stmts: Vec<Stmt>,
    }
    impl Visitor for Children {
        fn visit_expr(&mut self, e: &Expr) {
            self.exprs.push(e.clone());
        }
        fn visit_stmt(&mut self, s: &Stmt) {
            self.stmts.push(s.clone());
        }
    }
    let mut c = Children { exprs: vec![], stmts: vec![] };
    walk_stmt(&mut c, s);
    (c.exprs, c.stmts)
}

/// A rebuilding traversal.
pub trait Mutator {
    /// The rewrite of `e`; by default, `e` with its children rewritten (the
    /// same handle if none changed).
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        mutate_expr_children(self, e)
    }
    /// The rewrite of `s`; by default, `s` with its children rewritten (the
    /// same handle if none changed).
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        mutate_stmt_children(self, s)
    }
}

fn changed(old: &Expr, new: &Expr) -> bool {
    !old.same_as(new)
}

/// Rebuilds a node of two operands with `make` (the same handle when
/// neither changed), broadcasting a scalar operand that meets a vector.
fn mutate_pair<M: Mutator + ?Sized>(m: &mut M, e: &Expr, a: &Expr, b: &Expr, make: impl FnOnce(Expr, Expr) -> ExprNode) -> Expr {
    let (na, nb) = (m.mutate_expr(a), m.mutate_expr(b));
    if !changed(a, &na) && !changed(b, &nb) {
        return e.clone();
    }
    let (na, nb) = lanes_matched(na, nb);
    Expr::new(make(na, nb))
}

/// Rebuilds `e` from mutated children (the same handle when none changed).
/// Typed constructors are not used: the node keeps its operator and the
/// mutator is responsible for keeping operand types consistent.
pub fn mutate_expr_children<M: Mutator + ?Sized>(m: &mut M, e: &Expr) -> Expr {
    match e.node() {
        ExprNode::IntImm { .. }
        | ExprNode::UIntImm { .. }
        | ExprNode::FloatImm { .. }
        | ExprNode::Var { .. }
        | ExprNode::Param { .. }
        | ExprNode::RVar { .. } => e.clone(),
        ExprNode::Cast { ty, value } => {
            let v = m.mutate_expr(value);
            if !changed(value, &v) {
                return e.clone();
            }
            Expr::new(ExprNode::Cast { ty: ty.with_lanes(v.ty().lanes), value: v })
        }
        ExprNode::Reinterpret { ty, value } => {
            let v = m.mutate_expr(value);
            if !changed(value, &v) {
                return e.clone();
            }
            Expr::new(ExprNode::Reinterpret { ty: ty.with_lanes(v.ty().lanes), value: v })
        }
        ExprNode::Binary { op, a, b } => mutate_pair(m, e, a, b, |na, nb| ExprNode::Binary { op: *op, a: na, b: nb }),
        ExprNode::Cmp { op, a, b } => mutate_pair(m, e, a, b, |na, nb| ExprNode::Cmp { op: *op, a: na, b: nb }),
        ExprNode::And { a, b } => mutate_pair(m, e, a, b, |na, nb| ExprNode::And { a: na, b: nb }),
        ExprNode::Or { a, b } => mutate_pair(m, e, a, b, |na, nb| ExprNode::Or { a: na, b: nb }),
        ExprNode::Not { a } => {
            let na = m.mutate_expr(a);
            if !changed(a, &na) {
                return e.clone();
            }
            Expr::new(ExprNode::Not { a: na })
        }
        ExprNode::Select { cond, t, f } => {
            let (nc, nt, nf) = (m.mutate_expr(cond), m.mutate_expr(t), m.mutate_expr(f));
            if !changed(cond, &nc) && !changed(t, &nt) && !changed(f, &nf) {
                return e.clone();
            }
            let lanes = nc.ty().lanes.max(nt.ty().lanes).max(nf.ty().lanes);
            Expr::new(ExprNode::Select { cond: widen(nc, lanes), t: widen(nt, lanes), f: widen(nf, lanes) })
        }
        ExprNode::Let { name, value, body } => {
            let (nv, nb) = (m.mutate_expr(value), m.mutate_expr(body));
            if !changed(value, &nv) && !changed(body, &nb) {
                return e.clone();
            }
            Expr::new(ExprNode::Let { name: name.clone(), value: nv, body: nb })
        }
        ExprNode::Call { target, args, ty } => {
            let new_args: Vec<Expr> = args.iter().map(|a| m.mutate_expr(a)).collect();
            if args.iter().zip(&new_args).all(|(a, n)| a.same_as(n)) {
                return e.clone();
            }
            let lanes = new_args.iter().map(|a| a.ty().lanes).max().unwrap_or(1);
            let new_args = new_args.into_iter().map(|a| widen(a, lanes)).collect();
            Expr::new(ExprNode::Call { target: target.clone(), args: new_args, ty: ty.with_lanes(lanes) })
        }
        ExprNode::Load { buffer, index, ty } => {
            let ni = m.mutate_expr(index);
            if !changed(index, &ni) {
                return e.clone();
            }
            let lanes = ni.ty().lanes;
            Expr::new(ExprNode::Load { buffer: buffer.clone(), index: ni, ty: ty.with_lanes(lanes) })
        }
        ExprNode::Ramp { base, stride, lanes } => {
            let (nb, ns) = (m.mutate_expr(base), m.mutate_expr(stride));
            if !changed(base, &nb) && !changed(stride, &ns) {
                return e.clone();
            }
            Expr::new(ExprNode::Ramp { base: nb, stride: ns, lanes: *lanes })
        }
        ExprNode::Broadcast { value, lanes } => {
            let nv = m.mutate_expr(value);
            if !changed(value, &nv) {
                return e.clone();
            }
            Expr::new(ExprNode::Broadcast { value: nv, lanes: *lanes })
        }
    }
}

/// Broadcasts a scalar up to `lanes` lanes (vector operands are kept).
fn widen(e: Expr, lanes: u32) -> Expr {
    if e.ty().lanes == lanes {
        e
    } else {
        Expr::broadcast(e, lanes)
    }
}

fn lanes_matched(a: Expr, b: Expr) -> (Expr, Expr) {
    let lanes = a.ty().lanes.max(b.ty().lanes);
    (widen(a, lanes), widen(b, lanes))
}

/// Rebuilds `s` from mutated children (the same handle when none changed).
pub fn mutate_stmt_children<M: Mutator + ?Sized>(m: &mut M, s: &Stmt) -> Stmt {
    match s.node() {
        StmtNode::For { name, min, extent, kind, body } => {
            let (nm, ne, nb) = (m.mutate_expr(min), m.mutate_expr(extent), m.mutate_stmt(body));
            if nm.same_as(min) && ne.same_as(extent) && nb.same_as(body) {
                return s.clone();
            }
            Stmt::for_loop(name.clone(), nm, ne, *kind, nb)
        }
        StmtNode::LetStmt { name, value, body } => {
            let (nv, nb) = (m.mutate_expr(value), m.mutate_stmt(body));
            if nv.same_as(value) && nb.same_as(body) {
                return s.clone();
            }
            Stmt::let_stmt(name.clone(), nv, nb)
        }
        StmtNode::Block { stmts } => {
            let new: Vec<Stmt> = stmts.iter().map(|x| m.mutate_stmt(x)).collect();
            if stmts.iter().zip(&new).all(|(a, b)| a.same_as(b)) {
                return s.clone();
            }
            Stmt::block(new)
        }
        StmtNode::IfThenElse { cond, then_case, else_case } => {
            let nc = m.mutate_expr(cond);
            let nt = m.mutate_stmt(then_case);
            let ne = else_case.as_ref().map(|e| m.mutate_stmt(e));
            let same_else = match (else_case, &ne) {
                (Some(a), Some(b)) => a.same_as(b),
                _ => true,
            };
            if nc.same_as(cond) && nt.same_as(then_case) && same_else {
                return s.clone();
            }
            Stmt::new(StmtNode::IfThenElse { cond: nc, then_case: nt, else_case: ne })
        }
        StmtNode::Assert { cond, message } => {
            let nc = m.mutate_expr(cond);
            if nc.same_as(cond) {
                return s.clone();
            }
            Stmt::assert(nc, message.clone())
        }
        StmtNode::ProducerConsumer { func, produce, consume } => {
            let (np, nc) = (m.mutate_stmt(produce), m.mutate_stmt(consume));
            if np.same_as(produce) && nc.same_as(consume) {
                return s.clone();
            }
            Stmt::new(StmtNode::ProducerConsumer { func: func.clone(), produce: np, consume: nc })
        }
        StmtNode::Realize { func, types, bounds, body } => {
            let nbounds: Vec<Range> =
                bounds.iter().map(|r| Range { min: m.mutate_expr(&r.min), extent: m.mutate_expr(&r.extent) }).collect();
            let nb = m.mutate_stmt(body);
            let same_bounds = bounds.iter().zip(&nbounds).all(|(a, b)| a.min.same_as(&b.min) && a.extent.same_as(&b.extent));
            if same_bounds && nb.same_as(body) {
                return s.clone();
            }
            Stmt::new(StmtNode::Realize { func: func.clone(), types: types.clone(), bounds: nbounds, body: nb })
        }
        StmtNode::Provide { func, args, values } => {
            let nargs: Vec<Expr> = args.iter().map(|a| m.mutate_expr(a)).collect();
            let nvalues: Vec<Expr> = values.iter().map(|v| m.mutate_expr(v)).collect();
            let same = |a: &[Expr], b: &[Expr]| a.iter().zip(b).all(|(a, b)| a.same_as(b));
            if same(values, &nvalues) && same(args, &nargs) {
                return s.clone();
            }
            Stmt::provide(func.clone(), nargs, nvalues)
        }
        StmtNode::Allocate { buffer, ty, size, body } => {
            let (ns, nb) = (m.mutate_expr(size), m.mutate_stmt(body));
            if ns.same_as(size) && nb.same_as(body) {
                return s.clone();
            }
            Stmt::new(StmtNode::Allocate { buffer: buffer.clone(), ty: *ty, size: ns, body: nb })
        }
        StmtNode::Store { buffer, index, value } => {
            let (ni, nv) = (m.mutate_expr(index), m.mutate_expr(value));
            if ni.same_as(index) && nv.same_as(value) {
                return s.clone();
            }
            let lanes = ni.ty().lanes.max(nv.ty().lanes);
            Stmt::store(buffer.clone(), widen(ni, lanes), widen(nv, lanes))
        }
        StmtNode::NoOp => s.clone(),
    }
}

/// Replaces free occurrences of variables by expressions (respecting
/// shadowing by lets).
pub struct Substitute<'a> {
    map: &'a HashMap<Name, Expr>,
    shadowed: Vec<Name>,
}

impl Mutator for Substitute<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        match e.node() {
            ExprNode::Var { name, .. } => {
                if self.shadowed.contains(name) {
                    return e.clone();
                }
                match self.map.get(name) {
                    Some(v) => v.clone(),
                    None => e.clone(),
                }
            }
            ExprNode::Let { name, value, body } => {
                let nv = self.mutate_expr(value);
                self.shadowed.push(name.clone());
                let nb = self.mutate_expr(body);
                self.shadowed.pop();
                if nv.same_as(value) && nb.same_as(body) {
                    e.clone()
                } else {
                    Expr::let_in(name.clone(), nv, nb)
                }
            }
            _ => mutate_expr_children(self, e),
        }
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let bound = match s.node() {
            StmtNode::LetStmt { name, .. } | StmtNode::For { name, .. } => Some(name.clone()),
            _ => None,
        };
        match bound {
            Some(name) => {
                // The bound name's own value/min/extent see the outer scope.
                let out = match s.node() {
                    StmtNode::LetStmt { value, body, .. } => {
                        let nv = self.mutate_expr(value);
                        self.shadowed.push(name.clone());
                        let nb = self.mutate_stmt(body);
                        self.shadowed.pop();
                        Stmt::let_stmt(name, nv, nb)
                    }
                    StmtNode::For { min, extent, kind, body, .. } => {
                        let (nm, ne) = (self.mutate_expr(min), self.mutate_expr(extent));
                        self.shadowed.push(name.clone());
                        let nb = self.mutate_stmt(body);
                        self.shadowed.pop();
                        Stmt::for_loop(name, nm, ne, *kind, nb)
                    }
                    _ => unreachable!(),
                };
                out
            }
            None => mutate_stmt_children(self, s),
        }
    }
}

/// Substitutes `map` into an expression.
pub fn substitute_map(map: &HashMap<Name, Expr>, e: &Expr) -> Expr {
    Substitute { map, shadowed: vec![] }.mutate_expr(e)
}

/// Substitutes `map` into a statement.
pub fn substitute_map_stmt(map: &HashMap<Name, Expr>, s: &Stmt) -> Stmt {
    Substitute { map, shadowed: vec![] }.mutate_stmt(s)
}

/// Substitutes one variable into an expression.
pub fn substitute(name: &str, value: &Expr, e: &Expr) -> Expr {
    let mut map = HashMap::new();
    map.insert(Name::from(name), value.clone());
    substitute_map(&map, e)
}

/// `e` with the lets of `lets` (outermost first, each value in terms of
/// those before it) that it mentions, directly or through the values of
/// others, substituted innermost first; `None` once it grows past
/// `max_nodes` (counted as a tree). Only the lets mentioned are
/// substituted: most of a long chain of lets around a point (the bounds of
/// other Funcs) are not, and substituting each in turn would walk `e` once
/// per let.
pub fn substitute_lets(lets: &[(Name, Expr)], e: &Expr, max_nodes: usize) -> Option<Expr> {
    let mut out = e.clone();
    let mut mentioned = free_vars(&out);
    for (name, value) in lets.iter().rev() {
        if !mentioned.remove(name) {
            continue;
        }
        out = substitute(name, value, &out);
        if node_count(&out) > max_nodes {
            return None;
        }
        mentioned.extend(free_vars(value));
    }
    Some(out)
}

/// Substitutes one variable into a statement.
pub fn substitute_stmt(name: &str, value: &Expr, s: &Stmt) -> Stmt {
    let mut map = HashMap::new();
    map.insert(Name::from(name), value.clone());
    substitute_map_stmt(&map, s)
}

/// Collects the names of all variables an expression or statement mentions.
#[derive(Default)]
pub struct FreeVars {
    /// The names of the `Var` nodes visited so far.
    pub names: HashSet<Name>,
}

impl Visitor for FreeVars {
    fn visit_expr(&mut self, e: &Expr) {
        if let ExprNode::Var { name, .. } = e.node() {
            self.names.insert(name.clone());
        }
        walk_expr(self, e)
    }
}

/// The names of the variables `e` mentions.
pub fn free_vars(e: &Expr) -> HashSet<Name> {
    let mut fv = FreeVars::default();
    fv.visit_expr(e);
    fv.names
}

/// Whether `e` mentions the variable `name`.
pub fn expr_uses_var(e: &Expr, name: &str) -> bool {
    let mut fv = FreeVars::default();
    fv.visit_expr(e);
    fv.names.contains(name)
}

/// Whether `e` mentions any variable of `names`.
pub fn expr_uses_any(e: &Expr, names: &HashSet<Name>) -> bool {
    let mut fv = FreeVars::default();
    fv.visit_expr(e);
    fv.names.iter().any(|n| names.contains(n))
}

/// Whether `s` mentions the variable `name`.
pub fn stmt_uses_var(s: &Stmt, name: &str) -> bool {
    let mut fv = FreeVars::default();
    fv.visit_stmt(s);
    fv.names.contains(name)
}

/// The names `s` binds: its lets (statement and expression) and loops.
pub fn names_bound(s: &Stmt) -> HashSet<Name> {
    binder_counts(s).into_keys().collect()
}

/// How many binders (lets, let statements, loops) each name has in `s`.
pub fn binder_counts(s: &Stmt) -> HashMap<Name, usize> {
    #[derive(Default)]
    struct Count(HashMap<Name, usize>);
    impl Visitor for Count {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprNode::Let { name, .. } = e.node() {
                *self.0.entry(name.clone()).or_default() += 1;
            }
            walk_expr(self, e)
        }
        fn visit_stmt(&mut self, s: &Stmt) {
            if let StmtNode::LetStmt { name, .. } | StmtNode::For { name, .. } = s.node() {
                *self.0.entry(name.clone()).or_default() += 1;
            }
            walk_stmt(self, s)
        }
    }
    let mut c = Count::default();
    c.visit_stmt(s);
    c.0
}

/// Whether statement `s` reads or writes the Func `func`.
pub fn stmt_touches_func(s: &Stmt, func: &str) -> bool {
    struct Touches<'a> {
        func: &'a str,
        found: bool,
    }
    impl Visitor for Touches<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprNode::Call { target: crate::ir::expr::CallTarget::Func(f), .. } = e.node() {
                self.found |= &*f.name == self.func;
            }
            walk_expr(self, e)
        }
        fn visit_stmt(&mut self, s: &Stmt) {
            if let StmtNode::Provide { func, .. } = s.node() {
                self.found |= &**func == self.func;
            }
            walk_stmt(self, s)
        }
    }
    let mut t = Touches { func, found: false };
    t.visit_stmt(s);
    t.found
}

/// Whether any node of `e` (including `e` itself) satisfies `pred`.
pub fn expr_any_node(e: &Expr, pred: impl Fn(&ExprNode) -> bool) -> bool {
    struct Any<F> {
        pred: F,
        found: bool,
    }
    impl<F: Fn(&ExprNode) -> bool> Visitor for Any<F> {
        fn visit_expr(&mut self, e: &Expr) {
            if !self.found {
                self.found = (self.pred)(e.node());
                walk_expr(self, e);
            }
        }
    }
    let mut any = Any { pred, found: false };
    any.visit_expr(e);
    any.found
}

/// The number of nodes of `e` counted as a tree: a subexpression shared
/// `n` times counts `n` times. Time linear in the distinct nodes (a shared
/// node is counted once and remembered), so an expression that shares
/// subtrees costs no more to measure than to hold; saturates at
/// `usize::MAX`.
pub fn node_count(e: &Expr) -> usize {
    fn count(e: &Expr, done: &mut HashMap<usize, usize>) -> usize {
        let shared = e.is_shared();
        if shared {
            if let Some(&n) = done.get(&e.address()) {
                return n;
            }
        }
        let mut n = 1usize;
        for_each_child(e.node(), |c| n = n.saturating_add(count(c, done)));
        if shared {
            done.insert(e.address(), n);
        }
        n
    }
    count(e, &mut HashMap::new())
}
