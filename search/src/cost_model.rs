//! The cost models the search ranks candidates with, behind one batched
//! interface: the pipeline is set once, then every round of the search
//! hands over all its candidates' features at once.
//!
//! Two models live here: [`Analytical`], the default until learned weights
//! exist (arithmetic, a math call priced as what it compiles to, loads and
//! stores priced by the cache level their footprint fits in, parallel and
//! vector utilization, allocations and task overheads), and
//! [`RandomModel`], for sampling schedules. The
//! learned model implements the same trait in its own crate.

use crate::featurize::StageFeatures;
use compiler::ir::expr::{CallTarget, Expr, ExprNode, MathFn};
use compiler::ir::types::{ScalarType, Type};
use compiler::ir::visit::{walk_expr, Visitor};
use featurizer::{Dag, PipelineFeatures, ScheduleFeatures, StageIdx};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::collections::HashSet;

/// A predicted runtime, in seconds, with each stage's share.
#[derive(Clone, Debug, PartialEq)]
pub struct Cost {
    /// The whole pipeline's predicted runtime, in seconds: the sum of
    /// `per_stage`.
    pub total: f64,
    /// By stage, in stage order.
    pub per_stage: Vec<(StageIdx, f64)>,
    /// How far the members of an ensemble disagree on `total`: the standard
    /// deviation of the natural logarithms of their predictions (0.1: about
    /// 10% apart); `None` for a model that is not an ensemble.
    pub disagreement: Option<f64>,
}

impl Cost {
    /// The sum of these stages' costs (no ensemble: no disagreement).
    pub fn of_stages(per_stage: Vec<(StageIdx, f64)>) -> Cost {
        Cost { total: per_stage.iter().map(|(_, c)| c).sum(), per_stage, disagreement: None }
    }
}

/// A cost model: pipeline features once, then batches of candidates.
pub trait CostModel: Send + Sync {
    /// A short name for reports.
    fn name(&self) -> String;
    /// Sets the pipeline the next batches belong to.
    fn set_pipeline(&mut self, dag: &Dag);
    /// Predicts the runtime of each candidate of a batch.
    fn evaluate(&self, batch: &[&StageFeatures]) -> Vec<Cost>;
}

/// The machine the analytical model prices, in cycles and bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    /// Threads the parallel loops run on.
    pub threads: f64,
    /// The clock rate, in cycles per second.
    pub cycles_per_second: f64,
    /// Bytes of the L1 data cache.
    pub l1_bytes: f64,
    /// Bytes of the L2 cache.
    pub l2_bytes: f64,
    /// Bytes of the L3 cache.
    pub l3_bytes: f64,
    /// Cycles per byte loaded from each level (L1, L2, L3, memory).
    pub cycles_per_byte: [f64; 4],
    /// Cycles to start a parallel loop.
    pub parallel_launch: f64,
    /// Cycles per task of a parallel loop, spread over the threads.
    pub parallel_task: f64,
    /// Cycles per heap allocation.
    pub allocation: f64,
    /// Arithmetic operations a core issues per cycle on vectors and on
    /// scalars, relative to the other prices here (scalar code keeps more
    /// ports busy than vector code does).
    pub vector_ops_per_cycle: f64,
    /// Arithmetic operations a core issues per cycle on scalars (see
    /// `vector_ops_per_cycle`).
    pub scalar_ops_per_cycle: f64,
    /// Cycles per lane of a vector store to scattered points: each lane is
    /// extracted and stored alone where the ISA has no scatter, after the
    /// gather of what the update reads there.
    pub scatter_lane: f64,
}

impl Machine {
    /// A typical x86 server core, for `threads` threads.
    pub fn typical(threads: usize) -> Machine {
        Machine {
            threads: threads as f64,
            cycles_per_second: 3.0e9,
            l1_bytes: 32.0 * 1024.0,
            l2_bytes: 512.0 * 1024.0,
            l3_bytes: 16.0 * 1024.0 * 1024.0,
            cycles_per_byte: [0.02, 0.06, 0.15, 0.5],
            parallel_launch: 3000.0,
            parallel_task: 300.0,
            allocation: 200.0,
            vector_ops_per_cycle: 1.0,
            scalar_ops_per_cycle: 1.0,
            // Measured: bilateral_grid's histogram update vectorized by 8
            // along x ran about 15 cycles per lane slower than its scalar
            // loop (2-core AVX2 host, 2026-11-24). Priced at 0 for now:
            // with it (and scalar code issuing faster), the trainer's
            // synthetic target, which is this model, stopped being
            // learnable from the features (held-out pairwise 0.5).
            scatter_lane: 0.0,
        }
    }

    fn cycles_per_byte_for(&self, working_set: f64) -> f64 {
        let level = if working_set <= self.l1_bytes {
            0
        } else if working_set <= self.l2_bytes {
            1
        } else if working_set <= self.l3_bytes {
            2
        } else {
            3
        };
        self.cycles_per_byte[level]
    }
}

/// An analytical model over the schedule features and, for the arithmetic
/// per point, the pipeline features.
#[derive(Clone, Debug, PartialEq)]
pub struct Analytical {
    /// The machine priced.
    pub machine: Machine,
    /// Arithmetic operations per point of each stage.
    ops_per_point: Vec<f64>,
    /// Whether each stage's vectors store to scattered points.
    scatters: Vec<bool>,
}

impl Analytical {
    /// The model of `machine`; `CostModel::set_pipeline` gives it the pipeline.
    pub fn new(machine: Machine) -> Analytical {
        Analytical { machine, ops_per_point: vec![], scatters: vec![] }
    }

    /// The predicted cycles of one stage (from its features as
    /// [`StageFeatures::shared`] gives them: `working_set_at_root` is not
    /// read).
    pub fn stage_cycles(&self, stage: StageIdx, f: &ScheduleFeatures) -> f64 {
        let m = &self.machine;
        let ops = self.ops_per_point.get(stage.index()).copied().unwrap_or(1.0).max(1.0);
        // Threads kept busy: idle cores waste their share.
        let tasks = (f.inner_parallelism * f.outer_parallelism).max(1.0);
        let busy = tasks.min(m.threads);
        let rounds = (tasks / m.threads).ceil().max(1.0);
        let utilization = (tasks / m.threads / rounds).min(1.0);
        let parallel_speedup = (busy * utilization.max(1.0 / m.threads)).max(1.0);
        // A vector wider than the machine's runs as several.
        let registers_per_vector = (f.vector_size / f.native_vector_size.max(1.0)).max(1.0);
        let vector_ops = f.num_vectors * registers_per_vector;
        if f.inlined_calls > 0.0 {
            // Recomputed at every use, vectorized as its users are.
            return (vector_ops / m.vector_ops_per_cycle + f.num_scalars / m.scalar_ops_per_cycle) * ops / parallel_speedup;
        }
        let arithmetic = (vector_ops / m.vector_ops_per_cycle + f.num_scalars / m.scalar_ops_per_cycle) * ops;
        let loads =
            vector_ops * f.vector_loads_per_vector + f.num_vectors * f.scalar_loads_per_vector + f.num_scalars * f.scalar_loads_per_scalar;
        // Memory traffic, priced by where each production's footprint fits
        // (a sliding Func's production touches its share of a realization's).
        let per_realization = f.unique_bytes_read_per_realization + f.bytes_at_realization;
        let footprint =
            if f.num_productions > f.num_realizations { per_realization * f.num_realizations / f.num_productions } else { per_realization };
        let per_byte = m.cycles_per_byte_for(footprint.max(f.working_set_at_production));
        let traffic = f.num_realizations * per_realization * per_byte;
        // The whole footprint streams from memory at least once.
        let cold = (f.bytes_at_root + f.unique_bytes_read_per_realization.min(f.bytes_at_root * 4.0)) * m.cycles_per_byte[3] * 0.25;
        let scatter = if f.vector_size > 1.0 && self.scatters.get(stage.index()).copied().unwrap_or(false) {
            f.num_vectors * f.vector_size * m.scatter_lane
        } else {
            0.0
        };
        let allocations = if f.bytes_at_realization > 64.0 * 1024.0 { f.num_realizations * m.allocation } else { 0.0 };
        let parallel = if f.inner_parallelism > 1.0 {
            f.num_productions * (m.parallel_launch + m.parallel_task * f.inner_parallelism / m.threads)
        } else {
            0.0
        };
        let loop_overhead = f.num_productions * 20.0;
        (arithmetic + loads + scatter + traffic) / parallel_speedup + cold + allocations + parallel + loop_overhead
    }
}

/// What calls of math functions cost beyond the one operation the
/// featurizer counts each as: f32 `exp`, `log` and `pow` are what lowering
/// expands them into (the operations of their expansions), the other
/// transcendental functions a C library call.
struct MathCosts {
    exp: f64,
    log: f64,
    pow: f64,
}

/// The operations a C library call of a transcendental function costs
/// (a scalar `sin` or `tanh` takes tens of cycles).
const LIBRARY_CALL_OPS: f64 = 20.0;

impl MathCosts {
    fn new() -> MathCosts {
        let x = || Expr::var("x", Type::f32());
        MathCosts {
            exp: computing_nodes(&compiler::ir::exp::expansion(x())),
            log: computing_nodes(&compiler::ir::log::log_expansion(x())),
            pow: computing_nodes(&compiler::ir::log::pow_expansion(x(), Expr::var("y", Type::f32()))),
        }
    }

    /// The operations of `f` on `ty`.
    fn ops(&self, f: MathFn, ty: Type) -> f64 {
        let single = ty.scalar == ScalarType::F32;
        match f {
            MathFn::Exp if single => self.exp,
            MathFn::Log if single => self.log,
            MathFn::Pow if single => self.pow,
            MathFn::Exp | MathFn::Log | MathFn::Pow | MathFn::Sin | MathFn::Cos | MathFn::Tanh => LIBRARY_CALL_OPS,
            _ => 1.0,
        }
    }

    /// The operations the math calls of `exprs` cost beyond one each (a
    /// node shared in them counted once, as the featurizer counts).
    fn extra_ops(&self, exprs: &[Expr]) -> f64 {
        struct Calls<'a> {
            costs: &'a MathCosts,
            extra: f64,
            seen: HashSet<usize>,
        }
        impl Visitor for Calls<'_> {
            fn visit_expr(&mut self, e: &Expr) {
                if !self.seen.insert(e.address()) {
                    return;
                }
                if let ExprNode::Call { target: CallTarget::Math(f), ty, .. } = e.node() {
                    self.extra += self.costs.ops(*f, *ty) - 1.0;
                }
                walk_expr(self, e)
            }
        }
        let mut calls = Calls { costs: self, extra: 0.0, seen: HashSet::new() };
        exprs.iter().for_each(|e| calls.visit_expr(e));
        calls.extra
    }
}

/// The nodes of `e` that compute something (neither a variable, a
/// constant nor a `let`), each once.
fn computing_nodes(e: &Expr) -> f64 {
    struct Count(f64);
    impl Visitor for Count {
        fn visit_expr(&mut self, e: &Expr) {
            if !matches!(
                e.node(),
                ExprNode::Var { .. }
                    | ExprNode::IntImm { .. }
                    | ExprNode::UIntImm { .. }
                    | ExprNode::FloatImm { .. }
                    | ExprNode::Let { .. }
            ) {
                self.0 += 1.0;
            }
            walk_expr(self, e)
        }
    }
    let mut count = Count(0.0);
    count.visit_expr(e);
    count.0
}

impl CostModel for Analytical {
    fn name(&self) -> String {
        "analytical".to_string()
    }

    fn set_pipeline(&mut self, dag: &Dag) {
        let math = MathCosts::new();
        self.ops_per_point = dag
            .stages
            .iter()
            .map(|s| {
                let p = PipelineFeatures::of(dag, s);
                // Arithmetic rows (add .. select, calls of math functions,
                // each call counted as one there).
                let rows = (4..=18).chain([22]);
                let ops = rows.map(|r| p.op_histogram[r].iter().sum::<u32>() as f64).sum::<f64>();
                ops + math.extra_ops(&s.exprs)
            })
            .collect();
        self.scatters =
            dag.stages.iter().map(|s| s.loops.iter().position(|l| l.pure_dim == Some(0)).is_some_and(|v| s.scatters_along(v))).collect();
    }

    /// Each candidate on its own, so the batch is shared among the
    /// threads.
    fn evaluate(&self, batch: &[&StageFeatures]) -> Vec<Cost> {
        batch
            .par_iter()
            .map(|features| {
                Cost::of_stages(features.shared().map(|(s, f)| (s, self.stage_cycles(s, f) / self.machine.cycles_per_second)).collect())
            })
            .collect()
    }
}

/// Random costs from a seed: for sampling schedules at random.
pub struct RandomModel {
    seed: u64,
}

impl RandomModel {
    /// A model whose costs come from `seed` and each candidate's features
    /// alone.
    pub fn new(seed: u64) -> RandomModel {
        RandomModel { seed }
    }
}

impl CostModel for RandomModel {
    fn name(&self) -> String {
        format!("random (seed {})", self.seed)
    }

    fn set_pipeline(&mut self, _: &Dag) {}

    fn evaluate(&self, batch: &[&StageFeatures]) -> Vec<Cost> {
        batch
            .iter()
            .map(|features| {
                // The candidate's features seed its cost, so the same
                // candidate costs the same in every batch.
                let mut h = self.seed;
                for (s, f) in features.iter() {
                    for v in f.to_array() {
                        h = (h ^ v.to_bits() ^ s.0 as u64).wrapping_mul(0x0100_0000_01b3);
                    }
                }
                let mut rng = ChaCha8Rng::seed_from_u64(h);
                Cost::of_stages(features.keys().map(|s| (s, rng.random::<f64>())).collect())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_math_call_costs_what_it_compiles_to() {
        let costs = MathCosts::new();
        assert!(
            costs.pow > costs.log && costs.log > costs.exp && costs.exp > 10.0,
            "exp {} log {} pow {}",
            costs.exp,
            costs.log,
            costs.pow
        );
        let x = Expr::var("x", Type::f32());
        let pow = Expr::math(MathFn::Pow, vec![x.clone(), x.clone()]);
        // A call shared by two uses is computed once.
        let twice = Expr::binary(compiler::ir::expr::BinOp::Add, pow.clone(), pow);
        assert_eq!(costs.extra_ops(&[twice]), costs.pow - 1.0);
        assert_eq!(costs.extra_ops(&[Expr::math(MathFn::Sqrt, vec![x.clone()])]), 0.0);
        let f64_exp = Expr::math(MathFn::Exp, vec![Expr::var("y", Type::f64())]);
        assert_eq!(costs.extra_ops(&[f64_exp]), LIBRARY_CALL_OPS - 1.0);
    }
}
