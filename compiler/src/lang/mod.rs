//! The algorithm language as a Rust API: [`Var`], [`RDom`], [`Func`],
//! [`ImageParam`], [`Param`], and [`Pipeline`] which collects the Funcs
//! reachable from the outputs into a checked [`PipelineDef`].
//!
//! Definitions never panic: a mistake (a free variable, a type mismatch, an
//! update that breaks the pure-variable rule) is recorded on the Func and
//! reported, naming the Func, when the pipeline is built.

pub mod boundary;
pub mod ops;
pub mod pipeline;
pub mod reductions;

use crate::error::LangError;
use crate::ir::expr::{CallTarget, DefRef, Expr, ExprNode, FuncLink, Name, RDomDef, RDomDim};
use crate::ir::types::{ScalarType, Type};
use crate::ir::visit::{mutate_expr_children, walk_expr, Mutator, Visitor};
use crate::lang::pipeline::{buffer_vars, Estimate, FuncDef, InputDef, ParamDef, PipelineDef, UpdateDef};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A pure variable of a Func definition (an `i32` coordinate).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Var(Name);

impl Var {
    pub fn new(name: &str) -> Var {
        Var(name.into())
    }
    pub fn name(&self) -> &str {
        &self.0
    }
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
    pub fn name(&self) -> &str {
        &self.rdom.dims[self.dim].name
    }
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

    pub fn dim(&self, i: usize) -> RVar {
        assert!(i < self.0.dims.len(), "RDom {} has {} dimensions, not {}", self.0.name, self.0.dims.len(), i + 1);
        RVar { rdom: self.0.clone(), dim: i }
    }
    pub fn x(&self) -> RVar {
        self.dim(0)
    }
    pub fn y(&self) -> RVar {
        self.dim(1)
    }
    pub fn z(&self) -> RVar {
        self.dim(2)
    }
    pub fn dims(&self) -> usize {
        self.0.dims.len()
    }
    pub fn def_ref(&self) -> &Arc<RDomDef> {
        &self.0
    }
}

/// A scalar parameter, bound by name when the pipeline runs.
#[derive(Clone, Debug)]
pub struct Param {
    name: Name,
    ty: Type,
}

impl Param {
    pub fn new(name: &str, ty: Type) -> Param {
        Param { name: name.into(), ty }
    }
    pub fn expr(&self) -> Expr {
        Expr::new(ExprNode::Param { name: self.name.clone(), ty: self.ty })
    }
    pub fn name(&self) -> &str {
        &self.name
    }
}

struct InputInner {
    def: InputDef,
}

/// A typed N-dimensional input buffer of the pipeline.
#[derive(Clone)]
pub struct ImageParam(Arc<Mutex<InputInner>>);

impl ImageParam {
    pub fn new(name: &str, ty: ScalarType, dims: usize) -> ImageParam {
        ImageParam(Arc::new(Mutex::new(InputInner { def: InputDef { name: name.into(), ty, dims, estimates: vec![None; dims] } })))
    }

    fn def(&self) -> InputDef {
        self.0.lock().unwrap().def.clone()
    }

    pub fn name(&self) -> Name {
        self.def().name
    }

    pub fn dims(&self) -> usize {
        self.def().dims
    }

    /// The element at the given coordinates (integer coordinates are cast to i32).
    pub fn at<I: IntoIterator<Item = E>, E: Into<Expr>>(&self, args: I) -> Expr {
        let def = self.def();
        let args = args.into_iter().map(|a| coordinate(a.into())).collect();
        let link = FuncLink(self.0.clone() as Arc<dyn std::any::Any + Send + Sync>);
        Expr::call(CallTarget::Input(DefRef { name: def.name, link: Some(link) }), args, Type::scalar(def.ty))
    }

    /// The smallest valid coordinate of dimension `d` (known when it runs).
    pub fn min(&self, d: usize) -> Expr {
        Expr::new(ExprNode::Param { name: buffer_vars::min(&self.name(), d).into(), ty: Type::i32() })
    }

    /// The number of elements along dimension `d`.
    pub fn extent(&self, d: usize) -> Expr {
        Expr::new(ExprNode::Param { name: buffer_vars::extent(&self.name(), d).into(), ty: Type::i32() })
    }

    pub fn width(&self) -> Expr {
        self.extent(0)
    }
    pub fn height(&self) -> Expr {
        self.extent(1)
    }

    /// Records the expected region of dimension `d`.
    pub fn set_estimate(&self, d: usize, min: i64, extent: i64) -> &Self {
        let mut inner = self.0.lock().unwrap();
        if d < inner.def.dims {
            inner.def.estimates[d] = Some(Estimate { min, extent });
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

struct FuncInner {
    name: Name,
    args: Option<Vec<Name>>,
    ty: Option<Type>,
    value: Option<Expr>,
    updates: Vec<UpdateDef>,
    estimates: Vec<Option<Estimate>>,
    error: Option<LangError>,
}

/// A function over an integer grid, defined by a pure definition and any
/// number of update definitions.
#[derive(Clone)]
pub struct Func(Arc<Mutex<FuncInner>>);

static ANONYMOUS_FUNCS: AtomicU64 = AtomicU64::new(0);

impl Func {
    pub fn new(name: &str) -> Func {
        Func(Arc::new(Mutex::new(FuncInner {
            name: name.into(),
            args: None,
            ty: None,
            value: None,
            updates: vec![],
            estimates: vec![],
            error: None,
        })))
    }

    /// A Func with a fresh name starting with `prefix` (for helpers that make
    /// Funcs on the user's behalf).
    pub fn anonymous(prefix: &str) -> Func {
        let n = ANONYMOUS_FUNCS.fetch_add(1, Ordering::Relaxed);
        Func::new(&format!("{prefix}${n}"))
    }

    pub fn name(&self) -> Name {
        self.0.lock().unwrap().name.clone()
    }

    /// The value type, once defined.
    pub fn ty(&self) -> Option<Type> {
        self.0.lock().unwrap().ty
    }

    fn fail(&self, err: LangError) {
        let mut inner = self.0.lock().unwrap();
        if inner.error.is_none() {
            inner.error = Some(err);
        }
    }

    /// The pure definition `self(args) = value`.
    pub fn define(&self, args: &[&Var], value: impl Into<Expr>) {
        let value = value.into();
        let name = self.name();
        let arg_names: Vec<Name> = args.iter().map(|v| v.0.clone()).collect();
        let mut seen = HashSet::new();
        for a in &arg_names {
            if !seen.insert(a.clone()) {
                return self.fail(LangError::DuplicateArg { func: name.to_string(), var: a.to_string() });
            }
        }
        if value.ty().is_vector() {
            return self.fail(LangError::Invalid { func: name.to_string(), why: "a definition must be scalar".into() });
        }
        let mut vars = VarsUsed::default();
        vars.visit_expr(&value);
        if let Some(r) = vars.rvars.keys().next() {
            return self.fail(LangError::RVarInPureDefinition { func: name.to_string(), rvar: r.to_string() });
        }
        if let Some(v) = vars.vars.iter().find(|v| !arg_names.contains(*v)) {
            return self.fail(LangError::FreeVariable { func: name.to_string(), stage: 0, var: v.to_string() });
        }
        let mut inner = self.0.lock().unwrap();
        if inner.value.is_some() {
            drop(inner);
            return self.fail(LangError::Redefined { func: name.to_string() });
        }
        inner.estimates = vec![None; arg_names.len()];
        inner.args = Some(arg_names);
        inner.ty = Some(value.ty());
        inner.value = Some(value);
    }

    /// An update definition `self(args) = value`. Reduction variables in
    /// `args` or `value` make it run over their domain.
    pub fn update<I: IntoIterator<Item = E>, E: Into<Expr>>(&self, args: I, value: impl Into<Expr>) {
        let lhs: Vec<Expr> = args.into_iter().map(|a| coordinate(a.into())).collect();
        let value = value.into();
        let (name, func_args, ty, stage) = {
            let inner = self.0.lock().unwrap();
            (inner.name.clone(), inner.args.clone(), inner.ty, inner.updates.len() + 1)
        };
        let (Some(func_args), Some(ty)) = (func_args, ty) else {
            return self.fail(LangError::UpdateBeforeDefinition { func: name.to_string() });
        };
        match check_update(&name, &func_args, ty, stage, &lhs, &value) {
            Ok(update) => self.0.lock().unwrap().updates.push(update),
            Err(e) => self.fail(e),
        }
    }

    /// `self(args) = self(args) + value`.
    pub fn add_update<I: IntoIterator<Item = E> + Clone, E: Into<Expr>>(&self, args: I, value: impl Into<Expr>) {
        let current = self.at(args.clone());
        self.update(args, current + value.into());
    }

    /// The value of this Func at the given coordinates.
    pub fn at<I: IntoIterator<Item = E>, E: Into<Expr>>(&self, args: I) -> Expr {
        let inner = self.0.lock().unwrap();
        let args = args.into_iter().map(|a| coordinate(a.into())).collect();
        let ty = inner.ty.unwrap_or(Type::i32());
        let link = FuncLink(self.0.clone() as Arc<dyn std::any::Any + Send + Sync>);
        Expr::call(CallTarget::Func(DefRef { name: inner.name.clone(), link: Some(link) }), args, ty)
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

/// Variables and reduction variables an expression mentions.
#[derive(Default)]
pub(crate) struct VarsUsed {
    pub vars: Vec<Name>,
    pub rvars: BTreeMap<Name, Arc<RDomDef>>,
    let_bound: Vec<Name>,
}

impl Visitor for VarsUsed {
    fn visit_expr(&mut self, e: &Expr) {
        match e.node() {
            ExprNode::Var { name, .. } => {
                if !self.vars.contains(name) && !self.let_bound.contains(name) {
                    self.vars.push(name.clone());
                }
            }
            ExprNode::Let { name, value, body } => {
                self.visit_expr(value);
                self.let_bound.push(name.clone());
                self.visit_expr(body);
                self.let_bound.pop();
            }
            ExprNode::RVar { rdom, .. } => {
                self.rvars.insert(rdom.name.clone(), rdom.clone());
            }
            _ => walk_expr(self, e),
        }
    }
}

/// Replaces RVar nodes by plain `i32` variables of the same name.
struct LowerRVars;

impl Mutator for LowerRVars {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        match e.node() {
            ExprNode::RVar { rdom, dim } => Expr::ivar(rdom.dims[*dim].name.clone()),
            _ => mutate_expr_children(self, e),
        }
    }
}

/// Self-references of a Func inside its update.
struct SelfCalls<'a> {
    func: &'a str,
    calls: Vec<Vec<Expr>>,
}

impl Visitor for SelfCalls<'_> {
    fn visit_expr(&mut self, e: &Expr) {
        if let ExprNode::Call { target: CallTarget::Func(r), args, .. } = e.node() {
            if &*r.name == self.func {
                self.calls.push(args.clone());
            }
        }
        walk_expr(self, e)
    }
}

/// Checks an update against the rules of the language and builds it.
fn check_update(name: &Name, func_args: &[Name], ty: Type, stage: usize, lhs: &[Expr], value: &Expr) -> Result<UpdateDef, LangError> {
    let func = name.to_string();
    if lhs.len() != func_args.len() {
        return Err(LangError::Arity { func, expected: func_args.len(), got: lhs.len(), context: format!("update {stage}") });
    }
    if value.ty() != ty {
        return Err(LangError::UpdateType { func, stage, expected: ty, got: value.ty() });
    }
    let mut used = VarsUsed::default();
    lhs.iter().for_each(|a| used.visit_expr(a));
    used.visit_expr(value);
    if used.rvars.len() > 1 {
        let names: Vec<String> = used.rvars.keys().map(|k| k.to_string()).collect();
        return Err(LangError::Invalid { func, why: format!("update {stage} uses several reduction domains ({})", names.join(", ")) });
    }
    let lower = |e: &Expr| LowerRVars.mutate_expr(e);
    let rdom = used.rvars.values().next().map(|r| {
        let mut r = (**r).clone();
        r.predicate = r.predicate.as_ref().map(lower);
        Arc::new(r)
    });
    let lhs: Vec<Expr> = lhs.iter().map(lower).collect();
    let value = strip_self_links(name, &lower(value));
    let update = UpdateDef { args: lhs, value, rdom: rdom.clone() };
    let pure = update.pure_vars(func_args);
    if let Some(v) = used.vars.iter().find(|v| !pure.contains(*v)) {
        return Err(LangError::FreeVariable { func, stage, var: v.to_string() });
    }
    let mut self_calls = SelfCalls { func: name, calls: vec![] };
    self_calls.visit_expr(&update.value);
    for call in &self_calls.calls {
        for (i, a) in func_args.iter().enumerate() {
            if pure.contains(a) && call.get(i).and_then(|c| c.as_var()) != Some(a) {
                return Err(LangError::PureVarMisplaced { func, stage, var: a.to_string(), position: i });
            }
        }
    }
    if let Some(r) = &rdom {
        for d in &r.dims {
            for bound in [&d.min, &d.extent] {
                let mut inner = VarsUsed::default();
                inner.visit_expr(bound);
                if let Some(v) = inner.vars.first().or(inner.rvars.keys().next()) {
                    return Err(LangError::Invalid { func, why: format!("bounds of reduction domain {} depend on variable {v}", r.name) });
                }
            }
        }
    }
    Ok(update)
}

/// Drops definition links from a Func's calls of itself (no reference cycles).
fn strip_self_links(name: &Name, e: &Expr) -> Expr {
    struct Strip<'a>(&'a Name);
    impl Mutator for Strip<'_> {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            let e = mutate_expr_children(self, e);
            match e.node() {
                ExprNode::Call { target: CallTarget::Func(r), args, ty } if r.name == *self.0 => {
                    Expr::call(CallTarget::Func(DefRef { name: r.name.clone(), link: None }), args.clone(), *ty)
                }
                _ => e,
            }
        }
    }
    Strip(name).mutate_expr(e)
}

/// Builds the checked, plain-data definition of the pipeline that computes `outputs`.
pub struct Pipeline;

impl Pipeline {
    /// Collects every Func and input reachable from `outputs`, checks the
    /// definitions, and orders the Funcs producers first.
    #[allow(clippy::new_ret_no_self)] // a pipeline is its checked definition
    pub fn new(outputs: &[&Func]) -> Result<PipelineDef, LangError> {
        let mut c = Collector::default();
        for out in outputs {
            c.visit_func(out)?;
        }
        let outputs: Vec<Name> = outputs.iter().map(|f| f.name()).collect();
        let mut seen = HashSet::new();
        for o in &outputs {
            if !seen.insert(o.clone()) {
                return Err(LangError::Invalid { func: o.to_string(), why: "listed twice as an output".into() });
            }
        }
        let funcs: Vec<FuncDef> = c.order.iter().map(|n| c.funcs[n].clone()).collect();
        let inputs: Vec<InputDef> = c.input_order.iter().map(|n| c.inputs[n].0.clone()).collect();
        let input_names: HashSet<&str> = inputs.iter().map(|i| &*i.name).collect();
        let mut params = ParamsUsed::default();
        for f in &funcs {
            for_each_expr(f, |e| params.visit_expr(e));
        }
        let params = params
            .params
            .into_iter()
            .filter(|(n, _)| n.split_once('.').is_none_or(|(buffer, _)| !input_names.contains(buffer)))
            .map(|(name, ty)| ParamDef { name, ty, estimate: None })
            .collect();
        let def = PipelineDef { funcs, inputs, params, outputs };
        check_names(&def)?;
        check_calls(&def)?;
        Ok(def)
    }
}

/// Checks that a user-given name cannot collide with the names lowering
/// derives from it (`f.s0.x`, `f.min.0`, `r.x`, ...): letters, digits, `_`
/// and `$` (helper Funcs of inline reductions), not starting with a digit.
fn check_name(kind: &'static str, name: &str) -> Result<(), LangError> {
    let why = if name.is_empty() {
        Some("it is empty")
    } else if name.starts_with(|c: char| c.is_ascii_digit()) {
        Some("it starts with a digit")
    } else if name.contains('.') {
        Some("dots are reserved for the names lowering derives (`f.s0.x`, `f.min.0`, `r.x`)")
    } else if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
        Some("only letters, digits, `_` and `$` are allowed")
    } else {
        None
    };
    match why {
        Some(why) => Err(LangError::InvalidName { kind, name: name.to_string(), why: why.to_string() }),
        None => Ok(()),
    }
}

fn check_names(def: &PipelineDef) -> Result<(), LangError> {
    for f in &def.funcs {
        check_name("Func", &f.name)?;
        for a in &f.args {
            check_name("Var", a)?;
        }
        for r in f.updates.iter().filter_map(|u| u.rdom.as_ref()) {
            check_name("RDom", &r.name)?;
        }
    }
    for i in &def.inputs {
        check_name("input", &i.name)?;
    }
    for p in &def.params {
        check_name("Param", &p.name)?;
    }
    Ok(())
}

/// Calls `f` on every expression of a Func definition.
pub fn for_each_expr(func: &FuncDef, mut f: impl FnMut(&Expr)) {
    f(&func.value);
    for u in &func.updates {
        u.args.iter().for_each(&mut f);
        f(&u.value);
        if let Some(r) = &u.rdom {
            for d in &r.dims {
                f(&d.min);
                f(&d.extent);
            }
            if let Some(p) = &r.predicate {
                f(p);
            }
        }
    }
}

#[derive(Default)]
struct ParamsUsed {
    params: Vec<(Name, Type)>,
}

impl Visitor for ParamsUsed {
    fn visit_expr(&mut self, e: &Expr) {
        if let ExprNode::Param { name, ty } = e.node() {
            if !self.params.iter().any(|(n, _)| n == name) {
                self.params.push((name.clone(), *ty));
            }
        }
        walk_expr(self, e)
    }
}

#[derive(Default)]
struct Collector {
    funcs: HashMap<Name, FuncDef>,
    identities: HashMap<Name, *const Mutex<FuncInner>>,
    order: Vec<Name>,
    visiting: Vec<Name>,
    inputs: HashMap<Name, (InputDef, *const Mutex<InputInner>)>,
    input_order: Vec<Name>,
}

/// Links found in an expression, in order of appearance.
#[derive(Default)]
struct Links {
    funcs: Vec<Arc<Mutex<FuncInner>>>,
    inputs: Vec<Arc<Mutex<InputInner>>>,
    unlinked: Vec<Name>,
}

impl Visitor for Links {
    fn visit_expr(&mut self, e: &Expr) {
        if let ExprNode::Call { target, .. } = e.node() {
            match target {
                CallTarget::Func(r) => match &r.link {
                    Some(l) => match l.0.clone().downcast::<Mutex<FuncInner>>() {
                        Ok(f) => self.funcs.push(f),
                        Err(_) => self.unlinked.push(r.name.clone()),
                    },
                    None => self.unlinked.push(r.name.clone()),
                },
                CallTarget::Input(r) => {
                    if let Some(Ok(i)) = r.link.as_ref().map(|l| l.0.clone().downcast::<Mutex<InputInner>>()) {
                        self.inputs.push(i)
                    }
                }
                CallTarget::Math(_) => {}
            }
        }
        walk_expr(self, e)
    }
}

impl Collector {
    fn visit_func(&mut self, func: &Func) -> Result<(), LangError> {
        let ptr = Arc::as_ptr(&func.0);
        let (def, links) = {
            let inner = func.0.lock().unwrap();
            if let Some(prev) = self.identities.get(&inner.name) {
                if *prev != ptr {
                    return Err(LangError::DuplicateName { name: inner.name.to_string() });
                }
                if self.visiting.contains(&inner.name) {
                    return Err(LangError::Cycle { func: inner.name.to_string() });
                }
                return Ok(());
            }
            if let Some(err) = &inner.error {
                return Err(err.clone());
            }
            let (Some(args), Some(ty), Some(value)) = (&inner.args, inner.ty, &inner.value) else {
                return Err(LangError::Undefined { func: inner.name.to_string() });
            };
            let def = FuncDef {
                name: inner.name.clone(),
                args: args.clone(),
                ty,
                value: value.clone(),
                updates: inner.updates.clone(),
                estimates: inner.estimates.clone(),
            };
            let mut links = Links::default();
            for_each_expr(&def, |e| links.visit_expr(e));
            (def, links)
        };
        let name = def.name.clone();
        self.identities.insert(name.clone(), ptr);
        self.visiting.push(name.clone());
        for input in &links.inputs {
            let d = input.lock().unwrap().def.clone();
            let iptr = Arc::as_ptr(input);
            match self.inputs.get(&d.name) {
                Some((_, p)) if *p != iptr => return Err(LangError::DuplicateName { name: d.name.to_string() }),
                Some(_) => {}
                None => {
                    self.input_order.push(d.name.clone());
                    self.inputs.insert(d.name.clone(), (d, iptr));
                }
            }
        }
        for producer in &links.funcs {
            if Arc::as_ptr(producer) == ptr {
                return Err(LangError::Invalid { func: name.to_string(), why: "its pure definition calls itself".into() });
            }
            self.visit_func(&Func(producer.clone()))?;
        }
        if let Some(u) = links.unlinked.iter().find(|u| **u != name) {
            return Err(LangError::Undefined { func: u.to_string() });
        }
        self.visiting.pop();
        self.order.push(name.clone());
        self.funcs.insert(name, strip_links(def));
        Ok(())
    }
}

/// A definition without links: plain data from here on.
fn strip_links(mut def: FuncDef) -> FuncDef {
    struct Strip;
    impl Mutator for Strip {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            let e = mutate_expr_children(self, e);
            match e.node() {
                ExprNode::Call { target: CallTarget::Func(r), args, ty } if r.link.is_some() => {
                    Expr::call(CallTarget::Func(DefRef { name: r.name.clone(), link: None }), args.clone(), *ty)
                }
                ExprNode::Call { target: CallTarget::Input(r), args, ty } if r.link.is_some() => {
                    Expr::call(CallTarget::Input(DefRef { name: r.name.clone(), link: None }), args.clone(), *ty)
                }
                _ => e,
            }
        }
    }
    def.value = Strip.mutate_expr(&def.value);
    for u in &mut def.updates {
        u.args = u.args.iter().map(|a| Strip.mutate_expr(a)).collect();
        u.value = Strip.mutate_expr(&u.value);
    }
    def
}

/// Every call names something defined, with the right number of integer
/// coordinates and the callee's type.
fn check_calls(p: &PipelineDef) -> Result<(), LangError> {
    struct Check<'a> {
        p: &'a PipelineDef,
        caller: &'a str,
        err: Option<LangError>,
    }
    impl Visitor for Check<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprNode::Call { target, args, ty } = e.node() {
                let (name, dims, callee_ty) = match target {
                    CallTarget::Func(r) => match self.p.func(&r.name) {
                        Some(f) => (r.name.clone(), f.dims(), f.ty),
                        None => {
                            self.err.get_or_insert(LangError::Undefined { func: r.name.to_string() });
                            return;
                        }
                    },
                    CallTarget::Input(r) => match self.p.input(&r.name) {
                        Some(i) => (r.name.clone(), i.dims, Type::scalar(i.ty)),
                        None => return,
                    },
                    CallTarget::Math(_) => return walk_expr(self, e),
                };
                if args.len() != dims {
                    self.err.get_or_insert(LangError::Arity {
                        func: name.to_string(),
                        expected: dims,
                        got: args.len(),
                        context: format!("a call in {}", self.caller),
                    });
                }
                if let Some((i, a)) = args.iter().enumerate().find(|(_, a)| a.ty() != Type::i32()) {
                    self.err.get_or_insert(LangError::CoordinateType {
                        func: self.caller.to_string(),
                        callee: name.to_string(),
                        position: i,
                        ty: a.ty(),
                    });
                }
                if *ty != callee_ty {
                    self.err.get_or_insert(LangError::Invalid {
                        func: self.caller.to_string(),
                        why: format!("calls {name} before {name} was defined (its type was unknown at the call)"),
                    });
                }
            }
            walk_expr(self, e)
        }
    }
    for f in &p.funcs {
        let mut c = Check { p, caller: &f.name, err: None };
        for_each_expr(f, |e| c.visit_expr(e));
        if let Some(e) = c.err {
            return Err(e);
        }
    }
    Ok(())
}
