//! The rules a definition must follow, checked where they can be: an update
//! when it is made (arity, type, one reduction domain, pure variables in
//! place, domain bounds free of variables), names and calls once the whole
//! pipeline is collected ([`PipelineDef::check`], defined here so that the
//! pipeline's data knows nothing of its rules). Every error names the Func
//! at fault.

use crate::error::LangError;
use crate::ir::expr::{float_fits, BinOp, CallTarget, DefRef, Expr, ExprNode, MathFn, Name, RDomDef};
use crate::ir::printer::abbreviated;
use crate::ir::types::Type;
use crate::ir::visit::{mutate_expr_children, walk_expr, Mutator, Visitor};
use crate::lang::pipeline::{for_each_expr, PipelineDef, UpdateDef, MAX_DEFINITION_NODES, MAX_PIPELINE_NODES};
use std::collections::BTreeMap;
use std::sync::Arc;

impl PipelineDef {
    /// The checks `Pipeline::new` runs once a pipeline is collected (sizes
    /// first: no Func larger than [`MAX_DEFINITION_NODES`] and the whole no
    /// larger than [`MAX_PIPELINE_NODES`], counted as trees; estimates that
    /// are boxes of 32-bit coordinates and finite params; names
    /// free of reserved characters; every call names something defined,
    /// with the right arity, integer coordinates and the callee's type;
    /// operands of one type that their operator accepts, float literals
    /// that fit their type), also for a `PipelineDef` built some other way
    /// (decoded from the wire).
    pub fn check(&self) -> Result<(), LangError> {
        check_sizes(self)?;
        check_estimates(self)?;
        check_names(self)?;
        check_calls(self)?;
        check_operands(self)
    }
}

/// Variables and reduction variables an expression mentions.
#[derive(Default)]
pub(super) struct VarsUsed {
    /// The free variables (not bound by a `let`), in order of first
    /// appearance.
    pub vars: Vec<Name>,
    /// The reduction domains whose variables appear, by name.
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
pub(super) fn check_update(
    name: &Name,
    func_args: &[Name],
    types: &[Type],
    stage: usize,
    lhs: &[Expr],
    values: &[Expr],
) -> Result<UpdateDef, LangError> {
    let func = name.to_string();
    if lhs.len() != func_args.len() {
        return Err(LangError::Arity { func, expected: func_args.len(), got: lhs.len(), context: format!("update {stage}") });
    }
    if values.len() != types.len() {
        let why = format!("update {stage} gives {} value(s), but its definition has {}", values.len(), types.len());
        return Err(LangError::Invalid { func, why });
    }
    if let Some((v, ty)) = values.iter().zip(types).find(|(v, ty)| v.ty() != **ty) {
        return Err(LangError::UpdateType { func, stage, expected: *ty, got: v.ty() });
    }
    let mut used = VarsUsed::default();
    lhs.iter().for_each(|a| used.visit_expr(a));
    values.iter().for_each(|v| used.visit_expr(v));
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
    let values = values.iter().map(|v| strip_self_links(name, &lower(v))).collect();
    let update = UpdateDef { args: lhs, values, rdom: rdom.clone() };
    let pure = update.pure_vars(func_args);
    if let Some(v) = used.vars.iter().find(|v| !pure.contains(*v)) {
        return Err(LangError::FreeVariable { func, stage, var: v.to_string() });
    }
    let mut self_calls = SelfCalls { func: name, calls: vec![] };
    update.values.iter().for_each(|v| self_calls.visit_expr(v));
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
                    Expr::call(CallTarget::Func(DefRef::unlinked(r.name.clone(), r.value_index)), args.clone(), *ty)
                }
                _ => e,
            }
        }
    }
    Strip(name).mutate_expr(e)
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

/// No Func's definitions are larger than [`MAX_DEFINITION_NODES`] counted
/// as trees, nor the pipeline's than [`MAX_PIPELINE_NODES`] (measured in
/// time linear in the distinct nodes, [`crate::ir::visit::node_count`]).
fn check_sizes(p: &PipelineDef) -> Result<(), LangError> {
    let mut total = 0usize;
    for f in &p.funcs {
        let mut nodes = 0usize;
        for_each_expr(f, |e| nodes = nodes.saturating_add(crate::ir::visit::node_count(e)));
        if nodes > MAX_DEFINITION_NODES {
            return Err(LangError::DefinitionTooLarge { func: f.name.to_string(), nodes, limit: MAX_DEFINITION_NODES });
        }
        total = total.saturating_add(nodes);
    }
    if total > MAX_PIPELINE_NODES {
        return Err(LangError::PipelineTooLarge { nodes: total, limit: MAX_PIPELINE_NODES });
    }
    Ok(())
}

/// Every estimate is a box of the 32-bit coordinate space (a min and an
/// extent of at least 0 whose end fits `i32`), and every param's estimate
/// is finite: the autoscheduler sizes loops and allocations from them.
fn check_estimates(p: &PipelineDef) -> Result<(), LangError> {
    let boxes = p
        .funcs
        .iter()
        .map(|f| (format!("Func {}", f.name), &f.estimates))
        .chain(p.inputs.iter().map(|i| (format!("input {}", i.name), &i.estimates)));
    for (what, estimates) in boxes {
        for (d, e) in estimates.iter().enumerate() {
            let Some(e) = e else { continue };
            let (lo, hi) = (i64::from(i32::MIN), i64::from(i32::MAX));
            if !(lo..=hi).contains(&e.min) || !(0..=hi).contains(&e.extent) || e.min + e.extent > hi + 1 {
                let why = format!("of dimension {d}, min {} and extent {}, is not a box of 32-bit coordinates", e.min, e.extent);
                return Err(LangError::Estimate { what, why });
            }
        }
    }
    if let Some(q) = p.params.iter().find(|q| q.estimate.is_some_and(|v| !v.is_finite())) {
        return Err(LangError::Estimate { what: format!("param {}", q.name), why: "is not a finite number".to_string() });
    }
    Ok(())
}

/// Every call names something defined (a value a Tuple Func has), with
/// the right number of integer coordinates and the callee's type.
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
                        Some(f) if r.value_index >= f.types.len() => {
                            self.err.get_or_insert(LangError::Invalid {
                                func: self.caller.to_string(),
                                why: format!("calls value {} of {}, which has {} value(s)", r.value_index, r.name, f.types.len()),
                            });
                            return;
                        }
                        Some(f) => (r.name.clone(), f.dims(), f.types[r.value_index]),
                        None => {
                            self.err.get_or_insert(LangError::Undefined { func: r.name.to_string() });
                            return;
                        }
                    },
                    CallTarget::Input(r) => match self.p.input(&r.name) {
                        Some(i) => (r.name.clone(), i.dims, Type::scalar(i.ty)),
                        None => return,
                    },
                    CallTarget::Math(f) => {
                        if let Some(a) = args.iter().find(|a| !f.accepts(a.ty().scalar)) {
                            self.err.get_or_insert(LangError::Invalid {
                                func: self.caller.to_string(),
                                why: format!("{}({a}) of a {} value: {} takes {}", f.name(), a.ty(), f.name(), math_operands(*f)),
                            });
                        }
                        return walk_expr(self, e);
                    }
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

/// What the arguments of `f` may be, in words.
fn math_operands(f: MathFn) -> &'static str {
    match f {
        MathFn::Abs | MathFn::PromiseClamped => "numbers",
        _ if f.is_bit_count() => "integers",
        _ => "floats",
    }
}

/// Why the operands of `a op b` are not ones `op` takes, if they are not:
/// both of one type, which the operator accepts (integers for bitwise
/// operators and shifts).
fn operand_problem(op: BinOp, a: &Expr, b: &Expr) -> Option<String> {
    let (ta, tb) = (a.ty(), b.ty());
    if ta == tb && op.accepts(ta.scalar) {
        return None;
    }
    let literal =
        |e: &Expr, other: Type| e.as_int().map(|v| format!("the constant {v} does not fit {other}, the type of the other operand"));
    Some(if !(ta.is_int() && tb.is_int()) {
        format!("needs integer operands, not {ta} and {tb}")
    } else if let Some(why) = literal(b, ta).or_else(|| literal(a, tb)) {
        why
    } else {
        format!("needs operands both signed or both unsigned, not {ta} and {tb} (cast one)")
    })
}

/// Every operator has operands of one type that it accepts, every
/// reinterpretation keeps the width, and every float constant fits its type
/// (a literal that met a narrower float expression).
fn check_operands(p: &PipelineDef) -> Result<(), LangError> {
    struct Check<'a> {
        func: &'a str,
        err: Option<LangError>,
    }
    impl Visitor for Check<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if self.err.is_some() {
                return;
            }
            match e.node() {
                ExprNode::Binary { op, a, b } => {
                    if let Some(why) = operand_problem(*op, a, b) {
                        let op = op.symbol().unwrap_or("min/max");
                        self.err = Some(LangError::Operands { func: self.func.to_string(), op, why, expr: abbreviated(e) });
                    }
                }
                ExprNode::Reinterpret { ty, value } if !value.ty().scalar.reinterprets_as(ty.scalar) => {
                    let (from, to, expr) = (value.ty(), *ty, abbreviated(value));
                    self.err = Some(LangError::Reinterpret { func: self.func.to_string(), from, to, expr });
                }
                ExprNode::FloatImm { value, ty } if !float_fits(*value, ty.scalar) => {
                    self.err = Some(LangError::FloatLiteral { func: self.func.to_string(), value: *value, ty: *ty });
                }
                _ => {}
            }
            walk_expr(self, e)
        }
    }
    for f in &p.funcs {
        let mut c = Check { func: &f.name, err: None };
        for_each_expr(f, |e| c.visit_expr(e));
        if let Some(e) = c.err {
            return Err(e);
        }
    }
    Ok(())
}
