//! Collecting a checked [`PipelineDef`]: [`Pipeline::new`] walks the links
//! of calls from the outputs to every Func and input they reach, rejects
//! duplicate names, cycles and undefined Funcs, orders the Funcs producers
//! first, gathers the params they use with their handles' estimates, strips
//! the links (plain data from here on), orders and names the Funcs inline
//! reductions made, and runs the checks of [`crate::lang::checks`].

use crate::error::LangError;
use crate::ir::expr::{CallTarget, DefRef, Expr, ExprNode, Name, RDomDef, RDomDim};
use crate::ir::visit::{mutate_expr_children, walk_expr, Mutator, Visitor};
use crate::lang::handles::{Func, FuncInner, InputInner, Made, ParamInner};
use crate::lang::pipeline::{for_each_expr, FuncDef, InputDef, ParamDef, PipelineDef};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

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
        let mut funcs: Vec<FuncDef> = c.order.iter().map(|n| c.funcs[n].clone()).collect();
        order_helper_dims(&mut funcs, &c.helpers);
        let outputs = name_helpers(&mut funcs, outputs, &c.helpers);
        let inputs: Vec<InputDef> = c.input_order.iter().map(|n| c.inputs[n].0.clone()).collect();
        let input_names: HashSet<&str> = inputs.iter().map(|i| &*i.name).collect();
        let params = c.params;
        if let Some(err) = params.error {
            return Err(err);
        }
        let params =
            params.params.into_iter().filter(|q| q.name.split_once('.').is_none_or(|(buffer, _)| !input_names.contains(buffer))).collect();
        let def = PipelineDef { funcs, inputs, params, outputs };
        def.check()?;
        Ok(def)
    }
}

/// The params the definitions use, each with the estimate its handles
/// hold; two handles of one name with different estimates are an error.
#[derive(Default)]
struct ParamsUsed {
    params: Vec<ParamDef>,
    error: Option<LangError>,
}

impl Visitor for ParamsUsed {
    fn visit_expr(&mut self, e: &Expr) {
        if let ExprNode::Param { name, ty, link } = e.node() {
            let handle = link.as_ref().and_then(|l| l.0.clone().downcast::<ParamInner>().ok());
            let estimate = handle.and_then(|h| *h.estimate.lock().unwrap());
            match self.params.iter_mut().find(|q| q.name == *name) {
                None => self.params.push(ParamDef { name: name.clone(), ty: *ty, estimate }),
                Some(q) => match (q.estimate, estimate) {
                    (Some(a), Some(b)) if a.to_bits() != b.to_bits() && self.error.is_none() => {
                        let why = format!("is given twice, {a} and {b}, by two handles of that name");
                        self.error = Some(LangError::Estimate { what: format!("param {name}"), why });
                    }
                    (None, Some(_)) => q.estimate = estimate,
                    _ => {}
                },
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
    /// The Funcs the library made, and what made them.
    helpers: HashMap<Name, Made>,
    /// The params the Funcs collected so far use.
    params: ParamsUsed,
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
            let (Some(args), Some(types), Some(values)) = (&inner.args, &inner.types, &inner.values) else {
                return Err(LangError::Undefined { func: inner.name.to_string() });
            };
            if inner.made != Made::User {
                self.helpers.insert(inner.name.clone(), inner.made);
            }
            let def = FuncDef {
                name: inner.name.clone(),
                args: args.clone(),
                types: types.clone(),
                values: values.clone(),
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
            let (d, error) = {
                let inner = input.lock().unwrap();
                (inner.def.clone(), inner.error.clone())
            };
            if let Some(err) = error {
                return Err(err);
            }
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
        for_each_expr(&def, |e| self.params.visit_expr(e));
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
                    Expr::call(CallTarget::Func(DefRef::unlinked(r.name.clone(), r.value_index)), args.clone(), *ty)
                }
                ExprNode::Call { target: CallTarget::Input(r), args, ty } if r.link.is_some() => {
                    Expr::call(CallTarget::Input(DefRef::unlinked(r.name.clone(), 0)), args.clone(), *ty)
                }
                ExprNode::Param { name, ty, link: Some(_) } => Expr::param(name.clone(), *ty),
                _ => e,
            }
        }
    }
    mutate_definitions(&mut def, &mut Strip);
    def
}

/// Applies `m` to every expression of `def`: values, update arguments and
/// reduction domains (a domain is rebuilt only where `m` changes it).
fn mutate_definitions(def: &mut FuncDef, m: &mut impl Mutator) {
    def.values = def.values.iter().map(|v| m.mutate_expr(v)).collect();
    for u in &mut def.updates {
        u.args = u.args.iter().map(|a| m.mutate_expr(a)).collect();
        u.values = u.values.iter().map(|v| m.mutate_expr(v)).collect();
        if let Some(r) = &u.rdom {
            let dims: Vec<RDomDim> = r
                .dims
                .iter()
                .map(|d| RDomDim { name: d.name.clone(), min: m.mutate_expr(&d.min), extent: m.mutate_expr(&d.extent) })
                .collect();
            let predicate = r.predicate.as_ref().map(|p| m.mutate_expr(p));
            let same = |a: &Expr, b: &Expr| a.same_as(b);
            let unchanged = dims.iter().zip(&r.dims).all(|(n, o)| same(&n.min, &o.min) && same(&n.extent, &o.extent))
                && predicate.as_ref().zip(r.predicate.as_ref()).is_none_or(|(n, o)| same(n, o));
            if !unchanged {
                u.rdom = Some(Arc::new(RDomDef { name: r.name.clone(), dims, predicate }));
            }
        }
    }
}

/// Puts the dimensions of each inline reduction's helper in the order of
/// the variables of the first Func that calls it (`out(x, y) = sum(in(r,
/// y) * w(x))` gives a helper over `(x, y)`, not `(y, x)` as the variables
/// first appear), as Halide does; variables the caller does not have keep
/// their order, after the others. Consumers first, so that a helper called
/// by another helper (`argmax` calls `maximum`'s) follows the order its
/// caller was given. Every call of a reordered helper is permuted to match.
fn order_helper_dims(funcs: &mut [FuncDef], helpers: &HashMap<Name, Made>) {
    struct Permute<'a> {
        func: &'a Name,
        perm: &'a [usize],
    }
    impl Mutator for Permute<'_> {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            let e = mutate_expr_children(self, e);
            match e.node() {
                ExprNode::Call { target: target @ CallTarget::Func(r), args, ty } if r.name == *self.func => {
                    Expr::call(target.clone(), self.perm.iter().map(|&i| args[i].clone()).collect(), *ty)
                }
                _ => e,
            }
        }
    }
    for h in (0..funcs.len()).rev() {
        if helpers.get(&funcs[h].name) != Some(&Made::Reduction) {
            continue;
        }
        let name = funcs[h].name.clone();
        let Some(caller) = funcs[h + 1..].iter().find(|f| (0..f.stages()).any(|s| f.stage_callees(s).contains(&name))) else {
            continue;
        };
        let rank = |v: &Name| caller.args.iter().position(|a| a == v).unwrap_or(caller.args.len());
        let mut perm: Vec<usize> = (0..funcs[h].args.len()).collect();
        perm.sort_by_key(|&i| rank(&funcs[h].args[i]));
        if perm.iter().enumerate().all(|(k, &i)| k == i) {
            continue;
        }
        let helper = &mut funcs[h];
        helper.args = perm.iter().map(|&i| helper.args[i].clone()).collect();
        if helper.estimates.len() == perm.len() {
            helper.estimates = perm.iter().map(|&i| helper.estimates[i]).collect();
        }
        for u in &mut helper.updates {
            u.args = perm.iter().map(|&i| u.args[i].clone()).collect();
        }
        for f in funcs.iter_mut() {
            mutate_definitions(f, &mut Permute { func: &name, perm: &perm });
        }
    }
}

/// Names each Func the library made in place of the process-wide counter
/// it was made with (`sum$17`, `input_repeat_edge$3`), so that the same
/// algorithm gets the same names whatever else the process built before,
/// and schedules can name them: an inline reduction's after the Func that
/// calls it (`blur_sum`, then `blur_sum1` for a second one; a helper's own
/// helper after the helper's new name), a boundary condition's after its
/// source (`input_repeat_edge`, then `input_repeat_edge1`). Consumers first,
/// outputs before all; a name already taken gets the next free number.
/// Every call of a renamed Func is renamed; returns `outputs` renamed.
fn name_helpers(funcs: &mut [FuncDef], mut outputs: Vec<Name>, helpers: &HashMap<Name, Made>) -> Vec<Name> {
    struct Callees(Vec<Name>);
    impl Visitor for Callees {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprNode::Call { target: CallTarget::Func(r), .. } = e.node() {
                if !self.0.contains(&r.name) {
                    self.0.push(r.name.clone());
                }
            }
            walk_expr(self, e)
        }
    }
    struct Rename<'a>(&'a HashMap<Name, Name>);
    impl Mutator for Rename<'_> {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            let e = mutate_expr_children(self, e);
            match e.node() {
                ExprNode::Call { target: CallTarget::Func(r), args, ty } if self.0.contains_key(&r.name) => {
                    Expr::call(CallTarget::Func(DefRef::unlinked(self.0[&r.name].clone(), r.value_index)), args.clone(), *ty)
                }
                _ => e,
            }
        }
    }
    let mut names: HashMap<Name, Name> = HashMap::new();
    let mut taken: HashSet<String> = funcs.iter().map(|f| f.name.to_string()).collect();
    let mut name = |made: &Name, owner: Option<&Name>, names: &mut HashMap<Name, Name>| {
        let Some(&kind) = helpers.get(made) else { return };
        if names.contains_key(made) {
            return;
        }
        let counted = made.rsplit_once('$').map_or(&**made, |(base, _)| base);
        let base = match (kind, owner) {
            (Made::Reduction, Some(owner)) => format!("{}_{counted}", names.get(owner).unwrap_or(owner)),
            _ => counted.to_string(),
        };
        let free = std::iter::once(base.clone()).chain((1..).map(|k| format!("{base}{k}"))).find(|n| !taken.contains(n));
        let free = free.expect("an unbounded sequence has a free name");
        taken.insert(free.clone());
        names.insert(made.clone(), free.into());
    };
    for o in &outputs {
        name(o, None, &mut names);
    }
    for f in funcs.iter().rev() {
        let mut callees = Callees(vec![]);
        for_each_expr(f, |e| callees.visit_expr(e));
        for callee in &callees.0 {
            name(callee, Some(&f.name), &mut names);
        }
    }
    if names.is_empty() {
        return outputs;
    }
    for f in funcs.iter_mut() {
        if let Some(new) = names.get(&f.name) {
            f.name = new.clone();
        }
        mutate_definitions(f, &mut Rename(&names));
    }
    for o in &mut outputs {
        if let Some(new) = names.get(o) {
            *o = new.clone();
        }
    }
    outputs
}
