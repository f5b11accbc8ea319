//! Bounds from values: the interval of the values a pure Func takes,
//! from interval analysis of its definition with its variables ranging
//! everywhere (a `clamp` bounds it; so do a small integer type or a call
//! of another Func whose values are bounded), and the calls of such Funcs
//! wrapped in `promise_clamped(call, lo, hi)`, so that an index computed
//! from a Func's value (`g(x) = clamp(h(x), 0, 9); out(x) = f(g(x))`) is
//! bounded wherever it is analysed. The promise holds by construction, and
//! lowering strips it after the passes that read bounds.

use crate::analysis::interval::{bounds_of, Interval, Scope};
use crate::ir::expr::{CallTarget, Expr, ExprNode, MathFn, Name};
use crate::ir::visit::{mutate_expr_children, FreeVars, Mutator, Visitor};
use crate::lang::pipeline::PipelineDef;
use std::collections::{HashMap, HashSet};

/// The value intervals of the pure Funcs of a pipeline whose values are
/// bounded by expressions in its params only (as variables named after
/// them, as lowering and the featurizer name them).
#[derive(Clone, Debug, Default)]
pub struct ValueBounds {
    /// Keyed by Func and value index (several for a Tuple Func).
    bounds: HashMap<(Name, usize), (Expr, Expr)>,
}

impl ValueBounds {
    /// The bounds of every pure Func of `p` (one without updates) whose
    /// definition's values are bounded, producers first, so that a Func
    /// calling a bounded one is bounded through it.
    pub fn of(p: &PipelineDef) -> ValueBounds {
        let params: HashSet<&str> = p.params.iter().map(|q| &*q.name).collect();
        let mut vb = ValueBounds::default();
        for f in p.funcs.iter().filter(|f| f.updates.is_empty()) {
            let mut scope = Scope::default();
            for a in &f.args {
                scope.push(a.clone(), Interval::everything());
            }
            for (index, value) in f.values.iter().enumerate().filter(|(_, v)| !v.ty().is_bool()) {
                let Interval { min: Some(lo), max: Some(hi) } = bounds_of(&vb.wrap(value), &scope) else {
                    continue;
                };
                let mut free = FreeVars::default();
                free.visit_expr(&lo);
                free.visit_expr(&hi);
                let in_params = free.names.iter().all(|n| params.contains(&**n));
                if in_params && !lo.reads_memory() && !hi.reads_memory() {
                    vb.bounds.insert((f.name.clone(), index), (ParamsAsVars.mutate_expr(&lo), ParamsAsVars.mutate_expr(&hi)));
                }
            }
        }
        vb
    }

    /// `value`, a call of value `index` of Func `name` (or what replaces
    /// it), wrapped in `promise_clamped(value, lo, hi)` if that value is
    /// bounded.
    pub fn promise(&self, name: &Name, index: usize, value: Expr) -> Expr {
        match self.bounds.get(&(name.clone(), index)) {
            Some((lo, hi)) => Expr::math(MathFn::PromiseClamped, vec![value, lo.clone(), hi.clone()]),
            None => value,
        }
    }

    /// `e` with every call of a bounded Func wrapped in
    /// `promise_clamped(call, lo, hi)`.
    pub fn wrap(&self, e: &Expr) -> Expr {
        if self.bounds.is_empty() {
            return e.clone();
        }
        Wrap(self).mutate_expr(e)
    }
}

/// Params as the variables lowering makes of them (interval analysis keeps
/// a param that a bound takes as it is).
struct ParamsAsVars;

impl Mutator for ParamsAsVars {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        match e.node() {
            ExprNode::Param { name, ty, .. } => Expr::var(name.clone(), *ty),
            _ => mutate_expr_children(self, e),
        }
    }
}

struct Wrap<'a>(&'a ValueBounds);

impl Mutator for Wrap<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let inner = mutate_expr_children(self, e);
        match e.node() {
            ExprNode::Call { target: CallTarget::Func(r), .. } => self.0.promise(&r.name, r.value_index, inner),
            _ => inner,
        }
    }
}
