//! Storage folding: a Func stored outside the serial loop it is computed in,
//! whose per-iteration region moves monotonically along one dimension with a
//! bounded extent, keeps only a circular window of that dimension.
//!
//! Requires: sliding-window analysis conditions (see
//! [`super::sliding_window::find_window`]) and sized `Realize` nodes.
//! Guarantees: the folded dimension of the `Realize` becomes `[0, F)` with
//! `F` a power of two at least the largest per-iteration extent, and every
//! access of the Func inside it uses the coordinate modulo `F`.

use super::sliding_window::find_window;
use super::validate::FuncPlan;
use crate::expr::{CallTarget, Expr, ExprNode};
use crate::pipeline::FuncDef;
use crate::simplify::{const_bounds, simplify};
use crate::stmt::{Range, Stmt, StmtNode};
use crate::visit::{mutate_expr_children, mutate_stmt_children, Mutator};

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
            StmtNode::Provide { func, args, value } if &**func == self.func => Stmt::provide(func.clone(), self.fold(args), value.clone()),
            _ => s,
        }
    }
}

/// The fold factor for `f`, if its storage can be folded.
pub fn fold_factor(s: &Stmt, f: &FuncDef, fp: &FuncPlan) -> Option<(usize, i64)> {
    let (_, w) = find_window(s, f, fp)?;
    let extent = simplify(&(w.max.clone() - w.min.clone() + 1));
    let (_, Some(max_extent)) = const_bounds(&extent) else { return None };
    if max_extent < 1 {
        return None;
    }
    let factor = (max_extent as u64).next_power_of_two() as i64;
    Some((w.dim_index, factor))
}

/// Folds the storage of `f` where it is legal.
pub fn fold_func(s: &Stmt, f: &FuncDef, fp: &FuncPlan) -> Stmt {
    let Some((dim, factor)) = fold_factor(s, f, fp) else { return s.clone() };
    struct AtRealize<'a> {
        func: &'a str,
        dim: usize,
        factor: i64,
    }
    impl Mutator for AtRealize<'_> {
        fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
            match s.node() {
                StmtNode::Realize { func, ty, bounds, body } if &**func == self.func => {
                    let mut bounds = bounds.clone();
                    bounds[self.dim] = Range { min: Expr::i32(0), extent: Expr::i32(self.factor) };
                    let body = FoldAccesses { func: self.func, dim: self.dim, factor: self.factor }.mutate_stmt(body);
                    Stmt::new(StmtNode::Realize { func: func.clone(), ty: *ty, bounds, body })
                }
                _ => mutate_stmt_children(self, s),
            }
        }
    }
    AtRealize { func: &f.name, dim, factor }.mutate_stmt(s)
}
