//! Storage flattening: multi-dimensional realizations, provides and calls
//! become 1-D allocations, stores and loads.
//!
//! Requires: sized `Realize` nodes. Guarantees: no `Realize`, `Provide` or
//! Func/Input `Call` remains. Each realized Func `f` gets `f.min.d`,
//! `f.extent.d` and `f.stride.d` lets (strides follow its storage order,
//! innermost stride 1); inputs and outputs use the same names, bound by the
//! caller. The element at `c` is at `sum((c[d] - min.d) * stride.d)`.
//!
//! Like Halide, the caller's buffers must be dense in their first dimension
//! (any stride elsewhere): the statement starts by asserting `b.stride.0 ==
//! 1` for each of them, and their addresses use the constant 1, so that a
//! vector of consecutive `x` is one dense load or store, not a gather.

use super::validate::Plan;
use crate::ir::expr::{CallTarget, Expr, ExprNode, Name};
use crate::ir::stmt::{Stmt, StmtNode};
use crate::ir::visit::{mutate_expr_children, mutate_stmt_children, Mutator};
use crate::lang::ops::CompareExt;
use crate::lang::pipeline::{buffer_vars, FuncDef};
use std::collections::HashMap;

/// The flat index of `args` in `buffer`; an external buffer (an input or
/// output) has stride 1 in its first dimension.
fn flat_index(buffer: &str, args: &[Expr], external: bool) -> Expr {
    args.iter()
        .enumerate()
        .map(|(d, a)| {
            let offset = a.clone() - Expr::ivar(buffer_vars::min(buffer, d));
            if external && d == 0 {
                offset
            } else {
                offset * Expr::ivar(buffer_vars::stride(buffer, d))
            }
        })
        .reduce(|a, b| a + b)
        .unwrap_or(Expr::i32(0))
}

struct Flatten {
    storage_order: HashMap<Name, Vec<usize>>,
    outputs: Vec<Name>,
}

impl Mutator for Flatten {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e = mutate_expr_children(self, e);
        match e.node() {
            ExprNode::Call { target: CallTarget::Input(r), args, ty } => Expr::load(r.name.clone(), flat_index(&r.name, args, true), *ty),
            ExprNode::Call { target: CallTarget::Func(r), args, ty } => {
                Expr::load(r.name.clone(), flat_index(&r.name, args, self.outputs.contains(&r.name)), *ty)
            }
            _ => e,
        }
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let s = mutate_stmt_children(self, s);
        match s.node() {
            StmtNode::Provide { func, args, value } => {
                Stmt::store(func.clone(), flat_index(func, args, self.outputs.contains(func)), value.clone())
            }
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

/// Flattens every realization of `s`, and asserts first that the external
/// buffers (`(name, dims)` of each input and output) are dense in their
/// first dimension.
pub fn flatten(s: &Stmt, funcs: &[FuncDef], plan: &Plan, external: &[(Name, usize)]) -> Stmt {
    let storage_order = funcs
        .iter()
        .map(|f| {
            let order = &plan.get(&f.name).storage_order;
            let idx = order.iter().filter_map(|n| f.args.iter().position(|a| a == n)).collect();
            (f.name.clone(), idx)
        })
        .collect();
    let outputs = external.iter().filter(|(n, _)| funcs.iter().any(|f| f.name == *n)).map(|(n, _)| n.clone()).collect();
    let body = Flatten { storage_order, outputs }.mutate_stmt(s);
    let mut stmts: Vec<Stmt> = external
        .iter()
        .filter(|(_, dims)| *dims > 0)
        .map(|(name, _)| {
            let stride = Expr::ivar(buffer_vars::stride(name, 0));
            Stmt::assert(
                stride.eq_(Expr::i32(1)),
                format!("buffer {name} must be dense in dimension 0 (stride 1), as compiled pipelines address it"),
            )
        })
        .collect();
    stmts.push(body);
    Stmt::block(stmts)
}
