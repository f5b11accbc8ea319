//! The differential suites' cases: a seed's random pipeline (its
//! generator parameters, without estimates) over a small output window;
//! and for the GPU, random GPU schedules lowered for a GPU target, the
//! same ones wherever they are drawn (the GPU differential suite, the
//! bundles a GPU host runs). A Func stored in a kernel over a region no constant
//! bounds (a scan's prefix, a reduction over the whole input), or the
//! largest of a kernel's shared memory over the limit, gets a kernel of
//! its own, as the errors advise (and so do the Funcs computed at its
//! loops, and those whose compute level no longer encloses their uses).

use crate::{generate, GenError, GeneratorParams, RandomPipeline, VOCABULARY};
use compiler::error::{GpuError, LowerError, UserError};
use compiler::lower::{lower_gpu_with, GpuLowered, LowerOptions};
use compiler::schedule::random_gpu::{own_kernel, random_gpu_schedule};
use compiler::schedule::{LoopLevel, Schedule};
use compiler::{GpuTarget, ScheduleErrorKind};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Random GPU schedules per seed.
pub const SCHEDULES: usize = 2;

/// One seed's case.
pub struct GpuCase {
    /// The seed.
    pub seed: u64,
    /// Its pipeline, without estimates.
    pub pipeline: RandomPipeline,
    /// The output window computed.
    pub region: Vec<(i64, i64)>,
    /// The target: sm_90 for even seeds, sm_70 for odd.
    pub target: GpuTarget,
    /// Each schedule drawn (after the moves above), lowered in checked mode.
    pub schedules: Vec<(Schedule, Result<GpuLowered, LowerError>)>,
    /// Funcs moved to kernels of their own.
    pub moved: usize,
}

/// The generator's parameters for `seed`.
pub fn params(seed: u64, vocabulary: u32) -> GeneratorParams {
    GeneratorParams { seed, max_stages: 6 + (seed % 3) as usize, input_size: (24, 20, 3), vocabulary }
}

/// An 8x8x8 window, sometimes past the input's edges (every point is
/// computable: inputs are read through boundary conditions). No extent is
/// below the largest random split factor (8): a split of an output
/// dimension that shifts inwards or rounds up needs that much room.
pub fn region(seed: u64) -> Vec<(i64, i64)> {
    vec![((seed % 13) as i64 - 3, 8), ((seed % 17) as i64 - 2, 8), (0, 8)]
}

/// The pipeline of `seed` in `vocabulary`, without estimates (the window
/// is not the estimates; random schedules are drawn without redraws for
/// legality at the estimates).
pub fn pipeline(seed: u64, vocabulary: u32) -> Result<RandomPipeline, GenError> {
    let mut p = generate(&params(seed, vocabulary))?;
    p.pipeline.funcs.iter_mut().for_each(|f| f.estimates.iter_mut().for_each(|e| *e = None));
    p.pipeline.inputs.iter_mut().for_each(|i| i.estimates.iter_mut().for_each(|e| *e = None));
    Ok(p)
}

/// The case of `seed`.
pub fn gpu_case(seed: u64) -> Result<GpuCase, GenError> {
    let pipeline = pipeline(seed, VOCABULARY)?;
    let target = if seed.is_multiple_of(2) { GpuTarget::sm_90() } else { GpuTarget::sm_70() };
    let mut rng = ChaCha8Rng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9) ^ 0x6E0);
    let mut moved = 0;
    let mut schedules = vec![];
    for _ in 0..SCHEDULES {
        let mut schedule = random_gpu_schedule(&pipeline.pipeline, &mut rng);
        let mut moved_any = false;
        let lowered = loop {
            let lowered = lower_gpu_with(&pipeline.pipeline, &schedule, &target, &LowerOptions::checked());
            let func = match &lowered {
                Err(LowerError::User(UserError::Gpu(GpuError::StorageNotConstant { func, .. })))
                | Err(LowerError::User(UserError::Gpu(GpuError::SharedMemoryExceeded { largest: func, .. }))) => func.clone(),
                Err(LowerError::User(UserError::Schedule(e)))
                    if moved_any && e.kind() == ScheduleErrorKind::ComputeLevelDoesNotEncloseUses =>
                {
                    e.func().to_string()
                }
                _ => break lowered,
            };
            if schedule.get(&func).compute == LoopLevel::Root {
                break lowered;
            }
            moved_any = true;
            let mut to_move = vec![func];
            while let Some(name) = to_move.pop() {
                let Some(f) = pipeline.pipeline.func(&name) else { break };
                moved += 1;
                schedule.funcs.insert(f.name.clone(), own_kernel(f, &mut rng));
                let at_it = |l: &LoopLevel| matches!(l, LoopLevel::At { func, .. } if **func == *name);
                to_move.extend(
                    schedule.funcs.iter().filter(|(_, fs)| at_it(&fs.compute) || at_it(fs.store_level())).map(|(n, _)| n.to_string()),
                );
            }
        };
        schedules.push((schedule, lowered));
    }
    Ok(GpuCase { seed, pipeline, region: region(seed), target, schedules, moved })
}
