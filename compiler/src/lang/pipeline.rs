//! The algorithm as plain data: every Func's definitions, the inputs, the
//! scalar params and the outputs, in producer-before-consumer order.
//!
//! A [`PipelineDef`] is what every later stage consumes (schedule
//! validation, lowering, the reference evaluator, the featurizer). It holds no
//! handles: Funcs are named, reduction variables are plain `Var`s named after
//! their RDom dimension, and params are `Param` nodes.

use crate::error::LangError;
use crate::ir::expr::{CallTarget, Expr, ExprNode, Name, RDomDef};
use crate::ir::types::{ScalarType, Type};
use crate::ir::visit::{walk_expr, Visitor};
use crate::lang::checks::{check_calls, check_names, check_operands};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::Arc;

/// An estimate of one dimension's region: the autoscheduler plans for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Estimate {
    pub min: i64,
    pub extent: i64,
}

/// One update definition: `func(args) = value`, run over `rdom` (if any) in
/// lexicographic order with its first dimension innermost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UpdateDef {
    pub args: Vec<Expr>,
    pub value: Expr,
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
    pub name: Name,
    /// Names of the pure variables, outermost storage dimension last.
    pub args: Vec<Name>,
    pub ty: Type,
    /// The pure (initial) definition's value, over `args`.
    pub value: Expr,
    pub updates: Vec<UpdateDef>,
    /// Per-dimension estimates (used for outputs).
    pub estimates: Vec<Option<Estimate>>,
}

impl FuncDef {
    pub fn dims(&self) -> usize {
        self.args.len()
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
            c.visit_expr(&self.value);
        } else {
            let u = &self.updates[stage - 1];
            u.args.iter().for_each(|a| c.visit_expr(a));
            c.visit_expr(&u.value);
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
    pub name: Name,
    pub ty: ScalarType,
    pub dims: usize,
    pub estimates: Vec<Option<Estimate>>,
}

/// A scalar parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParamDef {
    pub name: Name,
    pub ty: Type,
    pub estimate: Option<f64>,
}

/// The dense id of a Func: its index in [`PipelineDef::funcs`] (so producers
/// have smaller ids than their consumers). Analyses index arrays by it
/// instead of hashing names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FuncId(pub u32);

impl FuncId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One stage of one Func: 0 is the pure definition, `k` the `k`-th update.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct StageId {
    pub func: FuncId,
    pub stage: u32,
}

/// A whole pipeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PipelineDef {
    /// Every Func, producers before consumers (a topological order that is
    /// deterministic for a given set of definitions).
    pub funcs: Vec<FuncDef>,
    pub inputs: Vec<InputDef>,
    pub params: Vec<ParamDef>,
    pub outputs: Vec<Name>,
}

impl PipelineDef {
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

    pub fn input(&self, name: &str) -> Option<&InputDef> {
        self.inputs.iter().find(|i| &*i.name == name)
    }

    pub fn param(&self, name: &str) -> Option<&ParamDef> {
        self.params.iter().find(|p| &*p.name == name)
    }

    pub fn is_output(&self, name: &str) -> bool {
        self.outputs.iter().any(|o| &**o == name)
    }

    /// The checks `Pipeline::new` runs once a pipeline is collected (names
    /// free of reserved characters; every call names something defined,
    /// with the right arity, integer coordinates and the callee's type;
    /// operands of one type that their operator accepts, float literals
    /// that fit their type), also for a `PipelineDef` built some other way
    /// (decoded from the wire).
    pub fn check(&self) -> Result<(), LangError> {
        check_names(self)?;
        check_calls(self)?;
        check_operands(self)
    }
}

impl std::ops::Index<FuncId> for PipelineDef {
    type Output = FuncDef;
    fn index(&self, id: FuncId) -> &FuncDef {
        &self.funcs[id.index()]
    }
}

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

/// Calls `f` on every expression of a Func definition.
pub fn for_each_expr(func: &FuncDef, mut f: impl FnMut(&Expr)) {
    f(&func.value);
    for u in &func.updates {
        u.args.iter().for_each(&mut f);
        f(&u.value);
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
