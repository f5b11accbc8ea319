//! Inlining: substitutes the definitions of inlined Funcs into their
//! callers, and turns params into plain variables; a call of a Func whose
//! values are bounded (`analysis::value_bounds`) is wrapped in a promise of
//! those bounds, so that bounds inference can bound an index computed from
//! it.
//!
//! Requires: a validated [`Plan`]. Guarantees: the returned definitions call
//! only realized Funcs and inputs, and contain no `Param` or `RVar` nodes;
//! none is larger than [`MAX_INLINED_NODES`] (a chain of inlined stencils
//! grows as the product of their footprints: past the limit, lowering
//! fails with an error naming the Func to compute instead of spending
//! minutes on an expression no machine would run well).

use super::validate::Plan;
use crate::analysis::value_bounds::ValueBounds;
use crate::error::{LowerError, UserError};
use crate::ir::expr::{CallTarget, Expr, ExprNode, Name};
use crate::ir::visit::{mutate_expr_children, substitute_map, Mutator};
use crate::lang::pipeline::{FuncDef, PipelineDef, UpdateDef};
use std::collections::HashMap;
use std::sync::Arc;

struct Inliner<'a> {
    inlined: &'a HashMap<Name, FuncDef>,
    value_bounds: &'a ValueBounds,
}

impl Mutator for Inliner<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e = mutate_expr_children(self, e);
        match e.node() {
            ExprNode::Param { name, ty, .. } => Expr::var(name.clone(), *ty),
            ExprNode::Call { target: CallTarget::Func(r), args, .. } => {
                let value = match self.inlined.get(&r.name) {
                    Some(def) => {
                        let map: HashMap<Name, Expr> = def.args.iter().cloned().zip(args.iter().cloned()).collect();
                        substitute_map(&map, &def.values[r.value_index])
                    }
                    None => e.clone(),
                };
                self.value_bounds.promise(&r.name, r.value_index, value)
            }
            _ => e,
        }
    }
}

/// The most expression nodes (counted as a tree) a definition may have
/// after inlining: as many as one may have before.
pub const MAX_INLINED_NODES: usize = crate::lang::pipeline::MAX_DEFINITION_NODES;

/// The expression nodes of `f`'s definitions, counted as a tree.
fn definition_nodes(f: &FuncDef) -> usize {
    let nodes = |exprs: &[Expr]| exprs.iter().map(crate::ir::visit::node_count).sum::<usize>();
    nodes(&f.values) + f.updates.iter().map(|u| nodes(&u.args) + nodes(&u.values)).sum::<usize>()
}

/// The realized Funcs of `p` (producers first) with every inlined Func
/// substituted into their definitions.
pub fn inline_funcs(p: &PipelineDef, plan: &Plan) -> Result<Vec<FuncDef>, LowerError> {
    let mut inlined: HashMap<Name, FuncDef> = HashMap::new();
    let mut sizes: HashMap<Name, usize> = HashMap::new();
    let mut realized = vec![];
    let value_bounds = ValueBounds::of(p);
    for f in &p.funcs {
        let mut m = Inliner { inlined: &inlined, value_bounds: &value_bounds };
        let mut def = f.clone();
        def.values = def.values.iter().map(|v| m.mutate_expr(v)).collect();
        def.updates = def
            .updates
            .iter()
            .map(|u| UpdateDef {
                args: u.args.iter().map(|a| m.mutate_expr(a)).collect(),
                values: u.values.iter().map(|v| m.mutate_expr(v)).collect(),
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
        let nodes = definition_nodes(&def);
        if nodes > MAX_INLINED_NODES {
            // The largest inlined Func it calls is the one to compute.
            let callees = (0..f.stages()).flat_map(|stage| f.stage_callees(stage));
            let inlined_callee = callees.filter_map(|c| sizes.get(&c).map(|&n| (n, c))).max().map(|(_, c)| c.to_string());
            return Err(UserError::InlinedTooLarge {
                func: f.name.to_string(),
                inlined: inlined_callee.unwrap_or_else(|| "its producers".into()),
                nodes,
                limit: MAX_INLINED_NODES,
            }
            .into());
        }
        if plan.get(&f.name).inline {
            sizes.insert(def.name.clone(), nodes);
            inlined.insert(def.name.clone(), def);
        } else {
            realized.push(def);
        }
    }
    Ok(realized)
}
