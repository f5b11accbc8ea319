//! Schedules on the wire: `From<&Schedule> for v1::Schedule` and
//! `TryFrom<&v1::Schedule> for Schedule`.
//!
//! The wire lists Funcs and stages as repeated entries; each may appear
//! once (a repeat is an error, not a silent overwrite). Whether the
//! directives make sense for a pipeline is the compiler's business
//! (lowering's validation); here only the shape is checked: every `oneof`
//! set, every enum known, factors positive.

use crate::error::FromWireError;
use crate::v1;
use crate::v1::directive::Kind;
use compiler::ir::expr::Name;
use compiler::schedule::{Bound, Directive, FuncSchedule, StageSchedule, TailStrategy};
use compiler::{LoopLevel, Schedule};
use std::collections::BTreeMap;

impl From<&Schedule> for v1::Schedule {
    fn from(s: &Schedule) -> v1::Schedule {
        v1::Schedule { funcs: s.funcs.iter().map(|(name, f)| func_to_wire(name, f)).collect() }
    }
}

fn func_to_wire(name: &Name, f: &FuncSchedule) -> v1::FuncSchedule {
    v1::FuncSchedule {
        func: name.to_string(),
        compute: Some(level_to_wire(&f.compute)),
        store: f.store.as_ref().map(level_to_wire),
        storage_order: f.storage_order.as_ref().map(|o| v1::StorageOrder { vars: names(o) }),
        bounds: f.bounds.iter().map(|b| v1::Bound { var: b.var.to_string(), min: b.min, extent: b.extent }).collect(),
        stages: f
            .stages
            .iter()
            .map(|(&stage, s)| v1::StageSchedule { stage: stage as u32, directives: s.directives.iter().map(directive_to_wire).collect() })
            .collect(),
    }
}

fn names(v: &[Name]) -> Vec<String> {
    v.iter().map(|n| n.to_string()).collect()
}

fn level_to_wire(l: &LoopLevel) -> v1::LoopLevel {
    use v1::loop_level::Level;
    let level = match l {
        LoopLevel::Inline => Level::Inline(v1::Inline {}),
        LoopLevel::Root => Level::Root(v1::Root {}),
        LoopLevel::At { func, stage, var } => Level::At(v1::At { func: func.to_string(), stage: *stage as u32, var: var.to_string() }),
    };
    v1::LoopLevel { level: Some(level) }
}

fn tail_to_wire(t: TailStrategy) -> i32 {
    (match t {
        TailStrategy::Auto => v1::TailStrategy::Auto,
        TailStrategy::ShiftInwards => v1::TailStrategy::ShiftInwards,
        TailStrategy::GuardWithIf => v1::TailStrategy::GuardWithIf,
        TailStrategy::RoundUp => v1::TailStrategy::RoundUp,
    }) as i32
}

fn directive_to_wire(d: &Directive) -> v1::Directive {
    let var = |v: &Name| v1::LoopVar { var: v.to_string() };
    let kind = match d {
        Directive::Split { var, outer, inner, factor, tail } => Kind::Split(v1::Split {
            var: var.to_string(),
            outer: outer.to_string(),
            inner: inner.to_string(),
            factor: *factor,
            tail: tail_to_wire(*tail),
        }),
        Directive::Fuse { inner, outer, fused } => {
            Kind::Fuse(v1::Fuse { inner: inner.to_string(), outer: outer.to_string(), fused: fused.to_string() })
        }
        Directive::Reorder { vars } => Kind::Reorder(v1::Reorder { vars: names(vars) }),
        Directive::Tile { x, y, xo, yo, xi, yi, x_factor, y_factor, tail } => Kind::Tile(v1::Tile {
            x: x.to_string(),
            y: y.to_string(),
            xo: xo.to_string(),
            yo: yo.to_string(),
            xi: xi.to_string(),
            yi: yi.to_string(),
            x_factor: *x_factor,
            y_factor: *y_factor,
            tail: tail_to_wire(*tail),
        }),
        Directive::Vectorize { var, width } => Kind::Vectorize(v1::Vectorize { var: var.to_string(), width: *width }),
        Directive::Unroll { var, factor } => Kind::Unroll(v1::Unroll { var: var.to_string(), factor: *factor }),
        Directive::Parallel { var: v } => Kind::Parallel(var(v)),
        Directive::Serial { var: v } => Kind::Serial(var(v)),
        Directive::GpuBlocks { var: v } => Kind::GpuBlocks(var(v)),
        Directive::GpuThreads { var: v } => Kind::GpuThreads(var(v)),
    };
    v1::Directive { kind: Some(kind) }
}

impl TryFrom<&v1::Schedule> for Schedule {
    type Error = FromWireError;

    fn try_from(w: &v1::Schedule) -> Result<Schedule, FromWireError> {
        let mut funcs = BTreeMap::new();
        for f in &w.funcs {
            let at = format!("schedule of Func {}", f.func);
            if funcs.insert(Name::from(f.func.as_str()), func_from_wire(f, &at)?).is_some() {
                return Err(FromWireError::invalid(&at, "the Func is scheduled twice"));
            }
        }
        Ok(Schedule { funcs })
    }
}

impl TryFrom<v1::Schedule> for Schedule {
    type Error = FromWireError;

    fn try_from(w: v1::Schedule) -> Result<Schedule, FromWireError> {
        Schedule::try_from(&w)
    }
}

fn func_from_wire(f: &v1::FuncSchedule, at: &str) -> Result<FuncSchedule, FromWireError> {
    let compute = level_from_wire(f.compute.as_ref().ok_or_else(|| FromWireError::missing(at, "compute level"))?, at)?;
    let store = f.store.as_ref().map(|l| level_from_wire(l, at)).transpose()?;
    let mut stages = BTreeMap::new();
    for s in &f.stages {
        let at = format!("{at}, stage {}", s.stage);
        let directives = s
            .directives
            .iter()
            .enumerate()
            .map(|(i, d)| directive_from_wire(d, &format!("{at}, directive {i}")))
            .collect::<Result<_, _>>()?;
        if stages.insert(s.stage as usize, StageSchedule { directives }).is_some() {
            return Err(FromWireError::invalid(&at, "the stage is scheduled twice"));
        }
    }
    Ok(FuncSchedule {
        compute,
        store,
        storage_order: f.storage_order.as_ref().map(|o| o.vars.iter().map(|v| Name::from(v.as_str())).collect()),
        bounds: f.bounds.iter().map(|b| Bound { var: b.var.as_str().into(), min: b.min, extent: b.extent }).collect(),
        stages,
    })
}

fn level_from_wire(l: &v1::LoopLevel, at: &str) -> Result<LoopLevel, FromWireError> {
    use v1::loop_level::Level;
    Ok(match l.level.as_ref().ok_or_else(|| FromWireError::missing(at, "loop level"))? {
        Level::Inline(_) => LoopLevel::Inline,
        Level::Root(_) => LoopLevel::Root,
        Level::At(a) => LoopLevel::At { func: a.func.as_str().into(), stage: a.stage as usize, var: a.var.as_str().into() },
    })
}

fn tail_from_wire(t: i32, at: &str) -> Result<TailStrategy, FromWireError> {
    match v1::TailStrategy::try_from(t) {
        Ok(v1::TailStrategy::Auto) => Ok(TailStrategy::Auto),
        Ok(v1::TailStrategy::ShiftInwards) => Ok(TailStrategy::ShiftInwards),
        Ok(v1::TailStrategy::GuardWithIf) => Ok(TailStrategy::GuardWithIf),
        Ok(v1::TailStrategy::RoundUp) => Ok(TailStrategy::RoundUp),
        Ok(v1::TailStrategy::Unspecified) => Err(FromWireError::missing(at, "tail strategy")),
        Err(_) => Err(FromWireError::UnknownEnum { at: at.to_string(), field: "tail strategy", value: t }),
    }
}

fn positive(factor: i64, at: &str, field: &str) -> Result<i64, FromWireError> {
    if factor < 1 {
        return Err(FromWireError::invalid(at, format!("{field} {factor} is not positive")));
    }
    Ok(factor)
}

fn directive_from_wire(d: &v1::Directive, at: &str) -> Result<Directive, FromWireError> {
    let n = |s: &String| Name::from(s.as_str());
    Ok(match d.kind.as_ref().ok_or_else(|| FromWireError::missing(at, "directive kind"))? {
        Kind::Split(s) => Directive::Split {
            var: n(&s.var),
            outer: n(&s.outer),
            inner: n(&s.inner),
            factor: positive(s.factor, at, "split factor")?,
            tail: tail_from_wire(s.tail, at)?,
        },
        Kind::Fuse(f) => Directive::Fuse { inner: n(&f.inner), outer: n(&f.outer), fused: n(&f.fused) },
        Kind::Reorder(r) => Directive::Reorder { vars: r.vars.iter().map(n).collect() },
        Kind::Tile(t) => Directive::Tile {
            x: n(&t.x),
            y: n(&t.y),
            xo: n(&t.xo),
            yo: n(&t.yo),
            xi: n(&t.xi),
            yi: n(&t.yi),
            x_factor: positive(t.x_factor, at, "tile x factor")?,
            y_factor: positive(t.y_factor, at, "tile y factor")?,
            tail: tail_from_wire(t.tail, at)?,
        },
        Kind::Vectorize(v) => Directive::Vectorize { var: n(&v.var), width: v.width.map(|w| positive(w, at, "vector width")).transpose()? },
        Kind::Unroll(u) => Directive::Unroll { var: n(&u.var), factor: u.factor.map(|f| positive(f, at, "unroll factor")).transpose()? },
        Kind::Parallel(v) => Directive::Parallel { var: n(&v.var) },
        Kind::Serial(v) => Directive::Serial { var: n(&v.var) },
        Kind::GpuBlocks(v) => Directive::GpuBlocks { var: n(&v.var) },
        Kind::GpuThreads(v) => Directive::GpuThreads { var: n(&v.var) },
    })
}
