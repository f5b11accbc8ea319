//! Access checks, the checked mode of lowering: before every statement that
//! reads or writes a Func or an input, an assertion that each coordinate of
//! each access lies inside the storage of that dimension, naming the Func
//! (or input), the dimension and the coordinate.
//!
//! Bounds inference already sizes every realization to cover what is
//! touched and asserts that the caller's buffers do; this pass checks that
//! claim at run time, access by access, so that a sizing error in the
//! compiler is a clean [`crate::exec::interpret::InterpretError::AssertionFailed`]
//! or JIT `RunError::AssertionFailed`, never a read or write outside an
//! allocation. The differential tests lower in this mode; benchmarks do not.
//!
//! Requires: sized `Realize` nodes, multi-dimensional `Provide` and `Call`
//! (run it right before [`super::flatten`], which binds `f.min.d` and
//! `f.extent.d` around each allocation; the caller binds them for inputs
//! and outputs). Guarantees: every statement whose own expressions touch a
//! Func or an input is preceded, in the same block, by one `Assert` per
//! touched dimension; the asserted coordinate is the access's own
//! expression (expression lets substituted), so later passes transform the
//! check and the access alike (a vectorized access gets a vector check that
//! must hold in every lane).

use crate::ir::expr::{CallTarget, Expr, ExprNode, Name};
use crate::ir::stmt::{Stmt, StmtNode};
use crate::ir::visit::{mutate_stmt_children, substitute, Mutator};
use crate::lang::ops::CompareExt;
use crate::lang::pipeline::{buffer_vars, PipelineDef};

/// Adds the access checks to every statement of `s`.
pub fn check_accesses(s: &Stmt, pipeline: &PipelineDef) -> Stmt {
    AddChecks { pipeline }.mutate_stmt(s)
}

struct AddChecks<'p> {
    pipeline: &'p PipelineDef,
}

/// One access: the Func or input, and its coordinates.
struct Access {
    buffer: Name,
    is_input: bool,
    coordinates: Vec<Expr>,
}

impl Mutator for AddChecks<'_> {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let s = mutate_stmt_children(self, s);
        let mut accesses = vec![];
        for e in own_exprs(&s) {
            collect_accesses(e, &mut vec![], &mut accesses);
        }
        if let StmtNode::Provide { func, args, .. } = s.node() {
            accesses.push(Access { buffer: func.clone(), is_input: false, coordinates: args.clone() });
        }
        let mut checks: Vec<Stmt> = vec![];
        for a in &accesses {
            for (d, c) in a.coordinates.iter().enumerate() {
                let check = self.check(a, d, c);
                if !checks.contains(&check) {
                    checks.push(check);
                }
            }
        }
        if checks.is_empty() {
            return s;
        }
        checks.push(s);
        Stmt::block(checks)
    }
}

impl AddChecks<'_> {
    fn check(&self, a: &Access, d: usize, c: &Expr) -> Stmt {
        let (min, extent) = (Expr::ivar(buffer_vars::min(&a.buffer, d)), Expr::ivar(buffer_vars::extent(&a.buffer, d)));
        let inside = min.clone().le(c.clone()) & c.clone().lt(min + extent);
        let name = &a.buffer;
        let what = if a.is_input {
            format!("input {name}")
        } else if self.pipeline.is_output(name) {
            format!("output Func {name}")
        } else {
            format!("Func {name}")
        };
        let dim = match self.pipeline.func(name).and_then(|f| f.args.get(d)) {
            Some(arg) => format!("dimension {d} ({arg})"),
            None => format!("dimension {d}"),
        };
        let message = format!("access check: {what} is accessed outside its storage in {dim}: coordinate {c} is not in [{name}.min.{d}, {name}.min.{d} + {name}.extent.{d})");
        Stmt::assert(inside, message)
    }
}

/// The expressions a statement evaluates itself (not those of its child
/// statements).
fn own_exprs(s: &Stmt) -> Vec<&Expr> {
    match s.node() {
        StmtNode::For { min, extent, .. } => vec![min, extent],
        StmtNode::LetStmt { value, .. } => vec![value],
        StmtNode::IfThenElse { cond, .. } | StmtNode::Assert { cond, .. } => vec![cond],
        StmtNode::Realize { bounds, .. } => bounds.iter().flat_map(|r| [&r.min, &r.extent]).collect(),
        StmtNode::Provide { args, values, .. } => args.iter().chain(values).collect(),
        StmtNode::Allocate { size, .. } => vec![size],
        StmtNode::Store { index, value, .. } => vec![index, value],
        StmtNode::Block { .. } | StmtNode::ProducerConsumer { .. } | StmtNode::NoOp => vec![],
    }
}

/// The Func and input accesses of `e`, inner ones first, with the
/// expression lets they sit under (`lets`, outermost first) substituted
/// into their coordinates.
fn collect_accesses(e: &Expr, lets: &mut Vec<(Name, Expr)>, out: &mut Vec<Access>) {
    match e.node() {
        ExprNode::Let { name, value, body } => {
            collect_accesses(value, lets, out);
            lets.push((name.clone(), value.clone()));
            collect_accesses(body, lets, out);
            lets.pop();
        }
        ExprNode::Call { target: target @ (CallTarget::Func(r) | CallTarget::Input(r)), args, .. } => {
            args.iter().for_each(|a| collect_accesses(a, lets, out));
            let coordinates = args.iter().map(|a| lets.iter().rev().fold(a.clone(), |c, (n, v)| substitute(n, v, &c))).collect();
            out.push(Access { buffer: r.name.clone(), is_input: matches!(target, CallTarget::Input(_)), coordinates });
        }
        _ => crate::ir::visit::expr_children(e).iter().for_each(|c| collect_accesses(c, lets, out)),
    }
}
