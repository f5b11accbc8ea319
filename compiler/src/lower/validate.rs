//! Schedule validation: checks a [`Schedule`] against its pipeline and turns
//! it into a [`Plan`] that the lowering passes follow without re-checking.
//!
//! Requires: a checked [`PipelineDef`]. Guarantees, for the plan it returns:
//! every named Func, stage and loop exists; each realized Func is computed
//! inside a loop that encloses every use of it and stored at or outside that
//! loop, but not outside a parallel loop that encloses the computation (the
//! iterations would race on the storage); outputs are computed at root; no Func is computed inside a vectorized
//! loop; vectorized and unrolled loops have constant extents; reduction loops
//! keep their order and run serially unless their iterations are independent.

use crate::error::{ScheduleError, ScheduleErrorKind};
use crate::ir::expr::{CallTarget, Expr, ExprNode, Name};
use crate::ir::stmt::ForKind;
use crate::ir::visit::{walk_expr, Visitor};
use crate::lang::pipeline::{FuncDef, PipelineDef};
use crate::schedule::{resolve_stage, Bound, FuncSchedule, LoopLevel, ResolvedStage, Schedule, SplitRecord};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// How one Func is realized.
#[derive(Clone, Debug)]
pub struct FuncPlan {
    /// Substituted into its consumers; nothing else below applies.
    pub inline: bool,
    /// `Root` or `At` (never `Inline` for realized Funcs).
    pub compute: LoopLevel,
    /// Where it is stored (its compute level unless the schedule says
    /// otherwise).
    pub store: LoopLevel,
    /// One per stage.
    pub stages: Vec<ResolvedStage>,
    /// Storage dimensions, innermost first.
    pub storage_order: Vec<Name>,
    /// The schedule's bounds on its pure dimensions.
    pub bounds: Vec<Bound>,
}

/// The validated schedule of a whole pipeline.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The plan of every Func of the pipeline, by name.
    pub funcs: BTreeMap<Name, FuncPlan>,
}

impl Plan {
    /// The plan of `func`; panics if the pipeline has no such Func.
    pub fn get(&self, func: &str) -> &FuncPlan {
        &self.funcs[func]
    }
}

fn func_err(func: &str, kind: ScheduleErrorKind, why: impl Into<String>) -> ScheduleError {
    ScheduleError::Func { func: func.to_string(), kind, why: why.into() }
}

/// Validates `schedule` for `p`.
pub fn validate(p: &PipelineDef, schedule: &Schedule) -> Result<Plan, ScheduleError> {
    for name in schedule.funcs.keys() {
        if p.func(name).is_none() {
            return Err(ScheduleError::UnknownFunc { func: name.to_string() });
        }
    }
    let inline: BTreeSet<Name> = p
        .funcs
        .iter()
        .filter(|f| !p.is_output(&f.name) && f.updates.is_empty() && schedule.get(&f.name).compute == LoopLevel::Inline)
        .map(|f| f.name.clone())
        .collect();
    // Realized Funcs each stage uses, looking through inlined Funcs.
    let mut uses_memo: HashMap<Name, BTreeSet<Name>> = HashMap::new();
    let mut stage_uses: BTreeMap<(Name, usize), BTreeSet<Name>> = BTreeMap::new();
    for f in &p.funcs {
        for s in 0..f.stages() {
            let mut realized = BTreeSet::new();
            for c in f.stage_callees(s) {
                realized.extend(realized_uses(p, &inline, &c, &mut uses_memo));
            }
            stage_uses.insert((f.name.clone(), s), realized);
        }
    }
    let mut funcs = BTreeMap::new();
    for f in &p.funcs {
        let fs = schedule.get(&f.name);
        let plan = plan_func(p, f, &fs, &inline, &stage_uses, schedule)?;
        funcs.insert(f.name.clone(), plan);
    }
    let mut plan = Plan { funcs };
    // A Func with updates left at the default placement and used by several
    // stages goes to the innermost loop enclosing all its uses, as in
    // Halide; that needs its consumers placed, so consumers go first.
    for f in p.funcs.iter().rev() {
        let fs = schedule.get(&f.name);
        let shared = fs.compute == LoopLevel::Inline && !inline.contains(&f.name) && !p.is_output(&f.name);
        if !shared || users(f, &stage_uses, &inline).len() < 2 {
            continue;
        }
        let level = enclosing_all_uses(&plan, f, &stage_uses, &inline)?;
        let fp = plan.funcs.get_mut(&f.name).expect("every Func is planned");
        if fs.store.is_none() {
            fp.store = level.clone();
        }
        fp.compute = level;
    }
    check_levels(p, &plan, &stage_uses)?;
    Ok(plan)
}

/// The realized stages that use `f` (looking through inlined Funcs).
fn users<'a>(f: &FuncDef, stage_uses: &'a BTreeMap<(Name, usize), BTreeSet<Name>>, inline: &BTreeSet<Name>) -> Vec<&'a (Name, usize)> {
    stage_uses.iter().filter(|((c, _), u)| u.contains(&f.name) && !inline.contains(c)).map(|(k, _)| k).collect()
}

/// The innermost loop enclosing every use of `f` (its consumers placed),
/// or the root: the longest common prefix of the loops around each using
/// stage's body (vectorized loops excepted: nothing is computed inside one).
fn enclosing_all_uses(
    plan: &Plan,
    f: &FuncDef,
    stage_uses: &BTreeMap<(Name, usize), BTreeSet<Name>>,
    inline: &BTreeSet<Name>,
) -> Result<LoopLevel, ScheduleError> {
    let mut common: Option<Vec<LoopLevel>> = None;
    for (consumer, stage) in users(f, stage_uses, inline) {
        let mut path = compute_path(plan, consumer, &mut vec![])?;
        let dims = &plan.get(consumer).stages[*stage].dims;
        path.extend(dims.iter().rev().filter(|d| d.kind != ForKind::Vectorized).map(|d| at(consumer, *stage, &d.name)));
        common = Some(match common {
            None => path,
            Some(c) => c.into_iter().zip(path).take_while(|(a, b)| a == b).map(|(a, _)| a).collect(),
        });
    }
    Ok(common.and_then(|c| c.last().cloned()).unwrap_or(LoopLevel::Root))
}

fn realized_uses(p: &PipelineDef, inline: &BTreeSet<Name>, callee: &Name, memo: &mut HashMap<Name, BTreeSet<Name>>) -> BTreeSet<Name> {
    if !inline.contains(callee) {
        return BTreeSet::from([callee.clone()]);
    }
    if let Some(r) = memo.get(callee) {
        return r.clone();
    }
    let f = p.func(callee).expect("checked pipeline");
    let mut out = BTreeSet::new();
    for c in f.stage_callees(0) {
        out.extend(realized_uses(p, inline, &c, memo));
    }
    memo.insert(callee.clone(), out.clone());
    out
}

fn plan_func(
    p: &PipelineDef,
    f: &FuncDef,
    fs: &FuncSchedule,
    inline_set: &BTreeSet<Name>,
    stage_uses: &BTreeMap<(Name, usize), BTreeSet<Name>>,
    schedule: &Schedule,
) -> Result<FuncPlan, ScheduleError> {
    let inline = inline_set.contains(&f.name);
    let name = &*f.name;
    if let Some(&s) = fs.stages.keys().find(|&&s| s >= f.stages()) {
        return Err(func_err(
            name,
            ScheduleErrorKind::NoSuchUpdate,
            format!("the schedule names update {} but {name} has {} update definition(s)", s - 1, f.updates.len()),
        ));
    }
    let is_output = p.is_output(name);
    if inline {
        if fs.store.is_some() || fs.storage_order.is_some() || !fs.bounds.is_empty() || fs.stages.values().any(|s| !s.directives.is_empty())
        {
            return Err(func_err(
                name,
                ScheduleErrorKind::DirectivesOnInlinedFunc,
                "is inlined, so its loop, storage and bound directives would have no effect; compute_root() or compute_at() it",
            ));
        }
        return Ok(FuncPlan {
            inline: true,
            compute: LoopLevel::Inline,
            store: LoopLevel::Inline,
            stages: vec![],
            storage_order: vec![],
            bounds: vec![],
        });
    }
    let compute = match (&fs.compute, is_output) {
        (LoopLevel::At { .. }, true) => {
            return Err(func_err(
                name,
                ScheduleErrorKind::InvalidOutputPlacement,
                "is an output, so it is computed at root; it cannot be compute_at another Func",
            ))
        }
        (LoopLevel::Inline, true) | (LoopLevel::Root, _) => LoopLevel::Root,
        (LoopLevel::Inline, false) => innermost_consumer_loop(p, f, stage_uses, schedule, inline_set)?,
        (at, false) => at.clone(),
    };
    let store = match (&fs.store, is_output) {
        (Some(LoopLevel::At { .. }), true) => {
            return Err(func_err(
                name,
                ScheduleErrorKind::InvalidOutputPlacement,
                "is an output; its storage is the output buffer, so it cannot be store_at",
            ))
        }
        (Some(LoopLevel::Inline), _) => {
            return Err(func_err(name, ScheduleErrorKind::InvalidOutputPlacement, "store level cannot be inline"))
        }
        (Some(level), _) => level.clone(),
        (None, _) => compute.clone(),
    };
    for b in &fs.bounds {
        if !f.args.contains(&b.var) {
            return Err(func_err(
                name,
                ScheduleErrorKind::InvalidBound,
                format!("bound({}, ...) names no pure dimension of {name} (dimensions: {})", b.var, join(&f.args)),
            ));
        }
        if b.extent < 1 {
            return Err(func_err(
                name,
                ScheduleErrorKind::InvalidBound,
                format!("bound({}, {}, {}) has an extent below 1", b.var, b.min, b.extent),
            ));
        }
    }
    let storage_order = match &fs.storage_order {
        None => f.args.clone(),
        Some(order) => {
            let mut sorted = order.clone();
            sorted.sort();
            let mut args = f.args.clone();
            args.sort();
            if sorted != args {
                return Err(func_err(
                    name,
                    ScheduleErrorKind::InvalidStorageOrder,
                    format!("reorder_storage({}) must list each dimension of {name} once ({})", join(order), join(&f.args)),
                ));
            }
            order.clone()
        }
    };
    let mut stages = vec![];
    for s in 0..f.stages() {
        let r = resolve_stage(f, s, fs)?;
        if s > 0 {
            check_reduction_loops(f, s, &r)?;
        }
        stages.push(r);
    }
    Ok(FuncPlan { inline: false, compute, store, stages, storage_order, bounds: fs.bounds.clone() })
}

fn join(names: &[Name]) -> String {
    names.iter().map(|n| &**n).collect::<Vec<_>>().join(", ")
}

/// The default for a Func with updates left inline: computed at the
/// innermost loop of the one stage that uses it. One used by several
/// stages is at the root here, until [`validate`] places it where its uses
/// meet.
fn innermost_consumer_loop(
    p: &PipelineDef,
    f: &FuncDef,
    stage_uses: &BTreeMap<(Name, usize), BTreeSet<Name>>,
    schedule: &Schedule,
    inline: &BTreeSet<Name>,
) -> Result<LoopLevel, ScheduleError> {
    let [(consumer, stage)] = users(f, stage_uses, inline).as_slice() else {
        return Ok(LoopLevel::Root);
    };
    let cf = p.func(consumer).expect("checked pipeline");
    let consumer_stage = resolve_stage(cf, *stage, &schedule.get(consumer))?;
    let innermost = consumer_stage.dims.iter().find(|d| d.kind != ForKind::Vectorized);
    let var = innermost.map(|d| d.name.clone());
    match var {
        Some(var) => Ok(LoopLevel::At { func: consumer.clone(), stage: *stage, var }),
        None => Ok(LoopLevel::Root),
    }
}

/// Loop identity: the lowered loop variable name.
fn loop_id(func: &str, stage: usize, var: &str) -> String {
    super::names::stage_var(func, stage, var)
}

/// The level just inside loop `var` of `func`'s stage `stage`.
fn at(func: &Name, stage: usize, var: &Name) -> LoopLevel {
    LoopLevel::At { func: func.clone(), stage, var: var.clone() }
}

/// The lowered loop variable name of a loop level.
fn level_id(level: &LoopLevel) -> String {
    match level {
        LoopLevel::At { func, stage, var } => loop_id(func, *stage, var),
        other => describe(other),
    }
}

/// Loops enclosing code placed at `level`, outermost first.
fn level_path(plan: &Plan, level: &LoopLevel, visiting: &mut Vec<Name>) -> Result<Vec<LoopLevel>, ScheduleError> {
    match level {
        LoopLevel::Inline | LoopLevel::Root => Ok(vec![]),
        LoopLevel::At { func, stage, var } => {
            if visiting.contains(func) {
                return Err(func_err(
                    func,
                    ScheduleErrorKind::ComputeLevelCycle,
                    format!("compute levels form a cycle through {}", join(visiting)),
                ));
            }
            let mut path = compute_path(plan, func, visiting)?;
            let st = &plan.get(func).stages[*stage];
            let pos = st.dims.iter().position(|d| d.name == *var).expect("checked level");
            path.extend(st.dims[pos..].iter().rev().map(|d| at(func, *stage, &d.name)));
            Ok(path)
        }
    }
}

fn compute_path(plan: &Plan, func: &Name, visiting: &mut Vec<Name>) -> Result<Vec<LoopLevel>, ScheduleError> {
    visiting.push(func.clone());
    let r = level_path(plan, &plan.get(func).compute, visiting);
    visiting.pop();
    r
}

fn check_level_exists(p: &PipelineDef, plan: &Plan, func: &str, what: &str, level: &LoopLevel) -> Result<(), ScheduleError> {
    let LoopLevel::At { func: g, stage, var } = level else {
        return Ok(());
    };
    let Some(gdef) = p.func(g) else {
        return Err(func_err(func, ScheduleErrorKind::NoSuchLevel, format!("{what} names Func {g}, which is not in the pipeline")));
    };
    let gp = plan.get(g);
    if gp.inline {
        return Err(func_err(
            func,
            ScheduleErrorKind::NoSuchLevel,
            format!("{what} names a loop of {g}, but {g} is inlined and has no loops"),
        ));
    }
    if *stage >= gdef.stages() {
        return Err(func_err(
            func,
            ScheduleErrorKind::NoSuchLevel,
            format!("{what} names update {} of {g}, which has {} update(s)", stage - 1, gdef.updates.len()),
        ));
    }
    let st = &gp.stages[*stage];
    match st.dim(var) {
        None => Err(func_err(
            func,
            ScheduleErrorKind::NoSuchLevel,
            format!(
                "{what} names loop {var} of {g} (stage {stage}), which does not exist (loops: {})",
                st.dims.iter().map(|d| &*d.name).collect::<Vec<_>>().join(", ")
            ),
        )),
        Some(d) if d.kind == ForKind::Vectorized => Err(func_err(
            func,
            ScheduleErrorKind::LevelInsideVectorLoop,
            format!("{what} names loop {var} of {g}, which is vectorized; nothing can be computed inside a vector loop"),
        )),
        Some(_) => Ok(()),
    }
}

fn check_levels(p: &PipelineDef, plan: &Plan, stage_uses: &BTreeMap<(Name, usize), BTreeSet<Name>>) -> Result<(), ScheduleError> {
    for (name, fp) in &plan.funcs {
        if fp.inline {
            continue;
        }
        check_level_exists(p, plan, name, "compute_at", &fp.compute)?;
        check_level_exists(p, plan, name, "store_at", &fp.store)?;
    }
    // Loops whose iterations run concurrently.
    let parallel: BTreeSet<String> = plan
        .funcs
        .iter()
        .flat_map(|(f, fp)| {
            fp.stages.iter().enumerate().flat_map(move |(s, st)| {
                st.dims.iter().filter(|d| matches!(d.kind, ForKind::Parallel | ForKind::GpuBlock)).map(move |d| loop_id(f, s, &d.name))
            })
        })
        .collect();
    for (name, fp) in &plan.funcs {
        if fp.inline {
            continue;
        }
        let compute = compute_path(plan, name, &mut vec![])?;
        let store = level_path(plan, &fp.store, &mut vec![name.clone()])?;
        if !compute.starts_with(&store) {
            return Err(func_err(
                name,
                ScheduleErrorKind::StorageInsideCompute,
                format!(
                    "is stored at {} but computed at {}; storage must be at or outside the compute level",
                    describe(&fp.store),
                    describe(&fp.compute)
                ),
            ));
        }
        if let Some(l) = compute[store.len()..].iter().map(level_id).find(|l| parallel.contains(l)) {
            return Err(func_err(
                name, ScheduleErrorKind::StorageOutsideParallelLoop,
                format!(
                    "is stored at {} outside the parallel loop {l} it is computed in; its iterations would race on the storage (store it inside that loop, or make the loop serial)",
                    describe(&fp.store)
                ),
            ));
        }
        for ((consumer, stage), used) in stage_uses {
            if !used.contains(name) || plan.get(consumer).inline {
                continue;
            }
            let mut use_path = compute_path(plan, consumer, &mut vec![])?;
            use_path.extend(plan.get(consumer).stages[*stage].dims.iter().rev().map(|d| at(consumer, *stage, &d.name)));
            if !use_path.starts_with(&compute) {
                return Err(func_err(
                    name, ScheduleErrorKind::ComputeLevelDoesNotEncloseUses,
                    format!(
                        "is computed at {}, which does not enclose its use in {consumer} (stage {stage}); compute it at a loop that encloses every use, or at root",
                        describe(&fp.compute)
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn describe(level: &LoopLevel) -> String {
    match level {
        LoopLevel::Inline => "inline".into(),
        LoopLevel::Root => "root".into(),
        LoopLevel::At { func, stage: 0, var } => format!("{func}.{var}"),
        LoopLevel::At { func, stage, var } => format!("{func}.update({}).{var}", stage - 1),
    }
}

/// Reduction loops keep their order and run serially, unless every
/// iteration of a reduction variable touches its own point of the Func.
fn check_reduction_loops(f: &FuncDef, stage: usize, r: &ResolvedStage) -> Result<(), ScheduleError> {
    let update = &f.updates[stage - 1];
    let Some(rdom) = &update.rdom else {
        return Ok(());
    };
    let independent: Vec<bool> = rdom.dims.iter().map(|d| rvar_is_independent(f, update, &d.name)).collect();
    // Significance keys: rdom dimension (outermost most significant), then split path.
    let mut keys: HashMap<Name, (usize, Vec<u8>)> = HashMap::new();
    for (i, d) in rdom.dims.iter().enumerate() {
        keys.insert(d.name.clone(), (i, vec![]));
    }
    for s in &r.splits {
        match s {
            SplitRecord::Split { old, outer, inner, .. } => {
                if let Some((d, path)) = keys.get(old).cloned() {
                    let mut o = path.clone();
                    o.push(0);
                    let mut i = path;
                    i.push(1);
                    keys.insert(outer.clone(), (d, o));
                    keys.insert(inner.clone(), (d, i));
                }
            }
            SplitRecord::Fuse { outer, fused, .. } => {
                if let Some(k) = keys.get(outer).cloned() {
                    keys.insert(fused.clone(), k);
                }
            }
        }
    }
    let n = rdom.dims.len();
    let directive_err = |why: String| ScheduleError::Directive {
        func: f.name.to_string(),
        stage,
        directive: "loop order".into(),
        kind: ScheduleErrorKind::ReductionOrderChanged,
        why,
    };
    // Outermost to innermost, the reduction loops must be in decreasing significance.
    let mut last: Option<(usize, Vec<u8>, Name)> = None;
    for d in r.dims.iter().rev().filter(|d| d.is_rvar) {
        let Some((dim, path)) = keys.get(&d.name).cloned() else {
            continue;
        };
        if d.kind != ForKind::Serial && d.kind != ForKind::Unrolled && !independent[dim] {
            return Err(directive_err(format!(
                "loop {} of the reduction over {} is {}, but iterations of {} update the same points of {} in order; only serial or unrolled is allowed",
                d.name,
                rdom.name,
                d.kind.name(),
                rdom.dims[dim].name,
                f.name
            )));
        }
        let key = (n - 1 - dim, path);
        if let Some((ld, lp, lname)) = &last {
            if (key.0, &key.1) < (*ld, lp) && !(independent[dim] && independent[n - 1 - *ld]) {
                return Err(directive_err(format!(
                    "reordering reduction loops {lname} and {} changes the order in which {} is updated",
                    d.name, f.name
                )));
            }
        }
        last = Some((key.0, key.1, d.name.clone()));
    }
    Ok(())
}

/// True when `rvar` appears unadorned at one position of the left-hand side
/// and at that position in every self-reference: each iteration then writes
/// and reads only its own points.
fn rvar_is_independent(f: &FuncDef, update: &crate::lang::pipeline::UpdateDef, rvar: &Name) -> bool {
    let Some(pos) = update.args.iter().position(|a| a.as_var() == Some(rvar)) else {
        return false;
    };
    struct SelfCalls<'a> {
        func: &'a str,
        pos: usize,
        rvar: &'a Name,
        ok: bool,
    }
    impl Visitor for SelfCalls<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprNode::Call { target: CallTarget::Func(r), args, .. } = e.node() {
                if &*r.name == self.func && args.get(self.pos).and_then(|a| a.as_var()) != Some(self.rvar) {
                    self.ok = false;
                }
            }
            walk_expr(self, e)
        }
    }
    let mut v = SelfCalls { func: &f.name, pos, rvar, ok: true };
    update.values.iter().for_each(|x| v.visit_expr(x));
    v.ok
}
