//! Loop partitioning: a loop over the outer variable of a split runs its
//! steady state without what only its last iteration needs.
//!
//! Two shapes are partitioned, both for a loop over `o` from 0 whose extent
//! is `(n + c - 1) / c` through the enclosing lets (the outer loop of a
//! split of `n` by `c`):
//!
//! - Shift-inwards clamps: loop synthesis places the outer iteration at
//!   `max(min(o * c, n - c), 0)`. For every whole iteration, `o < n / c`,
//!   `0 <= o * c <= n - c`, so the clamp is just `o * c`. Only innermost
//!   serial loops are split this way.
//! - Tail guards of guard-with-if splits (`if (base + o * c + k < base + n)`,
//!   the vectorizer's all-lanes checks of them, their unrolled copies): in
//!   the steady state `0 <= o * c <= n - c`, so a conjunct that is affine in
//!   `o * c` with a non-negative coefficient and holds at `o * c = n - c`
//!   holds throughout, and a guard all of whose conjuncts hold is dropped.
//!   Loops of constant bounds between the partitioned loop and the guard
//!   (the inner loop of a split split again) are taken at whichever end
//!   makes the conjunct largest.
//!   Serial and parallel loops of any depth are split this way, as long as
//!   the body stays small (so that nested partitions grow code boundedly).
//!
//! Each partitioned loop runs its whole iterations `[0, max(n / c, 0))`
//! with the simplified body and the partial one (none when `c` divides
//! `n`) as it was: a serial loop as two loops, a parallel loop as one whose
//! iterations choose their path, so that its tasks still all run at once.
//! Splitting off the last iteration instead would run a whole tile on the
//! guarded path whenever `c` divides `n`.
//!
//! A loop of constant extent `e` (a split whose extent the simplifier
//! folded, as in a tile of a fixed region) drops the guards that are affine
//! in its variable `o` with a non-negative coefficient: those that hold at
//! `o = e - 1` hold on every iteration and go without a partition (an exact
//! split); those that hold at `o = e - 2` go from the steady state.
//!
//! Requires: simplified, vectorized and unrolled IR. Guarantees: the same
//! iterations in the same order with the same values.

use crate::ir::expr::{BinOp, CmpOp, Expr, ExprNode, Name};
use crate::ir::stmt::{ForKind, Stmt, StmtNode};
use crate::ir::visit::{expr_uses_var, mutate_expr_children, mutate_stmt_children, substitute, walk_expr, walk_stmt, Mutator, Visitor};
use crate::simplify::{can_prove, simplify};

/// The largest body (in statement and expression nodes) whose loop is
/// partitioned for its guards: nested partitions copy it once per level.
const MAX_GUARDED_BODY_NODES: usize = 20_000;

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
    /// its body clamps a shift-inwards split of its variable or guards the
    /// tail of a split of it.
    fn partition(&self, var: &Name, extent: &Expr, kind: ForKind, body: &Stmt) -> Option<Stmt> {
        let extent = self.value_of(extent);
        if let Some(e) = extent.as_int() {
            return partition_constant(var, e, kind, body);
        }
        let (n, c) = ceil_division(&extent)?;
        let o = Expr::ivar(var.clone());
        let outer = simplify(&(o.clone() * Expr::i32(c)));
        let mut guards = DropGuards::new(var, outer.clone(), n.clone() - Expr::i32(c));
        let steady = if has_loop(body) {
            if node_count(body) > MAX_GUARDED_BODY_NODES {
                return None;
            }
            let steady = guards.mutate_stmt(body);
            guards.dropped.then_some(steady)?
        } else {
            let clamp = simplify(&Expr::max(Expr::min(o * Expr::i32(c), n.clone() - Expr::i32(c)), Expr::i32(0)));
            let mut replace = Replace { from: clamp, to: outer, replaced: false };
            let steady = guards.mutate_stmt(&replace.mutate_stmt(body));
            (replace.replaced || guards.dropped).then_some(steady)?
        };
        // Every whole outer iteration, `o < n / c` (so `o * c <= n - c`), is
        // steady; the partial one, when `c` does not divide `n`, is the last.
        let split = simplify(&Expr::max(n / Expr::i32(c), Expr::i32(0)));
        Some(steady_then_rest(var, kind, split, extent, steady, body.clone()))
    }
}

/// The loop over `var` in `[0, extent)` running `steady` on `[0, split)`
/// and `body` on the rest. A serial loop becomes two loops. A parallel loop
/// stays one, each iteration choosing its path, so that the partial tile
/// runs beside the whole ones instead of after them all (with two loops, a
/// parallel loop of 3 iterations split at 2 would take two rounds of tasks
/// on any number of threads).
fn steady_then_rest(var: &Name, kind: ForKind, split: Expr, extent: Expr, steady: Stmt, body: Stmt) -> Stmt {
    if kind == ForKind::Parallel {
        let steady_or_rest = Stmt::if_then_else(Expr::cmp(CmpOp::Lt, Expr::ivar(var.clone()), split), steady, body);
        return Stmt::for_loop(var.clone(), Expr::i32(0), extent, kind, steady_or_rest);
    }
    let rest = simplify(&(extent - split.clone()));
    Stmt::block(vec![
        Stmt::for_loop(var.clone(), Expr::i32(0), split.clone(), kind, steady),
        Stmt::for_loop(var.clone(), split, rest, kind, body),
    ])
}

/// A loop over `o` in `[0, e)` without the guards that hold on every
/// iteration, then partitioned into a steady state `[0, e - 1)` without
/// those that hold there and its last iteration, where some do.
fn partition_constant(var: &Name, e: i64, kind: ForKind, body: &Stmt) -> Option<Stmt> {
    let o = Expr::ivar(var.clone());
    let mut everywhere = DropGuards::new(var, o.clone(), Expr::i32(e - 1));
    let kept = everywhere.mutate_stmt(body);
    let whole = || Stmt::for_loop(var.clone(), Expr::i32(0), Expr::i32(e), kind, kept.clone());
    if e < 2 || node_count(&kept) > MAX_GUARDED_BODY_NODES {
        return everywhere.dropped.then(whole);
    }
    let mut steady_guards = DropGuards::new(var, o, Expr::i32(e - 2));
    let steady = steady_guards.mutate_stmt(&kept);
    if !steady_guards.dropped {
        return everywhere.dropped.then(whole);
    }
    Some(steady_then_rest(var, kind, Expr::i32(e - 1), Expr::i32(e), steady, kept))
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
            StmtNode::For { name, min, extent, kind: kind @ (ForKind::Serial | ForKind::Parallel), body } if min.as_int() == Some(0) => {
                let body = self.mutate_stmt(body);
                let partitioned =
                    if *kind == ForKind::Serial || has_loop(&body) { self.partition(name, extent, *kind, &body) } else { None };
                partitioned.unwrap_or_else(|| Stmt::for_loop(name.clone(), min.clone(), extent.clone(), *kind, body))
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

/// Drops the guards that hold in the steady state of a loop whose variable
/// `o` appears as `outer` (`o * c` or `o` itself), where
/// `0 <= outer <= largest`.
struct DropGuards {
    /// Enclosing let statements inside the loop, innermost last.
    lets: Vec<(Name, Expr)>,
    /// The loop variable `o`.
    var: Name,
    /// `o * c`, as the simplifier writes it, or `o`.
    outer: Expr,
    /// The largest value of `outer` in the steady state.
    largest: Expr,
    /// The loops of constant bounds inside the loop that enclose the walk,
    /// with their first and last values: a guard is checked at whichever
    /// end of each makes it tightest (the inner loop of a split split
    /// again).
    loops: Vec<(Name, i64, i64)>,
    dropped: bool,
}

impl DropGuards {
    fn new(var: &Name, outer: Expr, largest: Expr) -> DropGuards {
        DropGuards { lets: vec![], var: var.clone(), outer, largest, loops: vec![], dropped: false }
    }

    /// Whether `cond` holds whenever `0 <= outer <= largest`.
    fn holds(&self, cond: &Expr) -> bool {
        match cond.node() {
            ExprNode::And { a, b } => self.holds(a) && self.holds(b),
            ExprNode::Cmp { op, a, b } if a.ty().is_int() && !a.ty().is_vector() => {
                // `d < 0` or `d <= 0`.
                let (d, strict) = match op {
                    CmpOp::Lt => (a.clone() - b.clone(), true),
                    CmpOp::Le => (a.clone() - b.clone(), false),
                    CmpOp::Gt => (b.clone() - a.clone(), true),
                    CmpOp::Ge => (b.clone() - a.clone(), false),
                    CmpOp::Eq | CmpOp::Ne => return false,
                };
                let mut d = d;
                for (name, value) in self.lets.iter().rev() {
                    d = substitute(name, value, &d);
                }
                // At the end of each inner loop where `d` is largest, when it
                // moves by a constant along it.
                for (name, first, last) in &self.loops {
                    let u = Expr::ivar(name.clone());
                    let step = simplify(&(substitute(name, &(u + Expr::i32(1)), &d) - d.clone()));
                    match step.as_int() {
                        Some(k) if k >= 0 => d = substitute(name, &Expr::i32(*last), &d),
                        Some(_) => d = substitute(name, &Expr::i32(*first), &d),
                        None => {}
                    }
                }
                // `d` as a function of t = outer alone (o appears nowhere else).
                let t: Name = "partition$t".into();
                let mut replace = Replace { from: self.outer.clone(), to: Expr::ivar(t.clone()), replaced: false };
                let d = simplify(&replace.mutate_expr(&simplify(&d)));
                if !replace.replaced || expr_uses_var(&d, &self.var) {
                    return false;
                }
                // Affine in t with a non-negative coefficient: largest at the
                // steady state's largest t.
                let step = simplify(&(substitute(&t, &(Expr::ivar(t.clone()) + Expr::i32(1)), &d) - d.clone()));
                if step.as_int().is_none_or(|k| k < 0) {
                    return false;
                }
                let at_max = simplify(&substitute(&t, &self.largest, &d));
                let zero = Expr::i32(0);
                can_prove(&Expr::cmp(if strict { CmpOp::Lt } else { CmpOp::Le }, at_max, zero))
            }
            _ => false,
        }
    }
}

impl Mutator for DropGuards {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::LetStmt { name, value, body } => {
                self.lets.push((name.clone(), value.clone()));
                let body = self.mutate_stmt(body);
                self.lets.pop();
                Stmt::let_stmt(name.clone(), value.clone(), body)
            }
            StmtNode::IfThenElse { cond, then_case, .. } if self.holds(cond) => {
                self.dropped = true;
                self.mutate_stmt(then_case)
            }
            StmtNode::For { name, min, extent, kind, body } => {
                let range = min.as_int().zip(extent.as_int()).filter(|&(_, e)| e > 0);
                if let Some((first, e)) = range {
                    self.loops.push((name.clone(), first, first + e - 1));
                }
                let new_body = self.mutate_stmt(body);
                if range.is_some() {
                    self.loops.pop();
                }
                Stmt::for_loop(name.clone(), min.clone(), extent.clone(), *kind, new_body)
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}

/// Statement and expression nodes of `s`.
fn node_count(s: &Stmt) -> usize {
    struct Counter(usize);
    impl Visitor for Counter {
        fn visit_stmt(&mut self, s: &Stmt) {
            self.0 += 1;
            walk_stmt(self, s);
        }
        fn visit_expr(&mut self, e: &Expr) {
            self.0 += 1;
            walk_expr(self, e);
        }
    }
    let mut c = Counter(0);
    walk_stmt(&mut c, s);
    c.0
}
