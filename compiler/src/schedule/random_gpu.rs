//! Random GPU schedules, for differential testing of the GPU path.
//!
//! For each Func, consumers first, it picks one of: inlined; a kernel of
//! its own (outputs always), its pure loops split by constant factors into
//! block loops outside and up to two thread loops inside, a third pure loop
//! a block loop or a serial loop around the kernel; computed at the
//! innermost block loop of a consumer's kernel (stored in shared memory),
//! its loops split and mapped to threads, the outer parts serial; or
//! computed at the innermost thread loop of a consumer (local memory,
//! serial inside a thread). Reduction loops stay serial where they are
//! (inside the threads). Tails shift inwards in pure definitions (so the
//! regions stored in a kernel have constant sizes) and are guarded in
//! updates. Every choice is checked by lowering's validation and falls back
//! to a kernel of its own. Deterministic for a given generator state.

use crate::ir::expr::Name;
use crate::ir::stmt::ForKind;
use crate::lang::pipeline::{FuncDef, PipelineDef};
use crate::lower::validate::validate;
use crate::schedule::random::{enclosing_levels, fresh};
use crate::schedule::{initial_dims, Directive, FuncSchedule, LoopLevel, Schedule, StageSchedule, TailStrategy};
use rand::seq::IndexedRandom;
use rand::Rng;

/// Thread counts a loop is split by.
const THREAD_FACTORS: [i64; 4] = [1, 2, 4, 8];

/// Where a stage's loops go.
#[derive(Clone, Copy, PartialEq)]
enum Role {
    /// A kernel of its own: block loops and thread loops.
    Kernel,
    /// Inside a consumer's kernel, outside its threads: thread loops only.
    InBlock,
}

/// Random GPU loop directives of one stage.
fn gpu_stage(f: &FuncDef, stage: usize, role: Role, rng: &mut impl Rng) -> StageSchedule {
    let dims = initial_dims(f, stage, &[]);
    let mut taken: Vec<Name> = dims.iter().map(|d| d.name.clone()).collect();
    let pure: Vec<Name> = dims.iter().filter(|d| !d.is_rvar).map(|d| d.name.clone()).collect();
    let tail = if stage == 0 { TailStrategy::Auto } else { TailStrategy::GuardWithIf };
    let mut dirs = vec![];
    let (mut threads, mut blocks, mut serial) = (vec![], vec![], vec![]);
    for (i, v) in pure.iter().enumerate() {
        if i >= 2 {
            // A third pure loop: another block dimension, or serial (around
            // the kernel, or at block level).
            if role == Role::Kernel && blocks.len() < 3 && rng.random_bool(0.5) {
                blocks.push(v.clone());
            } else {
                serial.push(v.clone());
            }
            continue;
        }
        let factor = *THREAD_FACTORS.choose(rng).expect("factors");
        let outer = fresh(&format!("{v}o"), &mut taken);
        let inner = fresh(&format!("{v}i"), &mut taken);
        dirs.push(Directive::Split { var: v.clone(), outer: outer.clone(), inner: inner.clone(), factor, tail });
        threads.push(inner);
        match role {
            Role::Kernel => blocks.push(outer),
            Role::InBlock => serial.push(outer),
        }
    }
    // Innermost first: threads, then blocks, then serial loops (around the
    // kernel, or at block level around the thread loops).
    let order: Vec<Name> = threads.iter().chain(&blocks).chain(&serial).cloned().collect();
    if order.len() >= 2 {
        dirs.push(Directive::Reorder { vars: order });
    }
    dirs.extend(blocks.into_iter().map(|var| Directive::GpuBlocks { var }));
    dirs.extend(threads.into_iter().map(|var| Directive::GpuThreads { var }));
    StageSchedule { directives: dirs }
}

/// The innermost block loop and the innermost thread loop among the
/// levels enclosing every use of `f`.
fn gpu_levels(p: &PipelineDef, s: &Schedule, f: &FuncDef) -> (Option<LoopLevel>, Option<LoopLevel>) {
    let Ok(plan) = validate(p, s) else { return (None, None) };
    let kind = |l: &LoopLevel| match l {
        LoopLevel::At { func, stage, var } => plan.get(func).stages[*stage].dims.iter().find(|d| d.name == *var).map(|d| d.kind),
        _ => None,
    };
    let levels = enclosing_levels(p, s, f);
    let innermost = |k: ForKind| {
        // The innermost loop of kind `k`, if nothing but loops of that kind
        // lies between it and the next loop in.
        let i = levels.iter().rposition(|l| kind(l) == Some(k))?;
        let next = levels.get(i + 1).and_then(kind);
        (next != Some(k)).then(|| levels[i].clone())
    };
    (innermost(ForKind::GpuBlock), innermost(ForKind::GpuThread))
}

/// A random schedule of `f` as a kernel of its own (each stage one
/// kernel, or one per iteration of a serial loop around it).
pub fn own_kernel(f: &FuncDef, rng: &mut impl Rng) -> FuncSchedule {
    let mut fs = FuncSchedule { compute: LoopLevel::Root, ..FuncSchedule::default() };
    for stage in 0..f.stages() {
        fs.stages.insert(stage, gpu_stage(f, stage, Role::Kernel, rng));
    }
    fs
}

/// A random GPU schedule of `p` that validates.
pub fn random_gpu_schedule(p: &PipelineDef, rng: &mut impl Rng) -> Schedule {
    let mut s = Schedule::new();
    for f in p.funcs.iter().rev() {
        let fs = if p.is_output(&f.name) {
            own_kernel(f, rng)
        } else {
            let (block, thread) = gpu_levels(p, &s, f);
            match rng.random_range(0..4) {
                0 if f.updates.is_empty() => FuncSchedule::default(),
                1 if block.is_some() => {
                    let mut fs = FuncSchedule { compute: block.expect("checked"), ..FuncSchedule::default() };
                    for stage in 0..f.stages() {
                        fs.stages.insert(stage, gpu_stage(f, stage, Role::InBlock, rng));
                    }
                    fs
                }
                2 if thread.is_some() => FuncSchedule { compute: thread.expect("checked"), ..FuncSchedule::default() },
                _ => own_kernel(f, rng),
            }
        };
        s.funcs.insert(f.name.clone(), fs);
        if validate(p, &s).is_err() {
            let fs = own_kernel(f, rng);
            s.funcs.insert(f.name.clone(), fs);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn the_blur_gets_kernels_with_threads() {
        let p = crate::examples::blur();
        for seed in 0..20 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let s = random_gpu_schedule(&p, &mut rng);
            let out = s.get("blur_y");
            assert_eq!(out.compute, LoopLevel::Root);
            let dirs = &out.stages[&0].directives;
            assert_eq!(dirs.iter().filter(|d| matches!(d, Directive::GpuBlocks { .. })).count(), 2, "{s}");
            assert_eq!(dirs.iter().filter(|d| matches!(d, Directive::GpuThreads { .. })).count(), 2, "{s}");
            validate(&p, &s).expect("validates");
        }
    }
}
