//! Storage flattening: multi-dimensional realizations, provides and calls
//! become 1-D allocations, stores and loads.
//!
//! Requires: sized `Realize` nodes. Guarantees: no `Realize`, `Provide` or
//! Func/Input `Call` remains. Each realized Func `f` gets `f.min.d`,
//! `f.extent.d` and `f.stride.d` lets (strides follow its storage order,
//! innermost stride 1); inputs and outputs use the same names, bound by the
//! caller. The element at `c` is at `sum((c[d] - min.d) * stride.d)`.

use super::validate::Plan;
use crate::expr::{CallTarget, Expr, ExprNode, Name};
use crate::pipeline::{buffer_vars, FuncDef};
use crate::stmt::{Stmt, StmtNode};
use crate::visit::{mutate_expr_children, mutate_stmt_children, Mutator};
use std::collections::HashMap;

/// The flat index of `args` in `buffer`.
pub fn flat_index(buffer: &str, args: &[Expr]) -> Expr {
    args.iter()
        .enumerate()
        .map(|(d, a)| (a.clone() - Expr::ivar(buffer_vars::min(buffer, d))) * Expr::ivar(buffer_vars::stride(buffer, d)))
        .reduce(|a, b| a + b)
        .unwrap_or(Expr::i32(0))
}

struct Flatten {
    storage_order: HashMap<Name, Vec<usize>>,
}

impl Mutator for Flatten {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e = mutate_expr_children(self, e);
        match e.node() {
            ExprNode::Call { target: CallTarget::Func(r) | CallTarget::Input(r), args, ty } => Expr::load(r.name.clone(), flat_index(&r.name, args), *ty),
            _ => e,
        }
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let s = mutate_stmt_children(self, s);
        match s.node() {
            StmtNode::Provide { func, args, value } => Stmt::store(func.clone(), flat_index(func, args), value.clone()),
            StmtNode::Realize { func, ty, bounds, body } => {
                let dims = bounds.len();
                let order = self.storage_order.get(func).cloned().unwrap_or_else(|| (0..dims).collect());
                let extent = |d: usize| Expr::ivar(buffer_vars::extent(func, d));
                let size = (0..dims).map(extent).reduce(|a, b| a * b).unwrap_or(Expr::i32(1));
                let mut out = Stmt::new(StmtNode::Allocate { buffer: func.clone(), ty: *ty, size, body: body.clone() });
                // Strides: innermost storage dimension first.
                let mut lets = vec![];
                let mut stride = Expr::i32(1);
                for &d in &order {
                    lets.push((buffer_vars::stride(func, d), stride.clone()));
                    stride = stride * extent(d);
                }
                for (d, r) in bounds.iter().enumerate() {
                    lets.push((buffer_vars::min(func, d), r.min.clone()));
                    lets.push((buffer_vars::extent(func, d), r.extent.clone()));
                }
                // Extents first (strides use them), then the rest.
                lets.sort_by_key(|(n, _)| !n.contains(".extent."));
                for (n, v) in lets.into_iter().rev() {
                    out = Stmt::let_stmt(n, v, out);
                }
                out
            }
            _ => s,
        }
    }
}

/// Flattens every realization of `s`.
pub fn flatten(s: &Stmt, funcs: &[FuncDef], plan: &Plan) -> Stmt {
    let storage_order = funcs
        .iter()
        .map(|f| {
            let order = &plan.get(&f.name).storage_order;
            let idx = order.iter().filter_map(|n| f.args.iter().position(|a| a == n)).collect();
            (f.name.clone(), idx)
        })
        .collect();
    Flatten { storage_order }.mutate_stmt(s)
}
