//! The pipeline as a DAG of stages: the read-only analysis every candidate
//! schedule of a search shares.
//!
//! Nodes are the Funcs (ids equal to the compiler's [`FuncId`], producers
//! first) followed by the input buffers. Each Func has one stage per
//! definition (pure, then each update) with its loops, innermost first.
//! An edge joins a producer node to a consumer stage and carries the number
//! of call sites, their load Jacobians, and the producer region the stage
//! reads as compiled bounds ([`BoundExpr`]) of the stage's loop spans, so
//! that a search evaluates footprints with a few multiply-adds.
//!
//! Built once per pipeline from the compiler's interval analysis; params
//! take their estimates. The regions at the estimates (outputs' estimates
//! propagated back to every Func and input) are computed here too.

use crate::bound_expr::{BoundError, BoundExpr};
use crate::jacobian::LoadJacobian;
use crate::span::Span;
use compiler::analysis::interval::{bounds_of, Interval, Scope};
use compiler::analysis::value_bounds::ValueBounds;
use compiler::ir::expr::{CallTarget, Expr, ExprNode, Name};
use compiler::ir::share::Sharer;
use compiler::ir::types::{ScalarType, Type};
use compiler::ir::visit::{mutate_expr_children, node_count, walk_expr, Mutator, Visitor};
use compiler::lang::pipeline::buffer_vars;
use compiler::schedule::initial_dims;
use compiler::simplify::simplify;
use compiler::{FuncId, PipelineDef, Target};
use std::collections::{BTreeMap, HashMap, HashSet};
use thiserror::Error;

/// Why a pipeline cannot be analysed.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum DagError {
    /// An output Func has no estimate (min and extent) in a dimension.
    #[error("output {func} has no estimate in dimension {dim}: set one so the autoscheduler knows what size to plan for")]
    OutputWithoutEstimate {
        /// The output Func.
        func: String,
        /// The dimension without an estimate.
        dim: usize,
    },
    /// A param of the pipeline has no estimate.
    #[error("param {param} has no estimate: set one so bounds that depend on it can be evaluated")]
    ParamWithoutEstimate {
        /// The param's name.
        param: String,
    },
    /// An input buffer has no estimate (min and extent) in a dimension.
    #[error("input {input} has no estimate in dimension {dim}: set one so boundary conditions can be bounded")]
    InputWithoutEstimate {
        /// The input buffer's name.
        input: String,
        /// The dimension without an estimate.
        dim: usize,
    },
    /// The interval analysis finds no bound of the region a stage reads of a
    /// producer.
    #[error("the region of {producer} that {consumer} (stage {stage}) reads is unbounded in dimension {dim}: clamp the index")]
    Unbounded {
        /// The Func or input read.
        producer: String,
        /// The Func that reads it.
        consumer: String,
        /// The reading stage of `consumer` (0 for its pure definition, `k` for
        /// its `k`-th update).
        stage: usize,
        /// The producer dimension without a bound.
        dim: usize,
    },
    /// The interval analysis finds no bound of the region an update writes.
    #[error("the region {func} (stage {stage}) writes is unbounded in dimension {dim}: clamp the index")]
    UnboundedWrite {
        /// The Func updated.
        func: String,
        /// The update's stage (`k` for the `k`-th update).
        stage: usize,
        /// The dimension without a bound.
        dim: usize,
    },
    /// A reduction domain's min or extent does not compile to a constant.
    #[error("the reduction domain of {func} (stage {stage}) has no constant bounds: {source}")]
    ReductionBounds {
        /// The Func whose update has the domain.
        func: String,
        /// The update's stage (`k` for the `k`-th update).
        stage: usize,
        /// Why the bound does not compile.
        source: BoundError,
    },
    /// A bound of the region a stage reads of a producer does not compile to a
    /// `BoundExpr`.
    #[error("a bound of {producer} read by {consumer} (stage {stage}): {source}")]
    Bound {
        /// The Func or input read.
        producer: String,
        /// The Func that reads it.
        consumer: String,
        /// The reading stage of `consumer` (0 for its pure definition, `k` for
        /// its `k`-th update).
        stage: usize,
        /// Why the bound does not compile.
        source: BoundError,
    },
    /// An index exceeds `MAX_INDEX_NODES` nodes once its lets are expanded.
    #[error(
        "{func} (stage {stage}) indexes {indexed} with an expression of {nodes} nodes once its lets are expanded, more than the {limit} the bounds analysis takes; compute the index in a Func of its own"
    )]
    IndexTooLarge {
        /// The Func whose stage uses the index.
        func: String,
        /// That stage (0 for the pure definition, `k` for the `k`-th update).
        stage: usize,
        /// The Func or input it indexes (the Func itself for an update's
        /// left-hand side).
        indexed: String,
        /// The index's node count, lets expanded.
        nodes: usize,
        /// The most nodes allowed (`MAX_INDEX_NODES`).
        limit: usize,
    },
}

/// The most nodes an index (a coordinate of a call or of an update's
/// left-hand side) may have once its lets are expanded: interval analysis
/// and load Jacobians walk it as a tree, and a let used twice per level
/// doubles it per level.
pub const MAX_INDEX_NODES: usize = 10_000;

/// `index`, which `func`'s stage `stage` uses to index `indexed`, checked
/// against [`MAX_INDEX_NODES`] (counted in time linear in its distinct nodes).
fn check_index(index: &Expr, func: &str, stage: usize, indexed: &str) -> Result<(), DagError> {
    let nodes = node_count(index);
    if nodes > MAX_INDEX_NODES {
        let (func, indexed) = (func.to_string(), indexed.to_string());
        return Err(DagError::IndexTooLarge { func, stage, indexed, nodes, limit: MAX_INDEX_NODES });
    }
    Ok(())
}

/// Dense id of a DAG node: a Func's [`FuncId`] index, then the inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The id as an index into `Dag::nodes`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Dense id of a stage over the whole pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StageIdx(pub u32);

impl StageIdx {
    /// The id as an index into `Dag::stages`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Dense id of an edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EdgeId(pub u32);

/// A Func or an input buffer.
#[derive(Clone, Debug)]
pub struct Node {
    /// The node's id: its index in `Dag::nodes`.
    pub id: NodeId,
    /// The Func's or input's name.
    pub name: Name,
    /// The type of each value (several for a Tuple Func).
    pub types: Vec<Type>,
    /// Names of the dimensions (a Func's pure variables; `_0, _1, ...` for
    /// an input).
    pub dims: Vec<Name>,
    /// The Func's stages, pure definition first (empty for inputs).
    pub stages: Vec<StageIdx>,
    /// An input buffer rather than a Func.
    pub is_input: bool,
    /// A Func the pipeline outputs.
    pub is_output: bool,
    /// No updates, and every call reads its producer at exactly the pure
    /// variables in order.
    pub is_pointwise: bool,
    /// Edges to the stages that read this node.
    pub outgoing: Vec<EdgeId>,
    /// The region consumers (and the output estimate) require at the
    /// pipeline's estimates.
    pub region_required: Vec<Span>,
    /// The region the Func's stages compute (the required region grown by
    /// what its updates write) at the estimates.
    pub region_computed: Vec<Span>,
    /// Per update stage and dimension, the bounds of the region it writes,
    /// over the node's required-region slots (`2d` min, `2d + 1` max).
    update_writes: Vec<Vec<(BoundExpr, BoundExpr)>>,
    /// The largest natural vector width of the node's stages.
    pub vector_size: i64,
}

impl Node {
    /// The bytes of one point: of every value, for a Tuple Func.
    pub fn bytes_per_point(&self) -> i64 {
        self.types.iter().map(|t| t.scalar.bytes() as i64).sum()
    }

    /// The region the Func computes when `required` is required of it.
    pub fn region_computed_for(&self, required: &[Span]) -> Vec<Span> {
        let slots = Span::slots(required);
        let mut region = required.to_vec();
        for writes in &self.update_writes {
            for (d, (lo, hi)) in writes.iter().enumerate() {
                region[d] = region[d].union(Span::new(lo.eval(&slots), hi.eval(&slots)));
            }
        }
        region
    }
}

/// One loop of a stage.
#[derive(Clone, Debug)]
pub struct Loop {
    /// The loop variable: a pure variable of the Func or a reduction variable.
    pub var: Name,
    /// A loop over a reduction variable of an update's domain.
    pub is_rvar: bool,
    /// The Func dimension a pure loop runs over.
    pub pure_dim: Option<usize>,
    /// For a reduction loop, its constant span.
    pub rvar_span: Option<Span>,
}

/// One definition of a Func.
#[derive(Clone, Debug)]
pub struct Stage {
    /// The stage's id: its index in `Dag::stages`.
    pub idx: StageIdx,
    /// The Func the stage defines.
    pub node: NodeId,
    /// 0 for the pure definition, `k` for the `k`-th update.
    pub index: usize,
    /// Loops, innermost first.
    pub loops: Vec<Loop>,
    /// Edges from the nodes this stage reads.
    pub incoming: Vec<EdgeId>,
    /// The natural vector width of the narrowest type the stage computes.
    pub vector_size: i64,
    /// The stage's expressions with params replaced by their estimates
    /// (the values, then the update's left-hand side coordinates), lets
    /// substituted and structurally equal subexpressions one node
    /// ([`Sharer`]): a walk that visits each node once counts each distinct
    /// value once.
    pub exprs: Vec<Expr>,
    /// How many of `exprs` are values (several for a Tuple Func).
    pub value_count: usize,
    /// How the point the stage writes moves with its loops (for an update,
    /// also the point it reads of its own Func).
    pub store: LoadJacobian,
}

impl Stage {
    /// Whether a vector along loop `v` writes scattered points: the loop
    /// does not move the store along storage dimension 0 by exactly one
    /// point, or moves it along another dimension (or not affinely).
    pub fn scatters_along(&self, v: usize) -> bool {
        let column: Vec<Option<crate::jacobian::Rational>> = self.store.rows.iter().map(|r| r[v]).collect();
        column.first().is_none_or(|c| *c != Some(crate::jacobian::Rational::ONE))
            || column.iter().skip(1).any(|c| c.is_none_or(|r| !r.is_zero()))
    }

    /// The span of each loop when the Func computes `region`.
    pub fn loop_spans(&self, region: &[Span]) -> Vec<Span> {
        self.loops.iter().map(|l| l.pure_dim.map_or_else(|| l.rvar_span.unwrap_or(Span::new(0, 0)), |d| region[d])).collect()
    }
}

/// A producer read by a consumer stage.
#[derive(Clone, Debug)]
pub struct Edge {
    /// The edge's id: its index in `Dag::edges`.
    pub id: EdgeId,
    /// The Func or input read.
    pub producer: NodeId,
    /// The stage that reads it.
    pub consumer: StageIdx,
    /// Call sites of the producer in the stage.
    pub calls: u32,
    /// Distinct access matrices with their counts.
    pub jacobians: Vec<LoadJacobian>,
    /// Per producer dimension, the bounds of the region read, over the
    /// consumer stage's loop slots (`2i` min, `2i + 1` max of loop `i`).
    pub bounds: Vec<(BoundExpr, BoundExpr)>,
}

impl Edge {
    /// The producer region read when the consumer's loops span `loops`.
    pub fn region_read(&self, loops: &[Span]) -> Vec<Span> {
        let slots = Span::slots(loops);
        self.bounds.iter().map(|(lo, hi)| Span::new(lo.eval(&slots), hi.eval(&slots))).collect()
    }
}

/// The analysed pipeline.
#[derive(Clone, Debug)]
pub struct Dag {
    /// The Funcs, producers first, then the input buffers; indexed by `NodeId`.
    pub nodes: Vec<Node>,
    /// Every Func's stages, Func by Func in node order, pure definition first;
    /// indexed by `StageIdx`.
    pub stages: Vec<Stage>,
    /// Every producer-consumer edge; indexed by `EdgeId`.
    pub edges: Vec<Edge>,
    /// The target the pipeline is analysed for (vector widths).
    pub target: Target,
}

impl Dag {
    /// Analyses `p` for `target`.
    pub fn new(p: &PipelineDef, target: &Target) -> Result<Dag, DagError> {
        let params = param_estimates(p)?;
        let mut dag = Dag { nodes: vec![], stages: vec![], edges: vec![], target: *target };
        for (id, f) in p.func_ids() {
            dag.nodes.push(Node {
                id: NodeId(id.0),
                name: f.name.clone(),
                types: f.types.clone(),
                dims: f.args.clone(),
                stages: vec![],
                is_input: false,
                is_output: p.is_output(&f.name),
                is_pointwise: false,
                outgoing: vec![],
                region_required: vec![],
                region_computed: vec![],
                update_writes: vec![],
                vector_size: 1,
            });
        }
        for i in &p.inputs {
            dag.nodes.push(Node {
                id: NodeId(dag.nodes.len() as u32),
                name: i.name.clone(),
                types: vec![Type::scalar(i.ty)],
                dims: (0..i.dims).map(|d| Name::from(format!("_{d}"))).collect(),
                stages: vec![],
                is_input: true,
                is_output: false,
                is_pointwise: false,
                outgoing: vec![],
                region_required: vec![],
                region_computed: vec![],
                update_writes: vec![],
                vector_size: target.natural_lanes(i.ty),
            });
        }
        let value_bounds = ValueBounds::of(p);
        for (id, _) in p.func_ids() {
            dag.add_stages(p, id, &params, &value_bounds)?;
        }
        dag.regions_at_estimates(p)?;
        Ok(dag)
    }

    /// Node `id`.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }

    /// Stage `idx`.
    pub fn stage(&self, idx: StageIdx) -> &Stage {
        &self.stages[idx.index()]
    }

    /// Edge `id`.
    pub fn edge(&self, id: EdgeId) -> &Edge {
        &self.edges[id.0 as usize]
    }

    /// The Func or input named `name`, if any.
    pub fn node_by_name(&self, name: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| &*n.name == name)
    }

    /// The Funcs (not inputs), producers first.
    pub fn funcs(&self) -> impl DoubleEndedIterator<Item = &Node> {
        self.nodes.iter().filter(|n| !n.is_input)
    }

    /// The stages of Func `id`: their loops, and an edge from each Func or
    /// input they read (a call of a Func whose values are bounded bounds
    /// an index computed from it, as in lowering).
    fn add_stages(
        &mut self,
        p: &PipelineDef,
        id: FuncId,
        params: &BTreeMap<Name, Expr>,
        value_bounds: &ValueBounds,
    ) -> Result<(), DagError> {
        let f = &p[id];
        let node = NodeId(id.0);
        let mut pointwise = f.updates.is_empty();
        for s in 0..f.stages() {
            let idx = StageIdx(self.stages.len() as u32);
            let dims = initial_dims(f, s, &[]);
            let mut loops = vec![];
            for d in &dims {
                let pure_dim = (!d.is_rvar).then(|| f.args.iter().position(|a| *a == d.name)).flatten();
                let rvar_span = if d.is_rvar { Some(rvar_span(f, s, &d.name, params)?) } else { None };
                loops.push(Loop { var: d.name.clone(), is_rvar: d.is_rvar, pure_dim, rvar_span });
            }
            let (values, lhs) = if s == 0 {
                (f.values.clone(), vec![])
            } else {
                let u = &f.updates[s - 1];
                (u.values.clone(), u.args.clone())
            };
            // Structurally equal subexpressions become one node, so that what
            // is counted once does not depend on how the pipeline was built
            // or transported.
            let mut sharer = Sharer::default();
            let mut prepare = |e: &Expr| sharer.share(&strip_lets(&with_params(e, params)));
            let exprs: Vec<Expr> = values.iter().chain(&lhs).map(&mut prepare).collect();
            // The call sites read with the Funcs' value bounds promised (the
            // stage's expressions, which its features count, without them).
            let promised: Vec<Expr> = values.iter().chain(&lhs).map(|e| prepare(&value_bounds.wrap(e))).collect();
            let sites = call_sites(&promised, &f.name);
            let loop_names: Vec<&str> = loops.iter().map(|l| &*l.var).collect();
            let mut scope = Scope::default();
            for (i, l) in loops.iter().enumerate() {
                let span = Interval::new(Expr::ivar(slot_name(i, false)), Expr::ivar(slot_name(i, true)));
                scope.push(l.var.clone(), span);
            }
            let slot_of = |n: &str| slot_of_name(n, loops.len());
            let mut edges: BTreeMap<Name, (Vec<Interval>, Edge)> = BTreeMap::new();
            for site in &sites {
                let producer = match self.node_by_name(&site.callee) {
                    Some(n) => n.id,
                    None => continue,
                };
                if s == 0 && !is_identity(&site.args, &f.args) {
                    pointwise = false;
                }
                for a in &site.args {
                    check_index(a, &f.name, s, &site.callee)?;
                }
                let jacobian = LoadJacobian::of(&site.args, &loop_names);
                let boxes: Vec<Interval> = site.args.iter().map(|a| bounds_of(a, &scope)).collect();
                let entry = edges.entry(site.callee.clone()).or_insert_with(|| {
                    let edge = Edge { id: EdgeId(0), producer, consumer: idx, calls: 0, jacobians: vec![], bounds: vec![] };
                    (boxes.clone(), edge)
                });
                entry.0 = entry.0.iter().zip(&boxes).map(|(a, b)| a.union(b)).collect();
                entry.1.calls += 1;
                match entry.1.jacobians.iter_mut().find(|j| j.rows == jacobian.rows) {
                    Some(j) => j.count += 1,
                    None => entry.1.jacobians.push(jacobian),
                }
            }
            let mut incoming = vec![];
            for (callee, (boxes, mut edge)) in edges {
                for (dim, b) in boxes.iter().enumerate() {
                    let unbounded = || DagError::Unbounded { producer: callee.to_string(), consumer: f.name.to_string(), stage: s, dim };
                    let compile = |e: &Option<Expr>| -> Result<BoundExpr, DagError> {
                        let e = simplify(e.as_ref().ok_or_else(unbounded)?);
                        BoundExpr::compile(&e, &slot_of).map_err(|source| DagError::Bound {
                            producer: callee.to_string(),
                            consumer: f.name.to_string(),
                            stage: s,
                            source: BoundError { expr: in_loop_terms(&e, &loops), ..source },
                        })
                    };
                    edge.bounds.push((compile(&b.min)?, compile(&b.max)?));
                }
                edge.id = EdgeId(self.edges.len() as u32);
                incoming.push(edge.id);
                self.nodes[edge.producer.index()].outgoing.push(edge.id);
                self.edges.push(edge);
            }
            if s > 0 {
                let writes = self.update_writes(f, s, &lhs, &loops, params)?;
                self.nodes[node.index()].update_writes.push(writes);
            }
            let vector_size = stage_vector_size(&exprs, &f.types, &self.target);
            let store = if s == 0 {
                LoadJacobian::of(&f.args.iter().map(|a| Expr::ivar(a.clone())).collect::<Vec<_>>(), &loop_names)
            } else {
                LoadJacobian::of(&exprs[values.len()..], &loop_names)
            };
            let value_count = values.len();
            self.stages.push(Stage { idx, node, index: s, loops, incoming, vector_size, exprs, value_count, store });
            let n = &mut self.nodes[node.index()];
            n.stages.push(idx);
            n.vector_size = n.vector_size.max(vector_size);
        }
        self.nodes[node.index()].is_pointwise = pointwise;
        Ok(())
    }

    /// Bounds of what update `s` writes, per dimension, over the Func's
    /// required-region slots.
    fn update_writes(
        &self,
        f: &compiler::FuncDef,
        s: usize,
        lhs: &[Expr],
        loops: &[Loop],
        params: &BTreeMap<Name, Expr>,
    ) -> Result<Vec<(BoundExpr, BoundExpr)>, DagError> {
        let mut scope = Scope::default();
        for l in loops {
            let span = match (l.pure_dim, l.rvar_span) {
                (Some(d), _) => Interval::new(Expr::ivar(slot_name(d, false)), Expr::ivar(slot_name(d, true))),
                (None, Some(r)) => Interval::new(Expr::int(r.min, Type::i32()), Expr::int(r.max, Type::i32())),
                (None, None) => Interval::everything(),
            };
            scope.push(l.var.clone(), span);
        }
        let slot_of = |n: &str| slot_of_name(n, f.dims());
        lhs.iter()
            .enumerate()
            .map(|(dim, a)| {
                let a = strip_lets(&with_params(a, params));
                check_index(&a, &f.name, s, &f.name)?;
                let b = bounds_of(&a, &scope);
                let unbounded = || DagError::UnboundedWrite { func: f.name.to_string(), stage: s, dim };
                let compile = |e: Option<Expr>| -> Result<BoundExpr, DagError> {
                    BoundExpr::compile(&simplify(&e.ok_or_else(unbounded)?), &slot_of).map_err(|_| unbounded())
                };
                Ok((compile(b.min)?, compile(b.max)?))
            })
            .collect()
    }

    /// Propagates the outputs' estimates back to every Func and input.
    fn regions_at_estimates(&mut self, p: &PipelineDef) -> Result<(), DagError> {
        for n in self.nodes.iter_mut() {
            n.region_required = vec![Span::EMPTY; n.dims.len()];
        }
        for (id, f) in p.func_ids().filter(|(_, f)| p.is_output(&f.name)) {
            let mut region = vec![];
            for d in 0..f.dims() {
                let e = f.estimates.get(d).copied().flatten();
                let e = e.ok_or_else(|| DagError::OutputWithoutEstimate { func: f.name.to_string(), dim: d })?;
                region.push(Span::new(e.min, e.min + e.extent - 1));
            }
            self.nodes[id.index()].region_required = region;
        }
        // Consumers come after their producers: walk the Funcs backwards.
        for n in (0..p.funcs.len()).rev() {
            let computed = self.nodes[n].region_computed_for(&self.nodes[n].region_required);
            self.nodes[n].region_computed = computed.clone();
            for &s in &self.nodes[n].stages.clone() {
                let loops = self.stages[s.index()].loop_spans(&computed);
                for &e in &self.stages[s.index()].incoming.clone() {
                    let edge = &self.edges[e.0 as usize];
                    let read = edge.region_read(&loops);
                    let producer = &mut self.nodes[edge.producer.index()];
                    for (have, want) in producer.region_required.iter_mut().zip(read) {
                        *have = have.union(want);
                    }
                }
            }
        }
        for n in self.nodes.iter_mut().filter(|n| n.is_input) {
            n.region_computed = n.region_required.clone();
        }
        Ok(())
    }
}

/// The name of slot `i`'s min (`max == false`) or max variable.
/// `e` printed with each loop slot named after its loop's variable and
/// end (`min.slot.1` as `y.min`), for messages.
fn in_loop_terms(e: &Expr, loops: &[Loop]) -> String {
    struct Names<'a>(&'a [Loop]);
    impl Mutator for Names<'_> {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            match e.as_var().and_then(|n| slot_of_name(n, self.0.len())) {
                Some(slot) => {
                    let end = if slot % 2 == 0 { "min" } else { "max" };
                    Expr::var(format!("{}.{end}", self.0[slot as usize / 2].var), e.ty())
                }
                None => mutate_expr_children(self, e),
            }
        }
    }
    Names(loops).mutate_expr(e).to_string()
}

fn slot_name(i: usize, max: bool) -> String {
    format!("{}.slot.{i}", if max { "max" } else { "min" })
}

fn slot_of_name(name: &str, count: usize) -> Option<u32> {
    let (kind, i) = name.split_once(".slot.")?;
    let i: usize = i.parse().ok()?;
    if i >= count {
        return None;
    }
    match kind {
        "min" => Some(2 * i as u32),
        "max" => Some(2 * i as u32 + 1),
        _ => None,
    }
}

/// Each param's estimate as a constant of its type, and each input's
/// `min` and `extent` fields (which boundary conditions read) at its
/// estimate.
fn param_estimates(p: &PipelineDef) -> Result<BTreeMap<Name, Expr>, DagError> {
    let mut values = BTreeMap::new();
    for prm in &p.params {
        let v = prm.estimate.ok_or_else(|| DagError::ParamWithoutEstimate { param: prm.name.to_string() })?;
        let e = if prm.ty.is_float() { Expr::float(v, prm.ty) } else { Expr::int(v as i64, prm.ty) };
        values.insert(prm.name.clone(), e);
    }
    for i in &p.inputs {
        for (d, e) in i.estimates.iter().enumerate() {
            let e = e.ok_or_else(|| DagError::InputWithoutEstimate { input: i.name.to_string(), dim: d })?;
            values.insert(buffer_vars::min(&i.name, d).into(), Expr::int(e.min, Type::i32()));
            values.insert(buffer_vars::extent(&i.name, d).into(), Expr::int(e.extent, Type::i32()));
        }
    }
    Ok(values)
}

/// `e` with every param and input field replaced by its estimate. A
/// subtree shared in `e` stays shared in the result.
fn with_params(e: &Expr, params: &BTreeMap<Name, Expr>) -> Expr {
    struct Params<'a> {
        params: &'a BTreeMap<Name, Expr>,
        done: HashMap<usize, Expr>,
    }
    impl Mutator for Params<'_> {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            if let Some(done) = self.done.get(&e.address()) {
                return done.clone();
            }
            let out = match e.node() {
                ExprNode::Param { name, .. } | ExprNode::Var { name, .. } => self.params.get(name).cloned().unwrap_or_else(|| e.clone()),
                _ => mutate_expr_children(self, e),
            };
            self.done.insert(e.address(), out.clone());
            out
        }
    }
    Params { params, done: HashMap::new() }.mutate_expr(e)
}

/// `e` with every let substituted into its body. Every use of a let's
/// variable becomes the same shared node, and a subtree shared within one
/// let's scope stays shared, so the result is as large as `e` (as a graph)
/// and a walk that visits each node once counts what common-subexpression
/// elimination would leave.
fn strip_lets(e: &Expr) -> Expr {
    struct Lets {
        bound: Vec<(Name, Expr)>,
        /// Per open scope: what each node of `e` (by address) became.
        done: Vec<HashMap<usize, Expr>>,
    }
    impl Mutator for Lets {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            if let Some(done) = self.done.last().and_then(|d| d.get(&e.address())) {
                return done.clone();
            }
            let out = match e.node() {
                ExprNode::Let { name, value, body } => {
                    let value = self.mutate_expr(value);
                    self.bound.push((name.clone(), value));
                    self.done.push(HashMap::new());
                    let body = self.mutate_expr(body);
                    self.done.pop();
                    self.bound.pop();
                    body
                }
                ExprNode::Var { name, .. } => {
                    self.bound.iter().rev().find(|(n, _)| n == name).map_or_else(|| e.clone(), |(_, v)| v.clone())
                }
                _ => mutate_expr_children(self, e),
            };
            if let Some(done) = self.done.last_mut() {
                done.insert(e.address(), out.clone());
            }
            out
        }
    }
    Lets { bound: vec![], done: vec![HashMap::new()] }.mutate_expr(e)
}

/// The constant span of reduction variable `var` of stage `s`.
fn rvar_span(f: &compiler::FuncDef, s: usize, var: &str, params: &BTreeMap<Name, Expr>) -> Result<Span, DagError> {
    let rdom = f.updates[s - 1].rdom.as_ref().expect("a stage with reduction loops has a reduction domain");
    let dim = rdom.dims.iter().find(|d| &*d.name == var).expect("the loop is a dimension of the domain");
    let constant = |e: &Expr| -> Result<i64, DagError> {
        let e = simplify(&with_params(e, params));
        BoundExpr::compile(&e, &|_| None).map(|b| b.eval(&[])).map_err(|source| DagError::ReductionBounds {
            func: f.name.to_string(),
            stage: s,
            source,
        })
    };
    let (min, extent) = (constant(&dim.min)?, constant(&dim.extent)?);
    Ok(Span::new(min, min + extent - 1))
}

/// One call of a Func or an input.
struct CallSite {
    callee: Name,
    args: Vec<Expr>,
}

/// The calls of other Funcs and inputs in `exprs` (not of `own`).
fn call_sites(exprs: &[Expr], own: &Name) -> Vec<CallSite> {
    struct Calls<'a> {
        own: &'a Name,
        sites: Vec<CallSite>,
        seen: HashSet<usize>,
    }
    impl Visitor for Calls<'_> {
        /// Each node once: a call computed once is loaded once (equal calls
        /// are one node, [`Sharer`]).
        fn visit_expr(&mut self, e: &Expr) {
            if !self.seen.insert(e.address()) {
                return;
            }
            if let ExprNode::Call { target: CallTarget::Func(r) | CallTarget::Input(r), args, .. } = e.node() {
                if &r.name != self.own {
                    self.sites.push(CallSite { callee: r.name.clone(), args: args.clone() });
                }
            }
            walk_expr(self, e)
        }
    }
    let mut c = Calls { own, sites: vec![], seen: HashSet::new() };
    exprs.iter().for_each(|e| c.visit_expr(e));
    c.sites
}

fn is_identity(args: &[Expr], vars: &[Name]) -> bool {
    args.len() == vars.len() && args.iter().zip(vars).all(|(a, v)| a.as_var() == Some(v))
}

/// The natural vector width of the narrowest non-bool type in `exprs`
/// (or of the Func's own types).
fn stage_vector_size(exprs: &[Expr], own: &[Type], target: &Target) -> i64 {
    struct Narrowest(Option<ScalarType>, HashSet<usize>);
    impl Visitor for Narrowest {
        /// Each shared node once.
        fn visit_expr(&mut self, e: &Expr) {
            if e.is_shared() && !self.1.insert(e.address()) {
                return;
            }
            let t = e.ty().scalar;
            if !t.is_bool() && self.0.is_none_or(|n| t.bytes() < n.bytes()) {
                self.0 = Some(t);
            }
            walk_expr(self, e)
        }
    }
    let mut n = Narrowest(own.iter().map(|t| t.scalar).filter(|t| !t.is_bool()).min_by_key(|t| t.bytes()), HashSet::new());
    exprs.iter().for_each(|e| n.visit_expr(e));
    target.natural_lanes(n.0.unwrap_or(own[0].scalar))
}

impl std::fmt::Display for Dag {
    /// The DAG as text: each node with its region at the estimates, each
    /// stage with its loops and the edges it reads, with their Jacobians.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let region = |r: &[Span]| r.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(" x ");
        for n in self.funcs().rev().chain(self.nodes.iter().filter(|n| n.is_input)) {
            let kind = if n.is_input {
                "input"
            } else if n.is_output {
                "output"
            } else {
                "func"
            };
            let pointwise = if n.is_pointwise { ", pointwise" } else { "" };
            let types: Vec<String> = n.types.iter().map(|t| t.to_string()).collect();
            writeln!(f, "{kind} {} ({}{pointwise}, vector size {})", n.name, types.join(" x "), n.vector_size)?;
            writeln!(f, "  required {}", region(&n.region_required))?;
            if n.region_computed != n.region_required {
                writeln!(f, "  computed {}", region(&n.region_computed))?;
            }
            for &s in &n.stages {
                let stage = self.stage(s);
                let loops: Vec<String> = stage
                    .loops
                    .iter()
                    .map(|l| match l.rvar_span {
                        Some(r) => format!("{} in {r}", l.var),
                        None => l.var.to_string(),
                    })
                    .collect();
                writeln!(f, "  stage {} loops (innermost first): {}", stage.index, loops.join(", "))?;
                for &e in &stage.incoming {
                    let e = self.edge(e);
                    let jacobians: Vec<String> = e.jacobians.iter().map(|j| j.to_string()).collect();
                    writeln!(f, "    reads {} ({} calls): {}", self.node(e.producer).name, e.calls, jacobians.join(", "))?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_loop_ends_not_slots() {
        let loop_over = |var: &str| Loop { var: var.into(), is_rvar: false, pure_dim: None, rvar_span: None };
        let loops = [loop_over("x"), loop_over("y")];
        let e = Expr::ivar(slot_name(1, false)) + Expr::ivar(slot_name(0, true)) * 2 + Expr::ivar("n");
        assert_eq!(in_loop_terms(&e, &loops), "((y.min + (x.max * 2)) + n)");
    }
}
