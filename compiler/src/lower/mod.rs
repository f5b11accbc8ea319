//! Lowering: from an algorithm and a schedule to a loop-nest statement, one
//! pass per module, in the order of the thesis (Ragan-Kelley 2014, ch. 8).
//!
//! | pass | module |
//! |---|---|
//! | check the schedule, resolve its loops | `validate` |
//! | substitute inlined Funcs | `inline` |
//! | build loop nests, inject realizations | `loop_synthesis` |
//! | bounds inference (per Func, consumers first) | `bounds_inference` |
//! | sliding window (per Func, right after its bounds) | `sliding_window` |
//! | size the Func's realization | `bounds_inference` |
//! | storage folding | `storage_folding` |
//! | strip the bounds promises of loop synthesis | `promises` |
//! | check every access (checked mode only) | `access_checks` |
//! | flatten storage to 1-D buffers | `flatten` |
//! | simplify | [`crate::simplify`] |
//! | expand f32 `exp`, `log`, `pow` in vectorized loops into plain nodes | `expand_math` |
//! | vectorize | `vectorize` |
//! | unroll | `unroll` |
//! | partition loops of shift-inwards splits and tail guards | `partition_loops` |
//! | keep register tiles' accumulators in stack slots | `register_accumulators` |
//! | simplify | [`crate::simplify`] |
//! | GPU kernels: check against the GPU target, one thread space (GPU only) | `gpu` |
//!
//! After every pass, in checked mode and in debug builds, `ir_check`
//! checks that the statement is well formed for the stage reached.
//!
//! The passes are internal: the public surface is the driver ([`lower`],
//! [`lower_with`], [`LowerOptions`]), its result ([`Lowered`], with the
//! [`Footprint`] of each input and output, and each [`Pass`]'s statement
//! when asked for), the inlining limit ([`MAX_INLINED_NODES`]), and for
//! GPU schedules [`lower_gpu`] and its [`GpuLowered`] [`Kernel`]s.

mod access_checks;
mod bounds_inference;
mod context;
mod expand_math;
mod flatten;
mod gpu;
mod inline;
mod ir_check;
mod loop_synthesis;
mod names;
mod partition_loops;
mod promises;
mod register_accumulators;
mod sliding_window;
mod storage_folding;
mod unroll;
pub(crate) mod validate;
mod vectorize;

pub use crate::error::Pass;
pub use bounds_inference::Footprint;
pub use gpu::{BlockDim, Kernel, SharedBuffer, THREAD_IDS};
pub use inline::MAX_INLINED_NODES;
pub use unroll::MAX_UNROLL;

use crate::error::{InternalError, LowerError, UserError};
use crate::ir::expr::Name;
use crate::ir::stmt::Stmt;
use crate::lang::pipeline::PipelineDef;
use crate::schedule::Schedule;
use crate::simplify::simplify_stmt;
use crate::target::GpuTarget;

/// A lowered pipeline: the statement to run and what it was made from.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The algorithm lowered.
    pub pipeline: PipelineDef,
    /// The schedule it was lowered under.
    pub schedule: Schedule,
    /// The final statement, after every pass.
    pub stmt: Stmt,
    /// The region of each input the statement reads and of each output it
    /// writes, in terms of the buffers' fields and the params.
    pub footprints: Vec<Footprint>,
    /// The options it was lowered with.
    pub options: LowerOptions,
    /// The Funcs stored outside the loop that computes them whose
    /// computation slides (later iterations compute only what earlier
    /// ones did not), in lowering order.
    pub sliding: Vec<Name>,
    /// The statement after each pass, when asked for (see [`LowerOptions`]).
    pub passes: Vec<(Pass, Stmt)>,
}

/// Options of [`lower_with`].
#[derive(Clone, Debug, Default)]
pub struct LowerOptions {
    /// Keep the statement after every pass in [`Lowered::passes`].
    pub keep_passes: bool,
    /// Checked mode: assert before every access of a Func or an input that
    /// it lies inside the storage (see `access_checks`). On in the
    /// differential tests, off by default (it costs a branch per access).
    pub check_accesses: bool,
    /// Give up with [`LowerError::Deadline`] once this instant has
    /// passed (checked between passes and between the Funcs of bounds
    /// inference): a caller with a time budget, such as the
    /// autoscheduler's legality check, is not held by one slow lowering.
    pub deadline: Option<std::time::Instant>,
}

impl LowerOptions {
    /// The checked mode of the differential tests: every access asserted.
    pub fn checked() -> LowerOptions {
        LowerOptions { check_accesses: true, ..LowerOptions::default() }
    }
}

/// A pipeline lowered under a GPU schedule: the statement with its
/// kernels in the form they run in (see [`Kernel`]), and the kernels.
#[derive(Clone, Debug)]
pub struct GpuLowered {
    /// The lowered pipeline; its statement's thread loops are over each
    /// kernel's thread space. The IR interpreter runs it as the GPU would
    /// (blocks and threads as loops, a barrier after each thread nest).
    pub lowered: Lowered,
    /// The GPU it was checked for.
    pub target: GpuTarget,
    /// The kernels, in the order they run.
    pub kernels: Vec<Kernel>,
}

/// Lowers `p` under the GPU schedule `s` for `target`.
pub fn lower_gpu(p: &PipelineDef, s: &Schedule, target: &GpuTarget) -> Result<GpuLowered, LowerError> {
    lower_gpu_with(p, s, target, &LowerOptions::default())
}

/// Lowers `p` under the GPU schedule `s` for `target`, with options.
pub fn lower_gpu_with(p: &PipelineDef, s: &Schedule, target: &GpuTarget, options: &LowerOptions) -> Result<GpuLowered, LowerError> {
    crate::stack::on_large_stack(|| {
        let mut kernels = vec![];
        let lowered = run_passes(p, s, options, Some((target, &mut kernels)))?;
        Ok(GpuLowered { lowered, target: *target, kernels })
    })
}

/// Lowers `p` under schedule `s`.
pub fn lower(p: &PipelineDef, s: &Schedule) -> Result<Lowered, LowerError> {
    lower_with(p, s, &LowerOptions::default())
}

/// Lowers `p` under schedule `s`, with options. The passes recurse over
/// expression trees, which a long pipeline makes deep: they run on a
/// thread with a large stack.
pub fn lower_with(p: &PipelineDef, s: &Schedule, options: &LowerOptions) -> Result<Lowered, LowerError> {
    crate::stack::on_large_stack(|| run_passes(p, s, options, None))
}

/// Runs the passes one by one: each is timed (a `tracing` debug event),
/// checked by `ir_check` (in checked mode and debug builds), printed when
/// it changed the statement and `HL_PRINT_PASSES` is set, and kept when
/// asked for.
struct Driver<'a> {
    pipeline: &'a PipelineDef,
    deadline: Option<std::time::Instant>,
    check_ir: bool,
    print: bool,
    keep: bool,
    passes: Vec<(Pass, Stmt)>,
}

impl Driver<'_> {
    fn pass(
        &mut self,
        pass: Pass,
        stage: ir_check::Stage,
        before: Stmt,
        run: impl FnOnce(Stmt) -> Result<Stmt, LowerError>,
    ) -> Result<Stmt, LowerError> {
        check_deadline(self.deadline, pass)?;
        let started = std::time::Instant::now();
        let after = run(before.clone())?;
        tracing::debug!(pass = pass.name(), elapsed = ?started.elapsed(), "lowering pass");
        if self.check_ir {
            if let Some(problem) = ir_check::check(&after, stage, self.pipeline) {
                return Err(InternalError::IrCheck { pass, problem }.into());
            }
        }
        if self.print && after != before {
            eprintln!("# after {pass}\n{after}");
        }
        if self.keep {
            self.passes.push((pass, after.clone()));
        }
        Ok(after)
    }
}

/// [`LowerError::Deadline`] once `deadline` has passed.
fn check_deadline(deadline: Option<std::time::Instant>, pass: Pass) -> Result<(), LowerError> {
    match deadline {
        Some(d) if std::time::Instant::now() >= d => Err(LowerError::Deadline { pass }),
        _ => Ok(()),
    }
}

fn run_passes(
    p: &PipelineDef,
    s: &Schedule,
    options: &LowerOptions,
    gpu: Option<(&GpuTarget, &mut Vec<Kernel>)>,
) -> Result<Lowered, LowerError> {
    use ir_check::Stage;
    let mut d = Driver {
        pipeline: p,
        deadline: options.deadline,
        check_ir: options.check_accesses || cfg!(debug_assertions),
        print: std::env::var_os("HL_PRINT_PASSES").is_some(),
        keep: options.keep_passes,
        passes: vec![],
    };
    let plan = validate::validate(p, s)?;
    let funcs = inline::inline_funcs(p, &plan)?;
    let stmt =
        d.pass(Pass::LoopSynthesis, Stage::Synthesized, Stmt::no_op(), |_| Ok(loop_synthesis::synthesize(&funcs, &plan, &p.outputs)))?;
    let mut slid = sliding_window::Slid::new();
    let inputs: Vec<(Name, usize)> = p.inputs.iter().map(|i| (i.name.clone(), i.dims)).collect();
    let outputs: Vec<_> = funcs.iter().filter(|f| p.is_output(&f.name)).cloned().collect();
    let mut footprints = vec![];
    let mut sliding = vec![];
    let stmt = d.pass(Pass::BoundsAndSliding, Stage::Bounded, stmt, |mut stmt| {
        for f in funcs.iter().rev() {
            check_deadline(options.deadline, Pass::BoundsAndSliding)?;
            let fp = plan.get(&f.name);
            stmt = bounds_inference::infer_func(&stmt, f, fp, p.is_output(&f.name))?;
            let before = slid.len();
            stmt = sliding_window::slide_func(&stmt, f, fp, &mut slid);
            if slid.len() > before {
                sliding.push(f.name.clone());
            }
            if !p.is_output(&f.name) {
                stmt = bounds_inference::size_realization(&stmt, f)?;
            }
        }
        let (checked, regions) = bounds_inference::check_buffers(&stmt, &inputs, &outputs)?;
        footprints = regions;
        Ok(checked)
    })?;
    let stmt = d.pass(Pass::StorageFolding, Stage::Bounded, stmt, |mut stmt| {
        for f in &funcs {
            stmt = storage_folding::fold_func(&stmt, f, plan.get(&f.name), &slid);
        }
        Ok(stmt)
    })?;
    let mut stmt = d.pass(Pass::Promises, Stage::Bounded, stmt, |stmt| Ok(promises::strip_promises(&stmt)))?;
    if options.check_accesses {
        stmt = d.pass(Pass::AccessChecks, Stage::Bounded, stmt, |stmt| Ok(access_checks::check_accesses(&stmt, p)))?;
    }
    let external: Vec<(Name, usize)> = inputs.iter().cloned().chain(outputs.iter().map(|f| (f.name.clone(), f.dims()))).collect();
    let stmt = d.pass(Pass::Flattening, Stage::Flattened, stmt, |stmt| Ok(flatten::flatten(&stmt, &funcs, &plan, &external)))?;
    let stmt = d.pass(Pass::Simplification, Stage::Flattened, stmt, |stmt| Ok(simplify_stmt(&stmt)))?;
    let stmt = d.pass(Pass::MathExpansion, Stage::Flattened, stmt, |stmt| Ok(expand_math::expand_math(&stmt)))?;
    let stmt = d.pass(Pass::Vectorization, Stage::Vectorized, stmt, |stmt| Ok(vectorize::vectorize(&stmt)))?;
    let stmt = d.pass(Pass::Unrolling, Stage::Vectorized, stmt, |stmt| unroll::unroll(&stmt))?;
    let stmt = d.pass(Pass::LoopPartitioning, Stage::Vectorized, stmt, |stmt| Ok(partition_loops::partition_loops(&stmt)))?;
    let stmt =
        d.pass(Pass::RegisterAccumulators, Stage::Vectorized, stmt, |stmt| Ok(register_accumulators::accumulate_in_registers(&stmt)))?;
    let mut stmt = d.pass(Pass::FinalSimplification, Stage::Vectorized, stmt, |stmt| Ok(simplify_stmt(&stmt)))?;
    if let Some((target, kernels)) = gpu {
        stmt = d.pass(Pass::GpuKernels, Stage::Vectorized, stmt, |stmt| {
            let (out, found) = gpu::outline(&stmt, target).map_err(UserError::from)?;
            *kernels = found;
            Ok(out)
        })?;
    }
    let passes = d.passes;
    Ok(Lowered { pipeline: p.clone(), schedule: s.clone(), stmt, footprints, options: options.clone(), sliding, passes })
}
