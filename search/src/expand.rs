//! Successor generation: the decisions of the search, two per Func in
//! consumer-first order (Adams et al. 2019, section 4 of the paper).
//!
//! Phase 0 places the Func: inlined into every innermost node that uses
//! it, computed at the root, or computed inside the loops of its single
//! consuming subtree: at any level of a consumer's chain, either as the
//! chain is or after tiling that level into outer tiles (where the Func is
//! computed) and the tile's loops; where the compiler's sliding window
//! applies (the level runs one serial loop along which the region moves
//! forwards), also stored one level out and computed sliding, a line
//! buffer. Placements whose region does not shrink below the root's are
//! pruned. Phase 1 tiles the Func's reductions for
//! registers (or leaves them as they are), then gives its root-level chains
//! parallel outer tiles, enough for the machine's threads and not too many.

use crate::loop_nest::{compute_here, LoopNest, RegionMemo};
use crate::tiling::generate_tilings;
use featurizer::{Dag, NodeId, Span};
use fnv::FnvHashMap as HashMap;
use std::sync::Arc;

/// The Funcs in decision order: consumers before producers.
pub fn decision_order(dag: &Dag) -> Vec<NodeId> {
    dag.funcs().rev().map(|n| n.id).collect()
}

/// The placements the search tries for a Func.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placements {
    /// Inside other Funcs' loops (else only inlined or at the root).
    pub nested: bool,
    /// Also stored one level out and computed sliding (line buffers), where
    /// nested.
    pub sliding: bool,
}

impl Placements {
    /// Inlined or at the root only.
    pub const FLAT: Placements = Placements { nested: false, sliding: false };
    /// Every placement.
    pub const ALL: Placements = Placements { nested: true, sliding: true };
}

/// The successors of `root` for decision `d` (Func `order[d / 2]`, phase
/// `d % 2`), among `placements`.
pub fn children(dag: &Dag, root: &Arc<LoopNest>, order: &[NodeId], d: usize, placements: Placements) -> Vec<Arc<LoopNest>> {
    let node = order[d / 2];
    if d.is_multiple_of(2) {
        place(dag, root, node, placements)
    } else {
        register_tilings(dag, root, node).iter().flat_map(|r| parallelize(dag, r, node)).collect()
    }
}

/// Phase 0: every placement of `node`.
fn place(dag: &Dag, root: &Arc<LoopNest>, node: NodeId, placements: Placements) -> Vec<Arc<LoopNest>> {
    let n = dag.node(node);
    let mut out = vec![];
    if !n.is_output && n.stages.len() == 1 {
        if let Some(inlined) = inline(dag, root, node) {
            out.push(inlined);
        }
    }
    let mut at_root = (**root).clone();
    at_root.children.extend(compute_here(dag, node, &n.region_required).into_iter().map(Arc::new));
    at_root.store_at.push(node);
    out.push(Arc::new(at_root));
    if placements.nested && !n.is_output {
        let root_volume = Span::volume(&n.region_required);
        // A Func read by a sliding one, directly or not, does not slide
        // itself: its window would start where that one's moved, a chain
        // of windows the compiler cannot always prove moves forwards.
        let may_slide = placements.sliding && !consumers_of(dag, node).into_iter().any(|c| computed_sliding(dag, root, c));
        place_inside(dag, root, node, root_volume, may_slide, &mut out);
    }
    out
}

/// Placements of `node` inside the single child of `at` that calls it,
/// each returned as a new version of `at`.
fn place_inside(dag: &Dag, at: &Arc<LoopNest>, node: NodeId, root_volume: i64, may_slide: bool, out: &mut Vec<Arc<LoopNest>>) {
    let callers: Vec<usize> = at.children.iter().enumerate().filter(|(_, c)| c.calls(dag, node)).map(|(i, _)| i).collect();
    if callers.len() != 1 || !at.inlined.is_empty() {
        return;
    }
    let i = callers[0];
    let child = &at.children[i];
    // Nothing is computed inside a reduction's loops.
    if child.innermost || iterates_reduction(dag, child) {
        return;
    }
    // `at` with its child replaced, and storing `node` when it is computed
    // in the child's loop sliding along it.
    let with_child = |c: Arc<LoopNest>, storage: Storage| {
        let mut copy = at.copy_to_change_children();
        copy.children[i] = c;
        if storage == Storage::Outside {
            copy.store_at.push(node);
        }
        Arc::new(copy)
    };
    let mut place_at = |level: &Arc<LoopNest>| {
        let storages: &[Storage] =
            if may_slide && slides(dag, level, node) { &[Storage::Here, Storage::Outside] } else { &[Storage::Here] };
        for &storage in storages {
            if let Some(placed) = compute_at(dag, level, node, root_volume, storage) {
                out.push(with_child(placed, storage));
            }
        }
    };
    // Computed at the child's level, as it is.
    place_at(child);
    // Computed at outer tiles of the child's level.
    let pure: Vec<bool> = child.stage.map(|s| dag.stage(s).loops.iter().map(|l| !l.is_rvar).collect()).unwrap_or_default();
    let sizes: Vec<i64> = child.size.iter().zip(&pure).map(|(&s, &p)| if p { s } else { 1 }).collect();
    if sizes.iter().any(|&s| s > 1) && !child.parallel {
        for tiling in generate_tilings(&sizes, true) {
            place_at(&Arc::new(tile(child, &tiling)));
        }
    }
    // Deeper: inside the child's single calling child.
    let mut deeper = vec![];
    place_inside(dag, child, node, root_volume, may_slide, &mut deeper);
    out.extend(deeper.into_iter().map(|c| with_child(c, Storage::Here)));
}

/// `level` split into outer tiles (`outer` iterations per loop) whose one
/// child runs the tile's loops and holds `level`'s children.
pub fn tile(level: &LoopNest, outer: &[i64]) -> LoopNest {
    let mut top = LoopNest { size: outer.to_vec(), children: vec![], store_at: vec![], ..level.clone() };
    let inner_size: Vec<i64> = level.size.iter().zip(outer).map(|(&s, &o)| (s + o - 1) / o).collect();
    let inner = LoopNest { size: inner_size, whole: top.inner(), parallel: false, ..level.clone() };
    top.children = vec![Arc::new(inner)];
    top.parallel = level.parallel;
    top
}

/// Where a Func computed at a level is stored.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Storage {
    /// At the level itself: each iteration computes the whole region.
    Here,
    /// At the level's parent (which the caller marks): the compiler's
    /// sliding window computes, at each iteration after the first, only
    /// what the earlier ones did not.
    Outside,
}

/// Whether `node` computed at `level` and stored at its parent slides in
/// the compiled code: `node` has no updates, `level` runs one serial pure
/// loop of a pure definition (so that nothing else runs between storage
/// and computation, and its tail shifts inwards), and from one iteration
/// of that loop to the next the region `node` must provide moves forwards
/// in exactly one dimension (the compiler's conditions,
/// `compiler::lower::sliding_window`), overlapping the region before (else
/// there is nothing to reuse): checked on the first four iterations and
/// the last, at the estimates. The dimension is not the innermost, which
/// `node` computes in whole vectors (a slide narrower than a vector would
/// save nothing). The caller has checked that no Func reading `node`
/// slides (see [`place`]).
fn slides(dag: &Dag, level: &LoopNest, node: NodeId) -> bool {
    if dag.node(node).stages.len() != 1 || level.parallel || level.innermost {
        return false;
    }
    let stage = level.stage.map(|s| dag.stage(s));
    let iterating: Vec<usize> = (0..level.size.len()).filter(|&i| level.size[i] > 1).collect();
    let [i] = iterating.as_slice() else { return false };
    // An update's splits guard their tails (`min` of a rising start and a
    // falling remainder), which the compiler cannot prove moves forwards.
    if stage.is_some_and(|s| s.loops[*i].is_rvar || s.index > 0) {
        return false;
    }
    // The region at a few iterations: the first four and the last (a
    // dimension that moves only every other step moves all the same).
    let step = level.inner()[*i].extent();
    let count = level.size[*i];
    let mut at: Vec<i64> = (0..4.min(count)).collect();
    at.push(count - 1);
    at.dedup();
    let regions: Vec<Vec<Span>> = at
        .iter()
        .map(|&k| {
            let mut shifted = level.clone();
            shifted.whole[*i] = Span::new(level.whole[*i].min + k * step, level.whole[*i].max + k * step);
            shifted.region_required(dag, node, &mut RegionMemo::default())
        })
        .collect();
    let moving: Vec<usize> = (0..regions[0].len()).filter(|&d| regions.iter().any(|r| r[d] != regions[0][d])).collect();
    let [d] = moving.as_slice() else { return false };
    let spans: Vec<Span> = regions.iter().map(|r| r[*d]).collect();
    let forwards = spans.windows(2).all(|w| w[1].min >= w[0].min && w[1].max >= w[0].max);
    *d > 0 && !spans[0].is_empty() && forwards && spans[1].min <= spans[0].max
}

/// The Funcs that read `node`, directly or through others.
fn consumers_of(dag: &Dag, node: NodeId) -> Vec<NodeId> {
    let mut found: Vec<NodeId> = vec![];
    let mut pending = vec![node];
    while let Some(n) = pending.pop() {
        for &e in &dag.node(n).outgoing {
            let c = dag.stage(dag.edge(e).consumer).node;
            if c != node && !found.contains(&c) {
                found.push(c);
                pending.push(c);
            }
        }
    }
    found
}

/// Whether `level`'s subtree computes `node` at a level that does not
/// store it (sliding).
fn computed_sliding(dag: &Dag, level: &LoopNest, node: NodeId) -> bool {
    let here = level.children.iter().any(|c| c.stage != level.stage && c.stage.is_some_and(|s| dag.stage(s).node == node));
    (here && !level.store_at.contains(&node)) || level.children.iter().any(|c| computed_sliding(dag, c, node))
}

/// `level` with `node` computed at it (and stored there, or outside),
/// unless its region there is no smaller than at the root.
fn compute_at(dag: &Dag, level: &Arc<LoopNest>, node: NodeId, root_volume: i64, storage: Storage) -> Option<Arc<LoopNest>> {
    let region = level.region_required(dag, node, &mut RegionMemo::default());
    if region.iter().any(|s| s.is_empty()) || Span::volume(&region) >= root_volume {
        return None;
    }
    let mut copy = level.copy_to_change_children();
    let chains = compute_here(dag, node, &region);
    // Producers run before their consumers at the same level.
    for (k, c) in chains.into_iter().enumerate() {
        copy.children.insert(k, Arc::new(c));
    }
    if storage == Storage::Here {
        copy.store_at.push(node);
    }
    Some(Arc::new(copy))
}

/// `at` with `node` inlined into every innermost node that calls it, or
/// `None` where nothing does. A node calls `node` directly, or through the
/// Funcs inlined into it earlier.
fn inline(dag: &Dag, at: &Arc<LoopNest>, node: NodeId) -> Option<Arc<LoopNest>> {
    let calls_into = |consumer: NodeId| -> i64 {
        dag.node(node)
            .outgoing
            .iter()
            .map(|&e| dag.edge(e))
            .filter(|e| dag.stage(e.consumer).node == consumer)
            .map(|e| e.calls as i64)
            .sum()
    };
    if at.innermost {
        let own = at
            .stage
            .map_or(0, |s| dag.node(node).outgoing.iter().map(|&e| dag.edge(e)).filter(|e| e.consumer == s).map(|e| e.calls as i64).sum());
        let through: i64 = at.inlined.iter().map(|(&f, &k)| k * calls_into(f)).sum();
        if own + through == 0 {
            return None;
        }
        let mut copy = at.copy_to_change_children();
        copy.inlined.insert(node, own + through);
        return Some(Arc::new(copy));
    }
    let mut copy: Option<LoopNest> = None;
    for (i, c) in at.children.iter().enumerate() {
        if let Some(new) = inline(dag, c, node) {
            copy.get_or_insert_with(|| at.copy_to_change_children()).children[i] = new;
        }
    }
    copy.map(Arc::new)
}

/// Whether a level runs a reduction loop.
fn iterates_reduction(dag: &Dag, level: &LoopNest) -> bool {
    level.stage.is_some_and(|s| dag.stage(s).loops.iter().zip(&level.size).any(|(l, &n)| l.is_rvar && n > 1))
}

/// Accumulator vectors a register tile may hold: half the vector registers
/// of the ISA (16 below AVX-512, 32 with it), the rest for operands.
fn max_accumulators(dag: &Dag) -> i64 {
    if dag.target.vector_bytes >= 64 {
        16
    } else {
        8
    }
}

/// Phase 1, first half: `root` as it is, then with `node`'s updates
/// unvectorized, then with its reductions in register tiles. A tile covers `rows` iterations of one pure loop (the
/// same Func dimension in every update) by `vectors` vectors of the
/// vectorized loop, unrolled inside the reduction loops, so that loads
/// which do not vary along the tiled loop are shared by its rows.
fn register_tilings(dag: &Dag, root: &Arc<LoopNest>, node: NodeId) -> Vec<Arc<LoopNest>> {
    let mut out = vec![root.clone()];
    let n = dag.node(node);
    // The updates unvectorized: a vector of an update may store to
    // scattered points, or gather what it reads.
    let mut scalar = Some(root.clone());
    for &s in n.stages.iter().skip(1) {
        scalar = scalar.and_then(|r| with_chain(&r, s, &unvectorized));
    }
    out.extend(scalar);
    let reductions: Vec<_> = n.stages.iter().copied().filter(|&s| dag.stage(s).loops.iter().any(|l| l.is_rvar)).collect();
    if reductions.is_empty() {
        return out;
    }
    let limit = max_accumulators(dag);
    for dim in 0..n.dims.len() {
        for (rows, vectors) in [(2, 1), (4, 1), (8, 1), (16, 1), (2, 2), (4, 2), (8, 2)] {
            if rows * vectors > limit {
                continue;
            }
            let mut changed = root.clone();
            let mut all = true;
            for &s in &reductions {
                match with_chain(&changed, s, &|top| register_tile(dag, top, dim, rows, vectors)) {
                    Some(next) => changed = next,
                    None => all = false,
                }
            }
            if all {
                out.push(changed);
            }
        }
    }
    out
}

/// `at` with the chain of stage `s` (wherever it is computed) replaced by
/// `f` of it, or `None` where `f` declines or the stage is not computed.
fn with_chain(at: &Arc<LoopNest>, s: featurizer::StageIdx, f: &dyn Fn(&LoopNest) -> Option<LoopNest>) -> Option<Arc<LoopNest>> {
    for (i, c) in at.children.iter().enumerate() {
        let replaced = if c.stage == Some(s) && at.stage != Some(s) { f(c).map(Arc::new) } else { with_chain(c, s, f) };
        if let Some(new) = replaced {
            let mut copy = at.copy_to_change_children();
            copy.children[i] = new;
            return Some(Arc::new(copy));
        }
    }
    None
}

/// A chain as [`compute_here`] makes it (its top, then an innermost node
/// running the vectorized loop and the reduction loops) in register tiles
/// of `rows` iterations of the loop over Func dimension `dim` by `vectors`
/// vectors: the top runs the tiles, a middle level the reduction loops, and
/// a new innermost node one tile.
fn register_tile(dag: &Dag, top: &LoopNest, dim: usize, rows: i64, vectors: i64) -> Option<LoopNest> {
    let [leaf] = top.children.as_slice() else { return None };
    let v = leaf.vector_loop?;
    let stage = dag.stage(top.stage?);
    let j = stage.loops.iter().position(|l| l.pure_dim == Some(dim))?;
    if !leaf.innermost || j == v || top.size[j] < rows || top.size[v] < vectors || !leaf.children.is_empty() {
        return None;
    }
    let mut tiled = top.clone();
    tiled.size[j] = (top.size[j] + rows - 1) / rows;
    tiled.size[v] = (top.size[v] + vectors - 1) / vectors;
    let reduction_sizes: Vec<i64> = stage.loops.iter().zip(&leaf.size).map(|(l, &n)| if l.is_rvar { n } else { 1 }).collect();
    let middle = LoopNest {
        size: reduction_sizes,
        whole: tiled.inner(),
        children: vec![],
        inlined: Default::default(),
        innermost: false,
        vector_loop: None,
        ..(**leaf).clone()
    };
    let mut tile_size = vec![1; stage.loops.len()];
    tile_size[j] = rows;
    tile_size[v] = leaf.size[v] * vectors;
    let tile = LoopNest { size: tile_size, whole: middle.inner(), ..(**leaf).clone() };
    let middle = LoopNest { children: vec![Arc::new(tile)], ..middle };
    tiled.children = vec![Arc::new(middle)];
    Some(tiled)
}

/// A chain as [`compute_here`] makes it, with its innermost node running
/// the vectorized loop one point at a time instead.
fn unvectorized(top: &LoopNest) -> Option<LoopNest> {
    let [leaf] = top.children.as_slice() else { return None };
    let v = leaf.vector_loop?;
    if !leaf.innermost || !leaf.children.is_empty() {
        return None;
    }
    let mut scalar = top.clone();
    scalar.size[v] = top.whole[v].extent().max(1);
    let mut size = leaf.size.clone();
    size[v] = 1;
    let leaf = LoopNest { size, whole: scalar.inner(), vector_loop: None, ..(**leaf).clone() };
    scalar.children = vec![Arc::new(leaf)];
    Some(scalar)
}

/// Phase 1, second half: parallel outer tiles of `node`'s root-level chains. Leaves the
/// nest as it is when `node` is not at the root or the machine has one
/// thread.
fn parallelize(dag: &Dag, root: &Arc<LoopNest>, node: NodeId) -> Vec<Arc<LoopNest>> {
    let threads = dag.target.threads as i64;
    let n = dag.node(node);
    let tops: Vec<usize> =
        root.children.iter().enumerate().filter(|(_, c)| c.stage.is_some_and(|s| dag.stage(s).node == node)).map(|(i, _)| i).collect();
    if threads <= 1 || tops.is_empty() {
        return vec![root.clone()];
    }
    // Tiles are chosen on the pure definition's loops and shared, per
    // dimension, by the updates.
    let first = &root.children[tops[0]];
    let stage0 = dag.stage(n.stages[0]);
    let sizes: Vec<i64> = first.size.clone();
    let mut options: Vec<Vec<i64>> = generate_tilings(&sizes, true);
    options.push(sizes.clone());
    let mut scored: Vec<(f64, Vec<i64>)> = options
        .into_iter()
        .filter_map(|t| {
            let tasks: i64 = t.iter().product();
            if tasks < threads || tasks > 16 * threads {
                return None;
            }
            let per = tasks as f64 / threads as f64;
            Some((per.ceil() / per, t))
        })
        .collect();
    scored.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    let mut out = vec![];
    for (k, (waste, tiling)) in scored.into_iter().enumerate() {
        if k > 0 && waste > 1.2 {
            break;
        }
        let by_dim: HashMap<usize, i64> = stage0.loops.iter().zip(&tiling).filter_map(|(l, &t)| l.pure_dim.map(|d| (d, t))).collect();
        let mut copy = (**root).clone();
        for &i in &tops {
            let chain = &root.children[i];
            let stage = dag.stage(chain.stage.expect("a chain has a stage"));
            let outer: Vec<i64> = stage
                .loops
                .iter()
                .zip(&chain.size)
                .map(|(l, &s)| l.pure_dim.and_then(|d| by_dim.get(&d)).map_or(1, |&t| t.min(s).max(1)))
                .collect();
            let mut tiled = tile(chain, &outer);
            tiled.parallel = true;
            copy.children[i] = Arc::new(tiled);
        }
        out.push(Arc::new(copy));
        if out.len() >= 8 {
            break;
        }
    }
    if out.is_empty() {
        out.push(root.clone());
    }
    out
}
