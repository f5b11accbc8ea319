//! Schedule features of a (possibly partial) loop nest, per stage, in the
//! layout of [`featurizer::ScheduleFeatures`].
//!
//! One walk from the root carries how many times each level runs and the
//! parallelism around it. A stage computed somewhere gets its counts
//! (realizations, productions, points computed, vectors and scalars), its
//! allocation sizes, what it loads per production, per vector and per
//! parallel task (through the DAG's compiled bounds and load Jacobians),
//! and its working sets. A Func stored at a level outside the one that
//! computes it slides: a realization (an allocation, over the region the
//! storing level needs) is computed once, in slides spread over the
//! productions inside it, so its points, reads and bytes are counted per
//! realization and divided among the productions (its allocation is
//! counted unfolded). A Func inlined into innermost nodes gets its call
//! counts. Stages of Funcs not yet placed get no features: the search
//! costs them optimistically (as free), as Adams et al. do.
//!
//! A successor shares every subtree but one path with its parent, and what
//! a chain computes depends only on its subtree, the region required of it,
//! and how often and how parallel its level runs. So featurizing leaves a
//! [`ChainCache`]: per chain at the root, those keys and what the chain
//! added (its stages' shared features, its inlined calls, and the same for
//! the chains computed inside it). Featurizing a successor with its
//! parent's cache finds each chain's previous version by stage (a Func is
//! computed in one place), reuses it whole when its key is unchanged, and
//! otherwise featurizes it again reusing the chains inside it.

pub use crate::stage_features::StageFeatures;

use crate::loop_nest::LoopNest;
use compiler::target::{MAX_SHUFFLED_STRIDE, MAX_UPSAMPLING_FACTOR};
use featurizer::{Dag, NodeId, ScheduleFeatures, Span, StageIdx};
use fnv::FnvHashMap as HashMap;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Calls of a Func inlined into innermost nodes: calls, vector calls and
/// scalar calls.
type InlinedCalls = (f64, f64, f64);

/// What a chain's features depend on besides its own subtree.
#[derive(Debug)]
struct ChainKey {
    /// The chain's top node, by address: a cache holds keys only of nodes
    /// of the tree it was made for, which its owner keeps alive, and is
    /// compared only with keys of live trees, so an address is never
    /// another node's.
    top: usize,
    region: Vec<Span>,
    productions: u64,
    outer_par: u64,
    /// For a chain computed sliding: its Func's region per realization
    /// and how many realizations there are (the bits of the count).
    realization: Option<Realization>,
}

/// Where a Func stored outside the level that computes it is allocated:
/// the region one allocation holds and the times it is allocated (the
/// bits of the count, to compare exactly).
type Realization = (Vec<Span>, u64);

/// What featurizing one chain (and everything computed inside it) added,
/// under which key.
#[derive(Debug)]
struct ChainSummary {
    stage: StageIdx,
    key: ChainKey,
    /// The features of its stage and of every stage computed inside it.
    stages: Vec<(StageIdx, Arc<ScheduleFeatures>)>,
    inlined: Vec<(NodeId, InlinedCalls)>,
    /// The chains computed at its levels, in walk order, for a successor
    /// that changes this chain but not those.
    nested: Vec<Chain>,
}

type Chain = Arc<ChainSummary>;

/// The chains a featurized nest computes at the root, for its successors
/// to reuse.
#[derive(Debug, Default)]
pub struct ChainCache {
    roots: Vec<Chain>,
}

/// A parent's features and chains, which a successor may reuse.
pub type Previous<'a> = (&'a StageFeatures, &'a ChainCache);

/// Computes the features of every placed stage of `root`.
pub fn featurize(dag: &Dag, root: &LoopNest) -> StageFeatures {
    featurize_reusing(dag, root, None).0
}

/// Computes the features of every placed stage of `root`, reusing those of
/// the chains it shares with the nest `previous` was computed for.
pub fn featurize_reusing(dag: &Dag, root: &LoopNest, previous: Option<Previous<'_>>) -> (StageFeatures, ChainCache) {
    let mut w =
        Walker { dag, stages: Vec::with_capacity(dag.stages.len()), inlined: HashMap::default(), stored_at_levels: HashMap::default() };
    for &g in &root.store_at {
        w.stored_at_levels.insert(g, (dag.node(g).region_required.clone(), 1f64.to_bits()));
    }
    let mut roots = vec![];
    w.walk(root, 1.0, 1.0, previous.map_or(&[], |(_, cache)| &cache.roots), &mut roots);
    let Walker { stages, inlined, .. } = w;
    let mut inlined: Vec<(NodeId, InlinedCalls)> = inlined.into_iter().collect();
    inlined.sort_by_key(|(node, _)| *node);
    let inlined_features = inlined.into_iter().map(|(node, (calls, vectors, scalars))| {
        let n = dag.node(node);
        let stage = dag.stage(n.stages[0]);
        let f = ScheduleFeatures {
            inlined_calls: calls,
            num_vectors: vectors,
            num_scalars: scalars,
            native_vector_size: stage.vector_size as f64,
            inner_parallelism: 1.0,
            outer_parallelism: dag.target.threads as f64,
            points_computed_minimum: Span::volume(&stage.loop_spans(&n.region_computed)) as f64,
            ..ScheduleFeatures::default()
        };
        (n.stages[0], f)
    });
    (StageFeatures::from_parts(dag.stages.len(), stages, inlined_features), ChainCache { roots })
}

struct Walker<'a> {
    dag: &'a Dag,
    /// The features of the stages computed so far.
    stages: Vec<(StageIdx, Arc<ScheduleFeatures>)>,
    inlined: HashMap<NodeId, InlinedCalls>,
    /// The realization of each Func stored at a chain level walked so
    /// far, for a chain computed sliding below it.
    stored_at_levels: HashMap<NodeId, Realization>,
}

/// The chain of `stage` among `old` (the chains a level's previous version
/// computed), looked for first where the `i`th chain would be.
fn previous_version(old: &[Chain], stage: StageIdx, i: usize) -> Option<&Chain> {
    let n = old.len();
    (0..n).map(|k| &old[(i + k) % n]).find(|c| c.stage == stage)
}

impl Walker<'_> {
    /// Visits the chains computed at `level`, which runs `runs` times (each
    /// iteration of its body `runs * iterations` times in all) inside
    /// `outer_par` parallel tasks, reusing what `old` (the chains of the
    /// level's previous version) found; records each chain in `out`.
    fn walk(&mut self, level: &LoopNest, runs: f64, outer_par: f64, old: &[Chain], out: &mut Vec<Chain>) {
        let body_runs = runs * level.iterations() as f64;
        for top in level.children.iter().filter(|c| c.stage != level.stage) {
            let s = top.stage.expect("a chain has a stage");
            let node = self.dag.stage(s).node;
            let region: &[Span] =
                if level.is_root() { &self.dag.node(node).region_required } else { &level.level_regions(self.dag)[&node] };
            let top_address = Arc::as_ptr(top) as usize;
            let (productions, par) = (body_runs.to_bits(), outer_par.to_bits());
            // Stored at an enclosing level of a chain: computed sliding.
            let realization = (!level.store_at.contains(&node)).then(|| self.stored_at_levels[&node].clone());
            let previous = previous_version(old, s, out.len());
            let chain = match previous {
                Some(p)
                    if p.key.top == top_address
                        && p.key.productions == productions
                        && p.key.outer_par == par
                        && p.key.region == region
                        && p.key.realization == realization =>
                {
                    self.stages.extend(p.stages.iter().cloned());
                    for (node, calls) in &p.inlined {
                        add_calls(self.inlined.entry(*node).or_default(), *calls);
                    }
                    p.clone()
                }
                _ => {
                    let key = ChainKey { top: top_address, region: region.to_vec(), productions, outer_par: par, realization };
                    self.featurize_chain(top, s, key, previous.map_or(&[], |p| &p.nested))
                }
            };
            out.push(chain);
        }
    }

    /// Featurizes one chain, reusing the chains inside it that `old` (its
    /// previous version's) holds unchanged, and records what it added.
    fn featurize_chain(&mut self, top: &LoopNest, s: StageIdx, key: ChainKey, old: &[Chain]) -> Chain {
        let stages_from = self.stages.len();
        let inlined = std::mem::take(&mut self.inlined);
        let mut nested = vec![];
        self.chain(top, s, &key, old, &mut nested);
        let my_calls = std::mem::replace(&mut self.inlined, inlined);
        let mut my_calls: Vec<(NodeId, InlinedCalls)> = my_calls.into_iter().collect();
        my_calls.sort_by_key(|(node, _)| *node);
        for (node, calls) in &my_calls {
            add_calls(self.inlined.entry(*node).or_default(), *calls);
        }
        Arc::new(ChainSummary { stage: s, key, stages: self.stages[stages_from..].to_vec(), inlined: my_calls, nested })
    }

    /// The features of the chain of stage `s` from `top` under `key`, and
    /// those of the chains computed at its levels (recorded in `nested`).
    fn chain(&mut self, top: &LoopNest, s: StageIdx, key: &ChainKey, old: &[Chain], nested: &mut Vec<Chain>) {
        let (region, productions, outer_par) = (&key.region, f64::from_bits(key.productions), f64::from_bits(key.outer_par));
        let dag = self.dag;
        let stage = dag.stage(s);
        let n = dag.node(stage.node);
        let bpp = n.bytes_per_point() as f64;
        let computed = n.region_computed_for(region);
        let nodes = top.chain();
        let leaf = *nodes.last().unwrap();
        // Computed sliding, a realization's points are computed once, in
        // slides spread over its productions; otherwise every production
        // computes its whole region.
        let (realizations, realized, realization_loops) = match &key.realization {
            Some((realized, count)) => {
                let realized = n.region_computed_for(realized);
                let loops = stage.loop_spans(&realized);
                (f64::from_bits(*count), realized, loops)
            }
            None => (productions, computed.clone(), top.whole.clone()),
        };
        let per_realization = Span::volume(&realization_loops) as f64;
        let points_total = realizations * per_realization;
        let sliding = key.realization.is_some();
        let per_production = if sliding { points_total / productions.max(1.0) } else { per_realization };
        let inner_par: f64 = nodes.iter().filter(|n| n.parallel).map(|n| n.iterations() as f64).product();
        let vector_size = leaf.vector_loop.map_or(1.0, |v| leaf.size[v] as f64);
        let (in_vectors, row) = vector_row(stage, &nodes);
        // Iterations of some work per point: vectors, and scalars.
        let vectors_and_scalars = |per_point: f64| (per_point * in_vectors / row / vector_size, per_point * (row - in_vectors) / row);
        let (num_vectors, num_scalars) = vectors_and_scalars(points_total);
        let bytes_at_realization = bpp * Span::volume(&realized) as f64;
        let bytes_at_production =
            if sliding { bytes_at_realization * per_production / per_realization.max(1.0) } else { bytes_at_realization };
        let innermost_bytes = bpp * computed.first().map_or(1, |d| d.extent()) as f64;
        let mut f = ScheduleFeatures {
            num_realizations: realizations,
            num_productions: productions,
            points_computed_per_realization: per_realization,
            points_computed_per_production: per_production,
            points_computed_total: points_total,
            points_computed_minimum: Span::volume(&stage.loop_spans(&n.region_computed)) as f64,
            innermost_loop_extent: leaf.iterations() as f64,
            innermost_pure_loop_extent: stage.loops.iter().zip(&leaf.size).filter(|(l, _)| !l.is_rvar).map(|(_, &s)| s as f64).product(),
            unrolled_loop_extent: unrolled(stage, leaf).iter().map(|&(_, n)| n as f64).product(),
            inner_parallelism: inner_par,
            outer_parallelism: outer_par,
            bytes_at_realization,
            bytes_at_production,
            bytes_at_root: bpp * Span::volume(&n.region_computed) as f64,
            innermost_bytes_at_realization: bpp * realized.first().map_or(1, |d| d.extent()) as f64,
            innermost_bytes_at_production: innermost_bytes,
            innermost_bytes_at_root: bpp * n.region_computed.first().map_or(1, |d| d.extent()) as f64,
            vector_size,
            native_vector_size: stage.vector_size as f64,
            num_vectors,
            num_scalars,
            bytes_at_task: bytes_at_realization / inner_par.max(1.0),
            innermost_bytes_at_task: innermost_bytes,
            ..ScheduleFeatures::default()
        };
        loads(dag, s, leaf, &realization_loops, inner_par, &mut f);
        // Funcs inlined into the innermost node: their calls, vectorized as it is.
        let leaf_points = points_total;
        for (&g, &k) in &leaf.inlined {
            let calls = k as f64 * leaf_points;
            let (vector_calls, scalar_calls) = vectors_and_scalars(calls);
            let split = (calls, vector_calls, scalar_calls);
            add_calls(self.inlined.entry(g).or_default(), split);
        }
        // Working sets: what the Funcs stored inside the chain allocate.
        let mut runs = productions;
        let mut par = outer_par;
        let mut stored_inside = 0.0;
        for node in &nodes {
            for g in &node.store_at {
                let region = &node.level_regions(dag)[g];
                let gn = dag.node(*g);
                stored_inside += gn.bytes_per_point() as f64 * Span::volume(&gn.region_computed_for(region)) as f64;
                let allocations = runs * node.iterations() as f64;
                self.stored_at_levels.insert(*g, (region.to_vec(), allocations.to_bits()));
            }
            self.walk(node, runs, par * if node.parallel { node.iterations() as f64 } else { 1.0 }, old, nested);
            runs *= node.iterations() as f64;
            if node.parallel {
                par *= node.iterations() as f64;
            }
        }
        f.working_set = stored_inside;
        f.working_set_at_production = stored_inside + bytes_at_production;
        f.working_set_at_realization = stored_inside + bytes_at_realization;
        f.working_set_at_task = f.working_set_at_production / inner_par.max(1.0);
        self.stages.push((s, Arc::new(f)));
    }
}

/// How a chain's vectorized loop runs in the compiled code, per row of it:
/// the points computed in whole vectors and the points of the row (the
/// rest run as scalar code). The schedule the chain becomes
/// ([`crate::apply`]) splits the vectorized loop by the vector width at the
/// innermost level above the leaf that tiles it (the top when none does),
/// and a row is that level's span. A pure definition whose row is at least
/// a vector shifts its last vector inwards, so every point runs in vectors;
/// elsewhere (an update, a row narrower than a vector) the last partial
/// vector is guarded, and a guarded vector whose lanes are not all in range
/// runs as scalar code. Without a vectorized loop every point is scalar.
fn vector_row(stage: &featurizer::Stage, chain: &[&LoopNest]) -> (f64, f64) {
    let Some((leaf, above)) = chain.split_last() else {
        return (0.0, 1.0);
    };
    let Some(v) = leaf.vector_loop else {
        return (0.0, 1.0);
    };
    let lanes = leaf.size[v].max(1);
    let split_level = above.iter().rev().find(|n| n.size[v] > 1).or(above.first());
    let row = split_level.map_or(lanes, |n| n.whole[v].extent().max(1));
    if stage.index == 0 && row >= lanes {
        return (row as f64, row as f64);
    }
    ((row / lanes * lanes) as f64, row as f64)
}

fn add_calls(total: &mut InlinedCalls, calls: InlinedCalls) {
    total.0 += calls.0;
    total.1 += calls.1;
    total.2 += calls.2;
}

/// The innermost node's unrolled loops (pure, not vectorized, more than one
/// iteration: a register tile's rows), with their iterations.
fn unrolled(stage: &featurizer::Stage, leaf: &LoopNest) -> Vec<(usize, i64)> {
    (0..stage.loops.len())
        .filter(|&i| !stage.loops[i].is_rvar && leaf.vector_loop != Some(i) && leaf.size[i] > 1)
        .map(|i| (i, leaf.size[i]))
        .collect()
}

/// A producer a stage reads, directly or through Funcs inlined into it,
/// and the region read.
struct Read {
    producer: NodeId,
    region: Vec<Span>,
}

/// The regions of non-inlined producers that `stage` reads over `loops`,
/// looking through the Funcs inlined into its innermost node.
fn reads(dag: &Dag, stage: &featurizer::Stage, inlined: &BTreeMap<NodeId, i64>, loops: &[Span], out: &mut Vec<Read>) {
    for &e in &stage.incoming {
        let edge = dag.edge(e);
        let region = edge.region_read(loops);
        if inlined.contains_key(&edge.producer) {
            let g = dag.node(edge.producer);
            let g_stage = dag.stage(g.stages[0]);
            reads(dag, g_stage, inlined, &g_stage.loop_spans(&g.region_computed_for(&region)), out);
        } else {
            out.push(Read { producer: edge.producer, region });
        }
    }
}

type Matrix = Vec<Vec<Option<featurizer::Rational>>>;

/// The access matrices (by `stage`'s loops, with counts) of the
/// non-inlined producers it reads, through the Funcs inlined into it.
fn accesses(dag: &Dag, stage: &featurizer::Stage, inlined: &BTreeMap<NodeId, i64>) -> Vec<(Matrix, f64)> {
    let mut out = vec![];
    for &e in &stage.incoming {
        let edge = dag.edge(e);
        for j in &edge.jacobians {
            if inlined.contains_key(&edge.producer) {
                let g_stage = dag.stage(dag.node(edge.producer).stages[0]);
                for (rows, count) in accesses(dag, g_stage, inlined) {
                    out.push((featurizer::jacobian::compose(&rows, &j.rows), count * j.count as f64));
                }
            } else {
                out.push((j.rows.clone(), j.count as f64));
            }
        }
    }
    out
}

/// How many dense vector loads one vector's read takes when the vector
/// runs along a loop whose column of the access's Jacobian is `column`, as
/// the code generator reads it: none for a read that does not move (a
/// scalar load, broadcast), `stride` loads at a constant stride up to
/// [`MAX_SHUFFLED_STRIDE`] along the innermost storage dimension (clamps
/// seen through), one for an upsampling by up to
/// [`MAX_UPSAMPLING_FACTOR`]; `None` for a gather (one scalar load per lane).
fn dense_loads_per_vector(column: &[Option<featurizer::Rational>]) -> Option<u32> {
    let Some((first, rest)) = column.split_first() else {
        return Some(0);
    };
    let first = (*first)?;
    if !rest.iter().all(|r| r.is_some_and(|r| r.is_zero())) {
        return None;
    }
    match (first.num, first.den) {
        (0, _) => Some(0),
        (stride, 1) if (1..=MAX_SHUFFLED_STRIDE).contains(&stride) => Some(stride as u32),
        (1, factor) if (2..=MAX_UPSAMPLING_FACTOR).contains(&factor) => Some(1),
        _ => None,
    }
}

/// What stage `s` loads, through the Funcs inlined into it: per realization
/// (over `realization`, the spans of its loops in one), per vector (over
/// one iteration of the innermost node), per task, and the kinds of load
/// per vector from the access matrices' vectorized column.
fn loads(dag: &Dag, s: StageIdx, leaf: &LoopNest, realization: &[Span], inner_par: f64, f: &mut ScheduleFeatures) {
    let stage = dag.stage(s);
    let one_vector: Vec<Span> =
        leaf.whole.iter().enumerate().map(|(i, w)| if Some(i) == leaf.vector_loop { *w } else { Span::new(w.min, w.min) }).collect();
    let footprint = |loops: &[Span]| {
        let mut read = vec![];
        reads(dag, stage, &leaf.inlined, loops, &mut read);
        read.iter().fold((0.0, 0.0), |(bytes, lines), r| {
            let volume = Span::volume(&r.region) as f64;
            let rows = volume / r.region.first().map_or(1, |d| d.extent().max(1)) as f64;
            (bytes + dag.node(r.producer).bytes_per_point() as f64 * volume, lines + rows)
        })
    };
    let (bytes, lines) = footprint(realization);
    let (vbytes, vlines) = footprint(&one_vector);
    let (mut scalar_per_vector, mut vector_per_vector, mut per_scalar) = (0.0, 0.0, 0.0);
    let zero = |c: &Option<featurizer::Rational>| c.is_some_and(|r| r.is_zero());
    let unrolled = unrolled(stage, leaf);
    let mut accessed = accesses(dag, stage, &leaf.inlined);
    // An update reads the point it writes, from memory unless it is a
    // reduction whose point stays put along every reduction loop (then it
    // accumulates in a register).
    let rvars: Vec<usize> = (0..stage.loops.len()).filter(|&i| stage.loops[i].is_rvar).collect();
    let accumulates = !rvars.is_empty() && rvars.iter().all(|&i| stage.store.rows.iter().all(|r| zero(&r[i])));
    if stage.index > 0 && !accumulates {
        accessed.push((stage.store.rows.clone(), 1.0));
    }
    for (rows, count) in accessed {
        // A load that does not move along an unrolled loop is shared by
        // its iterations.
        let shared: i64 = unrolled.iter().filter(|&&(u, _)| rows.iter().all(|r| zero(&r[u]))).map(|&(_, n)| n).product();
        let count = count / shared as f64;
        per_scalar += count;
        let Some(v) = leaf.vector_loop else {
            continue;
        };
        let column: Vec<Option<featurizer::Rational>> = rows.iter().map(|r| r[v]).collect();
        match dense_loads_per_vector(&column) {
            Some(0) => scalar_per_vector += count,
            Some(loads) => vector_per_vector += count * loads as f64,
            None => scalar_per_vector += count * f.vector_size,
        }
    }
    f.unique_bytes_read_per_realization = bytes;
    f.unique_lines_read_per_realization = lines;
    f.allocation_bytes_read_per_realization = bytes;
    f.unique_bytes_read_per_vector = vbytes;
    f.unique_lines_read_per_vector = vlines;
    f.unique_bytes_read_per_task = bytes / inner_par.max(1.0);
    f.unique_lines_read_per_task = lines / inner_par.max(1.0);
    f.scalar_loads_per_vector = scalar_per_vector;
    f.vector_loads_per_vector = vector_per_vector;
    f.scalar_loads_per_scalar = per_scalar;
}
