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
//! points past the previous iteration's maximum.

use super::context::{find_context, rewrite_matching, Context, Enclosing};
use super::names::{required_max, required_min, stage_min};
use super::validate::FuncPlan;
use crate::expr::{Expr, Name};
use crate::ops::CompareExt;
use crate::pipeline::FuncDef;
use crate::simplify::{can_prove, can_prove_with, simplify};
use std::collections::HashMap;
use crate::stmt::{ForKind, Stmt, StmtNode};
use crate::visit::{expr_uses_var, substitute};

/// The loop a Func is computed in and how its required region moves with it.
pub struct Window {
    /// Chain index of the compute loop.
    pub loop_index: usize,
    pub loop_var: Name,
    pub loop_min: Expr,
    /// The dimension that moves, its index, and its required min/max in
    /// terms of the compute loop variable.
    pub dim: Name,
    pub dim_index: usize,
    pub min: Expr,
    pub max: Expr,
}

/// Finds the window of `f` if its storage is outside a serial compute loop
/// and its required region moves monotonically in one dimension.
pub fn find_window(s: &Stmt, f: &FuncDef, fp: &FuncPlan) -> Option<(Context, Window)> {
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
    let Enclosing::Loop { name: loop_var, min: loop_min, .. } = ctx.chain[li].clone() else { return None };
    let moving: Vec<(usize, &Name, Expr, Expr)> = f
        .args
        .iter()
        .enumerate()
        .filter(|(_, x)| !fp.bounds.iter().any(|b| b.var == **x))
        .map(|(d, x)| {
            let lo = ctx.expand_lets_from(li + 1, &Expr::ivar(required_min(&f.name, x)));
            let hi = ctx.expand_lets_from(li + 1, &Expr::ivar(required_max(&f.name, x)));
            (d, x, lo, hi)
        })
        .filter(|(_, _, lo, hi)| expr_uses_var(lo, &loop_var) || expr_uses_var(hi, &loop_var))
        .collect();
    let [(dim_index, dim, min, max)] = moving.as_slice() else { return None };
    let first_iteration = simplify(&ctx.expand_lets_from(0, &loop_min)).as_int();
    if !(never_decreases(min, &loop_var, &loop_min, first_iteration) && never_decreases(max, &loop_var, &loop_min, first_iteration)) {
        return None;
    }
    let window = Window { loop_index: li, loop_var, loop_min, dim: (*dim).clone(), dim_index: *dim_index, min: min.clone(), max: max.clone() };
    Some((ctx, window))
}

/// Whether `e` does not decrease from one iteration of the loop over
/// `loop_var` (from `loop_min`) to the next. A consumer that slides itself
/// requires a region like `select(v > min, slid, whole)`: when the first
/// iteration is a known constant, the first step and the later steps (where `v > loop_min`
/// decides the select) are proved separately.
fn never_decreases(e: &Expr, loop_var: &Name, loop_min: &Expr, first_iteration: Option<i64>) -> bool {
    let at = |v: Expr, e: &Expr| substitute(loop_var, &v, e);
    let v = Expr::ivar(loop_var.clone());
    if can_prove(&at(v.clone() + 1, e).ge(e.clone())) {
        return true;
    }
    let Some(first) = first_iteration else { return false };
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

/// Applies the sliding window optimization to `f` where it is legal.
pub fn slide_func(s: &Stmt, f: &FuncDef, fp: &FuncPlan) -> Stmt {
    let Some((_, w)) = find_window(s, f, fp) else { return s.clone() };
    let target = stage_min(&f.name, 0, &w.dim);
    let is_let = |n: &Stmt| matches!(n.node(), StmtNode::LetStmt { name, .. } if **name == *target);
    let v = Expr::ivar(w.loop_var.clone());
    let previous_max = substitute(&w.loop_var, &(v.clone() - 1), &w.max);
    let required = Expr::ivar(required_min(&f.name, &w.dim));
    let slid = Expr::select(v.gt(w.loop_min.clone()), Expr::max(required.clone(), previous_max + 1), required);
    let result: Result<Stmt, ()> = rewrite_matching(s, is_let, |_, node| {
        let StmtNode::LetStmt { name, body, .. } = node.node() else { unreachable!() };
        Ok(Stmt::let_stmt(name.clone(), slid.clone(), body.clone()))
    });
    result.unwrap_or_else(|_| s.clone())
}
