//! Expands f32 `exp` calls, and the f32 `log` and `pow` calls of
//! vectorized loops, into plain nodes ([`crate::ir::exp`],
//! [`crate::ir::log`]): the C library's `expf`, `logf` and `powf` are
//! scalar, so a vectorized loop calling them calls them lane by lane, while
//! an expansion is a few dozen vector operations. A `log` or `pow` outside
//! a vectorized loop is left as a call: code generation calls this
//! process's scalar form of the same steps there
//! ([`crate::ir::log::log_f32`], [`crate::ir::log::pow_f32`]), which
//! branches where the expansion computes every case and selects (measured
//! on linear_blur's unvectorized schedule: 544 ms against 796 inlined);
//! `exp`'s expansion has no division and few cases, and stays inline. The
//! evaluators compute the same steps ([`crate::ir::exp::exp_f32`] and the
//! two above), so the results are the same bits everywhere. GPU kernels
//! (block loops) have no such process to call: inside them every f32
//! `log` and `pow` is expanded too.
//!
//! Requires: a flattened statement whose expressions are still scalar
//! (before vectorization), simplified (constants already folded).
//! Guarantees: no f32 `exp` call remains, and no f32 `log` or `pow` call
//! inside a vectorized loop or a GPU kernel; each is replaced by its
//! expansion.

use crate::ir::exp::expansion;
use crate::ir::expr::{CallTarget, Expr, ExprNode, MathFn};
use crate::ir::log::{log_expansion, pow_expansion};
use crate::ir::stmt::{ForKind, Stmt, StmtNode};
use crate::ir::types::Type;
use crate::ir::visit::{mutate_expr_children, mutate_stmt_children, Mutator};
use std::collections::HashMap;

/// The rewrite, memoized by node and by whether it lies in a vectorized
/// loop (a subtree shared in the statement is rewritten once per context
/// and stays shared; each key is kept alive beside its rewrite, so no
/// address is reused while it is a key).
#[derive(Default)]
struct Expand {
    vectorized: bool,
    done: HashMap<(usize, bool), (Expr, Expr)>,
}

impl Mutator for Expand {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let key = (e.address(), self.vectorized);
        if let Some((_, done)) = self.done.get(&key) {
            return done.clone();
        }
        let out = mutate_expr_children(self, e);
        let out = match out.node() {
            ExprNode::Call { target: CallTarget::Math(f), args, ty } if *ty == Type::f32() => match f {
                MathFn::Exp => expansion(args[0].clone()),
                MathFn::Log if self.vectorized => log_expansion(args[0].clone()),
                MathFn::Pow if self.vectorized => pow_expansion(args[0].clone(), args[1].clone()),
                _ => out.clone(),
            },
            _ => out,
        };
        self.done.insert(key, (e.clone(), out.clone()));
        out
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let outer = self.vectorized;
        self.vectorized |= matches!(s.node(), StmtNode::For { kind: ForKind::Vectorized | ForKind::GpuBlock, .. });
        let out = mutate_stmt_children(self, s);
        self.vectorized = outer;
        out
    }
}

/// `s` with its f32 `exp` calls and the f32 `log` and `pow` calls of its
/// vectorized loops expanded.
pub fn expand_math(s: &Stmt) -> Stmt {
    Expand::default().mutate_stmt(s)
}
