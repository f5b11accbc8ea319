//! The schedule language as plain data.
//!
//! A [`Schedule`] maps each Func to a [`FuncSchedule`]: where it is computed
//! and stored ([`LoopLevel`]), its storage order and bounds, and for each
//! stage (pure definition, then updates) the list of loop [`Directive`]s in
//! the order they were given. The directive list is the canonical form: it
//! round-trips through serde and through the text form of
//! [`crate::schedule::text`]. [`resolve_stage`] replays a stage's directives
//! into the final loop order that lowering builds.

pub mod allocations;
pub mod legality;
pub mod random;
pub mod random_gpu;
pub mod text;

use crate::error::{ScheduleError, ScheduleErrorKind};
use crate::ir::expr::Name;
use crate::ir::stmt::ForKind;
use crate::lang::pipeline::FuncDef;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a split does when the factor does not divide the extent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TailStrategy {
    /// ShiftInwards for pure definitions, GuardWithIf for updates.
    Auto,
    /// The last iteration shifts back to end at the extent (recomputes some
    /// points; pure definitions only).
    ShiftInwards,
    /// Iterations past the extent are skipped by a condition.
    GuardWithIf,
    /// The extent is rounded up to a multiple of the factor (computes past it).
    RoundUp,
}

impl TailStrategy {
    /// The strategy's name in the text form (`auto`, `shift_inwards`,
    /// `guard_with_if`, `round_up`).
    pub fn name(self) -> &'static str {
        match self {
            TailStrategy::Auto => "auto",
            TailStrategy::ShiftInwards => "shift_inwards",
            TailStrategy::GuardWithIf => "guard_with_if",
            TailStrategy::RoundUp => "round_up",
        }
    }

    /// The strategy of a text-form name; `None` for any other string.
    pub fn from_name(s: &str) -> Option<TailStrategy> {
        [TailStrategy::Auto, TailStrategy::ShiftInwards, TailStrategy::GuardWithIf, TailStrategy::RoundUp]
            .into_iter()
            .find(|t| t.name() == s)
    }
}

/// One loop directive of a stage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Directive {
    /// `var = outer * factor + inner`, inner in `[0, factor)`.
    Split {
        /// The loop split.
        var: Name,
        /// The name of the outer loop, over `ceil(extent / factor)`
        /// iterations.
        outer: Name,
        /// The name of the inner loop, over `[0, factor)`.
        inner: Name,
        /// The inner loop's extent (at least 1).
        factor: i64,
        /// What to do when `factor` does not divide the extent.
        tail: TailStrategy,
    },
    /// One loop over the product of two adjacent loops (`inner` directly inside `outer`).
    Fuse {
        /// The inner loop of the two.
        inner: Name,
        /// The outer loop, directly outside `inner`.
        outer: Name,
        /// The name of the fused loop.
        fused: Name,
    },
    /// Permutes the listed loops among their positions, innermost first.
    Reorder {
        /// The loops permuted, innermost first.
        vars: Vec<Name>,
    },
    /// Two splits and a reorder to `xi, yi, xo, yo`.
    Tile {
        /// The loop split by `x_factor` (its inner loop `xi` ends innermost).
        x: Name,
        /// The loop split by `y_factor`.
        y: Name,
        /// The name of the outer loop of the split of `x`.
        xo: Name,
        /// The name of the outer loop of the split of `y`.
        yo: Name,
        /// The name of the inner loop of the split of `x`.
        xi: Name,
        /// The name of the inner loop of the split of `y`.
        yi: Name,
        /// The tile's extent in `x`.
        x_factor: i64,
        /// The tile's extent in `y`.
        y_factor: i64,
        /// The tail strategy of both splits.
        tail: TailStrategy,
    },
    /// Marks a loop as vectorized; with a width, splits it first and
    /// vectorizes the inner loop `{var}_vi`, the outer keeping the name `var`.
    Vectorize {
        /// The loop vectorized (split first when `width` is given).
        var: Name,
        /// The vector width to split by; `None` vectorizes the whole loop,
        /// whose extent must be a constant.
        width: Option<i64>,
    },
    /// Marks a loop as unrolled; with a factor, splits first (`{var}_ui`).
    Unroll {
        /// The loop unrolled (split first when `factor` is given).
        var: Name,
        /// The factor to split by; `None` unrolls the whole loop.
        factor: Option<i64>,
    },
    /// Marks a loop as parallel.
    Parallel {
        /// The loop.
        var: Name,
    },
    /// Marks a loop as serial (the default).
    Serial {
        /// The loop.
        var: Name,
    },
    /// Marks a loop as iterating over GPU blocks.
    GpuBlocks {
        /// The loop.
        var: Name,
    },
    /// Marks a loop as iterating over the threads of a GPU block.
    GpuThreads {
        /// The loop.
        var: Name,
    },
}

/// Where a Func is computed or stored.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LoopLevel {
    /// Substituted into its consumers (the default for compute).
    Inline,
    /// Outside every loop.
    Root,
    /// Inside loop `var` of stage `stage` of Func `func`.
    At {
        /// The Func whose loop it is.
        func: Name,
        /// The stage of that Func (0 for the pure definition).
        stage: usize,
        /// The loop.
        var: Name,
    },
}

/// Storage bound on one pure dimension: the Func is computed exactly over
/// `[min, min + extent)` in that dimension.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bound {
    /// The pure variable of the dimension bounded.
    pub var: Name,
    /// The first coordinate computed.
    pub min: i64,
    /// The number of coordinates computed.
    pub extent: i64,
}

/// Loop directives of one stage.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageSchedule {
    /// The directives, in the order given.
    pub directives: Vec<Directive>,
}

/// Everything scheduled about one Func.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FuncSchedule {
    /// Where the Func is computed.
    pub compute: LoopLevel,
    /// `None`: stored where it is computed.
    pub store: Option<LoopLevel>,
    /// Storage dimension order, innermost first (`None`: argument order).
    pub storage_order: Option<Vec<Name>>,
    /// Bounds on pure dimensions of the Func.
    pub bounds: Vec<Bound>,
    /// Indexed by stage: 0 is the pure definition, `i + 1` is update `i`.
    pub stages: BTreeMap<usize, StageSchedule>,
}

impl Default for FuncSchedule {
    fn default() -> Self {
        FuncSchedule { compute: LoopLevel::Inline, store: None, storage_order: None, bounds: vec![], stages: BTreeMap::new() }
    }
}

impl FuncSchedule {
    /// The storage level (the compute level unless set).
    pub fn store_level(&self) -> &LoopLevel {
        self.store.as_ref().unwrap_or(&self.compute)
    }

    /// Whether it is stored at a level other than the one computing it
    /// (outside it: a sliding window where the compiler can prove one).
    pub fn stored_outside_compute(&self) -> bool {
        *self.store_level() != self.compute
    }

    /// The directives of stage `stage` (0 for the pure definition), if any
    /// were given.
    pub fn stage(&self, stage: usize) -> Option<&StageSchedule> {
        self.stages.get(&stage)
    }
}

/// The schedule of a whole pipeline. Funcs without an entry are inlined
/// (outputs are always computed at root).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schedule {
    /// The schedule of each scheduled Func, by name.
    pub funcs: BTreeMap<Name, FuncSchedule>,
}

impl Schedule {
    /// An empty schedule: every Func inlined but the outputs.
    pub fn new() -> Schedule {
        Schedule::default()
    }

    /// The schedule of `func` (the default one if never scheduled).
    pub fn get(&self, func: &str) -> FuncSchedule {
        self.funcs.get(func).cloned().unwrap_or_default()
    }

    /// A builder for `func`'s pure stage and Func-level choices.
    pub fn func(&mut self, func: &str) -> FuncBuilder<'_> {
        let fs = self.funcs.entry(func.into()).or_default();
        FuncBuilder { fs, stage: 0 }
    }
}

/// Builder of one Func's schedule; loop directives go to the current stage.
pub struct FuncBuilder<'a> {
    fs: &'a mut FuncSchedule,
    stage: usize,
}

impl<'a> FuncBuilder<'a> {
    /// Switches to update definition `i` (stage `i + 1`).
    pub fn update(self, i: usize) -> FuncBuilder<'a> {
        FuncBuilder { fs: self.fs, stage: i + 1 }
    }

    fn push(self, d: Directive) -> Self {
        self.fs.stages.entry(self.stage).or_default().directives.push(d);
        self
    }

    /// Splits loop `var` into `outer` and `inner` (of extent `factor`), with
    /// the `auto` tail strategy.
    pub fn split(self, var: &str, outer: &str, inner: &str, factor: i64) -> Self {
        self.split_with(var, outer, inner, factor, TailStrategy::Auto)
    }

    /// Splits loop `var` into `outer` and `inner` (of extent `factor`), with
    /// the given tail strategy.
    pub fn split_with(self, var: &str, outer: &str, inner: &str, factor: i64, tail: TailStrategy) -> Self {
        self.push(Directive::Split { var: var.into(), outer: outer.into(), inner: inner.into(), factor, tail })
    }

    /// Fuses loop `inner` with loop `outer`, directly outside it, into one
    /// loop `fused`.
    pub fn fuse(self, inner: &str, outer: &str, fused: &str) -> Self {
        self.push(Directive::Fuse { inner: inner.into(), outer: outer.into(), fused: fused.into() })
    }

    /// Loops listed innermost first.
    pub fn reorder(self, vars: &[&str]) -> Self {
        self.push(Directive::Reorder { vars: vars.iter().map(|v| Name::from(*v)).collect() })
    }

    /// Splits `x` and `y` by `x_factor` and `y_factor` and reorders the loops
    /// to `xi, yi, xo, yo`, innermost first.
    #[allow(clippy::too_many_arguments)]
    pub fn tile(self, x: &str, y: &str, xo: &str, yo: &str, xi: &str, yi: &str, x_factor: i64, y_factor: i64) -> Self {
        self.push(Directive::Tile {
            x: x.into(),
            y: y.into(),
            xo: xo.into(),
            yo: yo.into(),
            xi: xi.into(),
            yi: yi.into(),
            x_factor,
            y_factor,
            tail: TailStrategy::Auto,
        })
    }

    /// Vectorizes loop `var`, whose extent must be a constant.
    pub fn vectorize(self, var: &str) -> Self {
        self.push(Directive::Vectorize { var: var.into(), width: None })
    }

    /// Splits loop `var` by `width` and vectorizes the inner loop `{var}_vi`;
    /// the outer keeps the name `var`.
    pub fn vectorize_by(self, var: &str, width: i64) -> Self {
        self.push(Directive::Vectorize { var: var.into(), width: Some(width) })
    }

    /// Unrolls loop `var`, whose extent must be a constant once bounds are
    /// inferred.
    pub fn unroll(self, var: &str) -> Self {
        self.push(Directive::Unroll { var: var.into(), factor: None })
    }

    /// Splits loop `var` by `factor` and unrolls the inner loop `{var}_ui`;
    /// the outer keeps the name `var`.
    pub fn unroll_by(self, var: &str, factor: i64) -> Self {
        self.push(Directive::Unroll { var: var.into(), factor: Some(factor) })
    }

    /// Runs the iterations of loop `var` in parallel.
    pub fn parallel(self, var: &str) -> Self {
        self.push(Directive::Parallel { var: var.into() })
    }

    /// Runs the iterations of loop `var` in order (the default).
    pub fn serial(self, var: &str) -> Self {
        self.push(Directive::Serial { var: var.into() })
    }

    /// Tiles `x` and `y` by `x_size` by `y_size` threads, as Halide's
    /// `gpu_tile`: the tile loops `bx`, `by` become GPU blocks and the
    /// loops inside a tile, `tx`, `ty`, the threads of each block.
    #[allow(clippy::too_many_arguments)]
    pub fn gpu_tile(self, x: &str, y: &str, bx: &str, by: &str, tx: &str, ty: &str, x_size: i64, y_size: i64) -> Self {
        self.tile(x, y, bx, by, tx, ty, x_size, y_size).gpu_blocks(bx).gpu_blocks(by).gpu_threads(tx).gpu_threads(ty)
    }

    /// Maps loop `var` to GPU blocks.
    pub fn gpu_blocks(self, var: &str) -> Self {
        self.push(Directive::GpuBlocks { var: var.into() })
    }

    /// Maps loop `var` to the threads of a GPU block.
    pub fn gpu_threads(self, var: &str) -> Self {
        self.push(Directive::GpuThreads { var: var.into() })
    }

    /// Computes the Func outside every loop.
    pub fn compute_root(self) -> Self {
        self.fs.compute = LoopLevel::Root;
        self
    }

    /// Inlines the Func into its consumers (the default).
    pub fn compute_inline(self) -> Self {
        self.fs.compute = LoopLevel::Inline;
        self
    }

    /// Computes inside loop `var` of `func`'s pure stage.
    pub fn compute_at(self, func: &str, var: &str) -> Self {
        self.compute_at_stage(func, 0, var)
    }

    /// Computes the Func inside loop `var` of stage `stage` of `func` (0 for
    /// the pure definition).
    pub fn compute_at_stage(self, func: &str, stage: usize, var: &str) -> Self {
        self.fs.compute = LoopLevel::At { func: func.into(), stage, var: var.into() };
        self
    }

    /// Stores the Func outside every loop.
    pub fn store_root(self) -> Self {
        self.fs.store = Some(LoopLevel::Root);
        self
    }

    /// Stores the Func inside loop `var` of `func`'s pure stage.
    pub fn store_at(self, func: &str, var: &str) -> Self {
        self.store_at_stage(func, 0, var)
    }

    /// Stores the Func inside loop `var` of stage `stage` of `func` (0 for
    /// the pure definition).
    pub fn store_at_stage(self, func: &str, stage: usize, var: &str) -> Self {
        self.fs.store = Some(LoopLevel::At { func: func.into(), stage, var: var.into() });
        self
    }

    /// Storage order, innermost first.
    pub fn reorder_storage(self, vars: &[&str]) -> Self {
        self.fs.storage_order = Some(vars.iter().map(|v| Name::from(*v)).collect());
        self
    }

    /// Computes the Func exactly over `[min, min + extent)` in pure dimension
    /// `var`.
    pub fn bound(self, var: &str, min: i64, extent: i64) -> Self {
        self.fs.bounds.push(Bound { var: var.into(), min, extent });
        self
    }
}

/// How a loop variable of a resolved stage came to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SplitRecord {
    /// A split of loop `old` into `outer` and `inner`.
    Split {
        /// The loop split.
        old: Name,
        /// The outer loop.
        outer: Name,
        /// The inner loop.
        inner: Name,
        /// The inner loop's extent.
        factor: i64,
        /// The tail strategy, `Auto` resolved.
        tail: TailStrategy,
    },
    /// A fusion of loops `inner` and `outer` into `fused`.
    Fuse {
        /// The inner loop fused.
        inner: Name,
        /// The outer loop fused.
        outer: Name,
        /// The loop they became.
        fused: Name,
    },
}

/// One loop of a resolved stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedDim {
    /// The loop variable.
    pub name: Name,
    /// How the loop runs.
    pub kind: ForKind,
    /// Derived (only) from reduction variables.
    pub is_rvar: bool,
    /// The loop's extent when it is known without running the pipeline.
    pub const_extent: Option<i64>,
}

/// A stage's final loops (innermost first) and the splits that made them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedStage {
    /// The final loops, innermost first.
    pub dims: Vec<ResolvedDim>,
    /// The splits and fusions, in the order applied.
    pub splits: Vec<SplitRecord>,
    /// The dimensions the stage starts from (pure vars and reduction vars).
    pub initial: Vec<ResolvedDim>,
}

impl ResolvedStage {
    /// The final loop named `name`, if there is one.
    pub fn dim(&self, name: &str) -> Option<&ResolvedDim> {
        self.dims.iter().find(|d| &*d.name == name)
    }
}

/// The loops a stage starts from, innermost first: for the pure definition
/// its arguments; for an update, its reduction variables (innermost) inside
/// the pure variables it leaves free.
pub fn initial_dims(func: &FuncDef, stage: usize, bounds: &[Bound]) -> Vec<ResolvedDim> {
    let bound_extent = |v: &str| bounds.iter().find(|b| &*b.var == v).map(|b| b.extent);
    let pure = |names: &[Name]| -> Vec<ResolvedDim> {
        names
            .iter()
            .map(|n| ResolvedDim { name: n.clone(), kind: ForKind::Serial, is_rvar: false, const_extent: bound_extent(n) })
            .collect()
    };
    if stage == 0 {
        return pure(&func.args);
    }
    let update = &func.updates[stage - 1];
    let mut dims = vec![];
    if let Some(r) = &update.rdom {
        for d in &r.dims {
            dims.push(ResolvedDim {
                name: d.name.clone(),
                kind: ForKind::Serial,
                is_rvar: true,
                const_extent: crate::simplify::simplify(&d.extent).as_int(),
            });
        }
    }
    dims.extend(pure(&update.pure_vars(&func.args)));
    dims
}

/// Replays a stage's directives. Errors name the Func, the stage and the
/// directive.
pub fn resolve_stage(func: &FuncDef, stage: usize, fs: &FuncSchedule) -> Result<ResolvedStage, ScheduleError> {
    let initial = initial_dims(func, stage, &fs.bounds);
    let mut r = ResolvedStage { dims: initial.clone(), splits: vec![], initial };
    let directives = fs.stage(stage).map(|s| s.directives.as_slice()).unwrap_or(&[]);
    let is_update = stage > 0;
    for d in directives {
        let err = |(kind, why): Problem| ScheduleError::Directive {
            func: func.name.to_string(),
            stage,
            directive: crate::schedule::text::directive_text(d),
            kind,
            why,
        };
        apply_directive(&mut r, d, is_update).map_err(err)?;
    }
    // A loop is marked vectorized where the directive says; it must be the
    // innermost once all of the stage's directives have applied (so a
    // reorder may come after the vectorize, as in Halide).
    if let Some(v) = r.dims.iter().skip(1).find(|d| d.kind == ForKind::Vectorized) {
        let last_vectorize = directives.iter().rev().find(|d| matches!(d, Directive::Vectorize { .. }));
        let loops: Vec<&str> = r.dims.iter().map(|d| &*d.name).collect();
        return Err(ScheduleError::Directive {
            func: func.name.to_string(),
            stage,
            directive: last_vectorize.map(crate::schedule::text::directive_text).unwrap_or_default(),
            kind: ScheduleErrorKind::VectorLoopNotInnermost,
            why: format!(
                "only the innermost loop can be vectorized, and after the stage's directives the vectorized loop {} is not innermost (loops, innermost first: {})",
                v.name,
                loops.join(", ")
            ),
        });
    }
    Ok(r)
}

/// What is wrong with a directive, and why in words.
type Problem = (ScheduleErrorKind, String);

fn position(r: &ResolvedStage, var: &str) -> Result<usize, Problem> {
    r.dims.iter().position(|d| &*d.name == var).ok_or_else(|| {
        let names: Vec<&str> = r.dims.iter().map(|d| &*d.name).collect();
        (ScheduleErrorKind::NoSuchLoop, format!("there is no loop {var} (loops: {})", names.join(", ")))
    })
}

fn check_fresh(r: &ResolvedStage, name: &str, except: &str) -> Result<(), Problem> {
    if name != except && r.dims.iter().any(|d| &*d.name == name) {
        return Err((ScheduleErrorKind::DuplicateLoopName, format!("a loop named {name} already exists")));
    }
    Ok(())
}

fn split(
    r: &mut ResolvedStage,
    var: &Name,
    outer: &Name,
    inner: &Name,
    factor: i64,
    tail: TailStrategy,
    is_update: bool,
) -> Result<(), Problem> {
    let i = position(r, var)?;
    if factor < 1 {
        return Err((ScheduleErrorKind::InvalidSplit, format!("split factor must be at least 1, not {factor}")));
    }
    if outer == inner {
        return Err((ScheduleErrorKind::InvalidSplit, format!("outer and inner loops are both named {outer}")));
    }
    check_fresh(r, outer, var)?;
    check_fresh(r, inner, var)?;
    let old = r.dims[i].clone();
    let shorter_than_factor = old.const_extent.is_some_and(|e| e < factor);
    let tail = match tail {
        TailStrategy::Auto if old.is_rvar || is_update || shorter_than_factor => TailStrategy::GuardWithIf,
        TailStrategy::Auto => TailStrategy::ShiftInwards,
        t => t,
    };
    if let (TailStrategy::ShiftInwards, Some(extent)) = (tail, old.const_extent.filter(|_| shorter_than_factor)) {
        return Err((
            ScheduleErrorKind::ShiftInwardsTooShort,
            format!("shift_inwards needs at least {factor} iterations to shift into, but {var} has only {extent}"),
        ));
    }
    let divides = old.const_extent.is_some_and(|e| e % factor == 0);
    if old.is_rvar && tail != TailStrategy::GuardWithIf && !divides {
        return Err((
            ScheduleErrorKind::TailChangesUpdate,
            format!("a reduction loop may only be split with guard_with_if; {} would change the reduction", tail.name()),
        ));
    }
    if is_update && tail == TailStrategy::ShiftInwards && !divides {
        return Err((
            ScheduleErrorKind::TailChangesUpdate,
            "shift_inwards would recompute points of an update definition; use guard_with_if or round_up".into(),
        ));
    }
    let inner_dim = ResolvedDim { name: inner.clone(), kind: ForKind::Serial, is_rvar: old.is_rvar, const_extent: Some(factor) };
    let outer_dim = ResolvedDim {
        name: outer.clone(),
        kind: old.kind,
        is_rvar: old.is_rvar,
        const_extent: old.const_extent.map(|e| (e + factor - 1) / factor),
    };
    r.dims.splice(i..=i, [inner_dim, outer_dim]);
    r.splits.push(SplitRecord::Split { old: var.clone(), outer: outer.clone(), inner: inner.clone(), factor, tail });
    Ok(())
}

fn set_kind(r: &mut ResolvedStage, var: &str, kind: ForKind) -> Result<(), Problem> {
    let i = position(r, var)?;
    let dim = &r.dims[i];
    // An unrolled loop's extent may also be proven constant by bounds
    // inference (the unrolling pass names the loop when it is not).
    if kind == ForKind::Vectorized && dim.const_extent.is_none() {
        return Err((
            ScheduleErrorKind::NonConstantExtent,
            format!("loop {var} has no constant extent; vectorize needs one (split it, or bound the dimension)"),
        ));
    }
    r.dims[i].kind = kind;
    Ok(())
}

fn apply_directive(r: &mut ResolvedStage, d: &Directive, is_update: bool) -> Result<(), Problem> {
    match d {
        Directive::Split { var, outer, inner, factor, tail } => split(r, var, outer, inner, *factor, *tail, is_update),
        Directive::Fuse { inner, outer, fused } => {
            let i = position(r, inner)?;
            let o = position(r, outer)?;
            if o != i + 1 {
                return Err((ScheduleErrorKind::InvalidFuse, format!("{outer} must be the loop directly outside {inner}")));
            }
            check_fresh(r, fused, inner)?;
            if r.dims[i].is_rvar != r.dims[o].is_rvar {
                return Err((ScheduleErrorKind::InvalidFuse, "cannot fuse a reduction loop with a pure loop".into()));
            }
            let const_extent = r.dims[i].const_extent.zip(r.dims[o].const_extent).map(|(a, b)| a * b);
            let merged = ResolvedDim { name: fused.clone(), kind: r.dims[o].kind, is_rvar: r.dims[i].is_rvar, const_extent };
            r.dims.splice(i..=o, [merged]);
            r.splits.push(SplitRecord::Fuse { inner: inner.clone(), outer: outer.clone(), fused: fused.clone() });
            Ok(())
        }
        Directive::Reorder { vars } => {
            let mut positions = vec![];
            for v in vars {
                let p = position(r, v)?;
                if positions.contains(&p) {
                    return Err((ScheduleErrorKind::DuplicateInReorder, format!("{v} is listed twice")));
                }
                positions.push(p);
            }
            let moved: Vec<ResolvedDim> = positions.iter().map(|&p| r.dims[p].clone()).collect();
            let mut sorted = positions.clone();
            sorted.sort_unstable();
            for (slot, dim) in sorted.into_iter().zip(moved) {
                r.dims[slot] = dim;
            }
            Ok(())
        }
        Directive::Tile { x, y, xo, yo, xi, yi, x_factor, y_factor, tail } => {
            split(r, x, xo, xi, *x_factor, *tail, is_update)?;
            split(r, y, yo, yi, *y_factor, *tail, is_update)?;
            apply_directive(r, &Directive::Reorder { vars: vec![xi.clone(), yi.clone(), xo.clone(), yo.clone()] }, is_update)
        }
        Directive::Vectorize { var, width } => {
            let target = match width {
                Some(w) => {
                    let inner: Name = format!("{var}_vi").into();
                    split(r, var, var, &inner, *w, TailStrategy::Auto, is_update)?;
                    inner
                }
                None => var.clone(),
            };
            set_kind(r, &target, ForKind::Vectorized)
        }
        Directive::Unroll { var, factor } => {
            let target = match factor {
                Some(f) => {
                    let inner: Name = format!("{var}_ui").into();
                    split(r, var, var, &inner, *f, TailStrategy::Auto, is_update)?;
                    inner
                }
                None => var.clone(),
            };
            set_kind(r, &target, ForKind::Unrolled)
        }
        Directive::Parallel { var } => set_kind(r, var, ForKind::Parallel),
        Directive::Serial { var } => set_kind(r, var, ForKind::Serial),
        Directive::GpuBlocks { var } => set_kind(r, var, ForKind::GpuBlock),
        Directive::GpuThreads { var } => set_kind(r, var, ForKind::GpuThread),
    }
}
