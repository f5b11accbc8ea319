//! Random legal schedules, for differential testing and for sampling.
//!
//! For each Func, consumers first, it picks a compute level (inline, root,
//! or a loop that encloses every use), a store level at or outside it, and
//! per stage random splits, reorders of pure loops, fusion, vectorization of
//! the innermost loop, unrolling and parallel loops. Every candidate is
//! checked by lowering's validation (`lower::validate`); a Func whose random
//! choice is rejected falls back to simpler choices, so the result is always
//! a legal schedule. Deterministic for a given random generator state.

use crate::ir::expr::Name;
use crate::ir::stmt::ForKind;
use crate::lang::pipeline::{FuncDef, PipelineDef};
use crate::lower::validate::validate;
use crate::schedule::{initial_dims, Directive, FuncSchedule, LoopLevel, Schedule, StageSchedule, TailStrategy};
use rand::seq::IndexedRandom;
use rand::Rng;
use std::collections::BTreeMap;

/// Knobs of the generator.
#[derive(Clone, Debug)]
pub struct RandomScheduleOptions {
    /// Largest split factor (and vector width).
    pub max_factor: i64,
    /// Probability that a non-output Func without updates stays inlined.
    pub p_inline: f64,
    /// Probability of storing a Func further out than it is computed.
    pub p_store_outer: f64,
}

impl Default for RandomScheduleOptions {
    fn default() -> Self {
        RandomScheduleOptions { max_factor: 8, p_inline: 0.3, p_store_outer: 0.4 }
    }
}

const TAILS: [TailStrategy; 4] = [TailStrategy::Auto, TailStrategy::ShiftInwards, TailStrategy::GuardWithIf, TailStrategy::RoundUp];

pub(super) fn fresh(base: &str, taken: &mut Vec<Name>) -> Name {
    let mut n = 0;
    loop {
        let candidate: Name = if n == 0 { base.into() } else { format!("{base}{n}").into() };
        if !taken.contains(&candidate) {
            taken.push(candidate.clone());
            return candidate;
        }
        n += 1;
    }
}

/// Random loop directives for one stage.
fn random_stage(f: &FuncDef, stage: usize, rng: &mut impl Rng, o: &RandomScheduleOptions, is_output: bool) -> StageSchedule {
    let mut dirs = vec![];
    let dims = initial_dims(f, stage, &[]);
    let mut taken: Vec<Name> = dims.iter().map(|d| d.name.clone()).collect();
    // Pure loops only: reduction loops keep their order and stay serial.
    let mut pure: Vec<Name> = dims.iter().filter(|d| !d.is_rvar).map(|d| d.name.clone()).collect();
    let mut outer_loops: Vec<Name> = vec![];
    for v in pure.clone() {
        if rng.random_bool(0.5) {
            let factor = rng.random_range(2..=o.max_factor);
            let outer = fresh(&format!("{v}o"), &mut taken);
            let inner = fresh(&format!("{v}i"), &mut taken);
            let mut tail = *TAILS.choose(rng).unwrap();
            if stage > 0 && tail == TailStrategy::ShiftInwards {
                tail = TailStrategy::GuardWithIf;
            }
            if is_output && tail == TailStrategy::RoundUp {
                tail = TailStrategy::GuardWithIf;
            }
            dirs.push(Directive::Split { var: v.clone(), outer: outer.clone(), inner: inner.clone(), factor, tail });
            outer_loops.push(outer.clone());
            let i = pure.iter().position(|p| *p == v).unwrap();
            pure.splice(i..=i, [inner, outer]);
        }
    }
    if pure.len() >= 2 && rng.random_bool(0.5) {
        let mut order = pure.clone();
        // A random permutation of the pure loops (innermost first).
        for i in (1..order.len()).rev() {
            let j = rng.random_range(0..=i);
            order.swap(i, j);
        }
        dirs.push(Directive::Reorder { vars: order.clone() });
        pure = order;
    }
    // Optional fusion of the two outermost pure loops when adjacent.
    if pure.len() >= 2 && rng.random_bool(0.15) {
        let (inner, outer) = (pure[pure.len() - 2].clone(), pure[pure.len() - 1].clone());
        let fused = fresh(&format!("{inner}{outer}f"), &mut taken);
        dirs.push(Directive::Fuse { inner, outer, fused: fused.clone() });
        outer_loops.push(fused.clone());
        pure.truncate(pure.len() - 2);
        pure.push(fused);
    }
    if let Some(outer) = pure.last() {
        if rng.random_bool(0.4) {
            dirs.push(Directive::Parallel { var: outer.clone() });
        }
    }
    // Vectorizing or unrolling splits the innermost loop again; only loops
    // whose extent is at least the factor (the variable itself or a split's
    // inner loop, not an outer or fused loop of unknown, possibly tiny,
    // extent) can be shifted inwards without leaving the required region.
    if let Some(inner) = pure.first().filter(|v| !outer_loops.contains(*v)) {
        if rng.random_bool(0.4) {
            let width = rng.random_range(2..=o.max_factor);
            dirs.push(Directive::Vectorize { var: inner.clone(), width: Some(width) });
        } else if rng.random_bool(0.2) {
            dirs.push(Directive::Unroll { var: inner.clone(), factor: Some(rng.random_range(2..=4)) });
        }
    }
    StageSchedule { directives: dirs }
}

/// Loops (as levels) that enclose every use of `f`, given the Funcs already
/// scheduled; outermost first.
pub(super) fn enclosing_levels(p: &PipelineDef, s: &Schedule, f: &FuncDef) -> Vec<LoopLevel> {
    let Ok(plan) = validate(p, s) else {
        return vec![];
    };
    let mut common: Option<Vec<LoopLevel>> = None;
    for c in &p.funcs {
        let cp = plan.get(&c.name);
        if cp.inline {
            continue;
        }
        for stage in 0..c.stages() {
            if !stage_uses(p, &plan, c, stage, &f.name) {
                continue;
            }
            let mut path = level_chain(&plan, &cp.compute);
            for d in cp.stages[stage].dims.iter().rev() {
                if d.kind == ForKind::Vectorized {
                    break;
                }
                path.push(LoopLevel::At { func: c.name.clone(), stage, var: d.name.clone() });
            }
            common = Some(match common {
                None => path,
                Some(prev) => prev.iter().zip(&path).take_while(|(a, b)| a == b).map(|(a, _)| a.clone()).collect(),
            });
        }
    }
    common.unwrap_or_default()
}

fn level_chain(plan: &crate::lower::validate::Plan, level: &LoopLevel) -> Vec<LoopLevel> {
    match level {
        LoopLevel::At { func, stage, var } => {
            let fp = plan.get(func);
            let mut chain = level_chain(plan, &fp.compute);
            for d in fp.stages[*stage].dims.iter().rev() {
                chain.push(LoopLevel::At { func: func.clone(), stage: *stage, var: d.name.clone() });
                if d.name == *var {
                    break;
                }
            }
            chain
        }
        _ => vec![],
    }
}

/// Whether stage `stage` of `c` reads `f`, directly or through inlined Funcs.
fn stage_uses(p: &PipelineDef, plan: &crate::lower::validate::Plan, c: &FuncDef, stage: usize, f: &str) -> bool {
    c.stage_callees(stage).iter().any(|n| &**n == f || (plan.get(n).inline && p.func(n).is_some_and(|d| stage_uses(p, plan, d, 0, f))))
}

/// Draws before [`random_schedule`] settles for one that does not run at
/// the estimates.
const DRAWS_AT_ESTIMATES: usize = 8;

/// A random legal schedule for `p`. When every output and input dimension
/// of `p` has an estimate, the schedule also runs at the estimates
/// ([`crate::schedule::legality::check_at_estimates`]): draws that would not are
/// redrawn, up to `DRAWS_AT_ESTIMATES` times, then every Func is computed
/// at root.
pub fn random_schedule(p: &PipelineDef, rng: &mut impl Rng, o: &RandomScheduleOptions) -> Schedule {
    let estimated = p.outputs.iter().filter_map(|o| p.func(o)).all(|f| f.estimates.iter().all(Option::is_some))
        && p.inputs.iter().all(|i| i.estimates.iter().all(Option::is_some));
    if !estimated {
        return random_draw(p, rng, o);
    }
    let limits = crate::schedule::legality::Limits::default();
    for _ in 0..DRAWS_AT_ESTIMATES {
        let s = random_draw(p, rng, o);
        if crate::schedule::legality::check_at_estimates(p, &s, &limits).is_ok() {
            return s;
        }
    }
    let mut s = Schedule::new();
    for f in &p.funcs {
        s.funcs.insert(f.name.clone(), FuncSchedule { compute: LoopLevel::Root, ..FuncSchedule::default() });
    }
    s
}

/// One draw of a random schedule that validates.
fn random_draw(p: &PipelineDef, rng: &mut impl Rng, o: &RandomScheduleOptions) -> Schedule {
    let mut s = Schedule::new();
    for f in p.funcs.iter().rev() {
        let is_output = p.is_output(&f.name);
        let mut fs = FuncSchedule::default();
        if !is_output {
            let levels = enclosing_levels(p, &s, f);
            let can_inline = f.updates.is_empty();
            fs.compute = if can_inline && rng.random_bool(o.p_inline) {
                LoopLevel::Inline
            } else if !levels.is_empty() && rng.random_bool(0.6) {
                levels.choose(rng).unwrap().clone()
            } else {
                LoopLevel::Root
            };
            if fs.compute != LoopLevel::Inline && rng.random_bool(o.p_store_outer) {
                let idx = levels.iter().position(|l| *l == fs.compute);
                let outer: Vec<LoopLevel> = std::iter::once(LoopLevel::Root).chain(levels[..idx.unwrap_or(0)].iter().cloned()).collect();
                fs.store = Some(outer.choose(rng).unwrap().clone());
            }
        } else {
            fs.compute = LoopLevel::Root;
        }
        if fs.compute != LoopLevel::Inline {
            for stage in 0..f.stages() {
                fs.stages.insert(stage, random_stage(f, stage, rng, o, is_output));
            }
        }
        s.funcs.insert(f.name.clone(), fs.clone());
        if validate(p, &s).is_err() {
            // Fall back: keep the levels, drop the loop directives; then root.
            let mut plain = fs.clone();
            plain.stages = BTreeMap::new();
            s.funcs.insert(f.name.clone(), plain);
            if validate(p, &s).is_err() {
                let root = FuncSchedule { compute: LoopLevel::Root, ..FuncSchedule::default() };
                s.funcs.insert(f.name.clone(), root);
            }
        }
    }
    s
}
