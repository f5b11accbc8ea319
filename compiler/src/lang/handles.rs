//! The user-facing handles of the language: [`Var`], [`RVar`], [`RDom`],
//! [`Param`], [`ImageParam`] and [`Func`].
//!
//! A [`Func`], an [`ImageParam`] and a [`Param`] are shared, mutable
//! handles: copies name the same definition (or estimate), and calls and
//! params written through them carry a link to it that
//! [`crate::lang::Pipeline::new`] follows. Definitions never panic: a
//! mistake is recorded on the handle (the first one wins) and reported when
//! the pipeline is built.

use crate::error::LangError;
use crate::ir::expr::{CallTarget, DefRef, Expr, ExprNode, FuncLink, Name, RDomDef, RDomDim};
use crate::ir::types::{ScalarType, Type};
use crate::ir::visit::Visitor;
use crate::lang::checks::{check_update, VarsUsed};
use crate::lang::pipeline::{buffer_vars, Estimate, InputDef, UpdateDef};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A pure variable of a Func definition (an `i32` coordinate).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Var(Name);

impl Var {
    /// A variable named `name` (the name is checked when the pipeline is
    /// built).
    pub fn new(name: &str) -> Var {
        Var(name.into())
    }
    /// The variable's name.
    pub fn name(&self) -> &str {
        &self.0
    }
    /// The variable as an `i32` expression.
    pub fn expr(&self) -> Expr {
        Expr::ivar(self.0.clone())
    }
}

/// One dimension of a reduction domain, usable in expressions.
#[derive(Clone, Debug)]
pub struct RVar {
    rdom: Arc<RDomDef>,
    dim: usize,
}

impl RVar {
    /// The variable's full name (`r.x`, ...).
    pub fn name(&self) -> &str {
        &self.rdom.dims[self.dim].name
    }
    /// The variable as an `i32` expression (an `RVar` node).
    pub fn expr(&self) -> Expr {
        Expr::new(ExprNode::RVar { rdom: self.rdom.clone(), dim: self.dim })
    }
}

/// A reduction domain: a box of integer points visited in order, first
/// dimension innermost, optionally filtered by a predicate.
#[derive(Clone, Debug)]
pub struct RDom(Arc<RDomDef>);

const RDOM_DIM_NAMES: [&str; 4] = ["x", "y", "z", "w"];

impl RDom {
    /// A domain named `name` over `(min, extent)` pairs; its variables are
    /// `name.x`, `name.y`, `name.z`, `name.w`.
    pub fn new(name: &str, bounds: &[(Expr, Expr)]) -> RDom {
        RDom(Arc::new(Self::def(name, bounds, None)))
    }

    /// A domain whose points must also satisfy `predicate`, built from the
    /// domain's own variables.
    pub fn with_where(name: &str, bounds: &[(Expr, Expr)], predicate: impl FnOnce(&RDom) -> Expr) -> RDom {
        let pred = predicate(&RDom::new(name, bounds));
        RDom(Arc::new(Self::def(name, bounds, Some(pred))))
    }

    fn def(name: &str, bounds: &[(Expr, Expr)], predicate: Option<Expr>) -> RDomDef {
        let dims = bounds
            .iter()
            .enumerate()
            .map(|(i, (min, extent))| RDomDim {
                name: format!("{name}.{}", RDOM_DIM_NAMES.get(i).copied().unwrap_or("v")).into(),
                min: Expr::cast(Type::i32(), min.clone()),
                extent: Expr::cast(Type::i32(), extent.clone()),
            })
            .collect();
        RDomDef { name: name.into(), dims, predicate }
    }

    /// The variable of dimension `i` (0 innermost); panics if the domain has
    /// no such dimension.
    pub fn dim(&self, i: usize) -> RVar {
        assert!(i < self.0.dims.len(), "RDom {} has {} dimensions, not {}", self.0.name, self.0.dims.len(), i + 1);
        RVar { rdom: self.0.clone(), dim: i }
    }
    /// The variable of dimension 0.
    pub fn x(&self) -> RVar {
        self.dim(0)
    }
    /// The variable of dimension 1; panics for a one-dimensional domain.
    pub fn y(&self) -> RVar {
        self.dim(1)
    }
    /// The variable of dimension 2; panics for a domain of fewer dimensions.
    pub fn z(&self) -> RVar {
        self.dim(2)
    }
    /// The number of dimensions.
    pub fn dims(&self) -> usize {
        self.0.dims.len()
    }
    /// The domain's definition, as expressions hold it.
    pub fn def_ref(&self) -> &Arc<RDomDef> {
        &self.0
    }
}

/// What the copies of a [`Param`] handle share.
#[derive(Debug)]
pub(super) struct ParamInner {
    name: Name,
    ty: Type,
    pub(super) estimate: Mutex<Option<f64>>,
}

/// A scalar parameter, bound by name when the pipeline runs.
#[derive(Clone, Debug)]
pub struct Param(Arc<ParamInner>);

impl Param {
    /// A param named `name` of scalar type `ty`, with no estimate.
    pub fn new(name: &str, ty: Type) -> Param {
        Param(Arc::new(ParamInner { name: name.into(), ty, estimate: Mutex::new(None) }))
    }
    /// The param as an expression (a `Param` node linked to this handle).
    pub fn expr(&self) -> Expr {
        let link = FuncLink(self.0.clone() as Arc<dyn std::any::Any + Send + Sync>);
        Expr::new(ExprNode::Param { name: self.0.name.clone(), ty: self.0.ty, link: Some(link) })
    }
    /// The param's name.
    pub fn name(&self) -> &str {
        &self.0.name
    }
    /// Records the value the pipeline is expected to run with (Halide's
    /// `Param::set_estimate`): the autoscheduler plans for it, as it plans
    /// for a Func's estimated region. It may be set before or after the
    /// param is used; [`crate::lang::Pipeline::new`] reads it (a value that
    /// is not finite is refused there).
    pub fn set_estimate(&self, value: f64) -> &Self {
        *self.0.estimate.lock().unwrap() = Some(value);
        self
    }
    /// The estimate set, if any.
    pub fn estimate(&self) -> Option<f64> {
        *self.0.estimate.lock().unwrap()
    }
}

/// The definition an [`ImageParam`] handle shares.
pub(super) struct InputInner {
    pub(super) def: InputDef,
    /// The first mistake made through the handle (an estimate of a
    /// dimension it does not have), reported when the pipeline is built.
    pub(super) error: Option<LangError>,
}

/// A typed N-dimensional input buffer of the pipeline.
#[derive(Clone)]
pub struct ImageParam(pub(super) Arc<Mutex<InputInner>>);

impl ImageParam {
    /// An input named `name` of `dims` dimensions of element type `ty`, with
    /// no estimates.
    pub fn new(name: &str, ty: ScalarType, dims: usize) -> ImageParam {
        let def = InputDef { name: name.into(), ty, dims, estimates: vec![None; dims] };
        ImageParam(Arc::new(Mutex::new(InputInner { def, error: None })))
    }

    fn def(&self) -> InputDef {
        self.0.lock().unwrap().def.clone()
    }

    /// The input's name.
    pub fn name(&self) -> Name {
        self.def().name
    }

    /// The number of dimensions.
    pub fn dims(&self) -> usize {
        self.def().dims
    }

    /// The element at the given coordinates (integer coordinates are cast to i32).
    pub fn at<I: IntoIterator<Item = E>, E: Into<Expr>>(&self, args: I) -> Expr {
        let def = self.def();
        let args = args.into_iter().map(|a| coordinate(a.into())).collect();
        let link = FuncLink(self.0.clone() as Arc<dyn std::any::Any + Send + Sync>);
        Expr::call(CallTarget::Input(DefRef { name: def.name, link: Some(link), value_index: 0 }), args, Type::scalar(def.ty))
    }

    /// The smallest valid coordinate of dimension `d` (known when it runs).
    pub fn min(&self, d: usize) -> Expr {
        Expr::param(buffer_vars::min(&self.name(), d), Type::i32())
    }

    /// The number of elements along dimension `d`.
    pub fn extent(&self, d: usize) -> Expr {
        Expr::param(buffer_vars::extent(&self.name(), d), Type::i32())
    }

    /// The extent of dimension 0.
    pub fn width(&self) -> Expr {
        self.extent(0)
    }
    /// The extent of dimension 1.
    pub fn height(&self) -> Expr {
        self.extent(1)
    }

    /// Records the expected region of dimension `d` (one the input does
    /// not have is reported when the pipeline is built).
    pub fn set_estimate(&self, d: usize, min: i64, extent: i64) -> &Self {
        let mut inner = self.0.lock().unwrap();
        if d < inner.def.dims {
            inner.def.estimates[d] = Some(Estimate { min, extent });
        } else if inner.error.is_none() {
            let why = format!("is set for dimension {d}, which it does not have ({} dimensions)", inner.def.dims);
            inner.error = Some(LangError::Estimate { what: format!("input {}", inner.def.name), why });
        }
        self
    }
}

/// Integer coordinates are i32; other integer types are cast (floats are left
/// for pipeline checking to report).
fn coordinate(e: Expr) -> Expr {
    if e.ty().is_int() && e.ty() != Type::i32() {
        Expr::cast(Type::i32(), e)
    } else {
        e
    }
}

/// The definition a [`Func`] handle shares: filled in by `define` and
/// `update`, read by the collector.
pub(super) struct FuncInner {
    pub(super) name: Name,
    pub(super) args: Option<Vec<Name>>,
    /// The type of each value (several for a Tuple Func).
    pub(super) types: Option<Vec<Type>>,
    pub(super) values: Option<Vec<Expr>>,
    pub(super) updates: Vec<UpdateDef>,
    pub(super) estimates: Vec<Option<Estimate>>,
    /// The first mistake made defining it.
    pub(super) error: Option<LangError>,
    /// Who made it: the user, or the library on the user's behalf.
    pub(super) made: Made,
}

/// Who made a Func. The library's Funcs are made with a process-wide
/// counter in their names (`sum$17`), so that two never share one, and are
/// named for good when the pipeline is collected (see `Pipeline::new`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Made {
    /// `Func::new`: it keeps its name.
    User,
    /// An inline reduction: named after the Func that calls it, its
    /// dimensions in the order of that Func's variables.
    Reduction,
    /// A boundary condition: named after its source (`input_repeat_edge`).
    Boundary,
}

/// A function over an integer grid, defined by a pure definition and any
/// number of update definitions. It has one value per point, or several
/// (a Tuple Func, defined with [`Func::define_tuple`] and read with
/// [`Func::value_at`]).
#[derive(Clone)]
pub struct Func(pub(super) Arc<Mutex<FuncInner>>);

static ANONYMOUS_FUNCS: AtomicU64 = AtomicU64::new(0);

impl Func {
    /// An undefined Func named `name` (the name is checked when the pipeline
    /// is built).
    pub fn new(name: &str) -> Func {
        Func(Arc::new(Mutex::new(FuncInner {
            name: name.into(),
            args: None,
            types: None,
            values: None,
            updates: vec![],
            estimates: vec![],
            error: None,
            made: Made::User,
        })))
    }

    /// A Func the library makes on the user's behalf, named `{base}${n}`
    /// until the pipeline is collected.
    pub(super) fn made_by(made: Made, base: &str) -> Func {
        let n = ANONYMOUS_FUNCS.fetch_add(1, Ordering::Relaxed);
        let f = Func::new(&format!("{base}${n}"));
        f.0.lock().unwrap().made = made;
        f
    }

    /// The Func's name.
    pub fn name(&self) -> Name {
        self.0.lock().unwrap().name.clone()
    }

    /// The value type, once defined (the first value's, for a Tuple Func).
    pub fn ty(&self) -> Option<Type> {
        self.0.lock().unwrap().types.as_ref().map(|t| t[0])
    }

    /// The type of each value, once defined.
    pub fn types(&self) -> Option<Vec<Type>> {
        self.0.lock().unwrap().types.clone()
    }

    /// The number of values per point (1 until defined).
    fn value_count(&self) -> usize {
        self.0.lock().unwrap().types.as_ref().map_or(1, Vec::len)
    }

    /// The number of dimensions, once defined.
    pub fn dims(&self) -> Option<usize> {
        self.0.lock().unwrap().args.as_ref().map(Vec::len)
    }

    /// Records `err` as the first mistake made defining it, unless there is one.
    pub(super) fn fail(&self, err: LangError) {
        let mut inner = self.0.lock().unwrap();
        if inner.error.is_none() {
            inner.error = Some(err);
        }
    }

    /// The pure definition `self(args) = value`.
    pub fn define(&self, args: &[&Var], value: impl Into<Expr>) {
        self.define_tuple(args, [value.into()])
    }

    /// The pure definition of a Tuple Func, `self(args) = (v0, v1, ...)`:
    /// one value per point for each of `values`, each with its own type.
    pub fn define_tuple<I: IntoIterator<Item = E>, E: Into<Expr>>(&self, args: &[&Var], values: I) {
        let values: Vec<Expr> = values.into_iter().map(Into::into).collect();
        let name = self.name();
        let arg_names: Vec<Name> = args.iter().map(|v| v.0.clone()).collect();
        let mut seen = HashSet::new();
        for a in &arg_names {
            if !seen.insert(a.clone()) {
                return self.fail(LangError::DuplicateArg { func: name.to_string(), var: a.to_string() });
            }
        }
        if values.is_empty() {
            return self.fail(LangError::Invalid { func: name.to_string(), why: "a Tuple definition needs at least one value".into() });
        }
        if values.iter().any(|v| v.ty().is_vector()) {
            return self.fail(LangError::Invalid { func: name.to_string(), why: "a definition must be scalar".into() });
        }
        let mut vars = VarsUsed::default();
        values.iter().for_each(|v| vars.visit_expr(v));
        if let Some(r) = vars.rvars.keys().next() {
            return self.fail(LangError::RVarInPureDefinition { func: name.to_string(), rvar: r.to_string() });
        }
        if let Some(v) = vars.vars.iter().find(|v| !arg_names.contains(*v)) {
            return self.fail(LangError::FreeVariable { func: name.to_string(), stage: 0, var: v.to_string() });
        }
        let mut inner = self.0.lock().unwrap();
        if inner.values.is_some() {
            drop(inner);
            return self.fail(LangError::Redefined { func: name.to_string() });
        }
        inner.estimates = vec![None; arg_names.len()];
        inner.args = Some(arg_names);
        inner.types = Some(values.iter().map(Expr::ty).collect());
        inner.values = Some(values);
    }

    /// An update definition `self(args) = value`. Reduction variables in
    /// `args` or `value` make it run over their domain.
    pub fn update<I: IntoIterator<Item = E>, E: Into<Expr>>(&self, args: I, value: impl Into<Expr>) {
        self.update_tuple(args, [value.into()])
    }

    /// An update of a Tuple Func, `self(args) = (v0, v1, ...)`: every value
    /// is computed from the values before the update, then all are written.
    pub fn update_tuple<I, E, V, W>(&self, args: I, values: V)
    where
        I: IntoIterator<Item = E>,
        E: Into<Expr>,
        V: IntoIterator<Item = W>,
        W: Into<Expr>,
    {
        let lhs: Vec<Expr> = args.into_iter().map(|a| coordinate(a.into())).collect();
        let values: Vec<Expr> = values.into_iter().map(Into::into).collect();
        let (name, func_args, types, stage) = {
            let inner = self.0.lock().unwrap();
            (inner.name.clone(), inner.args.clone(), inner.types.clone(), inner.updates.len() + 1)
        };
        let (Some(func_args), Some(types)) = (func_args, types) else {
            return self.fail(LangError::UpdateBeforeDefinition { func: name.to_string() });
        };
        match check_update(&name, &func_args, &types, stage, &lhs, &values) {
            Ok(update) => self.0.lock().unwrap().updates.push(update),
            Err(e) => self.fail(e),
        }
    }

    /// `self(args) = self(args) + value`.
    pub fn add_update<I: IntoIterator<Item = E> + Clone, E: Into<Expr>>(&self, args: I, value: impl Into<Expr>) {
        let current = self.at(args.clone());
        self.update(args, current + value.into());
    }

    /// The value of this Func at the given coordinates. A Tuple Func has no
    /// single value: calling `at` on one is recorded as its mistake (pick a
    /// value with [`Func::value_at`]).
    pub fn at<I: IntoIterator<Item = E>, E: Into<Expr>>(&self, args: I) -> Expr {
        let count = self.value_count();
        if count > 1 {
            self.fail(LangError::Invalid {
                func: self.name().to_string(),
                why: format!("it is a Tuple of {count} values, called without picking one (use value_at)"),
            });
        }
        self.value_at(args, 0)
    }

    /// Value `index` of this (Tuple) Func at the given coordinates: Halide's
    /// `f(x, y)[index]`.
    pub fn value_at<I: IntoIterator<Item = E>, E: Into<Expr>>(&self, args: I, index: usize) -> Expr {
        let inner = self.0.lock().unwrap();
        let args = args.into_iter().map(|a| coordinate(a.into())).collect();
        let ty = inner.types.as_ref().and_then(|t| t.get(index).copied()).unwrap_or(Type::i32());
        let link = FuncLink(self.0.clone() as Arc<dyn std::any::Any + Send + Sync>);
        Expr::call(CallTarget::Func(DefRef { name: inner.name.clone(), link: Some(link), value_index: index }), args, ty)
    }

    /// Every value of this Func at the given coordinates, in order.
    pub fn tuple_at<I: IntoIterator<Item = E>, E: Into<Expr>>(&self, args: I) -> Vec<Expr> {
        let args: Vec<Expr> = args.into_iter().map(Into::into).collect();
        (0..self.value_count()).map(|i| self.value_at(args.clone(), i)).collect()
    }

    /// Records the expected region of output dimension `d`.
    pub fn set_estimate(&self, d: usize, min: i64, extent: i64) -> &Self {
        let mut inner = self.0.lock().unwrap();
        if d < inner.estimates.len() {
            inner.estimates[d] = Some(Estimate { min, extent });
        } else {
            let name = inner.name.to_string();
            drop(inner);
            self.fail(LangError::Invalid { func: name, why: format!("estimate for dimension {d}, which it does not have") });
        }
        self
    }
}
