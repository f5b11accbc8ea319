//! Inlining: substitutes the definitions of inlined Funcs into their
//! callers, and turns params into plain variables.
//!
//! Requires: a validated [`Plan`]. Guarantees: the returned definitions call
//! only realized Funcs and inputs, and contain no `Param` or `RVar` nodes.

use super::validate::Plan;
use crate::expr::{CallTarget, Expr, ExprNode, Name};
use crate::pipeline::{FuncDef, PipelineDef, UpdateDef};
use crate::visit::{mutate_expr_children, substitute_map, Mutator};
use std::collections::HashMap;
use std::sync::Arc;

struct Inliner<'a> {
    inlined: &'a HashMap<Name, FuncDef>,
}

impl Mutator for Inliner<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e = mutate_expr_children(self, e);
        match e.node() {
            ExprNode::Param { name, ty } => Expr::var(name.clone(), *ty),
            ExprNode::Call { target: CallTarget::Func(r), args, .. } => match self.inlined.get(&r.name) {
                Some(def) => {
                    let map: HashMap<Name, Expr> = def.args.iter().cloned().zip(args.iter().cloned()).collect();
                    substitute_map(&map, &def.value)
                }
                None => e,
            },
            _ => e,
        }
    }
}

/// The realized Funcs of `p` (producers first) with every inlined Func
/// substituted into their definitions.
pub fn inline_funcs(p: &PipelineDef, plan: &Plan) -> Vec<FuncDef> {
    let mut inlined: HashMap<Name, FuncDef> = HashMap::new();
    let mut realized = vec![];
    for f in &p.funcs {
        let mut m = Inliner { inlined: &inlined };
        let mut def = f.clone();
        def.value = m.mutate_expr(&def.value);
        def.updates = def
            .updates
            .iter()
            .map(|u| UpdateDef {
                args: u.args.iter().map(|a| m.mutate_expr(a)).collect(),
                value: m.mutate_expr(&u.value),
                rdom: u.rdom.as_ref().map(|r| {
                    let mut r = (**r).clone();
                    for d in &mut r.dims {
                        d.min = m.mutate_expr(&d.min);
                        d.extent = m.mutate_expr(&d.extent);
                    }
                    r.predicate = r.predicate.as_ref().map(|pr| m.mutate_expr(pr));
                    Arc::new(r)
                }),
            })
            .collect();
        if plan.get(&f.name).inline {
            inlined.insert(def.name.clone(), def);
        } else {
            realized.push(def);
        }
    }
    realized
}
