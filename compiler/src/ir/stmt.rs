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
    Serial,
    Parallel,
    Vectorized,
    Unrolled,
    GpuBlock,
    GpuThread,
}

impl ForKind {
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
    pub min: Expr,
    pub extent: Expr,
}

/// The node of a statement tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum StmtNode {
    For {
        name: Name,
        min: Expr,
        extent: Expr,
        kind: ForKind,
        body: Stmt,
    },
    LetStmt {
        name: Name,
        value: Expr,
        body: Stmt,
    },
    Block {
        stmts: Vec<Stmt>,
    },
    IfThenElse {
        cond: Expr,
        then_case: Stmt,
        else_case: Option<Stmt>,
    },
    /// Fails the pipeline with `message` when `cond` is false.
    Assert {
        cond: Expr,
        message: String,
    },
    /// Computes `produce` (the values of `func`) and then runs `consume`.
    ProducerConsumer {
        func: Name,
        produce: Stmt,
        consume: Stmt,
    },
    /// Storage for `func` over a box, alive during `body`: one buffer per
    /// value of `types` (a Tuple Func has several).
    Realize {
        func: Name,
        types: Vec<Type>,
        bounds: Vec<Range>,
        body: Stmt,
    },
    /// Writes `values` (one per value of a Tuple Func) to `func` at
    /// `args`; every value is computed before any is written.
    Provide {
        func: Name,
        args: Vec<Expr>,
        values: Vec<Expr>,
    },
    /// A flat allocation of `size` elements, alive during `body`.
    Allocate {
        buffer: Name,
        ty: Type,
        size: Expr,
        body: Stmt,
    },
    /// Writes `value` (maybe a vector) to `buffer` at flat `index`.
    Store {
        buffer: Name,
        index: Expr,
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
    pub fn new(node: StmtNode) -> Stmt {
        Stmt(Arc::new(node))
    }

    pub fn node(&self) -> &StmtNode {
        &self.0
    }

    pub fn same_as(&self, other: &Stmt) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    pub fn no_op() -> Stmt {
        Stmt::new(StmtNode::NoOp)
    }

    pub fn is_no_op(&self) -> bool {
        matches!(self.node(), StmtNode::NoOp)
    }

    pub fn for_loop(name: impl Into<Name>, min: Expr, extent: Expr, kind: ForKind, body: Stmt) -> Stmt {
        Stmt::new(StmtNode::For { name: name.into(), min, extent, kind, body })
    }

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

    pub fn if_then(cond: Expr, then_case: Stmt) -> Stmt {
        Stmt::new(StmtNode::IfThenElse { cond, then_case, else_case: None })
    }

    pub fn if_then_else(cond: Expr, then_case: Stmt, else_case: Stmt) -> Stmt {
        Stmt::new(StmtNode::IfThenElse { cond, then_case, else_case: Some(else_case) })
    }

    pub fn assert(cond: Expr, message: impl Into<String>) -> Stmt {
        Stmt::new(StmtNode::Assert { cond, message: message.into() })
    }

    pub fn provide(func: impl Into<Name>, args: Vec<Expr>, values: Vec<Expr>) -> Stmt {
        Stmt::new(StmtNode::Provide { func: func.into(), args, values })
    }

    pub fn store(buffer: impl Into<Name>, index: Expr, value: Expr) -> Stmt {
        Stmt::new(StmtNode::Store { buffer: buffer.into(), index, value })
    }
}
