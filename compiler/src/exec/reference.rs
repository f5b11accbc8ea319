//! The reference evaluator: computes a pipeline's outputs straight from the
//! algorithm's definitions, with no schedule. It is slow and meant to be
//! obviously right; every lowered schedule is compared bit-exactly against it.
//!
//! Semantics (Halide's):
//! - A Func's value at a point is its pure definition evaluated with its pure
//!   variables bound to the point, then transformed by each update in order.
//!   A Tuple Func has several values per point; an update computes all of
//!   them from the values before it, then writes them together.
//! - An update runs over its whole reduction domain, points visited
//!   lexicographically with dimension 0 innermost, skipping points where the
//!   domain's predicate is false. Its pure variables (those unadorned at their
//!   own position on the left-hand side) split the Func into independent
//!   *slices*, keyed by the coordinates at those positions. Evaluating a slice
//!   runs the update over the whole domain with the pure variables bound to
//!   the key, recording the points it writes; reads of the Func inside the
//!   update see those writes, falling back to the value after the previous
//!   stage. A point no iteration wrote keeps the previous stage's value.
//! - Expressions are evaluated by the evaluator shared with the IR
//!   interpreter, [`crate::exec::eval`], so results agree bit for bit and
//!   evaluation is eager as in compiled code: `Select` evaluates both sides
//!   and `&&`/`||` both operands, so an out-of-bounds input read on the
//!   untaken side is an error. This module supplies what calls of Funcs and
//!   inputs and params mean, and bounds the nesting depth.
//! - `Param` nodes come from the `params` map, except `<input>.min.<d>` and
//!   `<input>.extent.<d>` (see [`crate::lang::pipeline::buffer_vars`]), which come
//!   from the input buffers.
//!
//! Pure values are memoized per (Func, point) and update slices per
//! (Func, stage, slice key). Slices are computed by a loop, so a scan over
//! thousands of points costs no stack; recursion follows only expression
//! nesting and Func-to-Func calls. [`realize`] runs on a thread with a
//! [`crate::stack::STACK_BYTES`] stack, and [`Limits`] bounds both the total work and the
//! recursion depth, so a runaway pipeline yields an error rather than a hang
//! or a stack overflow.

use crate::exec::buffer::{Buffer, BufferError};
use crate::exec::eval::{self, EvalContext, EvalError, Scope, Val};
use crate::ir::expr::{Expr, Name};
use crate::ir::types::ScalarType;
use crate::ir::value::{self, Scalar};
use crate::lang::pipeline::{buffer_vars, FuncDef, PipelineDef};
use crate::stack::on_large_stack;
use smallvec::SmallVec;
use std::collections::{BTreeMap, HashMap};
use thiserror::Error;

/// Why the reference evaluator could not compute a value.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum ReferenceError {
    /// A Func asked for, or called, that is not in the pipeline.
    #[error("no Func named {func} in the pipeline")]
    UnknownFunc {
        /// The name.
        func: String,
    },
    /// A Func asked for, or called, with a number of coordinates other than
    /// its dimensions.
    #[error("Func {func} has {expected} dimensions but {got} coordinates were given")]
    Arity {
        /// The Func.
        func: String,
        /// Its number of dimensions.
        expected: usize,
        /// The number of coordinates given.
        got: usize,
    },
    /// A Func reads an input that was not given.
    #[error("Func {func} reads input {input}, which was not given")]
    MissingInput {
        /// The Func that reads it.
        func: String,
        /// The input.
        input: String,
    },
    /// An input's dimension count or element type is not the one the pipeline
    /// declares.
    #[error(
        "input {input} should be a {expected_dims}-dimensional {expected_ty} buffer but a {got_dims}-dimensional {got_ty} one was given"
    )]
    InputShape {
        /// The input.
        input: String,
        /// The dimensions the pipeline declares.
        expected_dims: usize,
        /// The element type the pipeline declares.
        expected_ty: ScalarType,
        /// The dimensions of the buffer given.
        got_dims: usize,
        /// The element type of the buffer given.
        got_ty: ScalarType,
    },
    /// A Func reads an input outside the given buffer.
    #[error("Func {func} reads input {input} at {at:?}: coordinate {coord} of dimension {dim} is outside [{min}, {max}]")]
    InputOutOfBounds {
        /// The Func that reads it.
        func: String,
        /// The input.
        input: String,
        /// The coordinates read.
        at: Vec<i64>,
        /// The first dimension out of bounds.
        dim: usize,
        /// The coordinate in that dimension.
        coord: i64,
        /// The buffer's first coordinate in that dimension.
        min: i64,
        /// The buffer's last coordinate in that dimension.
        max: i64,
    },
    /// A Func reads an input, or a field of one, with a dimension the buffer
    /// does not have.
    #[error("Func {func} uses dimension {dim} of input {input}, which has {dims} dimensions")]
    InputDimension {
        /// The Func that reads it.
        func: String,
        /// The input.
        input: String,
        /// The dimension used (or the number of coordinates given).
        dim: usize,
        /// The buffer's number of dimensions.
        dims: usize,
    },
    /// A Func uses a param that was not given.
    #[error("Func {func} uses param {param}, which was not given")]
    MissingParam {
        /// The Func that uses it.
        func: String,
        /// The param.
        param: String,
    },
    /// A param's given value does not fit its type.
    #[error("param {param} has type {ty}, which cannot hold the given value {value:?}")]
    ParamValue {
        /// The param.
        param: String,
        /// Its type.
        ty: ScalarType,
        /// The value given.
        value: Scalar,
    },
    /// A definition uses a variable that is not bound where it is evaluated.
    #[error("Func {func} uses variable {var}, which is not bound there")]
    UnboundVariable {
        /// The Func.
        func: String,
        /// The variable.
        var: String,
    },
    /// A node that algorithms do not hold (a load, an `RVar`, ...).
    #[error("Func {func}: a {node} node cannot appear in an algorithm")]
    UnexpectedNode {
        /// The Func.
        func: String,
        /// The kind of node.
        node: &'static str,
    },
    /// Evaluating an expression of a Func's definition failed otherwise.
    #[error("Func {func}: {error}")]
    Eval {
        /// The Func.
        func: String,
        /// The evaluator's error.
        error: EvalError,
    },
    /// An update reads or writes its Func outside the slice of its pure
    /// variables.
    #[error("Func {func}, update {stage}: {access} at {at:?} leaves the slice {key:?} of its pure variables")]
    OutsideSlice {
        /// The Func.
        func: String,
        /// The update's stage (1 for the first update).
        stage: usize,
        /// Whether it reads or writes.
        access: &'static str,
        /// The coordinates accessed.
        at: Vec<i64>,
        /// The coordinates of the slice, at the positions of the pure
        /// variables.
        key: Vec<i64>,
    },
    /// The evaluation passed its limit on point evaluations.
    #[error("Func {func}: evaluation passed the limit of {limit} point evaluations")]
    WorkLimit {
        /// The Func being evaluated.
        func: String,
        /// The most point evaluations.
        limit: u64,
    },
    /// Expressions and Func-to-Func calls nested deeper than the limit.
    #[error("Func {func}: expressions and calls nested more than {limit} deep")]
    DepthLimit {
        /// The Func being evaluated.
        func: String,
        /// The greatest depth.
        limit: usize,
    },
    /// An output buffer could not be made over the requested region.
    #[error("output {func}: {error}")]
    Output {
        /// The output.
        func: String,
        /// Why its buffer could not be made.
        error: BufferError,
    },
    /// `realize` of a Tuple output, which needs `realize_values`.
    #[error("output {func} is a Tuple of {values} values: realize it with realize_values, one buffer per value")]
    TupleOutput {
        /// The output.
        func: String,
        /// Its number of values.
        values: usize,
    },
}

/// Bounds on the evaluator's effort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most point evaluations (pure points computed plus reduction-domain
    /// points visited) before giving up.
    pub max_work: u64,
    /// Most nested expression evaluations (expression depth summed over the
    /// chain of Func-to-Func calls).
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_work: 100_000_000, max_depth: 100_000 }
    }
}

/// Computes `output` over `region` ((min, extent) per dimension) directly
/// from the algorithm, with default [`Limits`].
pub fn realize(
    p: &PipelineDef,
    inputs: &BTreeMap<String, Buffer>,
    params: &BTreeMap<String, Scalar>,
    output: &str,
    region: &[(i64, i64)],
) -> Result<Buffer, ReferenceError> {
    on_large_stack(|| Evaluator::new(p, inputs, params)?.realize(output, region))
}

/// Computes every value of `output` (one buffer per value of a Tuple Func,
/// named `output.0`, `output.1`, ...) over `region`, with default [`Limits`].
pub fn realize_values(
    p: &PipelineDef,
    inputs: &BTreeMap<String, Buffer>,
    params: &BTreeMap<String, Scalar>,
    output: &str,
    region: &[(i64, i64)],
) -> Result<Vec<Buffer>, ReferenceError> {
    on_large_stack(|| Evaluator::new(p, inputs, params)?.realize_values(output, region))
}

/// The values of a Func at one point: one, or one per element of a Tuple.
type Values = SmallVec<[Scalar; 1]>;

/// Memoized values of one Func.
#[derive(Default)]
struct FuncMemo {
    /// Values of the pure definition, per point.
    pure: HashMap<Vec<i64>, Values>,
    /// Points written by each evaluated slice, per (stage, slice key).
    slices: HashMap<(usize, Vec<i64>), HashMap<Vec<i64>, Values>>,
}

/// The variables in scope while evaluating part of one Func's definition.
struct Env {
    func: usize,
    /// Pure, reduction and let-bound variables; later entries shadow earlier.
    vars: Scope,
}

impl Env {
    /// The scope of Func `func` with `coords` bound to the variables `names`.
    fn new<'n>(func: usize, names: impl Iterator<Item = &'n Name>, coords: &[i64]) -> Env {
        let mut vars = Scope::default();
        for (name, &c) in names.zip(coords) {
            vars.push(name.clone(), ScalarType::I32, coordinate(c));
        }
        Env { func, vars }
    }
}

/// An update slice being computed: reads of its Func look here first.
struct Slice {
    stage: usize,
    positions: Vec<usize>,
    key: Vec<i64>,
    written: HashMap<Vec<i64>, Values>,
}

/// Evaluates Funcs of one pipeline point by point, memoizing everything, so
/// several outputs (or several regions) share work.
pub struct Evaluator<'a> {
    pipeline: &'a PipelineDef,
    inputs: &'a BTreeMap<String, Buffer>,
    params: &'a BTreeMap<String, Scalar>,
    limits: Limits,
    func_index: HashMap<&'a str, usize>,
    /// For each Func, for each update, the positions of its pure variables.
    pure_positions: Vec<Vec<Vec<usize>>>,
    memo: Vec<FuncMemo>,
    work: u64,
    depth: usize,
}

impl<'a> Evaluator<'a> {
    /// An evaluator over the given inputs and params, with default [`Limits`].
    /// Inputs the pipeline declares must have its element type and
    /// dimensionality; a missing input or param is reported when first used.
    pub fn new(
        pipeline: &'a PipelineDef,
        inputs: &'a BTreeMap<String, Buffer>,
        params: &'a BTreeMap<String, Scalar>,
    ) -> Result<Evaluator<'a>, ReferenceError> {
        for def in &pipeline.inputs {
            if let Some(buf) = inputs.get(&*def.name) {
                if buf.ty != def.ty || buf.dims.len() != def.dims {
                    return Err(ReferenceError::InputShape {
                        input: def.name.to_string(),
                        expected_dims: def.dims,
                        expected_ty: def.ty,
                        got_dims: buf.dims.len(),
                        got_ty: buf.ty,
                    });
                }
            }
        }
        let pure_positions = pipeline.funcs.iter().map(update_pure_positions).collect();
        Ok(Evaluator {
            pipeline,
            inputs,
            params,
            limits: Limits::default(),
            func_index: pipeline.funcs.iter().enumerate().map(|(i, f)| (&*f.name, i)).collect(),
            pure_positions,
            memo: pipeline.funcs.iter().map(|_| FuncMemo::default()).collect(),
            work: 0,
            depth: 0,
        })
    }

    /// The same evaluator with other limits.
    pub fn with_limits(mut self, limits: Limits) -> Evaluator<'a> {
        self.limits = limits;
        self
    }

    /// Point evaluations done so far (what [`Limits::max_work`] bounds).
    pub fn work_done(&self) -> u64 {
        self.work
    }

    /// The value of Func `func` at `coords`, after all its update stages
    /// (the first value, for a Tuple Func).
    pub fn value(&mut self, func: &str, coords: &[i64]) -> Result<Scalar, ReferenceError> {
        Ok(self.values(func, coords)?[0])
    }

    /// Every value of Func `func` at `coords`, after all its update stages.
    pub fn values(&mut self, func: &str, coords: &[i64]) -> Result<Vec<Scalar>, ReferenceError> {
        let fi = self.func_id(func)?;
        self.check_arity(fi, coords)?;
        Ok(self.value_after(fi, coords, self.def(fi).updates.len())?.to_vec())
    }

    /// A dense buffer named `output`, of the Func's type, holding its values
    /// over `region` ((min, extent) per dimension). A Tuple Func is an
    /// error: see [`Evaluator::realize_values`].
    pub fn realize(&mut self, output: &str, region: &[(i64, i64)]) -> Result<Buffer, ReferenceError> {
        let mut buffers = self.realize_values(output, region)?;
        match buffers.len() {
            1 => Ok(buffers.remove(0)),
            values => Err(ReferenceError::TupleOutput { func: output.into(), values }),
        }
    }

    /// One dense buffer per value of `output` (see
    /// [`FuncDef::buffers`] for their names) over `region`.
    pub fn realize_values(&mut self, output: &str, region: &[(i64, i64)]) -> Result<Vec<Buffer>, ReferenceError> {
        let fi = self.func_id(output)?;
        let def = self.def(fi);
        if region.len() != def.dims() {
            return Err(ReferenceError::Arity { func: output.into(), expected: def.dims(), got: region.len() });
        }
        let out_error = |error| ReferenceError::Output { func: output.into(), error };
        let mut buffers = def
            .buffers()
            .iter()
            .map(|(name, ty)| Buffer::new(name, ty.scalar, region).map_err(out_error))
            .collect::<Result<Vec<_>, _>>()?;
        let points: Vec<Vec<i64>> = buffers[0].coordinates().collect();
        for point in points {
            let values = self.value_after(fi, &point, def.updates.len())?;
            for (buf, v) in buffers.iter_mut().zip(values) {
                buf.set(&point, v).map_err(out_error)?;
            }
        }
        Ok(buffers)
    }

    fn def(&self, fi: usize) -> &'a FuncDef {
        let pipeline = self.pipeline;
        &pipeline.funcs[fi]
    }

    fn func_name(&self, fi: usize) -> String {
        self.def(fi).name.to_string()
    }

    fn func_id(&self, name: &str) -> Result<usize, ReferenceError> {
        self.func_index.get(name).copied().ok_or_else(|| ReferenceError::UnknownFunc { func: name.into() })
    }

    fn check_arity(&self, fi: usize, coords: &[i64]) -> Result<(), ReferenceError> {
        let expected = self.def(fi).dims();
        if coords.len() == expected {
            Ok(())
        } else {
            Err(ReferenceError::Arity { func: self.func_name(fi), expected, got: coords.len() })
        }
    }

    fn count_work(&mut self, fi: usize) -> Result<(), ReferenceError> {
        self.work += 1;
        if self.work > self.limits.max_work {
            return Err(ReferenceError::WorkLimit { func: self.func_name(fi), limit: self.limits.max_work });
        }
        Ok(())
    }

    /// The values of Func `fi` at `coords` after its first `stages` updates.
    /// Walks the stages downwards: the latest slice that wrote the point wins.
    fn value_after(&mut self, fi: usize, coords: &[i64], stages: usize) -> Result<Values, ReferenceError> {
        for stage in (1..=stages).rev() {
            let key = slice_key(&self.pure_positions[fi][stage - 1], coords);
            let slice_id = (stage, key);
            if !self.memo[fi].slices.contains_key(&slice_id) {
                let written = self.compute_slice(fi, stage, slice_id.1.clone())?;
                self.memo[fi].slices.insert(slice_id.clone(), written);
            }
            if let Some(v) = self.memo[fi].slices[&slice_id].get(coords) {
                return Ok(v.clone());
            }
        }
        self.pure_value(fi, coords)
    }

    /// The values of Func `fi`'s pure definition at `coords`.
    fn pure_value(&mut self, fi: usize, coords: &[i64]) -> Result<Values, ReferenceError> {
        if let Some(v) = self.memo[fi].pure.get(coords) {
            return Ok(v.clone());
        }
        self.count_work(fi)?;
        let def = self.def(fi);
        let mut env = Env::new(fi, def.args.iter(), coords);
        let mut values = Values::new();
        for value in &def.values {
            values.push(self.eval(value, &mut env, None)?);
        }
        self.memo[fi].pure.insert(coords.to_vec(), values.clone());
        Ok(values)
    }

    /// Runs update `stage` (1-based) of Func `fi` over its whole reduction
    /// domain for the slice `key`, returning the points it wrote.
    fn compute_slice(&mut self, fi: usize, stage: usize, key: Vec<i64>) -> Result<HashMap<Vec<i64>, Values>, ReferenceError> {
        let def = self.def(fi);
        let update = &def.updates[stage - 1];
        let positions = self.pure_positions[fi][stage - 1].clone();
        let mut env = Env::new(fi, positions.iter().map(|&p| &def.args[p]), &key);
        let dims = update.rdom.as_ref().map_or(&[][..], |r| &r.dims[..]);
        let mut bounds = Vec::with_capacity(dims.len());
        for d in dims {
            let min = self.eval(&d.min, &mut env, None)?.as_i128() as i64;
            let extent = self.eval(&d.extent, &mut env, None)?.as_i128() as i64;
            bounds.push((min, extent));
        }
        let mut slice = Slice { stage, positions, key, written: HashMap::new() };
        if bounds.iter().any(|&(_, extent)| extent <= 0) {
            return Ok(slice.written);
        }
        let slots: Vec<usize> =
            dims.iter().zip(&bounds).map(|(d, &(min, _))| env.vars.push(d.name.clone(), ScalarType::I32, coordinate(min))).collect();
        let mut point: Vec<i64> = bounds.iter().map(|&(min, _)| min).collect();
        let predicate = update.rdom.as_ref().and_then(|r| r.predicate.as_ref());
        loop {
            self.count_work(fi)?;
            for (&slot, &c) in slots.iter().zip(&point) {
                env.vars.set(slot, coordinate(c));
            }
            let included = match predicate {
                Some(pred) => self.eval(pred, &mut env, None)?.as_bool(),
                None => true,
            };
            if included {
                let mut target = Vec::with_capacity(update.args.len());
                for a in &update.args {
                    target.push(self.eval(a, &mut env, Some(&slice))?.as_i128() as i64);
                }
                self.check_in_slice(fi, &slice, "the left-hand side", &target)?;
                let mut values = Values::new();
                for value in &update.values {
                    values.push(self.eval(value, &mut env, Some(&slice))?);
                }
                slice.written.insert(target, values);
            }
            if !next_point(&mut point, &bounds) {
                return Ok(slice.written);
            }
        }
    }

    /// Pure-variable rule, checked at run time: an update only touches points
    /// of its own slice.
    fn check_in_slice(&self, fi: usize, slice: &Slice, access: &'static str, at: &[i64]) -> Result<(), ReferenceError> {
        if at.len() == self.def(fi).dims() && slice_key(&slice.positions, at) == slice.key {
            return Ok(());
        }
        Err(ReferenceError::OutsideSlice { func: self.func_name(fi), stage: slice.stage, access, at: at.to_vec(), key: slice.key.clone() })
    }

    /// Evaluates `e`, part of the definition of `env.func`; inside an update,
    /// `slice` is the slice being computed.
    fn eval(&mut self, e: &Expr, env: &mut Env, slice: Option<&Slice>) -> Result<Scalar, ReferenceError> {
        eval::eval_scalar(&mut Definition { evaluator: self, env, slice }, e, "a value of a definition")
    }

    #[cold]
    fn depth_limit(&self, func: usize) -> ReferenceError {
        ReferenceError::DepthLimit { func: self.func_name(func), limit: self.limits.max_depth }
    }

    #[cold]
    fn unexpected(&self, func: usize, node: &'static str) -> ReferenceError {
        ReferenceError::UnexpectedNode { func: self.func_name(func), node }
    }

    /// A call of value `index` of Func `callee` from the definition of
    /// `caller`. A Func reading itself inside an update sees its slice's
    /// writes first.
    fn call_func(
        &mut self,
        caller: usize,
        callee: &str,
        index: usize,
        coords: &[i64],
        slice: Option<&Slice>,
    ) -> Result<Scalar, ReferenceError> {
        let fi = self.func_id(callee)?;
        self.check_arity(fi, coords)?;
        let values = match slice {
            Some(slice) if fi == caller => {
                self.check_in_slice(fi, slice, "a read of the Func", coords)?;
                match slice.written.get(coords) {
                    Some(v) => v.clone(),
                    None => self.value_after(fi, coords, slice.stage - 1)?,
                }
            }
            _ => self.value_after(fi, coords, self.def(fi).updates.len())?,
        };
        Ok(values[index])
    }

    /// The element of input `name` at `coords`, read by Func `caller`.
    fn input_value(&self, caller: usize, name: &str, coords: &[i64]) -> Result<Scalar, ReferenceError> {
        let buf = self.input_buffer(caller, name)?;
        buf.get(coords).map_err(|e| match e {
            BufferError::OutOfBounds { dim, coord, min, max, .. } => ReferenceError::InputOutOfBounds {
                func: self.func_name(caller),
                input: name.into(),
                at: coords.to_vec(),
                dim,
                coord,
                min,
                max,
            },
            _ => {
                ReferenceError::InputDimension { func: self.func_name(caller), input: name.into(), dim: coords.len(), dims: buf.dims.len() }
            }
        })
    }

    fn input_buffer(&self, caller: usize, name: &str) -> Result<&'a Buffer, ReferenceError> {
        let inputs = self.inputs;
        inputs.get(name).ok_or_else(|| ReferenceError::MissingInput { func: self.func_name(caller), input: name.into() })
    }

    /// A scalar param of type `ty`, or a dimension field of an input buffer.
    fn param(&self, caller: usize, name: &str, ty: ScalarType) -> Result<Scalar, ReferenceError> {
        if let Some((input, field, dim)) = self.buffer_field(name) {
            let buf = self.input_buffer(caller, input)?;
            let Some(d) = buf.dims.get(dim) else {
                return Err(ReferenceError::InputDimension {
                    func: self.func_name(caller),
                    input: input.into(),
                    dim,
                    dims: buf.dims.len(),
                });
            };
            let v = match field {
                BufferField::Min => d.min,
                BufferField::Extent => d.extent,
            };
            return Ok(Scalar::from_i128(v as i128, ScalarType::I32));
        }
        let given =
            self.params.get(name).ok_or_else(|| ReferenceError::MissingParam { func: self.func_name(caller), param: name.into() })?;
        param_of_type(ty, *given).ok_or(ReferenceError::ParamValue { param: name.into(), ty, value: *given })
    }

    /// Parses `<input>.min.<d>` / `<input>.extent.<d>` for a pipeline input.
    fn buffer_field(&self, name: &str) -> Option<(&'a str, BufferField, usize)> {
        self.pipeline.inputs.iter().find_map(|input| {
            (0..input.dims).find_map(|d| {
                if name == buffer_vars::min(&input.name, d) {
                    Some((&*input.name, BufferField::Min, d))
                } else if name == buffer_vars::extent(&input.name, d) {
                    Some((&*input.name, BufferField::Extent, d))
                } else {
                    None
                }
            })
        })
    }
}

/// Part of the definition of one Func, being evaluated: calls read other
/// Funcs' values (computing them on demand) and input buffers; params come
/// from the given values; the vector nodes of lowered IR are refused.
struct Definition<'e, 'a> {
    evaluator: &'e mut Evaluator<'a>,
    env: &'e mut Env,
    /// The update slice being computed, inside an update.
    slice: Option<&'e Slice>,
}

impl EvalContext for Definition<'_, '_> {
    type Error = ReferenceError;

    fn scope(&mut self) -> &mut Scope {
        &mut self.env.vars
    }

    #[cold]
    #[inline(never)]
    fn error(&self, error: EvalError) -> ReferenceError {
        let func = self.evaluator.func_name(self.env.func);
        match error {
            EvalError::UnboundVariable { name } => ReferenceError::UnboundVariable { func, var: name },
            EvalError::ReductionVariable { .. } => ReferenceError::UnexpectedNode { func, node: "reduction variable (RVar)" },
            error => ReferenceError::Eval { func, error },
        }
    }

    fn enter(&mut self) -> Result<(), ReferenceError> {
        let ev = &mut *self.evaluator;
        if ev.depth >= ev.limits.max_depth {
            return Err(ev.depth_limit(self.env.func));
        }
        ev.depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.evaluator.depth -= 1;
    }

    fn param(&mut self, name: &Name, ty: ScalarType) -> Result<Scalar, ReferenceError> {
        self.evaluator.param(self.env.func, name, ty)
    }

    fn call_func(&mut self, func: &Name, index: usize, coords: &[i64]) -> Result<Scalar, ReferenceError> {
        self.evaluator.call_func(self.env.func, func, index, coords, self.slice)
    }

    fn read_input(&mut self, input: &Name, coords: &[i64]) -> Result<Scalar, ReferenceError> {
        self.evaluator.input_value(self.env.func, input, coords)
    }

    fn load(&mut self, _: &Name, _: Val, _: ScalarType) -> Result<Val, ReferenceError> {
        Err(self.evaluator.unexpected(self.env.func, "Load"))
    }

    fn admit_vector(&self, node: &'static str) -> Result<(), ReferenceError> {
        Err(self.evaluator.unexpected(self.env.func, node))
    }
}

/// The dimension fields of an input buffer that algorithms may read.
#[derive(Clone, Copy)]
enum BufferField {
    Min,
    Extent,
}

/// For each update of `def`, the positions of its pure variables.
fn update_pure_positions(def: &FuncDef) -> Vec<Vec<usize>> {
    def.updates
        .iter()
        .map(|u| {
            let pure = u.pure_vars(&def.args);
            (0..def.args.len()).filter(|&i| pure.contains(&def.args[i])).collect()
        })
        .collect()
}

/// The coordinates of `coords` at the pure-variable `positions`.
fn slice_key(positions: &[usize], coords: &[i64]) -> Vec<i64> {
    positions.iter().map(|&p| coords[p]).collect()
}

/// A coordinate as the `i32` value variables hold.
fn coordinate(c: i64) -> Val {
    Val::Scalar(Scalar::from_i128(c as i128, ScalarType::I32))
}

/// Advances `point` to the next point of the box `bounds` ((min, extent) per
/// dimension, dimension 0 innermost); false once every point was visited.
fn next_point(point: &mut [i64], bounds: &[(i64, i64)]) -> bool {
    for (c, &(min, extent)) in point.iter_mut().zip(bounds) {
        *c += 1;
        if *c < min + extent {
            return true;
        }
        *c = min;
    }
    false
}

/// A given param value as a value of type `ty`: floats accept any number
/// (rounded to the type); integers and bools need an integer in range.
fn param_of_type(ty: ScalarType, v: Scalar) -> Option<Scalar> {
    if ty.is_float() {
        return Some(value::cast(ScalarType::F64, ty, Scalar::Float(v.as_f64())));
    }
    match v {
        Scalar::Float(_) => None,
        Scalar::Int(_) | Scalar::UInt(_) => {
            let i = v.as_i128();
            (ty.int_min()..=ty.int_max()).contains(&i).then(|| Scalar::from_i128(i, ty))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::types::Type;
    use crate::lang::boundary::repeat_edge;
    use crate::lang::ops::*;
    use crate::lang::reductions::{argmax, sum};
    use crate::lang::{Func, ImageParam, Param, Pipeline, RDom, Var};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A 2-D input named `name` with values drawn from `0..bound`.
    fn random_image(name: &str, ty: ScalarType, region: &[(i64, i64)], bound: u64, seed: u64) -> Buffer {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut b = Buffer::new(name, ty, region).unwrap();
        b.fill(|_| Scalar::UInt(rng.random_range(0..bound)));
        b
    }

    fn inputs(buffers: &[&Buffer]) -> BTreeMap<String, Buffer> {
        buffers.iter().map(|b| (b.name.clone(), (*b).clone())).collect()
    }

    fn params(values: &[(&str, Scalar)]) -> BTreeMap<String, Scalar> {
        values.iter().map(|(n, v)| (n.to_string(), *v)).collect()
    }

    fn int_at(b: &Buffer, coords: &[i64]) -> i128 {
        b.get(coords).unwrap().as_i128()
    }

    fn box_blur() -> (ImageParam, crate::lang::pipeline::PipelineDef) {
        let input = ImageParam::new("in", ScalarType::U16, 2);
        let (x, y) = (Var::new("x"), Var::new("y"));
        let blur_x = Func::new("blur_x");
        blur_x.define(&[&x, &y], (input.at([&x - 1, y.expr()]) + input.at([x.expr(), y.expr()]) + input.at([&x + 1, y.expr()])) / 3);
        let blur_y = Func::new("blur_y");
        blur_y.define(&[&x, &y], (blur_x.at([x.expr(), &y - 1]) + blur_x.at([x.expr(), y.expr()]) + blur_x.at([x.expr(), &y + 1])) / 3);
        (input.clone(), Pipeline::new(&[&blur_y]).unwrap())
    }

    #[test]
    fn box_blur_over_the_interior() {
        let (_, p) = box_blur();
        let img = random_image("in", ScalarType::U16, &[(0, 8), (0, 6)], 20_000, 1);
        let out = realize(&p, &inputs(&[&img]), &params(&[]), "blur_y", &[(1, 6), (1, 4)]).unwrap();
        assert_eq!(out.ty, ScalarType::U16);
        assert_eq!(out.name, "blur_y");
        let px = |x: i64, y: i64| int_at(&img, &[x, y]);
        let bx = |x: i64, y: i64| (px(x - 1, y) + px(x, y) + px(x + 1, y)) / 3;
        for y in 1..5 {
            for x in 1..7 {
                let expected = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 3;
                assert_eq!(int_at(&out, &[x, y]), expected, "at ({x}, {y})");
            }
        }
    }

    #[test]
    fn integer_semantics_wrap_and_divide_euclidean() {
        let x = Var::new("x");
        let wrap = Func::new("wrap");
        wrap.define(&[&x], cast(Type::u8(), &x) * 37 + 200);
        let narrow = Func::new("narrow");
        narrow.define(&[&x], cast(Type::i8(), &x * 20));
        let div = Func::new("div");
        let v = &x - 10;
        div.define(&[&x], v.clone() / 3 * 100 + v.clone() % 3 + v.clone() / -4 * 10_000 + x.expr() / (&x * 0));
        let p = Pipeline::new(&[&wrap, &narrow, &div]).unwrap();
        let (ins, ps) = (inputs(&[]), params(&[]));
        let mut ev = Evaluator::new(&p, &ins, &ps).unwrap();
        let region = [(-5, 25)];
        let (w, n, d) = (ev.realize("wrap", &region).unwrap(), ev.realize("narrow", &region).unwrap(), ev.realize("div", &region).unwrap());
        for x in -5i64..20 {
            assert_eq!(w.get(&[x]).unwrap(), Scalar::UInt((x as u8).wrapping_mul(37).wrapping_add(200) as u64));
            assert_eq!(n.get(&[x]).unwrap(), Scalar::Int((x * 20) as i8 as i64));
            let v = x - 10;
            let expected = v.div_euclid(3) * 100 + v.rem_euclid(3) + v.div_euclid(-4) * 10_000;
            assert_eq!(d.get(&[x]).unwrap(), Scalar::Int(expected), "x = {x}");
        }
        assert_eq!(d.get(&[3]).unwrap(), Scalar::Int(-300 + 2 + 20_000));
    }

    #[test]
    fn histogram_scatters_into_bins() {
        let img = ImageParam::new("img", ScalarType::U8, 2);
        let r = RDom::new("r", &[(Expr::i32(0), img.width()), (Expr::i32(0), img.height())]);
        let (i, hist) = (Var::new("i"), Func::new("hist"));
        hist.define(&[&i], Expr::int(0, Type::u32()));
        hist.add_update([clamp(cast(Type::i32(), img.at([r.x(), r.y()])), 0, 255)], 1);
        let p = Pipeline::new(&[&hist]).unwrap();
        let data = random_image("img", ScalarType::U8, &[(0, 7), (0, 5)], 16, 2);
        let out = realize(&p, &inputs(&[&data]), &params(&[]), "hist", &[(0, 256)]).unwrap();
        let mut expected = [0i128; 256];
        for c in data.coordinates() {
            expected[int_at(&data, &c) as usize] += 1;
        }
        for (bin, count) in expected.iter().enumerate() {
            assert_eq!(int_at(&out, &[bin as i64]), *count, "bin {bin}");
        }
        assert_eq!(expected.iter().sum::<i128>(), 35);
    }

    #[test]
    fn cumulative_sum_scans_along_x() {
        let input = ImageParam::new("in", ScalarType::U8, 2);
        let (x, y) = (Var::new("x"), Var::new("y"));
        let c = Func::new("cumsum");
        c.define(&[&x, &y], cast(Type::i32(), input.at([&x, &y])));
        let r = RDom::new("r", &[(Expr::i32(1), input.width() - 1)]);
        c.update([r.x().expr(), y.expr()], c.at([r.x() - 1, y.expr()]) + c.at([r.x().expr(), y.expr()]));
        let p = Pipeline::new(&[&c]).unwrap();
        let data = random_image("in", ScalarType::U8, &[(0, 9), (0, 4)], 256, 3);
        let out = realize(&p, &inputs(&[&data]), &params(&[]), "cumsum", &[(0, 9), (0, 4)]).unwrap();
        for y in 0..4 {
            let mut running = 0;
            for x in 0..9 {
                running += int_at(&data, &[x, y]);
                assert_eq!(int_at(&out, &[x, y]), running, "at ({x}, {y})");
            }
        }
    }

    #[test]
    fn per_row_sum_over_a_reduction_domain() {
        let input = ImageParam::new("in", ScalarType::U16, 2);
        let y = Var::new("y");
        let r = RDom::new("r", &[(Expr::i32(0), input.width())]);
        let rows = Func::new("rows");
        rows.define(&[&y], sum(cast(Type::i32(), input.at([r.x().expr(), y.expr()]))));
        let p = Pipeline::new(&[&rows]).unwrap();
        let data = random_image("in", ScalarType::U16, &[(0, 6), (0, 5)], 65_536, 4);
        let out = realize(&p, &inputs(&[&data]), &params(&[]), "rows", &[(0, 5)]).unwrap();
        for y in 0..5 {
            let expected: i128 = (0..6).map(|x| int_at(&data, &[x, y])).sum();
            assert_eq!(int_at(&out, &[y]), expected, "row {y}");
        }
    }

    #[test]
    fn predicate_skips_domain_points() {
        let (x, y) = (Var::new("x"), Var::new("y"));
        let r = RDom::with_where("r", &[(Expr::i32(0), Expr::i32(5)), (Expr::i32(0), Expr::i32(5))], |r| r.x().lt(r.y()));
        let f = Func::new("upper");
        f.define(&[&x, &y], 0);
        f.update([r.x().expr(), r.y().expr()], f.at([r.x().expr(), r.y().expr()]) + r.x() * 10 + r.y() + 1);
        let p = Pipeline::new(&[&f]).unwrap();
        let (ins, ps) = (inputs(&[]), params(&[]));
        let mut ev = Evaluator::new(&p, &ins, &ps).unwrap();
        let out = ev.realize("upper", &[(0, 6), (0, 6)]).unwrap();
        for y in 0..6 {
            for x in 0..6 {
                let expected = if x < y && y < 5 { x * 10 + y + 1 } else { 0 };
                assert_eq!(int_at(&out, &[x, y]), expected as i128, "at ({x}, {y})");
            }
        }
        // One slice (no pure variables): 25 domain points visited, plus the
        // pure values of the 10 points written and of the 36 points read.
        assert_eq!(ev.work_done(), 25 + 36);
    }

    #[test]
    fn argmax_finds_the_first_largest() {
        let v = ImageParam::new("v", ScalarType::I16, 1);
        let r = RDom::new("r", &[(Expr::i32(0), v.width())]);
        let am = Func::new("am");
        am.define(&[], argmax(v.at([r.x()]))[0].clone());
        let p = Pipeline::new(&[&am]).unwrap();
        for (values, expected) in [(vec![3, -2, 9, 1, 9, 0], 2), (vec![-7, -3, -5], 1), (vec![4, 4], 0), (vec![1, 2, 3], 2)] {
            let mut buf = Buffer::with_extents("v", ScalarType::I16, &[values.len() as i64]).unwrap();
            buf.fill(|c| Scalar::Int(values[c[0] as usize]));
            let out = realize(&p, &inputs(&[&buf]), &params(&[]), "am", &[]).unwrap();
            assert_eq!(out.get(&[]).unwrap(), Scalar::Int(expected), "{values:?}");
        }
    }

    #[test]
    fn repeat_edge_reads_the_nearest_edge() {
        let input = ImageParam::new("in", ScalarType::U8, 2);
        let (x, y) = (Var::new("x"), Var::new("y"));
        let padded = Func::new("padded");
        padded.define(&[&x, &y], repeat_edge(&input).at([&x, &y]));
        let p = Pipeline::new(&[&padded]).unwrap();
        let data = random_image("in", ScalarType::U8, &[(10, 4), (-5, 3)], 256, 5);
        let out = realize(&p, &inputs(&[&data]), &params(&[]), "padded", &[(6, 12), (-9, 10)]).unwrap();
        for c in out.coordinates() {
            let inside = [c[0].clamp(10, 13), c[1].clamp(-5, -3)];
            assert_eq!(int_at(&out, &c), int_at(&data, &inside), "at {c:?}");
        }
    }

    #[test]
    fn update_reads_another_point_of_its_slice() {
        let (x, y) = (Var::new("x"), Var::new("y"));
        let f = Func::new("doubling");
        f.define(&[&x, &y], &x + &y);
        let r = RDom::new("r", &[(Expr::i32(1), Expr::i32(4))]);
        f.update([x.expr(), r.x().expr()], f.at([x.expr(), r.x() - 1]) * 2);
        let p = Pipeline::new(&[&f]).unwrap();
        let out = realize(&p, &inputs(&[]), &params(&[]), "doubling", &[(-1, 4), (0, 6)]).unwrap();
        for x in -1i64..3 {
            for y in 0..6 {
                let expected = match y {
                    0 => x,
                    1..=4 => x * (1 << y),
                    _ => x + y,
                };
                assert_eq!(int_at(&out, &[x, y]), expected as i128, "at ({x}, {y})");
            }
        }
    }

    #[test]
    fn updates_run_in_order_and_in_domain_order() {
        let x = Var::new("x");
        let f = Func::new("staged");
        f.define(&[&x], &x);
        f.update([x.expr()], f.at([&x]) + 100);
        let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(3))]);
        f.update([r.x().expr()], f.at([r.x() + 1]) * 2);
        f.update([Expr::i32(0)], f.at([Expr::i32(0)]) + f.at([Expr::i32(1)]));
        let p = Pipeline::new(&[&f]).unwrap();
        let out = realize(&p, &inputs(&[]), &params(&[]), "staged", &[(-1, 7)]).unwrap();
        // Stage 2 reads f(r + 1) before the iteration r + 1 rewrites it.
        let expected = [99, 202 + 204, 204, 206, 103, 104, 105];
        for (i, e) in expected.iter().enumerate() {
            assert_eq!(int_at(&out, &[i as i64 - 1]), *e, "x = {}", i as i64 - 1);
        }
    }

    fn scaled_pipeline() -> crate::lang::pipeline::PipelineDef {
        let x = Var::new("x");
        let k = Param::new("k", Type::i32());
        let f = Func::new("scaled");
        f.define(&[&x], &x * &k);
        let r = RDom::new("r", &[(Expr::i32(0), k.expr())]);
        f.add_update([r.x().expr()], 1000);
        Pipeline::new(&[&f]).unwrap()
    }

    #[test]
    fn params_in_definitions_and_domain_extents() {
        let p = scaled_pipeline();
        for k in [3i64, 0, -2] {
            let out = realize(&p, &inputs(&[]), &params(&[("k", Scalar::Int(k))]), "scaled", &[(-1, 6)]).unwrap();
            for x in -1..5 {
                let expected = x * k + if (0..k).contains(&x) { 1000 } else { 0 };
                assert_eq!(int_at(&out, &[x]), expected as i128, "k = {k}, x = {x}");
            }
        }
        let unsigned = realize(&p, &inputs(&[]), &params(&[("k", Scalar::UInt(2))]), "scaled", &[(0, 3)]).unwrap();
        assert_eq!((0..3).map(|x| int_at(&unsigned, &[x])).collect::<Vec<_>>(), vec![1000, 1002, 4]);
    }

    #[test]
    fn missing_or_ill_typed_param_is_an_error() {
        let p = scaled_pipeline();
        let err = realize(&p, &inputs(&[]), &params(&[]), "scaled", &[(0, 4)]).unwrap_err();
        assert_eq!(err, ReferenceError::MissingParam { func: "scaled".into(), param: "k".into() });
        assert!(err.to_string().contains("param k"), "{err}");
        let err = realize(&p, &inputs(&[]), &params(&[("k", Scalar::Float(2.5))]), "scaled", &[(0, 4)]).unwrap_err();
        assert!(matches!(err, ReferenceError::ParamValue { ref param, .. } if param == "k"), "{err}");
        let err = realize(&p, &inputs(&[]), &params(&[("k", Scalar::Int(1 << 40))]), "scaled", &[(0, 4)]).unwrap_err();
        assert!(matches!(err, ReferenceError::ParamValue { .. }), "{err}");
    }

    #[test]
    fn input_too_small_names_the_input_and_coordinate() {
        let (_, p) = box_blur();
        let img = random_image("in", ScalarType::U16, &[(0, 8), (0, 6)], 20_000, 6);
        let err = realize(&p, &inputs(&[&img]), &params(&[]), "blur_y", &[(1, 7), (1, 4)]).unwrap_err();
        assert_eq!(
            err,
            ReferenceError::InputOutOfBounds {
                func: "blur_x".into(),
                input: "in".into(),
                at: vec![8, 0],
                dim: 0,
                coord: 8,
                min: 0,
                max: 7
            }
        );
        let message = err.to_string();
        assert!(message.contains("input in") && message.contains("coordinate 8 of dimension 0"), "{message}");
    }

    #[test]
    fn select_evaluates_both_sides() {
        let input = ImageParam::new("in", ScalarType::U8, 1);
        let x = Var::new("x");
        let guarded = Func::new("guarded");
        guarded.define(&[&x], select(x.lt(input.width()), input.at([&x]), cast(Type::u8(), 0)));
        let p = Pipeline::new(&[&guarded]).unwrap();
        let data = random_image("in", ScalarType::U8, &[(0, 4)], 256, 7);
        let ins = inputs(&[&data]);
        let inside = realize(&p, &ins, &params(&[]), "guarded", &[(0, 4)]).unwrap();
        assert_eq!(inside.bytes(), data.bytes());
        let err = realize(&p, &ins, &params(&[]), "guarded", &[(0, 5)]).unwrap_err();
        assert!(matches!(err, ReferenceError::InputOutOfBounds { coord: 4, .. }), "{err}");
    }

    #[test]
    fn inputs_must_be_given_with_their_declared_shape() {
        let (_, p) = box_blur();
        let err = realize(&p, &inputs(&[]), &params(&[]), "blur_y", &[(1, 2), (1, 2)]).unwrap_err();
        assert_eq!(err, ReferenceError::MissingInput { func: "blur_x".into(), input: "in".into() });
        let wrong = Buffer::with_extents("in", ScalarType::U8, &[8, 6]).unwrap();
        let err = realize(&p, &inputs(&[&wrong]), &params(&[]), "blur_y", &[(1, 2), (1, 2)]).unwrap_err();
        assert!(matches!(err, ReferenceError::InputShape { ref input, .. } if input == "in"), "{err}");
        let err = realize(&p, &inputs(&[]), &params(&[]), "nope", &[]).unwrap_err();
        assert_eq!(err, ReferenceError::UnknownFunc { func: "nope".into() });
        let err = realize(&p, &inputs(&[]), &params(&[]), "blur_y", &[(0, 1)]).unwrap_err();
        assert!(matches!(err, ReferenceError::Arity { expected: 2, got: 1, .. }), "{err}");
    }

    #[test]
    fn evaluator_shares_work_between_outputs() {
        let input = ImageParam::new("in", ScalarType::U8, 1);
        let x = Var::new("x");
        let (g, a, b) = (Func::new("g"), Func::new("a"), Func::new("b"));
        g.define(&[&x], cast(Type::i32(), input.at([&x])) * 3);
        a.define(&[&x], g.at([&x]) + 1);
        b.define(&[&x], g.at([&x]) - 1);
        let p = Pipeline::new(&[&a, &b]).unwrap();
        let data = random_image("in", ScalarType::U8, &[(0, 10)], 256, 8);
        let (ins, ps) = (inputs(&[&data]), params(&[]));
        let mut ev = Evaluator::new(&p, &ins, &ps).unwrap();
        let out_a = ev.realize("a", &[(0, 10)]).unwrap();
        assert_eq!(ev.work_done(), 20);
        let out_b = ev.realize("b", &[(0, 10)]).unwrap();
        assert_eq!(ev.work_done(), 30);
        for x in 0..10 {
            let g = int_at(&data, &[x]) * 3;
            assert_eq!((int_at(&out_a, &[x]), int_at(&out_b, &[x])), (g + 1, g - 1));
            assert_eq!(ev.value("g", &[x]).unwrap(), Scalar::Int(g as i64));
        }
        assert_eq!(ev.work_done(), 30);
    }

    #[test]
    fn runaway_domains_hit_the_work_limit() {
        let x = Var::new("x");
        let big = Func::new("big");
        let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(1 << 30)), (Expr::i32(0), Expr::i32(1 << 30))]);
        big.define(&[&x], sum(&x + r.x() + r.y()));
        let p = Pipeline::new(&[&big]).unwrap();
        let (ins, ps) = (inputs(&[]), params(&[]));
        let limits = Limits { max_work: 10_000, ..Limits::default() };
        let mut ev = Evaluator::new(&p, &ins, &ps).unwrap().with_limits(limits);
        let err = ev.realize("big", &[(0, 1)]).unwrap_err();
        assert!(matches!(err, ReferenceError::WorkLimit { limit: 10_000, .. }), "{err}");
    }

    #[test]
    fn long_scans_do_not_recurse_per_point() {
        let x = Var::new("x");
        let f = Func::new("scan");
        f.define(&[&x], 1);
        let r = RDom::new("r", &[(Expr::i32(1), Expr::i32(50_000))]);
        f.update([r.x().expr()], f.at([r.x() - 1]) * 3 + f.at([r.x().expr()]));
        let p = Pipeline::new(&[&f]).unwrap();
        let (ins, ps) = (inputs(&[]), params(&[]));
        // On the test thread's own (small) stack, deliberately.
        let mut ev = Evaluator::new(&p, &ins, &ps).unwrap();
        let last = ev.value("scan", &[50_000]).unwrap();
        let mut expected = 1i32;
        for _ in 0..50_000 {
            expected = expected.wrapping_mul(3).wrapping_add(1);
        }
        assert_eq!(last, Scalar::Int(expected as i64));
    }

    /// A chain of `n` Funcs, each calling the previous one.
    fn chain(n: usize) -> crate::lang::pipeline::PipelineDef {
        let x = Var::new("x");
        let mut f = Func::new("f0");
        f.define(&[&x], x.expr());
        for i in 1..n {
            let next = Func::new(&format!("f{i}"));
            next.define(&[&x], f.at([&x + 1]) + 1);
            f = next;
        }
        Pipeline::new(&[&f]).unwrap()
    }

    #[test]
    fn deep_nesting_fits_the_large_stack() {
        let n = 2_000;
        let p = on_large_stack(|| chain(n));
        let out = realize(&p, &inputs(&[]), &params(&[]), &format!("f{}", n - 1), &[(0, 2)]).unwrap();
        assert_eq!(int_at(&out, &[1]), 1 + 2 * (n as i128 - 1));
    }

    #[test]
    fn deep_nesting_past_the_limit_is_an_error() {
        let p = chain(50);
        let (ins, ps) = (inputs(&[]), params(&[]));
        let limits = Limits { max_depth: 60, ..Limits::default() };
        let mut ev = Evaluator::new(&p, &ins, &ps).unwrap().with_limits(limits);
        let err = ev.value("f49", &[0]).unwrap_err();
        assert!(matches!(err, ReferenceError::DepthLimit { limit: 60, .. }), "{err}");
        let mut ev = Evaluator::new(&p, &ins, &ps).unwrap().with_limits(Limits { max_depth: 200, ..Limits::default() });
        assert_eq!(ev.value("f49", &[0]).unwrap(), Scalar::Int(49 + 49));
    }
}
