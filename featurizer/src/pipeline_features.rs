//! Pipeline features: what a stage computes, independent of any schedule.
//!
//! Per stage (after Adams et al. 2019, section 3.3, our own layout): a
//! histogram of operations by result type, and counts of memory accesses
//! by access pattern (pointwise, transpose, broadcast, slice: from the
//! access's load Jacobian), by kind (a load of another Func, of the Func
//! itself, of an input, or the store) and by type. Types fall in seven
//! buckets: bool, 8-, 16-, 32- and 64-bit integers (signed and unsigned
//! share a bucket), f32 and f64. Each distinct subexpression of the stage's
//! definition counts once (a let's value however often the let is used, two
//! equal terms however they were built: the DAG's stage expressions are
//! structurally shared), as the compiled code computes it once.
//!
//! The layout is [`PIPELINE_LAYOUT`]: `op_histogram[OPS][TYPES]` then
//! `accesses[PATTERNS][ACCESS_KINDS][TYPES]`, flattened row-major.

use crate::dag::{Dag, Stage};
use crate::jacobian::LoadJacobian;
use crate::layout::Layout;
use compiler::ir::expr::{BinOp, CallTarget, CmpOp, Expr, ExprNode};
use compiler::ir::types::{ScalarType, Type};
use compiler::ir::visit::{walk_expr, Visitor};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// The type buckets.
pub const TYPES: [&str; 7] = ["bool", "int8", "int16", "int32", "int64", "float32", "float64"];

/// The operation rows.
pub const OPS: [&str; 24] = [
    "const",
    "cast",
    "variable",
    "param",
    "add",
    "sub",
    "mod",
    "mul",
    "div",
    "min",
    "max",
    "eq",
    "ne",
    "lt",
    "le",
    "and",
    "or",
    "not",
    "select",
    "image_call",
    "func_call",
    "self_call",
    "math_call",
    "let",
];

/// The access patterns, from the load Jacobian.
pub const PATTERNS: [&str; 4] = ["pointwise", "transpose", "broadcast", "slice"];

/// The access kinds.
pub const ACCESS_KINDS: [&str; 4] = ["load_func", "load_self", "load_image", "store"];

/// Version of the pipeline-feature layout; bump it with any change of
/// meaning (the names hash catches changes of names). Version 3: access
/// patterns see through clamps to fixed bounds. Version 4: equal
/// subexpressions count once however the pipeline was built (version 3
/// counted nodes shared in memory once, so a pipeline read from JSON or the
/// wire counted more than the same pipeline built in Rust).
pub const PIPELINE_FEATURES_VERSION: u32 = 4;

/// The pipeline-feature layout: its version and the names of
/// [`pipeline_feature_names`].
pub const PIPELINE_LAYOUT: Layout = Layout { kind: "pipeline", version: PIPELINE_FEATURES_VERSION, names: pipeline_feature_names };

/// The number of pipeline features per stage.
pub const PIPELINE_FEATURES: usize = OPS.len() * TYPES.len() + PATTERNS.len() * ACCESS_KINDS.len() * TYPES.len();

/// The name of every pipeline feature, in layout order.
pub fn pipeline_feature_names() -> Vec<String> {
    let mut names = vec![];
    for op in OPS {
        for t in TYPES {
            names.push(format!("op.{op}.{t}"));
        }
    }
    for p in PATTERNS {
        for k in ACCESS_KINDS {
            for t in TYPES {
                names.push(format!("{p}.{k}.{t}"));
            }
        }
    }
    names
}

/// One stage's pipeline features.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PipelineFeatures {
    /// Operation counts by operation (rows in `OPS` order) and result type
    /// bucket (`TYPES` order).
    pub op_histogram: [[u32; 7]; 24],
    /// Access counts by pattern (`PATTERNS` order), kind (`ACCESS_KINDS` order)
    /// and type bucket (`TYPES` order).
    pub accesses: [[[u32; 7]; 4]; 4],
}

impl PipelineFeatures {
    /// The features of `stage` of `dag`.
    pub fn of(dag: &Dag, stage: &Stage) -> PipelineFeatures {
        let node = dag.node(stage.node);
        let loops: Vec<&str> = stage.loops.iter().map(|l| &*l.var).collect();
        let mut counter = Counter { features: PipelineFeatures::default(), own: &node.name, loops: &loops, dag, seen: HashSet::new() };
        let (values, lhs) = stage.exprs.split_at(stage.value_count);
        values.iter().for_each(|v| counter.visit_expr(v));
        let store: Vec<Expr> = if stage.index == 0 { node.dims.iter().map(|d| Expr::ivar(d.clone())).collect() } else { lhs.to_vec() };
        lhs.iter().for_each(|a| counter.visit_expr(a));
        for ty in &node.types {
            counter.access(3, &store, *ty);
        }
        counter.features
    }

    /// The features as one flat vector, in [`PIPELINE_LAYOUT`] order.
    pub fn to_vec(&self) -> Vec<f32> {
        let ops = self.op_histogram.iter().flatten();
        let accesses = self.accesses.iter().flatten().flatten();
        ops.chain(accesses).map(|&c| c as f32).collect()
    }
}

/// The bucket of a type.
pub fn type_bucket(t: Type) -> usize {
    match t.scalar {
        ScalarType::Bool => 0,
        ScalarType::U8 | ScalarType::I8 => 1,
        ScalarType::U16 | ScalarType::I16 => 2,
        ScalarType::U32 | ScalarType::I32 => 3,
        ScalarType::U64 | ScalarType::I64 => 4,
        ScalarType::F32 => 5,
        ScalarType::F64 => 6,
    }
}

struct Counter<'a> {
    features: PipelineFeatures,
    own: &'a str,
    loops: &'a [&'a str],
    dag: &'a Dag,
    /// The nodes counted (by address; equal subexpressions are one node):
    /// each is computed once, as after common-subexpression elimination.
    seen: HashSet<usize>,
}

impl Counter<'_> {
    fn op(&mut self, row: usize, t: Type) {
        self.features.op_histogram[row][type_bucket(t)] += 1;
    }

    /// Counts an access of kind `kind` under each pattern it matches.
    fn access(&mut self, kind: usize, args: &[Expr], t: Type) {
        let j = LoadJacobian::of(args, self.loops);
        let matches = [j.is_pointwise(), j.is_transpose(), j.is_broadcast(), j.is_slice()];
        for (p, _) in matches.iter().enumerate().filter(|(_, m)| **m) {
            self.features.accesses[p][kind][type_bucket(t)] += 1;
        }
    }
}

impl Visitor for Counter<'_> {
    fn visit_expr(&mut self, e: &Expr) {
        if !self.seen.insert(e.address()) {
            return;
        }
        let t = e.ty();
        let row = match e.node() {
            ExprNode::IntImm { .. } | ExprNode::UIntImm { .. } | ExprNode::FloatImm { .. } => Some(0),
            ExprNode::Cast { .. } => Some(1),
            // Halide's reinterpret is an intrinsic call, counted as an extern call.
            ExprNode::Reinterpret { .. } => Some(22),
            ExprNode::Var { .. } | ExprNode::RVar { .. } => Some(2),
            ExprNode::Param { .. } => Some(3),
            ExprNode::Binary { op, .. } => Some(match op {
                BinOp::Add => 4,
                BinOp::Sub => 5,
                BinOp::Mod => 6,
                BinOp::Mul => 7,
                BinOp::Div => 8,
                BinOp::Min => 9,
                BinOp::Max => 10,
                // Halide's bitwise operators and shifts are intrinsic calls,
                // which its featurizer counts as extern calls.
                BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => 22,
            }),
            ExprNode::Cmp { op, .. } => Some(match op {
                CmpOp::Eq => 11,
                CmpOp::Ne => 12,
                CmpOp::Lt | CmpOp::Gt => 13,
                CmpOp::Le | CmpOp::Ge => 14,
            }),
            ExprNode::And { .. } => Some(15),
            ExprNode::Or { .. } => Some(16),
            ExprNode::Not { .. } => Some(17),
            ExprNode::Select { .. } => Some(18),
            ExprNode::Call { target, args, ty } => Some(match target {
                CallTarget::Input(_) => {
                    self.access(2, args, *ty);
                    19
                }
                CallTarget::Func(r) if &*r.name == self.own => {
                    self.access(1, args, *ty);
                    21
                }
                CallTarget::Func(r) => {
                    let kind = if self.dag.node_by_name(&r.name).is_some_and(|n| n.is_input) { 2 } else { 0 };
                    self.access(kind, args, *ty);
                    20
                }
                CallTarget::Math(_) => 22,
            }),
            ExprNode::Let { .. } => Some(23),
            ExprNode::Load { .. } | ExprNode::Ramp { .. } | ExprNode::Broadcast { .. } => None,
        };
        if let Some(row) = row {
            self.op(row, t);
        }
        walk_expr(self, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_has_one_name_per_feature() {
        assert_eq!(pipeline_feature_names().len(), PIPELINE_FEATURES);
        assert_eq!(PipelineFeatures::default().to_vec().len(), PIPELINE_FEATURES);
        assert_eq!(PIPELINE_LAYOUT.id().len, PIPELINE_FEATURES);
    }
}
