//! Storage folding: a Func stored outside the serial loop it is computed in,
//! whose per-iteration region moves monotonically along one dimension with a
//! bounded extent, keeps only a circular window of that dimension.
//!
//! Requires: sliding-window analysis conditions (see
//! [`super::sliding_window::find_window`]) and sized `Realize` nodes.
//! Guarantees: the folded dimension of the `Realize` becomes `[0, F)` with
//! `F` a power of two at least the largest per-iteration extent, and every
//! access of the Func inside it uses the coordinate modulo `F`.

use super::context::rewrite_matching;
use super::sliding_window::{find_window, Slid};
use super::validate::FuncPlan;
use crate::analysis::footprint::{box_touched, Access};
use crate::analysis::interval::{Interval, Scope};
use crate::ir::expr::{BinOp, CallTarget, Expr, ExprNode};
use crate::ir::stmt::{Range, Stmt, StmtNode};
use crate::ir::visit::{mutate_expr_children, mutate_stmt_children, Mutator};
use crate::lang::pipeline::FuncDef;
use crate::simplify::{const_bounds, simplify};

/// Rewrites accesses of one Func so that dimension `dim` is taken modulo `factor`.
struct FoldAccesses<'a> {
    func: &'a str,
    dim: usize,
    factor: i64,
}

impl FoldAccesses<'_> {
    fn fold(&self, args: &[Expr]) -> Vec<Expr> {
        let mut args = args.to_vec();
        args[self.dim] = args[self.dim].clone() % Expr::i32(self.factor);
        args
    }
}

impl Mutator for FoldAccesses<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e = mutate_expr_children(self, e);
        match e.node() {
            ExprNode::Call { target: CallTarget::Func(r), args, ty } if &*r.name == self.func => {
                Expr::call(CallTarget::Func(r.clone()), self.fold(args), *ty)
            }
            _ => e,
        }
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let s = mutate_stmt_children(self, s);
        match s.node() {
            StmtNode::Provide { func, args, values } if &**func == self.func => {
                Stmt::provide(func.clone(), self.fold(args), values.clone())
            }
            _ => s,
        }
    }
}

/// The largest fold factor: a window wider than this is not worth folding
/// (and a bound this large is more likely an over-approximation).
const MAX_FOLD_FACTOR: i64 = 1 << 16;

/// Most leaf differences [`upper_bound_of_difference`] simplifies before
/// giving up (distribution multiplies the terms of both sides).
const MAX_DIFFERENCE_TERMS: usize = 256;

/// A constant upper bound on `hi - lo`, distributing over the `min`, `max`
/// and `select` that unions of regions produce so that correlated terms
/// cancel branch by branch.
fn upper_bound_of_difference(hi: &Expr, lo: &Expr) -> Option<i64> {
    bound_difference(hi, lo, &mut { MAX_DIFFERENCE_TERMS })
}

fn bound_difference(hi: &Expr, lo: &Expr, budget: &mut usize) -> Option<i64> {
    let both = |a: Option<i64>, b: Option<i64>| Some(a?.max(b?));
    let at_least_one = |a: Option<i64>, b: Option<i64>| match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    match (hi.node(), lo.node()) {
        (_, ExprNode::Binary { op: BinOp::Min, a, b }) | (_, ExprNode::Select { t: a, f: b, .. }) => {
            both(bound_difference(hi, a, budget), bound_difference(hi, b, budget))
        }
        (ExprNode::Binary { op: BinOp::Max, a, b }, _) | (ExprNode::Select { t: a, f: b, .. }, _) => {
            both(bound_difference(a, lo, budget), bound_difference(b, lo, budget))
        }
        (_, ExprNode::Binary { op: BinOp::Max, a, b }) => at_least_one(bound_difference(hi, a, budget), bound_difference(hi, b, budget)),
        (ExprNode::Binary { op: BinOp::Min, a, b }, _) => at_least_one(bound_difference(a, lo, budget), bound_difference(b, lo, budget)),
        _ if *budget == 0 => None,
        _ => {
            *budget -= 1;
            const_bounds(&simplify(&(hi.clone() - lo.clone()))).1
        }
    }
}

/// The body of the first loop named `name` in `s`.
fn loop_body(s: &Stmt, name: &str) -> Option<Stmt> {
    let is_loop = |n: &Stmt| matches!(n.node(), StmtNode::For { name: l, .. } if &**l == name);
    let mut body = None;
    let _ = rewrite_matching::<()>(s, is_loop, |_, node| {
        if let StmtNode::For { body: b, .. } = node.node() {
            body.get_or_insert_with(|| b.clone());
        }
        Ok(node.clone())
    });
    body
}

/// The fold factor for `f`, if its storage can be folded: a power of two at
/// least the extent one iteration of the compute loop touches in the moving
/// dimension. That is the region consumers read and also whatever the
/// producer writes past it (splits that round up or shift inwards compute
/// more than is required), so no write wraps onto a row still needed.
pub fn fold_factor(s: &Stmt, f: &FuncDef, fp: &FuncPlan, slid: &Slid) -> Option<(usize, i64)> {
    let (_, w) = find_window(s, f, fp, slid)?;
    let body = loop_body(s, &w.loop_var)?;
    let touched = box_touched(&body, Access::Func(&f.name), &mut Scope::default())?;
    let Interval { min: Some(lo), max: Some(hi) } = &touched[w.dim_index] else {
        return None;
    };
    let max_extent = upper_bound_of_difference(hi, lo)?.checked_add(1)?;
    if !(1..=MAX_FOLD_FACTOR).contains(&max_extent) {
        return None;
    }
    let factor = (max_extent as u64).next_power_of_two() as i64;
    Some((w.dim_index, factor))
}

/// Folds the storage of `f` where it is legal.
pub fn fold_func(s: &Stmt, f: &FuncDef, fp: &FuncPlan, slid: &Slid) -> Stmt {
    let Some((dim, factor)) = fold_factor(s, f, fp, slid) else {
        return s.clone();
    };
    struct AtRealize<'a> {
        func: &'a str,
        dim: usize,
        factor: i64,
    }
    impl Mutator for AtRealize<'_> {
        fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
            match s.node() {
                StmtNode::Realize { func, types, bounds, body } if &**func == self.func => {
                    let mut bounds = bounds.clone();
                    bounds[self.dim] = Range { min: Expr::i32(0), extent: Expr::i32(self.factor) };
                    let body = FoldAccesses { func: self.func, dim: self.dim, factor: self.factor }.mutate_stmt(body);
                    Stmt::new(StmtNode::Realize { func: func.clone(), types: types.clone(), bounds, body })
                }
                _ => mutate_stmt_children(self, s),
            }
        }
    }
    AtRealize { func: &f.name, dim, factor }.mutate_stmt(s)
}
