//! Pipelines on the wire: `TryFrom<&PipelineDef> for v1::Pipeline` and
//! `TryFrom<&v1::Pipeline> for PipelineDef`.
//!
//! From the wire, the message is first checked against the limits of
//! [`crate::limits`] (names, Funcs, expression nodes), then the declarations are read (Funcs, inputs and
//! params, each name once), then every definition in a scope that knows
//! them (see the `expr` module), then the shape of the whole (outputs name
//! Funcs, estimates one per dimension or none), and finally the compiler's
//! own checks (`PipelineDef::check`: reserved characters in names, calls).
//! A value that passes is a `PipelineDef` as `Pipeline::new` makes them.

use crate::error::{FromWireError, ToWireError};
use crate::expr::{expr_to_wire, Decls, Scope};
use crate::types::{scalar_from_wire, scalar_to_wire, type_from_wire, type_to_wire};
use crate::v1;
use compiler::ir::expr::{Name, RDomDef, RDomDim};
use compiler::lang::pipeline::{Estimate, FuncDef, InputDef, ParamDef, UpdateDef};
use compiler::{PipelineDef, Type};
use std::collections::HashSet;
use std::sync::Arc;

/// The most dimensions a Func or input may have on the wire.
const MAX_DIMS: usize = 16;

impl TryFrom<&PipelineDef> for v1::Pipeline {
    type Error = ToWireError;

    fn try_from(p: &PipelineDef) -> Result<v1::Pipeline, ToWireError> {
        Ok(v1::Pipeline {
            funcs: p.funcs.iter().map(func_to_wire).collect::<Result<_, _>>()?,
            inputs: p
                .inputs
                .iter()
                .map(|i| v1::InputDef {
                    name: i.name.to_string(),
                    r#type: scalar_to_wire(i.ty) as i32,
                    dims: i.dims as u32,
                    estimates: estimates_to_wire(&i.estimates),
                })
                .collect(),
            params: p
                .params
                .iter()
                .map(|q| {
                    Ok(v1::ParamDef {
                        name: q.name.to_string(),
                        r#type: type_to_wire(q.ty, &format!("param {}", q.name))?,
                        estimate: q.estimate,
                    })
                })
                .collect::<Result<_, ToWireError>>()?,
            outputs: p.outputs.iter().map(|o| o.to_string()).collect(),
        })
    }
}

fn func_to_wire(f: &FuncDef) -> Result<v1::FuncDef, ToWireError> {
    let at = format!("Func {}", f.name);
    let updates = f
        .updates
        .iter()
        .enumerate()
        .map(|(k, u)| {
            let at = format!("Func {}, update {k}", f.name);
            let rdom = u
                .rdom
                .as_ref()
                .map(|r| {
                    Ok::<_, ToWireError>(v1::RDom {
                        name: r.name.to_string(),
                        dims: r
                            .dims
                            .iter()
                            .map(|d| {
                                Ok(v1::RDomDim {
                                    name: d.name.to_string(),
                                    min: Some(expr_to_wire(&d.min, &at)?),
                                    extent: Some(expr_to_wire(&d.extent, &at)?),
                                })
                            })
                            .collect::<Result<_, ToWireError>>()?,
                        predicate: r.predicate.as_ref().map(|p| expr_to_wire(p, &at)).transpose()?,
                    })
                })
                .transpose()?;
            Ok(v1::UpdateDef {
                args: u.args.iter().map(|a| expr_to_wire(a, &at)).collect::<Result<_, _>>()?,
                value: Some(expr_to_wire(&u.values[0], &at)?),
                rdom,
                tuple_values: u.values[1..].iter().map(|v| expr_to_wire(v, &at)).collect::<Result<_, _>>()?,
            })
        })
        .collect::<Result<_, ToWireError>>()?;
    Ok(v1::FuncDef {
        name: f.name.to_string(),
        args: f.args.iter().map(|a| a.to_string()).collect(),
        r#type: type_to_wire(f.types[0], &at)?,
        value: Some(expr_to_wire(&f.values[0], &at)?),
        updates,
        estimates: estimates_to_wire(&f.estimates),
        tuple_types: f.types[1..].iter().map(|t| type_to_wire(*t, &at)).collect::<Result<_, _>>()?,
        tuple_values: f.values[1..].iter().map(|v| expr_to_wire(v, &at)).collect::<Result<_, _>>()?,
    })
}

fn estimates_to_wire(e: &[Option<Estimate>]) -> Vec<v1::DimEstimate> {
    e.iter().map(|e| v1::DimEstimate { estimate: e.map(|e| v1::Estimate { min: e.min, extent: e.extent }) }).collect()
}

fn estimates_from_wire(e: &[v1::DimEstimate], dims: usize, at: &str) -> Result<Vec<Option<Estimate>>, FromWireError> {
    if !e.is_empty() && e.len() != dims {
        return Err(FromWireError::invalid(at, format!("{} estimates for {dims} dimensions (give one per dimension, or none)", e.len())));
    }
    e.iter()
        .map(|d| match d.estimate {
            Some(v1::Estimate { extent, .. }) if extent < 0 => {
                Err(FromWireError::invalid(at, format!("an estimate has negative extent {extent}")))
            }
            Some(v1::Estimate { min, extent }) => Ok(Some(Estimate { min, extent })),
            None => Ok(None),
        })
        .collect()
}

impl TryFrom<&v1::Pipeline> for PipelineDef {
    type Error = FromWireError;

    fn try_from(w: &v1::Pipeline) -> Result<PipelineDef, FromWireError> {
        crate::limits::check_pipeline(w)?;
        let decls = declarations(w)?;
        let funcs = w.funcs.iter().enumerate().map(|(index, f)| func_from_wire(f, index, &decls)).collect::<Result<Vec<_>, _>>()?;
        let inputs = w
            .inputs
            .iter()
            .map(|i| {
                let at = format!("input {}", i.name);
                Ok(InputDef {
                    name: i.name.as_str().into(),
                    ty: scalar_from_wire(i.r#type, &at, "type")?,
                    dims: i.dims as usize,
                    estimates: estimates_from_wire(&i.estimates, i.dims as usize, &at)?,
                })
            })
            .collect::<Result<Vec<_>, FromWireError>>()?;
        let params = w
            .params
            .iter()
            .map(|q| {
                Ok(ParamDef {
                    name: q.name.as_str().into(),
                    ty: type_from_wire(q.r#type, &format!("param {}", q.name), "type")?,
                    estimate: q.estimate,
                })
            })
            .collect::<Result<Vec<_>, FromWireError>>()?;
        if w.outputs.is_empty() {
            return Err(FromWireError::invalid("pipeline", "it has no outputs"));
        }
        let mut outputs: Vec<Name> = vec![];
        for o in &w.outputs {
            if !decls.funcs.contains_key(o.as_str()) {
                return Err(FromWireError::invalid("pipeline", format!("output {o} is not one of its Funcs")));
            }
            if outputs.iter().any(|x| **x == **o) {
                return Err(FromWireError::invalid("pipeline", format!("output {o} is listed twice")));
            }
            outputs.push(o.as_str().into());
        }
        let p = PipelineDef { funcs, inputs, params, outputs };
        p.check()?;
        Ok(p)
    }
}

impl TryFrom<v1::Pipeline> for PipelineDef {
    type Error = FromWireError;

    fn try_from(w: v1::Pipeline) -> Result<PipelineDef, FromWireError> {
        PipelineDef::try_from(&w)
    }
}

/// Every declared name with what calls need to know; each name once.
fn declarations(w: &v1::Pipeline) -> Result<Decls, FromWireError> {
    let mut decls = Decls::default();
    let mut names: HashSet<&str> = HashSet::new();
    for (index, f) in w.funcs.iter().enumerate() {
        let at = format!("Func {}", f.name);
        if !names.insert(&f.name) {
            return Err(FromWireError::DuplicateFunc { name: f.name.clone() });
        }
        if f.args.len() > MAX_DIMS {
            return Err(FromWireError::invalid(&at, format!("{} dimensions, more than {MAX_DIMS}", f.args.len())));
        }
        if f.tuple_types.len() != f.tuple_values.len() {
            let why = format!("{} Tuple types for {} Tuple values", f.tuple_types.len(), f.tuple_values.len());
            return Err(FromWireError::invalid(&at, why));
        }
        let types = std::iter::once(f.r#type)
            .chain(f.tuple_types.iter().copied())
            .map(|t| type_from_wire(t, &at, "type"))
            .collect::<Result<Vec<_>, _>>()?;
        decls.funcs.insert(f.name.as_str().into(), (index, f.args.len(), types));
    }
    for i in &w.inputs {
        let at = format!("input {}", i.name);
        if !names.insert(&i.name) {
            return Err(FromWireError::invalid(&at, "its name is declared twice"));
        }
        if i.dims as usize > MAX_DIMS {
            return Err(FromWireError::invalid(&at, format!("{} dimensions, more than {MAX_DIMS}", i.dims)));
        }
        decls.inputs.insert(i.name.as_str().into(), (i.dims as usize, scalar_from_wire(i.r#type, &at, "type")?));
    }
    for q in &w.params {
        let at = format!("param {}", q.name);
        if !names.insert(&q.name) {
            return Err(FromWireError::invalid(&at, "its name is declared twice"));
        }
        decls.params.insert(q.name.as_str().into(), type_from_wire(q.r#type, &at, "type")?);
    }
    Ok(decls)
}

fn func_from_wire(f: &v1::FuncDef, index: usize, decls: &Decls) -> Result<FuncDef, FromWireError> {
    let at = format!("Func {}", f.name);
    let types = decls.funcs[f.name.as_str()].2.clone();
    let args: Vec<Name> = f.args.iter().map(|a| Name::from(a.as_str())).collect();
    if let Some(dup) = args.iter().enumerate().find(|(i, a)| args[..*i].contains(a)).map(|(_, a)| a) {
        return Err(FromWireError::invalid(&at, format!("variable {dup} appears twice in its arguments")));
    }
    let mut pure = Scope::new(decls, index, None, format!("{at}, pure definition"), args.clone());
    let values = typed_values(&mut pure, f.value.as_ref(), &f.tuple_values, &types)?;
    let updates =
        f.updates.iter().enumerate().map(|(k, u)| update_from_wire(u, k, f, &args, &types, index, decls)).collect::<Result<_, _>>()?;
    Ok(FuncDef {
        name: f.name.as_str().into(),
        args: args.clone(),
        types,
        values,
        updates,
        estimates: estimates_from_wire(&f.estimates, args.len(), &at)?,
    })
}

fn update_from_wire(
    u: &v1::UpdateDef,
    k: usize,
    f: &v1::FuncDef,
    args: &[Name],
    types: &[Type],
    index: usize,
    decls: &Decls,
) -> Result<UpdateDef, FromWireError> {
    let at = format!("Func {}, update {k}", f.name);
    let rdom = match &u.rdom {
        Some(r) => {
            let mut bounds = Scope::new(decls, index, None, format!("{at}, bounds of RDom {}", r.name), vec![]);
            let dims = r
                .dims
                .iter()
                .map(|d| {
                    Ok(RDomDim {
                        name: d.name.as_str().into(),
                        min: bounds.typed_child(d.min.as_ref(), "RDom min", Type::i32())?,
                        extent: bounds.typed_child(d.extent.as_ref(), "RDom extent", Type::i32())?,
                    })
                })
                .collect::<Result<Vec<_>, FromWireError>>()?;
            if dims.is_empty() {
                return Err(FromWireError::invalid(&at, format!("RDom {} has no dimensions", r.name)));
            }
            let mut vars = args.to_vec();
            vars.extend(dims.iter().map(|d| d.name.clone()));
            let mut where_ = Scope::new(decls, index, Some(&f.name), format!("{at}, predicate of RDom {}", r.name), vars);
            let predicate = r.predicate.as_ref().map(|p| where_.typed_child(Some(p), "RDom predicate", Type::bool())).transpose()?;
            Some(Arc::new(RDomDef { name: r.name.as_str().into(), dims, predicate }))
        }
        None => None,
    };
    let mut vars = args.to_vec();
    vars.extend(rdom.iter().flat_map(|r| r.dims.iter().map(|d| d.name.clone())));
    let mut scope = Scope::new(decls, index, Some(&f.name), at.clone(), vars);
    if u.args.len() != args.len() {
        return Err(FromWireError::Arity { at, callee: f.name.clone(), expected: args.len(), got: u.args.len() });
    }
    let lhs = u.args.iter().map(|a| scope.typed_child(Some(a), "update coordinate", Type::i32())).collect::<Result<Vec<_>, _>>()?;
    let values = typed_values(&mut scope, u.value.as_ref(), &u.tuple_values, types)?;
    Ok(UpdateDef { args: lhs, values, rdom })
}

/// The values of a definition: the first, then the Tuple's further ones,
/// one per type.
fn typed_values(
    scope: &mut Scope,
    first: Option<&v1::Expr>,
    more: &[v1::Expr],
    types: &[Type],
) -> Result<Vec<compiler::ir::expr::Expr>, FromWireError> {
    if more.len() + 1 != types.len() {
        let why = format!("{} value(s) for a Func with {} Tuple value(s)", more.len() + 1, types.len());
        return Err(FromWireError::invalid(&scope.at, why));
    }
    let mut values = vec![scope.typed_child(first, "value", types[0])?];
    for (v, ty) in more.iter().zip(&types[1..]) {
        values.push(scope.typed_child(Some(v), "Tuple value", *ty)?);
    }
    Ok(values)
}
