//! Collecting a checked [`PipelineDef`]: [`Pipeline::new`] walks the links
//! of calls from the outputs to every Func and input they reach, rejects
//! duplicate names, cycles and undefined Funcs, orders the Funcs producers
//! first, gathers the params they use, strips the links (plain data from
//! here on) and runs the checks of [`crate::lang::checks`].

use crate::error::LangError;
use crate::ir::expr::{CallTarget, DefRef, Expr, ExprNode, Name};
use crate::ir::types::Type;
use crate::ir::visit::{mutate_expr_children, walk_expr, Mutator, Visitor};
use crate::lang::handles::{Func, FuncInner, InputInner};
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
        def.check()?;
        Ok(def)
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
