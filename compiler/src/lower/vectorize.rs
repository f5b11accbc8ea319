//! Vectorization: a loop marked vectorized, of constant extent `n`, becomes
//! one vector statement in which the loop variable is `ramp(min, 1, n)`.
//!
//! Requires: flattened IR, simplified so vectorized loop extents are
//! constants. Guarantees: no vectorized `For` remains. Scalars meeting
//! vectors are broadcast; loads and stores with ramp indices become dense
//! vector accesses, other vector indices gathers and scatters; selects
//! become per-lane selects. A guard whose condition depends on the lane (the
//! tail of a `guard_with_if` split) is hoisted: if it holds for every lane
//! the vector code runs, otherwise the loop runs as scalar code. Conditions
//! that cannot be checked that way (not a conjunction of affine
//! inequalities) leave the loop scalar.

use crate::ir::expr::{CmpOp, Expr, ExprNode, Name};
use crate::ir::stmt::{ForKind, Stmt, StmtNode};
use crate::ir::visit::{expr_uses_any, mutate_expr_children, mutate_stmt_children, substitute, Mutator};
use crate::simplify::simplify;
use std::collections::HashSet;

/// Replaces the loop variable by a ramp and propagates vector types.
struct Widen {
    var: Name,
    ramp: Expr,
    lanes: u32,
    vector_vars: HashSet<Name>,
}

impl Mutator for Widen {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        match e.node() {
            ExprNode::Var { name, .. } if *name == self.var => self.ramp.clone(),
            ExprNode::Var { name, ty } if self.vector_vars.contains(name) => Expr::var(name.clone(), ty.with_lanes(self.lanes)),
            ExprNode::Let { name, value, body } => {
                let value = self.mutate_expr(value);
                let vector = value.ty().is_vector();
                if vector {
                    self.vector_vars.insert(name.clone());
                }
                let body = self.mutate_expr(body);
                if vector {
                    self.vector_vars.remove(name);
                }
                Expr::let_in(name.clone(), value, body)
            }
            _ => mutate_expr_children(self, e),
        }
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::LetStmt { name, value, body } => {
                let value = self.mutate_expr(value);
                let vector = value.ty().is_vector();
                if vector {
                    self.vector_vars.insert(name.clone());
                }
                let body = self.mutate_stmt(body);
                if vector {
                    self.vector_vars.remove(name);
                }
                Stmt::let_stmt(name.clone(), value, body)
            }
            // Lane-dependent guards were checked for all lanes before entering.
            StmtNode::IfThenElse { cond, then_case, .. } if self.depends_on_lane(cond) => self.mutate_stmt(then_case),
            _ => mutate_stmt_children(self, s),
        }
    }
}

impl Widen {
    fn depends_on_lane(&self, e: &Expr) -> bool {
        let mut names = self.vector_vars.clone();
        names.insert(self.var.clone());
        expr_uses_any(e, &names)
    }
}

/// A lane-dependent condition found in a loop body, with the lets it sits
/// under substituted, so that it is a function of the loop variable.
fn lane_conditions(body: &Stmt, var: &Name) -> Option<Vec<Expr>> {
    fn walk(s: &Stmt, var: &Name, lets: &mut Vec<(Name, Expr)>, out: &mut Vec<Expr>) -> bool {
        match s.node() {
            StmtNode::LetStmt { name, value, body } => {
                lets.push((name.clone(), value.clone()));
                let ok = walk(body, var, lets, out);
                lets.pop();
                ok
            }
            StmtNode::IfThenElse { cond, then_case, else_case } => {
                let mut c = cond.clone();
                for (n, v) in lets.iter().rev() {
                    c = substitute(n, v, &c);
                }
                if crate::ir::visit::expr_uses_var(&c, var) {
                    if else_case.is_some() {
                        return false;
                    }
                    out.push(c);
                }
                walk(then_case, var, lets, out) && else_case.as_ref().is_none_or(|e| walk(e, var, lets, out))
            }
            StmtNode::Block { stmts } => stmts.iter().all(|x| walk(x, var, lets, out)),
            StmtNode::Store { .. } | StmtNode::NoOp | StmtNode::Assert { .. } => true,
            _ => false,
        }
    }
    let mut out = vec![];
    walk(body, var, &mut vec![], &mut out).then_some(out)
}

/// Splits a condition into affine inequalities in `var`, if it is a conjunction of them.
fn affine_inequalities(cond: &Expr, var: &Name, out: &mut Vec<Expr>) -> bool {
    match cond.node() {
        ExprNode::And { a, b } => affine_inequalities(a, var, out) && affine_inequalities(b, var, out),
        ExprNode::Cmp { op: CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge, a, b } if a.ty().is_int() => {
            let d = a.clone() - b.clone();
            let step = simplify(&(substitute(var, &(Expr::ivar(var.clone()) + 1), &d) - d.clone()));
            if step.as_int().is_some() {
                out.push(cond.clone());
                true
            } else {
                false
            }
        }
        _ => false,
    }
}

struct Vectorize;

impl Mutator for Vectorize {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let s = mutate_stmt_children(self, s);
        let StmtNode::For { name, min, extent, kind: ForKind::Vectorized, body } = s.node() else {
            return s;
        };
        let serial = || Stmt::for_loop(name.clone(), min.clone(), extent.clone(), ForKind::Serial, body.clone());
        let Some(lanes) = simplify(extent).as_int().filter(|n| (1..=1 << 16).contains(n)) else {
            tracing::warn!(loop_var = %name, "vectorized loop has no constant extent; running it as a scalar loop");
            return serial();
        };
        let Some(conds) = lane_conditions(body, name) else {
            return serial();
        };
        let mut inequalities = vec![];
        if !conds.iter().all(|c| affine_inequalities(c, name, &mut inequalities)) {
            return serial();
        }
        let ramp = Expr::ramp(min.clone(), Expr::i32(1), lanes as u32);
        let vector_body = Widen { var: name.clone(), ramp, lanes: lanes as u32, vector_vars: HashSet::new() }.mutate_stmt(body);
        if inequalities.is_empty() {
            return vector_body;
        }
        let first = min.clone();
        let last = min.clone() + Expr::i32(lanes - 1);
        let all_lanes = inequalities
            .iter()
            .flat_map(|c| [substitute(name, &first, c), substitute(name, &last, c)])
            .reduce(Expr::and)
            .expect("at least one inequality");
        Stmt::if_then_else(all_lanes, vector_body, serial())
    }
}

/// Vectorizes every vectorized loop of `s`.
pub fn vectorize(s: &Stmt) -> Stmt {
    Vectorize.mutate_stmt(s)
}
