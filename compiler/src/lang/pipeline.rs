//! The algorithm as plain data: every Func's definitions, the inputs, the
//! scalar params and the outputs, in producer-before-consumer order.
//!
//! A [`PipelineDef`] is what every later stage consumes (schedule
//! validation, lowering, the reference evaluator, the featurizer). It holds no
//! handles: Funcs are named, reduction variables are plain `Var`s named after
//! their RDom dimension, and params are `Param` nodes.

use crate::ir::expr::{CallTarget, Expr, ExprNode, Name, RDomDef};
use crate::ir::types::{ScalarType, Type};
use crate::ir::visit::{walk_expr, Visitor};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::Arc;

/// An estimate of one dimension's region: the autoscheduler plans for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Estimate {
    /// The first coordinate.
    pub min: i64,
    /// The number of coordinates.
    pub extent: i64,
}

/// One update definition: `func(args) = values`, run over `rdom` (if any)
/// in lexicographic order with its first dimension innermost. A Tuple
/// Func's update gives every value, each computed from the values before
/// the update (all are read before any is written).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UpdateDef {
    /// The coordinates written, one per dimension of the Func (reduction
    /// variables as plain `Var`s).
    pub args: Vec<Expr>,
    /// The values written, one per value of the Func.
    pub values: Vec<Expr>,
    /// The reduction domain the update runs over; `None` for a single run.
    pub rdom: Option<Arc<RDomDef>>,
}

impl UpdateDef {
    /// Names of the pure variables this update leaves free: the Func's
    /// argument names that appear unadorned at their own position.
    pub fn pure_vars(&self, func_args: &[Name]) -> Vec<Name> {
        func_args.iter().zip(&self.args).filter(|(name, a)| a.as_var() == Some(*name)).map(|(name, _)| name.clone()).collect()
    }
}

/// One Func of the pipeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FuncDef {
    /// The Func's name.
    pub name: Name,
    /// Names of the pure variables, outermost storage dimension last.
    pub args: Vec<Name>,
    /// The type of each value: one for an ordinary Func, several for a
    /// Tuple Func.
    pub types: Vec<Type>,
    /// The pure (initial) definition's values, over `args`, one per type.
    pub values: Vec<Expr>,
    /// The update definitions, in the order they run.
    pub updates: Vec<UpdateDef>,
    /// Per-dimension estimates (used for outputs).
    pub estimates: Vec<Option<Estimate>>,
}

impl FuncDef {
    /// The number of dimensions (of pure variables).
    pub fn dims(&self) -> usize {
        self.args.len()
    }

    /// Its pure definition as text, `f(x, y) = value` (values in
    /// parentheses for a Tuple Func).
    pub fn definition_text(&self) -> String {
        let args: Vec<&str> = self.args.iter().map(|a| &**a).collect();
        format!("{}({}) = {}", self.name, args.join(", "), values_text(&self.values))
    }

    /// Whether it has several values (a Tuple Func).
    pub fn is_tuple(&self) -> bool {
        self.types.len() > 1
    }

    /// The buffer holding each value, with its element type: the Func's own
    /// name for an ordinary Func, `f.0`, `f.1`, ... for a Tuple Func (its
    /// values share the bounds and strides named after `f`).
    pub fn buffers(&self) -> Vec<(Name, Type)> {
        self.types.iter().enumerate().map(|(i, t)| (value_buffer(&self.name, i, self.types.len()), *t)).collect()
    }

    /// Number of stages: the pure definition plus the updates.
    pub fn stages(&self) -> usize {
        1 + self.updates.len()
    }

    /// The Funcs stage `stage` calls directly, other than this Func itself
    /// (the edges of the pipeline's DAG, per stage).
    pub fn stage_callees(&self, stage: usize) -> BTreeSet<Name> {
        #[derive(Default)]
        struct Callees(BTreeSet<Name>);
        impl Visitor for Callees {
            fn visit_expr(&mut self, e: &Expr) {
                if let ExprNode::Call { target: CallTarget::Func(r), .. } = e.node() {
                    self.0.insert(r.name.clone());
                }
                walk_expr(self, e)
            }
        }
        let mut c = Callees::default();
        if stage == 0 {
            self.values.iter().for_each(|v| c.visit_expr(v));
        } else {
            let u = &self.updates[stage - 1];
            u.args.iter().for_each(|a| c.visit_expr(a));
            u.values.iter().for_each(|v| c.visit_expr(v));
            if let Some(r) = &u.rdom {
                for d in &r.dims {
                    c.visit_expr(&d.min);
                    c.visit_expr(&d.extent);
                }
                if let Some(p) = &r.predicate {
                    c.visit_expr(p);
                }
            }
        }
        c.0.remove(&self.name);
        c.0
    }
}

/// A typed N-dimensional input buffer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InputDef {
    /// The input's name.
    pub name: Name,
    /// The element type.
    pub ty: ScalarType,
    /// The number of dimensions.
    pub dims: usize,
    /// Per-dimension estimates of the region the pipeline reads.
    pub estimates: Vec<Option<Estimate>>,
}

/// A scalar parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParamDef {
    /// The param's name.
    pub name: Name,
    /// The param's type.
    pub ty: Type,
    /// An estimate of its value, for the autoscheduler.
    pub estimate: Option<f64>,
}

/// The dense id of a Func: its index in [`PipelineDef::funcs`] (so producers
/// have smaller ids than their consumers). Analyses index arrays by it
/// instead of hashing names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FuncId(pub u32);

impl FuncId {
    /// The index into [`PipelineDef::funcs`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One stage of one Func: 0 is the pure definition, `k` the `k`-th update.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct StageId {
    /// The Func.
    pub func: FuncId,
    /// The stage: 0 for the pure definition, `k` for the `k`-th update.
    pub stage: u32,
}

/// A whole pipeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PipelineDef {
    /// Every Func, producers before consumers (a topological order that is
    /// deterministic for a given set of definitions).
    pub funcs: Vec<FuncDef>,
    /// The input buffers the Funcs read.
    pub inputs: Vec<InputDef>,
    /// The scalar params the Funcs use.
    pub params: Vec<ParamDef>,
    /// The names of the output Funcs.
    pub outputs: Vec<Name>,
}

impl PipelineDef {
    /// The Func called `name`, if there is one.
    pub fn func(&self, name: &str) -> Option<&FuncDef> {
        self.funcs.iter().find(|f| &*f.name == name)
    }

    /// The dense id of the Func called `name`.
    pub fn func_id(&self, name: &str) -> Option<FuncId> {
        self.funcs.iter().position(|f| &*f.name == name).map(|i| FuncId(i as u32))
    }

    /// Every Func with its id, producers first.
    pub fn func_ids(&self) -> impl Iterator<Item = (FuncId, &FuncDef)> {
        self.funcs.iter().enumerate().map(|(i, f)| (FuncId(i as u32), f))
    }

    /// Every stage of every Func, producers first, each Func's pure
    /// definition before its updates.
    pub fn stage_ids(&self) -> impl Iterator<Item = StageId> + '_ {
        self.func_ids().flat_map(|(id, f)| (0..f.stages() as u32).map(move |stage| StageId { func: id, stage }))
    }

    /// The input called `name`, if there is one.
    pub fn input(&self, name: &str) -> Option<&InputDef> {
        self.inputs.iter().find(|i| &*i.name == name)
    }

    /// The param called `name`, if there is one.
    pub fn param(&self, name: &str) -> Option<&ParamDef> {
        self.params.iter().find(|p| &*p.name == name)
    }

    /// Whether `name` is one of the outputs.
    pub fn is_output(&self, name: &str) -> bool {
        self.outputs.iter().any(|o| &**o == name)
    }
}

impl std::ops::Index<FuncId> for PipelineDef {
    type Output = FuncDef;
    fn index(&self, id: FuncId) -> &FuncDef {
        &self.funcs[id.index()]
    }
}

/// The most expression nodes a Func's definitions may have, counted as
/// trees (lowering accepts as many after inlining).
pub const MAX_DEFINITION_NODES: usize = 50_000;

/// The most expression nodes a pipeline may have, counted as trees.
pub const MAX_PIPELINE_NODES: usize = 1 << 18;

/// Buffer metadata variable names, shared by lowering and every executor.
pub mod buffer_vars {
    /// The coordinate of the first element of dimension `d` of `buffer`.
    pub fn min(buffer: &str, d: usize) -> String {
        format!("{buffer}.min.{d}")
    }
    /// The number of elements of dimension `d`.
    pub fn extent(buffer: &str, d: usize) -> String {
        format!("{buffer}.extent.{d}")
    }
    /// The distance, in elements, between neighbours along dimension `d`.
    pub fn stride(buffer: &str, d: usize) -> String {
        format!("{buffer}.stride.{d}")
    }
}

/// The buffer holding value `index` of a Func called `func` with `count`
/// values: `func` itself when it has one, `func.index` for a Tuple.
pub fn value_buffer(func: &str, index: usize, count: usize) -> Name {
    if count == 1 {
        func.into()
    } else {
        format!("{func}.{index}").into()
    }
}

/// The values of a definition as text: the value, or `(v0, v1, ...)` for a
/// Tuple.
pub fn values_text(values: &[Expr]) -> String {
    match values {
        [value] => value.to_string(),
        _ => format!("({})", values.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")),
    }
}

/// Calls `f` on every expression of a Func definition.
pub fn for_each_expr(func: &FuncDef, mut f: impl FnMut(&Expr)) {
    func.values.iter().for_each(&mut f);
    for u in &func.updates {
        u.args.iter().for_each(&mut f);
        u.values.iter().for_each(&mut f);
        if let Some(r) = &u.rdom {
            for d in &r.dims {
                f(&d.min);
                f(&d.extent);
            }
            if let Some(p) = &r.predicate {
                f(p);
            }
        }
    }
}
