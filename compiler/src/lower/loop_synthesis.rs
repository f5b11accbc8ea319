//! Loop-nest synthesis: builds each realized Func's loop nest from its
//! resolved stages and injects it at its compute level, with a `Realize` at
//! its store level.
//!
//! Requires: inlined definitions (see [`super::inline`]) and a validated plan.
//! Guarantees: one `ProducerConsumer` node per realized Func, placed at the
//! start of the body of its compute loop (or at the root), producers before
//! their consumers; one empty-bounded `Realize` per non-output Func at its
//! store level (bounds inference fills the bounds). Loop bounds refer to the
//! symbolic names of [`super::names`], defined later by bounds inference.

use super::names::{stage_extent, stage_max, stage_min, stage_var};
use super::validate::{FuncPlan, Plan};
use crate::expr::{Expr, Name};
use crate::ops::CompareExt;
use crate::pipeline::FuncDef;
use crate::schedule::{LoopLevel, ResolvedStage, SplitRecord, TailStrategy};
use crate::stmt::{Stmt, StmtNode};
use crate::visit::{mutate_stmt_children, substitute_map, Mutator};
use std::collections::HashMap;

fn v(name: String) -> Expr {
    Expr::ivar(name)
}

/// The loop nest computing one stage of `f`.
fn stage_nest(f: &FuncDef, stage: usize, r: &ResolvedStage) -> Stmt {
    let name = &*f.name;
    let q = |var: &str| stage_var(name, stage, var);
    let qmin = |var: &str| v(stage_min(name, stage, var));
    let qext = |var: &str| v(stage_extent(name, stage, var));

    // Definition variables become the stage's qualified loop variables.
    let mut rename: HashMap<Name, Expr> = HashMap::new();
    for d in &r.initial {
        rename.insert(d.name.clone(), v(q(&d.name)));
    }
    let (args, value, rdom) = if stage == 0 {
        (f.args.iter().map(|a| Expr::ivar(a.clone())).collect::<Vec<_>>(), f.value.clone(), None)
    } else {
        let u = &f.updates[stage - 1];
        (u.args.clone(), u.value.clone(), u.rdom.clone())
    };
    let args: Vec<Expr> = args.iter().map(|a| substitute_map(&rename, a)).collect();
    let value = substitute_map(&rename, &value);
    let mut body = Stmt::provide(f.name.clone(), args, value);
    if let Some(pred) = rdom.as_ref().and_then(|r| r.predicate.as_ref()) {
        body = Stmt::if_then(substitute_map(&rename, pred), body);
    }
    // Guards of guard_with_if splits, innermost around the provide.
    for s in r.splits.iter() {
        if let SplitRecord::Split { old, tail: TailStrategy::GuardWithIf, .. } = s {
            body = Stmt::if_then(v(q(old)).lt(qmin(old) + qext(old)), body);
        }
    }
    // Values of split and fused variables, from the loop variables.
    for s in r.splits.iter().rev() {
        body = match s {
            SplitRecord::Split { old, outer, inner, factor, tail } => {
                let f = Expr::i32(*factor);
                let base = match tail {
                    TailStrategy::ShiftInwards => Expr::min(v(q(outer)) * f.clone(), qext(old) - f),
                    _ => v(q(outer)) * f,
                };
                Stmt::let_stmt(q(old), qmin(old) + base + v(q(inner)), body)
            }
            SplitRecord::Fuse { inner, outer, fused } => {
                let inner_val = qmin(inner) + v(q(fused)) % qext(inner);
                let outer_val = qmin(outer) + v(q(fused)) / qext(inner);
                Stmt::let_stmt(q(inner), inner_val, Stmt::let_stmt(q(outer), outer_val, body))
            }
        };
    }
    for d in &r.dims {
        body = Stmt::for_loop(q(&d.name), qmin(&d.name), qext(&d.name), d.kind, body);
    }
    // Loop bounds: initial dimensions from their min/max, derived ones from splits.
    let mut lets: Vec<(String, Expr)> = vec![];
    if let Some(rd) = &rdom {
        for d in &rd.dims {
            lets.push((stage_min(name, stage, &d.name), d.min.clone()));
            lets.push((stage_max(name, stage, &d.name), d.min.clone() + d.extent.clone() - 1));
        }
    }
    for d in &r.initial {
        let e = v(stage_max(name, stage, &d.name)) - v(stage_min(name, stage, &d.name)) + 1;
        lets.push((stage_extent(name, stage, &d.name), e));
    }
    for s in &r.splits {
        match s {
            SplitRecord::Split { old, outer, inner, factor, .. } => {
                lets.push((stage_min(name, stage, outer), Expr::i32(0)));
                lets.push((stage_extent(name, stage, outer), (qext(old) + (*factor - 1) as i32) / (*factor as i32)));
                lets.push((stage_min(name, stage, inner), Expr::i32(0)));
                lets.push((stage_extent(name, stage, inner), Expr::i32(*factor)));
            }
            SplitRecord::Fuse { inner, outer, fused } => {
                lets.push((stage_min(name, stage, fused), Expr::i32(0)));
                lets.push((stage_extent(name, stage, fused), qext(inner) * qext(outer)));
            }
        }
    }
    for (n, e) in lets.into_iter().rev() {
        body = Stmt::let_stmt(n, e, body);
    }
    body
}

/// Every stage of `f`, in order.
pub fn produce_nest(f: &FuncDef, fp: &FuncPlan) -> Stmt {
    Stmt::block((0..f.stages()).map(|s| stage_nest(f, s, &fp.stages[s])).collect())
}

/// Wraps the body of the loop identified by `level` (or the whole statement
/// for root) with `wrap`.
fn wrap_at_level(s: &Stmt, level: &LoopLevel, wrap: &dyn Fn(Stmt) -> Stmt) -> Stmt {
    match level {
        LoopLevel::Inline | LoopLevel::Root => wrap(s.clone()),
        LoopLevel::At { func, stage, var } => {
            struct AtLoop<'a> {
                name: String,
                wrap: &'a dyn Fn(Stmt) -> Stmt,
            }
            impl Mutator for AtLoop<'_> {
                fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
                    match s.node() {
                        StmtNode::For { name, min, extent, kind, body } if **name == *self.name => {
                            Stmt::for_loop(name.clone(), min.clone(), extent.clone(), *kind, (self.wrap)(body.clone()))
                        }
                        _ => mutate_stmt_children(self, s),
                    }
                }
            }
            AtLoop { name: stage_var(func, *stage, var), wrap }.mutate_stmt(s)
        }
    }
}

/// The whole pipeline's loop nest. `funcs` are the realized Funcs,
/// producers first; `outputs` are computed in that order at the root.
pub fn synthesize(funcs: &[FuncDef], plan: &Plan, outputs: &[Name]) -> Stmt {
    let mut root = Stmt::block(
        funcs
            .iter()
            .filter(|f| outputs.contains(&f.name))
            .map(|f| Stmt::new(StmtNode::ProducerConsumer { func: f.name.clone(), produce: produce_nest(f, plan.get(&f.name)), consume: Stmt::no_op() }))
            .collect(),
    );
    for f in funcs.iter().rev().filter(|f| !outputs.contains(&f.name)) {
        let fp = plan.get(&f.name);
        let produce = produce_nest(f, fp);
        let name = f.name.clone();
        root = wrap_at_level(&root, &fp.compute, &|body| {
            Stmt::new(StmtNode::ProducerConsumer { func: name.clone(), produce: produce.clone(), consume: body })
        });
        root = wrap_at_level(&root, &fp.store, &|body| {
            Stmt::new(StmtNode::Realize { func: name.clone(), ty: f.ty, bounds: vec![], body })
        });
    }
    root
}
