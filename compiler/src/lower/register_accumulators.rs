//! Register accumulators: a serial loop that reads and writes the same few
//! points of a buffer on every iteration (a reduction over a register tile:
//! `f[x] = f[x] + g(r)` for each unrolled `x` of the tile, inside the loops
//! over `r`) keeps those points in a small stack buffer of their own for
//! the loop's duration: loaded once before it, stored back once after it.
//!
//! The code generator makes a constant-size buffer a stack slot, which LLVM
//! turns into registers; left in the Func's buffer, every iteration loads
//! and stores each accumulator, because LLVM cannot tell the tile's points
//! apart (they lie a symbolic stride apart) and so cannot keep one in a
//! register while another is written. This is what the search's featurizer
//! assumes of a reduction in a register tile.
//!
//! A loop's buffer is promoted when every access to it in the loop is at an
//! index the loop does not change (no variable bound inside it once the
//! lets inside it are substituted, no load),
//! dense (a scalar or a ramp of stride 1) and unconditional (not under an
//! `if`, a select or a short-circuit, nor inside a loop that may run no
//! iterations), and the buffer is not allocated inside the loop. Its
//! points are then read before the loop only where the loop would have
//! read or written them on its first iteration, and written after it with
//! what the loop would have left there. Distinct indices must not overlap:
//! where the simplifier cannot prove it, the promoted loop runs under a
//! check of it, and the original loop otherwise. A loop that may run no
//! iterations is promoted under a check that it runs some.
//!
//! Requires: flattened, vectorized, unrolled IR (the unrolled copies are
//! the tile's accumulators). Guarantees: the same values in every buffer
//! the loop leaves behind.

use crate::ir::expr::{CmpOp, Expr, ExprNode, Name};
use crate::ir::stmt::{ForKind, Stmt, StmtNode};
use crate::ir::types::Type;
use crate::ir::visit::{
    expr_any_node, expr_uses_any, mutate_expr_children, mutate_stmt_children, names_bound, substitute_lets, walk_expr, walk_stmt,
};
use crate::ir::visit::{Mutator, Visitor};
use crate::simplify::{can_prove, simplify};
use std::collections::{BTreeMap, HashSet};

/// The most bytes of accumulators a loop keeps per buffer: 32 vectors of 64
/// bytes, the vector registers of the widest ISA.
const MAX_ACCUMULATOR_BYTES: u64 = 2048;

/// `s` with the accumulators of its serial loops in stack buffers.
pub fn accumulate_in_registers(s: &Stmt) -> Stmt {
    Promote { promoted: 0 }.mutate_stmt(s)
}

struct Promote {
    /// Buffers made so far, for unique names.
    promoted: usize,
}

impl Mutator for Promote {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if let StmtNode::For { name, min, extent, kind: kind @ ForKind::Serial, body } = s.node() {
            if let Some(promoted) = self.promote(s, (name, min, extent, *kind), body) {
                return promoted;
            }
        }
        mutate_stmt_children(self, s)
    }
}

/// One access of a buffer inside the loop.
struct Access {
    /// The index with the lets inside the loop substituted (`None`: too
    /// large to, see [`MAX_EXPANDED_INDEX_NODES`], or not expanded: not a
    /// buffer that could be promoted).
    index: Option<Expr>,
    ty: Type,
    /// Under a condition, or in a loop that may not run.
    conditional: bool,
}

impl Promote {
    /// The loop `s` (its variable, min, extent and kind, then its body) with
    /// its first promotable buffer's accumulators promoted, if it has one.
    fn promote(&mut self, s: &Stmt, (var, min, extent, kind): (&Name, &Expr, &Expr, ForKind), body: &Stmt) -> Option<Stmt> {
        // A first walk without expanding any index finds the buffers that
        // could be promoted (stored, not allocated, accessed
        // unconditionally); only their indices are expanded, in a second
        // (expanding every access of a deep nest at every serial loop
        // around it was most of the pass's time).
        let mut first = Accesses::default();
        first.visit_stmt(body);
        let candidates: HashSet<Name> = first
            .by_buffer
            .iter()
            .filter(|(b, accesses)| first.stored.contains(*b) && !first.allocated.contains(*b) && accesses.iter().all(|a| !a.conditional))
            .map(|(b, _)| b.clone())
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let mut found = Accesses { expanding: candidates, ..Accesses::default() };
        found.visit_stmt(body);
        let mut bound: HashSet<Name> = names_bound(body);
        bound.insert(var.clone());
        let (buffer, slots) = found.by_buffer.iter().find_map(|(buffer, accesses)| {
            let promotable = found.stored.contains(buffer)
                && !found.allocated.contains(buffer)
                && accesses.iter().all(|a| {
                    !a.conditional && a.index.as_ref().is_some_and(|index| invariant(index, &bound) && dense_lanes(index).is_some())
                });
            promotable.then(|| slots(accesses)).flatten().map(|slots| (buffer.clone(), slots))
        })?;
        let elem = slots[0].ty.element();
        let total: u32 = slots.iter().map(|slot| slot.ty.lanes).sum();
        if u64::from(total) * elem.scalar.bytes() as u64 > MAX_ACCUMULATOR_BYTES {
            return None;
        }
        let accumulators: Name = format!("{buffer}.accumulators{}", self.promoted).into();
        self.promoted += 1;
        let mut offsets = vec![];
        let mut offset = 0;
        for slot in &slots {
            offsets.push(at(offset, slot.ty.lanes));
            offset += i64::from(slot.ty.lanes);
        }
        let mut redirect =
            Redirect { buffer: &buffer, accumulators: &accumulators, slots: &slots, offsets: &offsets, lets: Lets::default() };
        let inner = Stmt::for_loop(var.clone(), min.clone(), extent.clone(), kind, redirect.mutate_stmt(body));
        let load_all = slots
            .iter()
            .zip(&offsets)
            .map(|(slot, o)| Stmt::store(&*accumulators, o.clone(), Expr::load(&*buffer, slot.index.clone(), slot.ty)));
        let store_all = slots
            .iter()
            .zip(&offsets)
            .map(|(slot, o)| Stmt::store(&*buffer, slot.index.clone(), Expr::load(&*accumulators, o.clone(), slot.ty)));
        let sequence: Vec<Stmt> = load_all.chain(std::iter::once(inner)).chain(store_all).collect();
        let promoted = Stmt::new(StmtNode::Allocate {
            buffer: accumulators,
            ty: elem,
            size: Expr::i32(i64::from(total)),
            body: Stmt::block(sequence),
        });
        let runs = Expr::cmp(CmpOp::Gt, extent.clone(), Expr::i32(0));
        let promoted = if can_prove(&runs) { promoted } else { Stmt::if_then(runs, promoted) };
        Some(match disjoint(&slots) {
            None => promoted,
            Some(check) => Stmt::if_then_else(check, promoted, mutate_stmt_children(self, s)),
        })
    }
}

/// The distinct points accessed, each with its type; `None` when one index
/// is read at two widths or was not expanded.
fn slots(accesses: &[Access]) -> Option<Vec<Slot>> {
    let mut slots: Vec<Slot> = vec![];
    for a in accesses {
        let index = a.index.as_ref()?;
        match slots.iter().find(|s| s.index == *index) {
            Some(s) if s.ty != a.ty => return None,
            Some(_) => {}
            None => slots.push(Slot { index: index.clone(), ty: a.ty }),
        }
    }
    Some(slots)
}

/// One accumulator: the buffer's index and the value's type.
struct Slot {
    index: Expr,
    ty: Type,
}

/// The index of `lanes` elements of the accumulators from `offset`.
fn at(offset: i64, lanes: u32) -> Expr {
    if lanes == 1 {
        Expr::i32(offset)
    } else {
        Expr::ramp(Expr::i32(offset), Expr::i32(1), lanes)
    }
}

/// The first element and the lanes of a dense index.
fn dense_lanes(index: &Expr) -> Option<(Expr, u32)> {
    match index.node() {
        ExprNode::Ramp { base, stride, lanes } if stride.as_int() == Some(1) && !base.ty().is_vector() => Some((base.clone(), *lanes)),
        _ if !index.ty().is_vector() => Some((index.clone(), 1)),
        _ => None,
    }
}

/// Whether `index` is the same on every iteration: no variable bound
/// inside the loop, no load.
fn invariant(index: &Expr, bound: &HashSet<Name>) -> bool {
    !expr_uses_any(index, bound) && !expr_any_node(index, |n| matches!(n, ExprNode::Load { .. }))
}

/// The condition under which the slots do not overlap, when the simplifier
/// cannot prove it (`None` when it can).
fn disjoint(slots: &[Slot]) -> Option<Expr> {
    let mut unproven: Vec<Expr> = vec![];
    for (i, a) in slots.iter().enumerate() {
        for b in &slots[i + 1..] {
            let ((a0, an), (b0, bn)) = (dense_lanes(&a.index)?, dense_lanes(&b.index)?);
            // b starts at least a's lanes after a, or ends before a starts.
            let gap = simplify(&(b0 - a0));
            let apart = simplify(&Expr::or(
                Expr::cmp(CmpOp::Ge, gap.clone(), Expr::i32(i64::from(an))),
                Expr::cmp(CmpOp::Le, gap, Expr::i32(-i64::from(bn))),
            ));
            if !can_prove(&apart) {
                unproven.push(apart);
            }
        }
    }
    unproven.into_iter().reduce(Expr::and)
}

/// The loads and stores of each buffer in a loop body, which buffers it
/// stores to and allocates, and whether each access runs unconditionally.
#[derive(Default)]
struct Accesses {
    by_buffer: BTreeMap<Name, Vec<Access>>,
    /// The let statements around the walk inside the loop.
    lets: Lets,
    stored: HashSet<Name>,
    allocated: HashSet<Name>,
    /// How many enclosing conditions (ifs, selects, short-circuits, loops
    /// that may not run) the walk is under.
    conditions: usize,
    /// The buffers whose access indices are expanded (the others' are
    /// recorded as `None`).
    expanding: HashSet<Name>,
}

impl Accesses {
    fn record(&mut self, buffer: &Name, index: &Expr, ty: Type) {
        let conditional = self.conditions > 0;
        let index = if self.expanding.contains(buffer) { self.lets.expand(index) } else { None };
        self.by_buffer.entry(buffer.clone()).or_default().push(Access { index, ty, conditional });
    }

    fn under_condition(&mut self, f: impl FnOnce(&mut Self)) {
        self.conditions += 1;
        f(self);
        self.conditions -= 1;
    }
}

impl Visitor for Accesses {
    fn visit_expr(&mut self, e: &Expr) {
        match e.node() {
            ExprNode::Load { buffer, index, ty } => {
                self.record(buffer, index, *ty);
                walk_expr(self, e);
            }
            ExprNode::Select { cond, t, f } => {
                self.visit_expr(cond);
                self.under_condition(|v| {
                    v.visit_expr(t);
                    v.visit_expr(f);
                });
            }
            ExprNode::And { a, b } | ExprNode::Or { a, b } => {
                self.visit_expr(a);
                self.under_condition(|v| v.visit_expr(b));
            }
            _ => walk_expr(self, e),
        }
    }

    fn visit_stmt(&mut self, s: &Stmt) {
        match s.node() {
            StmtNode::Store { buffer, index, value } => {
                self.stored.insert(buffer.clone());
                self.record(buffer, index, value.ty());
                walk_stmt(self, s);
            }
            StmtNode::Allocate { buffer, .. } => {
                self.allocated.insert(buffer.clone());
                walk_stmt(self, s);
            }
            StmtNode::LetStmt { name, value, body } => {
                self.visit_expr(value);
                self.lets.0.push((name.clone(), value.clone()));
                self.visit_stmt(body);
                self.lets.0.pop();
            }
            StmtNode::IfThenElse { cond, then_case, else_case } => {
                self.visit_expr(cond);
                self.under_condition(|v| {
                    v.visit_stmt(then_case);
                    if let Some(e) = else_case {
                        v.visit_stmt(e);
                    }
                });
            }
            StmtNode::For { min, extent, kind, body, .. } => {
                self.visit_expr(min);
                self.visit_expr(extent);
                let runs = *kind == ForKind::Serial && extent.as_int().is_some_and(|n| n > 0);
                if runs {
                    self.visit_stmt(body);
                } else {
                    self.under_condition(|v| v.visit_stmt(body));
                }
            }
            _ => walk_stmt(self, s),
        }
    }
}

/// The let statements enclosing a point inside the loop, innermost last.
#[derive(Default)]
struct Lets(Vec<(Name, Expr)>);

/// The most nodes (counted as a tree) an access's index may have once the
/// lets are substituted. A chain of lets each naming the one before twice
/// (the bounds of a chain of clamped stencils computed per tile) would
/// double the index with every let: such an index is left unexpanded, and
/// its buffer is not promoted.
const MAX_EXPANDED_INDEX_NODES: usize = 500;

impl Lets {
    /// `e` with the lets substituted ([`substitute_lets`]), simplified (a
    /// dense vector index becomes a ramp); `None` if it grows past
    /// [`MAX_EXPANDED_INDEX_NODES`].
    fn expand(&self, e: &Expr) -> Option<Expr> {
        substitute_lets(&self.0, e, MAX_EXPANDED_INDEX_NODES).map(|out| simplify(&out))
    }
}

/// Redirects a buffer's accesses at the slots' indices to the accumulators.
struct Redirect<'a> {
    buffer: &'a Name,
    accumulators: &'a Name,
    slots: &'a [Slot],
    offsets: &'a [Expr],
    lets: Lets,
}

impl Redirect<'_> {
    fn offset_of(&self, index: &Expr) -> Expr {
        let index = self.lets.expand(index).expect("every access of a promoted buffer was expanded");
        let k = self.slots.iter().position(|s| s.index == index).expect("every access of a promoted buffer is at a slot");
        self.offsets[k].clone()
    }
}

impl Mutator for Redirect<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        match e.node() {
            ExprNode::Load { buffer, index, ty } if buffer == self.buffer => Expr::load(&**self.accumulators, self.offset_of(index), *ty),
            _ => mutate_expr_children(self, e),
        }
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::Store { buffer, index, value } if buffer == self.buffer => {
                Stmt::store(&**self.accumulators, self.offset_of(index), self.mutate_expr(value))
            }
            StmtNode::LetStmt { name, value, body } => {
                let value = self.mutate_expr(value);
                self.lets.0.push((name.clone(), value.clone()));
                let body = self.mutate_stmt(body);
                self.lets.0.pop();
                Stmt::let_stmt(name.clone(), value, body)
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}
