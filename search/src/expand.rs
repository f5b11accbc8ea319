//! Successor generation: the decisions of the search, two per Func in
//! consumer-first order (Adams et al. 2019, section 4 of the paper).
//!
//! Phase 0 places the Func: inlined into every innermost node that uses
//! it, computed at the root, or computed inside the loops of its single
//! consuming subtree: at any level of a consumer's chain, either as the
//! chain is or after tiling that level into outer tiles (where the Func is
//! computed) and the tile's loops. Placements whose region does not shrink
//! below the root's are pruned. Phase 1 gives a root-level Func's loops
//! parallel outer tiles, enough for the machine's threads and not too many.

use crate::loop_nest::{compute_here, LoopNest};
use crate::tiling::generate_tilings;
use featurizer::{Dag, NodeId, Span};
use std::collections::HashMap;
use std::sync::Arc;

/// The Funcs in decision order: consumers before producers.
pub fn decision_order(dag: &Dag) -> Vec<NodeId> {
    dag.funcs().rev().map(|n| n.id).collect()
}

/// The successors of `root` for decision `d` (Func `order[d / 2]`, phase
/// `d % 2`).
/// With `nested` false, Funcs are only inlined or computed at the root.
pub fn children(dag: &Dag, root: &Arc<LoopNest>, order: &[NodeId], d: usize, nested: bool) -> Vec<Arc<LoopNest>> {
    let node = order[d / 2];
    if d.is_multiple_of(2) {
        place(dag, root, node, nested)
    } else {
        parallelize(dag, root, node)
    }
}

/// Phase 0: every placement of `node`.
fn place(dag: &Dag, root: &Arc<LoopNest>, node: NodeId, nested: bool) -> Vec<Arc<LoopNest>> {
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
    if nested && !n.is_output {
        let root_volume = Span::volume(&n.region_required);
        place_inside(dag, root, node, root_volume, &mut out);
    }
    out
}

/// Placements of `node` inside the single child of `at` that calls it,
/// each returned as a new version of `at`.
fn place_inside(dag: &Dag, at: &Arc<LoopNest>, node: NodeId, root_volume: i64, out: &mut Vec<Arc<LoopNest>>) {
    let callers: Vec<usize> = at.children.iter().enumerate().filter(|(_, c)| c.calls(dag, node)).map(|(i, _)| i).collect();
    if callers.len() != 1 || !at.inlined.is_empty() {
        return;
    }
    let i = callers[0];
    let child = &at.children[i];
    if child.innermost {
        return;
    }
    let with_child = |c: Arc<LoopNest>| {
        let mut copy = (**at).clone();
        copy.children[i] = c;
        Arc::new(copy)
    };
    // Computed at the child's level, as it is.
    if let Some(placed) = compute_at(dag, child, node, root_volume) {
        out.push(with_child(placed));
    }
    // Computed at outer tiles of the child's level.
    let pure: Vec<bool> = child.stage.map(|s| dag.stage(s).loops.iter().map(|l| !l.is_rvar).collect()).unwrap_or_default();
    let sizes: Vec<i64> = child.size.iter().zip(&pure).map(|(&s, &p)| if p { s } else { 1 }).collect();
    if sizes.iter().any(|&s| s > 1) && !child.parallel {
        for tiling in generate_tilings(&sizes, true) {
            let tiled = tile(child, &tiling);
            if let Some(placed) = compute_at(dag, &Arc::new(tiled), node, root_volume) {
                out.push(with_child(placed));
            }
        }
    }
    // Deeper: inside the child's single calling child.
    let mut deeper = vec![];
    place_inside(dag, child, node, root_volume, &mut deeper);
    out.extend(deeper.into_iter().map(with_child));
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

/// `level` with `node` computed (and stored) at it, unless its region
/// there is no smaller than at the root.
fn compute_at(dag: &Dag, level: &Arc<LoopNest>, node: NodeId, root_volume: i64) -> Option<Arc<LoopNest>> {
    let region = level.region_required(dag, node, &mut HashMap::new());
    if region.iter().any(|s| s.is_empty()) || Span::volume(&region) >= root_volume {
        return None;
    }
    let mut copy = (**level).clone();
    let chains = compute_here(dag, node, &region);
    // Producers run before their consumers at the same level.
    for (k, c) in chains.into_iter().enumerate() {
        copy.children.insert(k, Arc::new(c));
    }
    copy.store_at.push(node);
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
        let mut copy = (**at).clone();
        copy.inlined.insert(node, own + through);
        return Some(Arc::new(copy));
    }
    let mut copy: Option<LoopNest> = None;
    for (i, c) in at.children.iter().enumerate() {
        if let Some(new) = inline(dag, c, node) {
            copy.get_or_insert_with(|| (**at).clone()).children[i] = new;
        }
    }
    copy.map(Arc::new)
}

/// Phase 1: parallel outer tiles of `node`'s root-level chains. Leaves the
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
