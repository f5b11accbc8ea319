//! Sliding window: when a Func is stored outside the serial loop it is
//! computed in, each iteration computes only the part of its region that
//! earlier iterations did not.
//!
//! Requires: bounds inference has defined `{f}.{x}.min/max` (the region
//! required per iteration) and `{f}.s0.{x}.min/max` (the region computed)
//! around `f`'s computation. Applies to Funcs without update definitions or
//! bounds, stored strictly outside their compute loop, when every loop in
//! between is serial and the required region moves monotonically with the
//! compute loop in exactly one dimension. Guarantees: on the first iteration
//! of the compute loop the whole region is computed; on later ones only the
//! points past the previous iteration's maximum. A Func whose required
//! bounds, with the lets inside the compute loop substituted, grow past
//! `MAX_WINDOW_NODES` is left unslid: the expansion would cost time out
//! of all proportion to the pipeline.
//!
//! Windows chain: the producer of a sliding consumer requires a region
//! that starts at the consumer's slid start, a `select` over the loop
//! variable. Those starts stay behind their names ([`Slid`] records them and
//! the loop they slide along); a start that slid along the same loop is
//! known not to decrease from one iteration to the next, which is all the
//! producer's own window needs. Expanding them would double the expression
//! at every level of the chain.

use super::context::{find_context, rewrite_matching, Context, Enclosing};
use super::names::{required_max, required_min, stage_min};
use super::validate::FuncPlan;
use crate::analysis::monotonic::monotonic;
use crate::ir::expr::{Expr, Name};
use crate::ir::stmt::{ForKind, Stmt, StmtNode};
use crate::ir::visit::{expr_uses_var, substitute, substitute_lets};
use crate::lang::ops::CompareExt;
use crate::lang::pipeline::FuncDef;
use crate::simplify::{can_prove, can_prove_with, simplify};
use std::collections::HashMap;

/// The stage starts the pass has rewritten (`{f}.s0.{x}.min`), each with the
/// loop variable it slides along.
pub type Slid = HashMap<Name, Name>;

/// The loop a Func is computed in and how its required region moves with it.
pub struct Window {
    /// The serial loop the Func is computed in.
    pub loop_var: Name,
    /// That loop's first value.
    pub loop_min: Expr,
    /// The dimension that moves, its index, and its required max in terms
    /// of the compute loop variable.
    pub dim: Name,
    /// The index of `dim` among the Func's dimensions.
    pub dim_index: usize,
    /// The required max in `dim`, in terms of `loop_var`.
    pub max: Expr,
}

/// The largest required bound (as a tree) a window is looked for in.
const MAX_WINDOW_NODES: usize = 10_000;

/// Finds the window of `f` if its storage is outside a serial compute loop
/// and its required region moves monotonically in one dimension.
pub fn find_window(s: &Stmt, f: &FuncDef, fp: &FuncPlan, slid: &Slid) -> Option<(Context, Window)> {
    if !f.updates.is_empty() || fp.store == fp.compute {
        return None;
    }
    let is_pc = |n: &Stmt| matches!(n.node(), StmtNode::ProducerConsumer { func, .. } if *func == f.name);
    let ctx = find_context(s, is_pc)?;
    let realize = ctx.realize_index(&f.name)?;
    let li = ctx.innermost_loop()?;
    if li < realize {
        return None;
    }
    let serial_between = ctx.chain[realize..].iter().all(|e| match e {
        Enclosing::Loop { kind, .. } => matches!(kind, ForKind::Serial | ForKind::Unrolled),
        _ => true,
    });
    if !serial_between {
        return None;
    }
    let Enclosing::Loop { name: loop_var, min: loop_min, .. } = ctx.chain[li].clone() else {
        return None;
    };
    // Starts that slid along this loop stay opaque (see the module doc).
    let opaque: Vec<Name> = slid.iter().filter(|(_, l)| **l == loop_var).map(|(n, _)| n.clone()).collect();
    let moves = |e: &Expr| expr_uses_var(e, &loop_var) || opaque.iter().any(|n| expr_uses_var(e, n));
    // The lets inside the loop, but the opaque starts: the required region
    // in terms of the loop variable. Where that grows past a bound (long
    // chains of lets that each name the one before several times), the
    // Func does not slide: the expansion would take time out of all
    // proportion to the pipeline.
    let lets: Vec<(Name, Expr)> = ctx.chain[li + 1..]
        .iter()
        .filter_map(|e| match e {
            Enclosing::Let { name, value } if !opaque.contains(name) => Some((name.clone(), value.clone())),
            _ => None,
        })
        .collect();
    let expand = |e: String| substitute_lets(&lets, &Expr::ivar(e), MAX_WINDOW_NODES);
    let mut moving: Vec<(usize, &Name, Expr, Expr)> = vec![];
    for (d, x) in f.args.iter().enumerate().filter(|(_, x)| !fp.bounds.iter().any(|b| b.var == **x)) {
        let (lo, hi) = (expand(required_min(&f.name, x))?, expand(required_max(&f.name, x))?);
        if moves(&lo) || moves(&hi) {
            moving.push((d, x, lo, hi));
        }
    }
    let [(dim_index, dim, min, max)] = moving.as_slice() else {
        return None;
    };
    let first_iteration = simplify(&ctx.expand_lets_from(0, &loop_min)).as_int();
    let never_decreases = |e: &Expr| never_decreases(e, &loop_var, &loop_min, first_iteration, &opaque);
    if !(never_decreases(min) && never_decreases(max)) {
        return None;
    }
    let window = Window { loop_var, loop_min, dim: (*dim).clone(), dim_index: *dim_index, max: max.clone() };
    Some((ctx, window))
}

/// Whether `e` does not decrease from one iteration of the loop over
/// `loop_var` (from `loop_min`) to the next. A consumer that slides itself
/// requires a region like `select(v > min, slid, whole)`: when the first
/// iteration is a known constant, the first step and the later steps (where `v > loop_min`
/// decides the select) are proved separately.
///
/// Each name in `opaque` is a start that slid along the same loop: at the
/// next iteration it is itself plus some step of at least 0.
///
/// The structure of `e` is read first ([`monotonic`]: sums, `min`/`max` of
/// a split's shifted tail), then a proof is tried.
fn never_decreases(e: &Expr, loop_var: &Name, loop_min: &Expr, first_iteration: Option<i64>, opaque: &[Name]) -> bool {
    if monotonic(e, loop_var, opaque).never_decreases() {
        return true;
    }
    let at = |v: Expr, e: &Expr| substitute(loop_var, &v, e);
    let v = Expr::ivar(loop_var.clone());
    let used: Vec<&Name> = opaque.iter().filter(|n| expr_uses_var(e, n)).collect();
    if !used.is_empty() {
        let mut steps = HashMap::new();
        let mut next = at(v + 1, e);
        for n in used {
            let step: Name = format!("{n}.step").into();
            next = substitute(n, &(Expr::ivar(n.clone()) + Expr::ivar(step.clone())), &next);
            steps.insert(step, (0, i64::from(i32::MAX)));
        }
        return can_prove_with(&next.ge(e.clone()), &steps);
    }
    if can_prove(&at(v.clone() + 1, e).ge(e.clone())) {
        return true;
    }
    let Some(first) = first_iteration else {
        return false;
    };
    let e = match loop_min.as_var() {
        Some(name) => substitute(name, &Expr::i32(first), e),
        None => e.clone(),
    };
    let at = |v: Expr| at(v, &e);
    let step = at(v + 1).ge(e.clone());
    let later = HashMap::from([(loop_var.clone(), (first + 1, i64::from(i32::MAX) - 1))]);
    let first_step = at(Expr::i32(first + 1)).ge(at(Expr::i32(first)));
    can_prove(&first_step) && can_prove_with(&step, &later)
}

/// Applies the sliding window optimization to `f` where it is legal, and
/// records the start it rewrote in `slid`.
pub fn slide_func(s: &Stmt, f: &FuncDef, fp: &FuncPlan, slid: &mut Slid) -> Stmt {
    let Some((_, w)) = find_window(s, f, fp, slid) else {
        return s.clone();
    };
    if slid.keys().any(|n| expr_uses_var(&w.max, n)) {
        // The previous iteration's end cannot be written down.
        return s.clone();
    }
    let target = stage_min(&f.name, 0, &w.dim);
    let is_let = |n: &Stmt| matches!(n.node(), StmtNode::LetStmt { name, .. } if **name == *target);
    let v = Expr::ivar(w.loop_var.clone());
    let previous_max = substitute(&w.loop_var, &(v.clone() - 1), &w.max);
    let required = Expr::ivar(required_min(&f.name, &w.dim));
    // Past the first iteration, start after the previous iteration's end (a
    // window that jumps ahead computes the gap too). Not `max(required,
    // previous + 1)`: that names `required` twice, and a chain of windows
    // would double it at every level.
    let start = Expr::select(v.gt(w.loop_min.clone()), previous_max + 1, required);
    let result: Result<Stmt, ()> = rewrite_matching(s, is_let, |_, node| {
        let StmtNode::LetStmt { name, body, .. } = node.node() else { unreachable!() };
        Ok(Stmt::let_stmt(name.clone(), start.clone(), body.clone()))
    });
    match result {
        Ok(stmt) => {
            slid.insert(target.into(), w.loop_var);
            stmt
        }
        Err(()) => s.clone(),
    }
}
