//! A loop nest as compiler schedule directives.
//!
//! Each stage's chain becomes splits (one per level at which a loop
//! iterates, outer loops named `{v}_l{level}`, the rest `{v}_r{level}`),
//! a reorder that puts the levels outermost first (reduction loops stay in
//! their order, inside the pure loops of the innermost level except the
//! vectorized one), the parallel level's loops fused into one parallel
//! loop, the vectorized loop, and the innermost level's other pure loops
//! unrolled (a register tile's rows). A Func computed at a level of another
//! stage's chain is `compute_at` that level's innermost loop, and
//! `store_at` the innermost loop of the level it is stored at when that is
//! an outer one (a sliding window). Splits of a
//! pure definition shift their last tile inwards where the region at the
//! estimates is at least a tile wide, as Halide's autoschedulers do (so
//! nothing outside the region is computed, nor read by what is computed
//! inside the tile); other splits guard their tail with an `if`.

use crate::loop_nest::LoopNest;
use compiler::ir::expr::Name;
use compiler::schedule::{LoopLevel, Schedule, TailStrategy};
use featurizer::Dag;
use std::sync::Arc;

/// The schedule a loop nest stands for.
pub fn to_schedule(dag: &Dag, root: &LoopNest) -> Schedule {
    let mut s = Schedule::new();
    walk_level(dag, root, &LoopLevel::Root, &mut s);
    store_sliding(dag, root, &LoopLevel::Root, &mut s);
    s
}

/// Marks the Funcs `level` stores but a deeper level computes (sliding) as
/// stored at `site`, the level's innermost loop.
fn store_sliding(dag: &Dag, level: &LoopNest, site: &LoopLevel, s: &mut Schedule) {
    for &g in &level.store_at {
        if !level.children.iter().any(|c| c.stage.is_some_and(|c| dag.stage(c).node == g)) {
            s.funcs.entry(dag.node(g).name.clone()).or_default().store = Some(site.clone());
        }
    }
}

/// Applies the chains computed at `level` (a node of another chain, or
/// the root), computed at `site`.
fn walk_level(dag: &Dag, level: &LoopNest, site: &LoopLevel, s: &mut Schedule) {
    for child in level.children.iter().filter(|c| c.stage != level.stage) {
        apply_chain(dag, child, site, s);
    }
}

/// One stage's chain: its loop directives, its Func's compute level, and
/// the chains computed inside it.
fn apply_chain(dag: &Dag, top: &Arc<LoopNest>, site: &LoopLevel, s: &mut Schedule) {
    let stage_idx = top.stage.expect("a chain has a stage");
    let stage = dag.stage(stage_idx);
    let func = dag.node(stage.node).name.clone();
    let chain = top.chain();
    let loops = stage.loops.len();
    // names[level][loop]: the loop's name at that level, if it iterates there.
    let mut names: Vec<Vec<Option<Name>>> = vec![vec![None; loops]; chain.len()];
    let mut splits: Vec<(Name, Name, Name, i64, TailStrategy)> = vec![];
    for (i, l) in stage.loops.iter().enumerate() {
        let leaf = chain.len() - 1;
        let vectorized = chain[leaf].vector_loop == Some(i);
        let unrolled = !l.is_rvar && !vectorized && chain[leaf].size[i] > 1;
        // The vectorized and unrolled loops always get a split of their
        // own, so that their extent is a constant even when one vector or
        // tile covers the region.
        let mut levels: Vec<usize> = (0..chain.len()).filter(|&j| chain[j].size[i] > 1 || (vectorized && j == leaf)).collect();
        if (vectorized || unrolled) && levels.len() == 1 {
            levels.insert(0, 0);
        }
        let mut current = l.var.clone();
        for (k, &j) in levels.iter().enumerate() {
            if k + 1 == levels.len() {
                names[j][i] = Some(current.clone());
                break;
            }
            // A vectorized loop runs in whole vectors of the innermost
            // node's width.
            let next = chain[levels[k + 1]];
            let factor = if next.innermost && next.vector_loop == Some(i) { next.size[i] } else { chain[j].inner()[i].extent() };
            let (outer, inner): (Name, Name) = (format!("{}_l{j}", l.var).into(), format!("{}_r{j}", l.var).into());
            // A pure definition's tile shifts inwards at the edge, so it
            // (and what is computed inside it) stays within the region;
            // where the tile is wider than the region, and in updates
            // (which must not recompute), the tail is guarded.
            let tail = if stage.index == 0 && chain[j].whole[i].extent() >= factor {
                TailStrategy::ShiftInwards
            } else {
                TailStrategy::GuardWithIf
            };
            splits.push((current.clone(), outer.clone(), inner.clone(), factor, tail));
            names[j][i] = Some(outer);
            current = inner;
        }
    }
    // Innermost first: the innermost level's vectorized loop, its reduction
    // loops, its other loops; then each level outwards.
    let mut order: Vec<Name> = vec![];
    let mut fused: Vec<Option<Name>> = vec![None; chain.len()];
    let mut fuses: Vec<(Name, Name, Name)> = vec![];
    let mut parallel: Vec<Name> = vec![];
    let mut vectorized: Option<Name> = None;
    let leaf = chain.len() - 1;
    let unrolled: Vec<Name> = (0..loops)
        .filter(|&i| !stage.loops[i].is_rvar && chain[leaf].vector_loop != Some(i) && chain[leaf].size[i] > 1)
        .filter_map(|i| names[leaf][i].clone())
        .collect();
    for j in (0..chain.len()).rev() {
        let mut here: Vec<Name> = vec![];
        if let Some(v) = chain[j].vector_loop {
            if let Some(n) = &names[j][v] {
                vectorized = Some(n.clone());
                here.push(n.clone());
            }
        }
        let rvars = (0..loops).filter(|&i| stage.loops[i].is_rvar);
        let pure = (0..loops).filter(|&i| !stage.loops[i].is_rvar && chain[j].vector_loop != Some(i));
        here.extend(rvars.chain(pure).filter_map(|i| names[j][i].clone()));
        if chain[j].parallel && !here.is_empty() {
            let mut acc = here[0].clone();
            for (k, outer) in here.iter().enumerate().skip(1) {
                let name: Name = format!("{func}_par{j}_{k}").into();
                fuses.push((acc.clone(), outer.clone(), name.clone()));
                acc = name;
            }
            parallel.push(acc.clone());
            fused[j] = Some(acc);
        }
        order.extend(here);
    }
    // Loops that never iterate (extent 1) go outermost, out of the way of
    // the vectorized loop.
    order.extend((0..loops).filter(|&i| names.iter().all(|level| level[i].is_none())).map(|i| stage.loops[i].var.clone()));
    {
        let mut b = s.func(&func);
        if stage.index > 0 {
            b = b.update(stage.index - 1);
        }
        for (var, outer, inner, factor, tail) in &splits {
            b = b.split_with(var, outer, inner, *factor, *tail);
        }
        if order.len() > 1 {
            let refs: Vec<&str> = order.iter().map(|n| &**n).collect();
            b = b.reorder(&refs);
        }
        for (inner, outer, name) in &fuses {
            b = b.fuse(inner, outer, name);
        }
        for p in &parallel {
            b = b.parallel(p);
        }
        if let Some(v) = &vectorized {
            b = b.vectorize(v);
        }
        for u in &unrolled {
            b = b.unroll(u);
        }
    }
    if stage.index == 0 {
        let fs = s.funcs.entry(func.clone()).or_default();
        fs.compute = site.clone();
    }
    // Chains computed inside: at the innermost loop of their level, or of
    // the nearest enclosing level that has one.
    for (j, node) in chain.iter().enumerate() {
        let innermost = (0..=j).rev().find_map(|k| fused[k].clone().or_else(|| innermost_name(stage, chain[k], &names[k])));
        let inner_site = match innermost {
            Some(var) => LoopLevel::At { func: func.clone(), stage: stage.index, var },
            None => site.clone(),
        };
        store_sliding(dag, node, &inner_site, s);
        walk_level(dag, node, &inner_site, s);
    }
}

/// The innermost loop that iterates at one level (in the reorder's order).
fn innermost_name(stage: &featurizer::Stage, level: &LoopNest, names: &[Option<Name>]) -> Option<Name> {
    if let Some(v) = level.vector_loop {
        if let Some(n) = &names[v] {
            return Some(n.clone());
        }
    }
    let rvars = (0..names.len()).filter(|&i| stage.loops[i].is_rvar);
    let pure = (0..names.len()).filter(|&i| !stage.loops[i].is_rvar && level.vector_loop != Some(i));
    rvars.chain(pure).find_map(|i| names[i].clone())
}
