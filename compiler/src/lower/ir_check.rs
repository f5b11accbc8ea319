//! The IR checker: the statement after a lowering pass must be well formed
//! for the stage lowering has reached. The driver runs it after every pass
//! in checked mode (the differential tests) and in debug builds.
//!
//! Checked everywhere: no vector of vectors (a ramp or broadcast of a
//! vector), the operands of arithmetic and comparisons of one type, a
//! select's condition scalar or as wide as its values. Once bounds are
//! inferred: every variable is bound (by an enclosing let or loop, as a
//! field of an input or output buffer or a param, or, inside a Func's
//! realization, as a field of its buffer). Once flattened: no
//! `Realize`, `Provide` or Func or input call remains. Once vectorized: no
//! vectorized loop remains.

use crate::ir::expr::{CallTarget, Expr, ExprNode, Name};
use crate::ir::stmt::{ForKind, Stmt, StmtNode};
use crate::ir::visit::{walk_expr, walk_stmt, Visitor};
use crate::lang::pipeline::{buffer_vars, PipelineDef};
use std::collections::HashSet;

/// How far lowering has got: what the checker may expect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// Loop nests built; bounds are still names to be defined.
    Synthesized,
    /// Every bound defined.
    Bounded,
    /// Storage flattened to 1-D buffers.
    Flattened,
    /// Vector loops turned into vector code.
    Vectorized,
}

/// The first problem of `s` at `stage`, if any.
pub fn check(s: &Stmt, stage: Stage, p: &PipelineDef) -> Option<String> {
    let mut external: HashSet<Name> = p.params.iter().map(|prm| prm.name.clone()).collect();
    let buffers = p.inputs.iter().map(|i| (i.name.clone(), i.dims)).chain(p.outputs.iter().filter_map(|o| p.func(o)).flat_map(|f| {
        let values = f.buffers().into_iter().filter(|_| f.is_tuple()).map(|(b, _)| (b, f.dims()));
        std::iter::once((f.name.clone(), f.dims())).chain(values)
    }));
    for (name, dims) in buffers {
        for d in 0..dims {
            for field in [buffer_vars::min(&name, d), buffer_vars::extent(&name, d), buffer_vars::stride(&name, d)] {
                external.insert(field.into());
            }
        }
    }
    let mut c = Checker { stage, bound: vec![], external, problem: None };
    c.visit_stmt(s);
    c.problem
}

struct Checker {
    stage: Stage,
    /// Names bound by enclosing lets and loops, innermost last.
    bound: Vec<Name>,
    external: HashSet<Name>,
    problem: Option<String>,
}

impl Checker {
    fn fail(&mut self, problem: String) {
        if self.problem.is_none() {
            self.problem = Some(problem);
        }
    }

    fn with_bound(&mut self, name: &Name, f: impl FnOnce(&mut Self)) {
        self.bound.push(name.clone());
        f(self);
        self.bound.pop();
    }
}

impl Visitor for Checker {
    fn visit_expr(&mut self, e: &Expr) {
        if self.problem.is_some() {
            return;
        }
        match e.node() {
            ExprNode::Var { name, .. } if self.stage >= Stage::Bounded && !self.bound.contains(name) && !self.external.contains(name) => {
                self.fail(format!("variable {name} is not bound"))
            }
            ExprNode::Binary { a, b, .. } | ExprNode::Cmp { a, b, .. } if a.ty() != b.ty() => {
                self.fail(format!("operands of different types ({} and {}) in {e}", a.ty(), b.ty()))
            }
            ExprNode::Select { cond, t, .. } if cond.ty().lanes != 1 && cond.ty().lanes != t.ty().lanes => {
                self.fail(format!("a select of {} lanes has a condition of {}: {e}", t.ty().lanes, cond.ty().lanes))
            }
            ExprNode::Ramp { base: v, .. } | ExprNode::Broadcast { value: v, .. } if v.ty().is_vector() => {
                self.fail(format!("a vector of vectors: {e}"))
            }
            ExprNode::Call { target: CallTarget::Func(r) | CallTarget::Input(r), .. } if self.stage >= Stage::Flattened => {
                self.fail(format!("a call to {} after flattening", r.name))
            }
            ExprNode::Let { name, value, body } => {
                self.visit_expr(value);
                let body = body.clone();
                self.with_bound(name, |c| c.visit_expr(&body));
                return;
            }
            _ => {}
        }
        walk_expr(self, e)
    }

    fn visit_stmt(&mut self, s: &Stmt) {
        if self.problem.is_some() {
            return;
        }
        match s.node() {
            StmtNode::LetStmt { name, value, body } => {
                self.visit_expr(value);
                self.with_bound(name, |c| c.visit_stmt(body));
            }
            StmtNode::For { name, min, extent, kind, body } => {
                if *kind == ForKind::Vectorized && self.stage >= Stage::Vectorized {
                    self.fail(format!("vectorized loop {name} after vectorization"));
                }
                self.visit_expr(min);
                self.visit_expr(extent);
                self.with_bound(name, |c| c.visit_stmt(body));
            }
            StmtNode::Realize { func, .. } | StmtNode::Provide { func, .. } if self.stage >= Stage::Flattened => {
                self.fail(format!("multi-dimensional storage of {func} after flattening"))
            }
            // Inside its realization, a Func's buffer fields are bound (the
            // access checks name them; flattening defines them there).
            StmtNode::Realize { func, bounds, body, .. } => {
                for r in bounds {
                    self.visit_expr(&r.min);
                    self.visit_expr(&r.extent);
                }
                let fields: Vec<Name> = (0..bounds.len())
                    .flat_map(|d| [buffer_vars::min(func, d), buffer_vars::extent(func, d), buffer_vars::stride(func, d)])
                    .map(Name::from)
                    .collect();
                let depth = self.bound.len();
                self.bound.extend(fields);
                self.visit_stmt(body);
                self.bound.truncate(depth);
            }
            _ => walk_stmt(self, s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::expr::BinOp;
    use crate::ir::types::Type;

    fn empty_pipeline() -> PipelineDef {
        PipelineDef { funcs: vec![], inputs: vec![], params: vec![], outputs: vec![] }
    }

    #[test]
    fn an_unbound_variable_is_found_once_bounds_are_inferred() {
        let s = Stmt::store("out", Expr::ivar("i"), Expr::ivar("nowhere"));
        let looped = Stmt::for_loop("i", Expr::i32(0), Expr::i32(4), ForKind::Serial, s.clone());
        let p = empty_pipeline();
        assert_eq!(check(&looped, Stage::Synthesized, &p), None, "names are still to be defined");
        assert_eq!(check(&looped, Stage::Bounded, &p), Some("variable nowhere is not bound".into()));
        let bound = Stmt::let_stmt("nowhere", Expr::i32(1), looped);
        assert_eq!(check(&bound, Stage::Vectorized, &p), None);
    }

    #[test]
    fn malformed_nodes_are_found() {
        let p = empty_pipeline();
        let mixed = Expr::new(ExprNode::Binary { op: BinOp::Add, a: Expr::i32(1), b: Expr::float(1.0, Type::f32()) });
        let problem = check(&Stmt::store("out", Expr::i32(0), mixed), Stage::Synthesized, &p).expect("a problem");
        assert!(problem.contains("operands of different types"), "{problem}");
        let provide = Stmt::provide("f", vec![Expr::i32(0)], vec![Expr::i32(1)]);
        assert_eq!(check(&provide, Stage::Bounded, &p), None);
        assert!(check(&provide, Stage::Flattened, &p).is_some_and(|m| m.contains("after flattening")));
        let vector_loop = Stmt::for_loop("v", Expr::i32(0), Expr::i32(8), ForKind::Vectorized, Stmt::no_op());
        assert!(check(&vector_loop, Stage::Vectorized, &p).is_some_and(|m| m.contains("after vectorization")));
    }
}
