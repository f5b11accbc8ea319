//! Statements of the loop-nest IR that lowering produces.
//!
//! Early passes use the multi-dimensional forms (`Realize`, `Provide`, and
//! `Call`s to Funcs in expressions); storage flattening turns them into
//! `Allocate`, `Store` and `Load` on 1-D buffers.

use crate::ir::expr::{Expr, Name};
use crate::ir::types::Type;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// How a loop runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ForKind {
    /// One iteration after another, in order.
    Serial,
    /// Iterations spread over threads.
    Parallel,
    /// One vector iteration: the vectorization pass turns the loop into
    /// vector code.
    Vectorized,
    /// Copies of the body, one per iteration: the unrolling pass removes the
    /// loop.
    Unrolled,
    /// Iterations over GPU blocks (`gpu_blocks`).
    GpuBlock,
    /// Iterations over the threads of a GPU block (`gpu_threads`).
    GpuThread,
}

impl ForKind {
    /// The kind's name as the printer writes it (`serial`, `gpu_block`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ForKind::Serial => "serial",
            ForKind::Parallel => "parallel",
            ForKind::Vectorized => "vectorized",
            ForKind::Unrolled => "unrolled",
            ForKind::GpuBlock => "gpu_block",
            ForKind::GpuThread => "gpu_thread",
        }
    }

    /// Whether iterations may run concurrently.
    pub fn is_parallel(self) -> bool {
        matches!(self, ForKind::Parallel | ForKind::GpuBlock | ForKind::GpuThread)
    }
}

/// A `[min, min + extent)` range of one dimension.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Range {
    /// The first coordinate.
    pub min: Expr,
    /// The number of coordinates.
    pub extent: Expr,
}

/// The node of a statement tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum StmtNode {
    /// `body` run for `name` from `min` to `min + extent - 1`.
    For {
        /// The loop variable.
        name: Name,
        /// The first value of the loop variable.
        min: Expr,
        /// The number of iterations.
        extent: Expr,
        /// How the iterations run.
        kind: ForKind,
        /// The statement run each iteration.
        body: Stmt,
    },
    /// `body` with `name` bound to the value of `value`.
    LetStmt {
        /// The name bound.
        name: Name,
        /// The value bound to `name`.
        value: Expr,
        /// The statement in which `name` is bound.
        body: Stmt,
    },
    /// Statements run in order.
    Block {
        /// The statements, in order.
        stmts: Vec<Stmt>,
    },
    /// `then_case` when `cond` holds, `else_case` (if any) otherwise.
    IfThenElse {
        /// The condition (bool).
        cond: Expr,
        /// The statement run when `cond` holds.
        then_case: Stmt,
        /// The statement run when `cond` does not hold, if any.
        else_case: Option<Stmt>,
    },
    /// Fails the pipeline with `message` when `cond` is false.
    Assert {
        /// The condition that must hold (bool).
        cond: Expr,
        /// The failure's message.
        message: String,
    },
    /// Computes `produce` (the values of `func`) and then runs `consume`.
    ProducerConsumer {
        /// The Func produced.
        func: Name,
        /// The statement that computes the values of `func`.
        produce: Stmt,
        /// The statement that uses them.
        consume: Stmt,
    },
    /// Storage for `func` over a box, alive during `body`: one buffer per
    /// value of `types` (a Tuple Func has several).
    Realize {
        /// The Func stored.
        func: Name,
        /// The type of each value of the Func.
        types: Vec<Type>,
        /// The box stored, one range per dimension of the Func.
        bounds: Vec<Range>,
        /// The statement during which the storage is alive.
        body: Stmt,
    },
    /// Writes `values` (one per value of a Tuple Func) to `func` at
    /// `args`; every value is computed before any is written.
    Provide {
        /// The Func written.
        func: Name,
        /// The coordinates written, one per dimension of the Func.
        args: Vec<Expr>,
        /// The values written, one per value of the Func.
        values: Vec<Expr>,
    },
    /// A flat allocation of `size` elements, alive during `body`.
    Allocate {
        /// The buffer allocated.
        buffer: Name,
        /// The element type.
        ty: Type,
        /// The number of elements.
        size: Expr,
        /// The statement during which the buffer is alive.
        body: Stmt,
    },
    /// Writes `value` (maybe a vector) to `buffer` at flat `index`.
    Store {
        /// The flattened buffer written.
        buffer: Name,
        /// The element index (a vector of indices for a vector store).
        index: Expr,
        /// The value written, with the lanes of `index`.
        value: Expr,
    },
    /// Evaluates an expression for its effects (none today); a no-op holder.
    NoOp,
}

/// An immutable, shareable statement.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Stmt(Arc<StmtNode>);

impl fmt::Debug for Stmt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Stmt {
    /// A statement of the given node, unchecked.
    pub fn new(node: StmtNode) -> Stmt {
        Stmt(Arc::new(node))
    }

    /// The node at the root of the statement.
    pub fn node(&self) -> &StmtNode {
        &self.0
    }

    /// True when both handles point at the same node (cheap identity test).
    pub fn same_as(&self, other: &Stmt) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The statement that does nothing.
    pub fn no_op() -> Stmt {
        Stmt::new(StmtNode::NoOp)
    }

    /// Whether this is the statement that does nothing.
    pub fn is_no_op(&self) -> bool {
        matches!(self.node(), StmtNode::NoOp)
    }

    /// A loop of `body` over `name` in `[min, min + extent)`, run as `kind`
    /// says.
    pub fn for_loop(name: impl Into<Name>, min: Expr, extent: Expr, kind: ForKind, body: Stmt) -> Stmt {
        Stmt::new(StmtNode::For { name: name.into(), min, extent, kind, body })
    }

    /// `body` with `name` bound to `value`.
    pub fn let_stmt(name: impl Into<Name>, value: Expr, body: Stmt) -> Stmt {
        Stmt::new(StmtNode::LetStmt { name: name.into(), value, body })
    }

    /// A block, flattening nested blocks and dropping no-ops.
    pub fn block(stmts: Vec<Stmt>) -> Stmt {
        let mut flat = Vec::with_capacity(stmts.len());
        for s in stmts {
            match s.node() {
                StmtNode::NoOp => {}
                StmtNode::Block { stmts } => flat.extend(stmts.iter().cloned()),
                _ => flat.push(s),
            }
        }
        match flat.len() {
            0 => Stmt::no_op(),
            1 => flat.pop().unwrap(),
            _ => Stmt::new(StmtNode::Block { stmts: flat }),
        }
    }

    /// `then_case` when `cond` holds, nothing otherwise.
    pub fn if_then(cond: Expr, then_case: Stmt) -> Stmt {
        Stmt::new(StmtNode::IfThenElse { cond, then_case, else_case: None })
    }

    /// `then_case` when `cond` holds, `else_case` otherwise.
    pub fn if_then_else(cond: Expr, then_case: Stmt, else_case: Stmt) -> Stmt {
        Stmt::new(StmtNode::IfThenElse { cond, then_case, else_case: Some(else_case) })
    }

    /// An assertion that fails the pipeline with `message` when `cond` is
    /// false.
    pub fn assert(cond: Expr, message: impl Into<String>) -> Stmt {
        Stmt::new(StmtNode::Assert { cond, message: message.into() })
    }

    /// A write of `values` (one per value of the Func) to `func` at `args`.
    pub fn provide(func: impl Into<Name>, args: Vec<Expr>, values: Vec<Expr>) -> Stmt {
        Stmt::new(StmtNode::Provide { func: func.into(), args, values })
    }

    /// A write of `value` to the flattened `buffer` at element `index`.
    pub fn store(buffer: impl Into<Name>, index: Expr, value: Expr) -> Stmt {
        Stmt::new(StmtNode::Store { buffer: buffer.into(), index, value })
    }
}
