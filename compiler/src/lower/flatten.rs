//! Storage flattening: multi-dimensional realizations, provides and calls
//! become 1-D allocations, stores and loads.
//!
//! Requires: sized `Realize` nodes. Guarantees: no `Realize`, `Provide` or
//! Func/Input `Call` remains. Each realized Func `f` gets `f.min.d`,
//! `f.extent.d` and `f.stride.d` lets (strides follow its storage order,
//! innermost stride 1); inputs and outputs use the same names, bound by the
//! caller. The element at `c` is at `sum((c[d] - min.d) * stride.d)`.
//!
//! Each realized Func's allocations come after an assertion that their
//! element count is below 2^31 (computed without overflow), so that sizes
//! and indices, which are 32-bit, never wrap: a realization too large
//! fails with a message naming the Func instead of corrupting memory.
//!
//! A Tuple Func gets one allocation per value (`f.0`, `f.1`, ...) sharing
//! those lets; its `Provide` computes every value into a let before it
//! stores any. A Tuple output is one caller buffer per value, each with
//! its own fields, asserted to share one shape.
//!
//! Like Halide, the caller's buffers must be dense in their first dimension
//! (any stride elsewhere): the statement starts by asserting `b.stride.0 ==
//! 1` for each of them, and their addresses use the constant 1, so that a
//! vector of consecutive `x` is one dense load or store, not a gather.

use super::validate::Plan;
use crate::ir::expr::{CallTarget, Expr, ExprNode, Name};
use crate::ir::stmt::{Stmt, StmtNode};
use crate::ir::types::Type;
use crate::ir::visit::{mutate_expr_children, mutate_stmt_children, Mutator};
use crate::lang::ops::CompareExt;
use crate::lang::pipeline::{buffer_vars, value_buffer, FuncDef};
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

/// Whether the allocation of `func` (its extents' product) has at most
/// `i32::MAX` elements, so that its size and every index into it fit the
/// 32-bit index type. Computed in 64 bits, each partial product clamped at
/// 2^31 before the next factor (below 2^31) multiplies it, so nothing
/// overflows whatever the extents.
fn elements_fit_the_index_type(func: &str, dims: usize) -> Expr {
    let limit = || Expr::int(1 << 31, Type::i64());
    let extent = |d: usize| Expr::max(Expr::cast(Type::i64(), Expr::ivar(buffer_vars::extent(func, d))), Expr::int(0, Type::i64()));
    let elements = (0..dims).fold(Expr::int(1, Type::i64()), |product, d| Expr::min(product, limit()) * extent(d));
    elements.lt(limit())
}

struct Flatten {
    storage_order: HashMap<Name, Vec<usize>>,
    /// The number of values of each realized Func.
    value_counts: HashMap<Name, usize>,
    outputs: Vec<Name>,
}

impl Flatten {
    /// The buffer holding value `index` of Func `func`, and the flat index
    /// of `args` in it: a realized Tuple's values share the Func's bounds
    /// and strides; an output's are separate buffers, each with its own.
    fn address(&self, func: &Name, index: usize, args: &[Expr]) -> (Name, Expr) {
        let count = self.value_counts.get(func).copied().unwrap_or(1);
        let buffer = value_buffer(func, index, count);
        let external = self.outputs.contains(func);
        let fields = if external { &buffer } else { func };
        (buffer.clone(), flat_index(fields, args, external))
    }
}

impl Mutator for Flatten {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e = mutate_expr_children(self, e);
        match e.node() {
            ExprNode::Call { target: CallTarget::Input(r), args, ty } => Expr::load(r.name.clone(), flat_index(&r.name, args, true), *ty),
            ExprNode::Call { target: CallTarget::Func(r), args, ty } => {
                let (buffer, index) = self.address(&r.name, r.value_index, args);
                Expr::load(buffer, index, *ty)
            }
            _ => e,
        }
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let s = mutate_stmt_children(self, s);
        match s.node() {
            StmtNode::Provide { func, args, values } => {
                if let [value] = values.as_slice() {
                    let (buffer, index) = self.address(func, 0, args);
                    return Stmt::store(buffer, index, value.clone());
                }
                // Every value is computed before any is stored: an update
                // of one value may read another.
                let computed = |k: usize| format!("{func}.value.{k}");
                let stores = (0..values.len())
                    .map(|k| self.address(func, k, args))
                    .enumerate()
                    .map(|(k, (buffer, index))| Stmt::store(buffer, index, Expr::var(computed(k), values[k].ty())));
                let mut out = Stmt::block(stores.collect());
                for (k, v) in values.iter().enumerate().rev() {
                    out = Stmt::let_stmt(computed(k), v.clone(), out);
                }
                out
            }
            StmtNode::Realize { func, types, bounds, body } => {
                let dims = bounds.len();
                let order = self.storage_order.get(func).cloned().unwrap_or_else(|| (0..dims).collect());
                let extent = |d: usize| Expr::ivar(buffer_vars::extent(func, d));
                let size = (0..dims).map(extent).reduce(|a, b| a * b).unwrap_or(Expr::i32(1));
                let mut out = body.clone();
                for (k, ty) in types.iter().enumerate().rev() {
                    let buffer = value_buffer(func, k, types.len());
                    out = Stmt::new(StmtNode::Allocate { buffer, ty: *ty, size: size.clone(), body: out });
                }
                out = Stmt::block(vec![
                    Stmt::assert(
                        elements_fit_the_index_type(func, dims),
                        format!("Func {func} needs more than 2^31 - 1 elements of storage, more than 32-bit indices can address"),
                    ),
                    out,
                ]);
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

/// The checks and bindings a Tuple output needs before the statement
/// runs: its buffers (`f.0`, `f.1`, ...) must all have the shape of
/// `f.0`, whose bounds become the Func's own (`f.min.d`, `f.extent.d`,
/// which loops and bounds checks name).
fn tuple_output_prologue(f: &FuncDef) -> (Vec<Stmt>, Vec<(String, Expr)>) {
    let first = value_buffer(&f.name, 0, f.types.len());
    let mut asserts = vec![];
    let mut lets = vec![];
    for d in 0..f.dims() {
        for field in [buffer_vars::min, buffer_vars::extent] {
            let of = |buffer: &str| Expr::ivar(field(buffer, d));
            for k in 1..f.types.len() {
                let other = value_buffer(&f.name, k, f.types.len());
                asserts.push(Stmt::assert(
                    of(&other).eq_(of(&first)),
                    format!("the buffers of Tuple output {} must have one shape: {other} differs from {first} in dimension {d}", f.name),
                ));
            }
            lets.push((field(&f.name, d), of(&first)));
        }
    }
    (asserts, lets)
}

/// Flattens every realization of `s`, and asserts first that the external
/// buffers (`(name, dims)` of each input and output; a Tuple output has
/// one buffer per value) are dense in their first dimension.
pub fn flatten(s: &Stmt, funcs: &[FuncDef], plan: &Plan, external: &[(Name, usize)]) -> Stmt {
    let storage_order = funcs
        .iter()
        .map(|f| {
            let order = &plan.get(&f.name).storage_order;
            let idx = order.iter().filter_map(|n| f.args.iter().position(|a| a == n)).collect();
            (f.name.clone(), idx)
        })
        .collect();
    let value_counts = funcs.iter().map(|f| (f.name.clone(), f.types.len())).collect();
    let output_funcs: Vec<&FuncDef> = funcs.iter().filter(|f| external.iter().any(|(n, _)| *n == f.name)).collect();
    let outputs = output_funcs.iter().map(|f| f.name.clone()).collect();
    let body = Flatten { storage_order, value_counts, outputs }.mutate_stmt(s);
    let buffers = external.iter().flat_map(|(name, dims)| match output_funcs.iter().find(|f| f.name == *name) {
        Some(f) => f.buffers().into_iter().map(|(b, _)| (b, *dims)).collect(),
        None => vec![(name.clone(), *dims)],
    });
    let mut stmts: Vec<Stmt> = buffers
        .filter(|(_, dims)| *dims > 0)
        .map(|(name, _)| {
            let stride = Expr::ivar(buffer_vars::stride(&name, 0));
            Stmt::assert(
                stride.eq_(Expr::i32(1)),
                format!("buffer {name} must be dense in dimension 0 (stride 1), as compiled pipelines address it"),
            )
        })
        .collect();
    let mut lets = vec![];
    for f in output_funcs.iter().filter(|f| f.is_tuple()) {
        let (asserts, bindings) = tuple_output_prologue(f);
        stmts.extend(asserts);
        lets.extend(bindings);
    }
    stmts.push(body);
    let mut out = Stmt::block(stmts);
    for (name, value) in lets.into_iter().rev() {
        out = Stmt::let_stmt(name, value, out);
    }
    out
}
