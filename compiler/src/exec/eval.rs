//! The one expression evaluator, shared by the reference evaluator (which
//! evaluates Func definitions) and the IR interpreter (which runs the lowered
//! statement). [`eval`] handles every [`ExprNode`] kind; what differs between
//! the two executors (where variables live, what a Func call, an input read,
//! a param or a buffer load means, how deep evaluation may nest) comes
//! through the [`EvalContext`] trait they implement.
//!
//! Semantics, the same as the code generator's (`codegen/src/emit.rs`):
//! - Arithmetic, comparisons, casts, reinterpretations and math intrinsics compute through
//!   [`crate::ir::value`], lane by lane, so all executors agree bit for bit.
//! - Evaluation is eager everywhere. `&&` and `||` evaluate both operands
//!   (compiled code emits a bitwise `and`/`or` of two evaluated values);
//!   `Select` evaluates its condition and both arms (compiled code emits an
//!   LLVM `select` of two evaluated values); a math intrinsic evaluates all
//!   its arguments (`promise_clamped`'s bounds included). Expressions have no
//!   side effects, so this is visible only in errors: an out-of-bounds load or
//!   input read in an operand that does not decide the result, or in the
//!   unselected arm, is an error, as it is an out-of-bounds access in
//!   compiled code.
//! - Operands evaluate left to right: the first failure is the one reported.
//! - Lane counts: the operands of a lane-wise operation (arithmetic,
//!   comparison, logic, select arms, math arguments) must have equal lane
//!   counts; the IR constructors broadcast scalars explicitly, and a mismatch
//!   is a [`EvalError::LaneMismatch`], never an implicit broadcast. The one
//!   mix allowed is a scalar `Select` condition, which picks a whole vector
//!   (as an LLVM `select` with an `i1` condition does). `Ramp` and
//!   `Broadcast` take scalar operands and at least one lane; one lane gives a
//!   scalar.
//! - A variable's value is converted from the type it was bound with to the
//!   type the `Var` node declares (a scalar param is bound as the widest type
//!   of its kind, a coordinate as `i32`).
//!
//! Each value comes with the scalar type of its lanes, so evaluation never
//! recomputes an expression's type; a scalar value allocates nothing.

use crate::ir::expr::{BinOp, CallTarget, CmpOp, Expr, ExprNode, Name};
use crate::ir::types::{ScalarType, Type};
use crate::ir::value::{self, Scalar};
use thiserror::Error;

/// A failure of evaluation itself, whichever executor runs it. Executors
/// turn it into their own error type through [`EvalContext::error`].
#[derive(Clone, Debug, Error, PartialEq)]
pub enum EvalError {
    /// A variable with no binding in scope.
    #[error("variable {name} is not bound")]
    UnboundVariable {
        /// The variable.
        name: String,
    },
    /// An `RVar` node, which only the algorithm language holds.
    #[error("reduction variable {name} appears as an RVar node (definitions and lowered IR hold plain variables)")]
    ReductionVariable {
        /// The reduction variable.
        name: String,
    },
    /// Operands or results whose lane counts disagree.
    #[error("{context}: expected {expected} lanes, got {got}")]
    LaneMismatch {
        /// Where the lanes disagree.
        context: &'static str,
        /// The lanes expected.
        expected: usize,
        /// The lanes found.
        got: usize,
    },
    /// A ramp or broadcast of zero lanes.
    #[error("{node} with zero lanes")]
    ZeroLanes {
        /// The kind of node (`Ramp` or `Broadcast`).
        node: &'static str,
    },
    /// A math intrinsic called with the wrong number of arguments.
    #[error("math function {function} takes {expected} arguments, got {got}")]
    MathArity {
        /// The intrinsic.
        function: &'static str,
        /// The arguments it takes.
        expected: usize,
        /// The arguments given.
        got: usize,
    },
}

/// A runtime value: one scalar (no allocation) or a vector of lanes. The
/// scalar type of its lanes travels beside it.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// A one-lane value.
    Scalar(Scalar),
    /// The lanes of a vector value, in order.
    Vector(Vec<Scalar>),
}

impl Val {
    /// `s` repeated over `lanes` lanes (a plain scalar for one lane).
    pub fn splat(s: Scalar, lanes: u32) -> Val {
        if lanes <= 1 {
            Val::Scalar(s)
        } else {
            Val::Vector(vec![s; lanes as usize])
        }
    }

    /// The number of lanes (1 for a scalar).
    pub fn lanes(&self) -> usize {
        match self {
            Val::Scalar(_) => 1,
            Val::Vector(v) => v.len(),
        }
    }

    /// Lane `i` (a scalar is the same in every lane).
    fn lane(&self, i: usize) -> Scalar {
        match self {
            Val::Scalar(s) => *s,
            Val::Vector(v) => v[i],
        }
    }

    /// Applies `f` to every lane.
    pub fn map(self, f: impl Fn(Scalar) -> Scalar) -> Val {
        match self {
            Val::Scalar(s) => Val::Scalar(f(s)),
            Val::Vector(mut v) => {
                v.iter_mut().for_each(|x| *x = f(*x));
                Val::Vector(v)
            }
        }
    }

    /// Applies `f`, which may fail, to every lane in order.
    pub fn try_map<E>(self, mut f: impl FnMut(Scalar) -> Result<Scalar, E>) -> Result<Val, E> {
        Ok(match self {
            Val::Scalar(s) => Val::Scalar(f(s)?),
            Val::Vector(mut v) => {
                for x in &mut v {
                    *x = f(*x)?;
                }
                Val::Vector(v)
            }
        })
    }

    /// Combines two values of equal lane counts lane by lane.
    pub fn zip(self, other: Val, context: &'static str, f: impl Fn(Scalar, Scalar) -> Scalar) -> Result<Val, EvalError> {
        match (self, other) {
            (Val::Scalar(a), Val::Scalar(b)) => Ok(Val::Scalar(f(a, b))),
            (Val::Vector(mut a), Val::Vector(b)) if a.len() == b.len() => {
                a.iter_mut().zip(b).for_each(|(x, y)| *x = f(*x, y));
                Ok(Val::Vector(a))
            }
            (a, b) => Err(lane_mismatch(context, a.lanes(), b.lanes())),
        }
    }

    /// The single scalar of a one-lane value.
    pub fn scalar(self, context: &'static str) -> Result<Scalar, EvalError> {
        match self {
            Val::Scalar(s) => Ok(s),
            Val::Vector(v) => Err(lane_mismatch(context, 1, v.len())),
        }
    }
}

/// The error for operands with `expected` and `got` lanes.
pub fn lane_mismatch(context: &'static str, expected: usize, got: usize) -> EvalError {
    EvalError::LaneMismatch { context, expected, got }
}

/// Converts `v` between scalar types, skipping the work when they agree.
pub fn convert(from: ScalarType, to: ScalarType, v: Scalar) -> Scalar {
    if from == to {
        v
    } else {
        value::cast(from, to, v)
    }
}

/// A variable in scope, with the scalar type of its value.
struct Binding {
    name: Name,
    ty: ScalarType,
    value: Val,
}

/// The variables in scope (loop variables, lets, coordinates, params);
/// later bindings shadow earlier ones.
#[derive(Default)]
pub struct Scope {
    bindings: Vec<Binding>,
}

impl Scope {
    /// Binds `name` to `value`, whose lanes have type `ty`; returns the
    /// binding's slot.
    pub fn push(&mut self, name: Name, ty: ScalarType, value: Val) -> usize {
        self.bindings.push(Binding { name, ty, value });
        self.bindings.len() - 1
    }

    /// Unbinds slot `slot` and every later one.
    pub fn truncate(&mut self, slot: usize) {
        self.bindings.truncate(slot);
    }

    /// Rebinds slot `slot` (a loop variable) to `value` of the same type.
    pub fn set(&mut self, slot: usize, value: Val) {
        self.bindings[slot].value = value;
    }

    fn find(&self, name: &Name) -> Option<&Binding> {
        self.bindings.iter().rev().find(|b| b.name == *name)
    }
}

/// What an executor supplies to [`eval`].
pub trait EvalContext {
    /// The executor's error type.
    type Error;

    /// The variables in scope.
    fn scope(&mut self) -> &mut Scope;

    /// The executor's error for a failure of evaluation, with its context
    /// (the Func being evaluated, say).
    fn error(&self, error: EvalError) -> Self::Error;

    /// Called before evaluating each node, [`EvalContext::leave`] after it:
    /// a place to bound the nesting depth.
    fn enter(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }

    /// Called after evaluating each node whose [`EvalContext::enter`]
    /// succeeded.
    fn leave(&mut self) {}

    /// The value of the scalar param `name` as type `ty`.
    fn param(&mut self, name: &Name, ty: ScalarType) -> Result<Scalar, Self::Error>;

    /// Value `index` (0 unless `func` is a Tuple) of Func `func` at
    /// `coords` (the evaluated call arguments).
    fn call_func(&mut self, func: &Name, index: usize, coords: &[i64]) -> Result<Scalar, Self::Error>;

    /// The element of input `input` at `coords`.
    fn read_input(&mut self, input: &Name, coords: &[i64]) -> Result<Scalar, Self::Error>;

    /// The elements of flat buffer `buffer` at `index` (lane by lane), as
    /// values of type `ty`.
    fn load(&mut self, buffer: &Name, index: Val, ty: ScalarType) -> Result<Val, Self::Error>;

    /// Called before evaluating a vector-building node (`Ramp`,
    /// `Broadcast`), which an executor of scalar code refuses.
    fn admit_vector(&self, _node: &'static str) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// Evaluates `e` to its value and the scalar type of its lanes.
pub fn eval<C: EvalContext>(cx: &mut C, e: &Expr) -> Result<(ScalarType, Val), C::Error> {
    cx.enter()?;
    let result = eval_node(cx, e);
    cx.leave();
    result
}

/// Evaluates `e`, which must be a scalar (`context` names it in the error).
pub fn eval_scalar<C: EvalContext>(cx: &mut C, e: &Expr, context: &'static str) -> Result<Scalar, C::Error> {
    let (_, v) = eval(cx, e)?;
    v.scalar(context).map_err(|error| cx.error(error))
}

/// One node. Every node but a constant is evaluated by a function of its
/// own, kept out of line, so that a level of recursion costs only the stack
/// of the kind of node at that level.
fn eval_node<C: EvalContext>(cx: &mut C, e: &Expr) -> Result<(ScalarType, Val), C::Error> {
    match e.node() {
        ExprNode::IntImm { value, ty } => Ok((ty.scalar, Val::splat(Scalar::Int(*value), ty.lanes))),
        ExprNode::UIntImm { value, ty } => Ok((ty.scalar, Val::splat(Scalar::UInt(*value), ty.lanes))),
        ExprNode::FloatImm { value, ty } => Ok((ty.scalar, Val::splat(Scalar::Float(*value), ty.lanes))),
        ExprNode::Var { name, ty } => var(cx, name, *ty),
        ExprNode::Param { name, ty, .. } => Ok((ty.scalar, Val::Scalar(cx.param(name, ty.scalar)?))),
        ExprNode::RVar { rdom, dim } => {
            let name = rdom.dims.get(*dim).map_or_else(|| rdom.name.to_string(), |d| d.name.to_string());
            Err(cx.error(EvalError::ReductionVariable { name }))
        }
        ExprNode::Cast { ty, value } => cast(cx, ty.scalar, value),
        ExprNode::Reinterpret { ty, value } => reinterpret(cx, ty.scalar, value),
        ExprNode::Binary { op, a, b } => binary(cx, *op, a, b),
        ExprNode::Cmp { op, a, b } => compare(cx, *op, a, b),
        ExprNode::And { a, b } => logic(cx, a, b, false),
        ExprNode::Or { a, b } => logic(cx, a, b, true),
        ExprNode::Not { a } => not(cx, a),
        ExprNode::Select { cond, t, f } => select(cx, cond, t, f),
        ExprNode::Let { name, value, body } => let_in(cx, name, value, body),
        ExprNode::Call { target, args, ty } => call(cx, target, args).map(|v| (ty.scalar, v)),
        ExprNode::Load { buffer, index, ty } => load(cx, buffer, index, ty.scalar),
        ExprNode::Ramp { base, stride, lanes } => ramp(cx, base, stride, *lanes),
        ExprNode::Broadcast { value, lanes } => broadcast(cx, value, *lanes),
    }
}

/// A variable, converted from the type it was bound with to `ty`.
#[inline(never)]
fn var<C: EvalContext>(cx: &mut C, name: &Name, ty: Type) -> Result<(ScalarType, Val), C::Error> {
    let binding = match cx.scope().find(name) {
        Some(b) if b.value.lanes() == ty.lanes as usize => Ok(b),
        Some(b) => Err(lane_mismatch("variable", ty.lanes as usize, b.value.lanes())),
        None => Err(EvalError::UnboundVariable { name: name.to_string() }),
    };
    match binding {
        Ok(b) => {
            let from = b.ty;
            Ok((ty.scalar, b.value.clone().map(|v| convert(from, ty.scalar, v))))
        }
        Err(error) => Err(cx.error(error)),
    }
}

#[inline(never)]
fn cast<C: EvalContext>(cx: &mut C, to: ScalarType, value: &Expr) -> Result<(ScalarType, Val), C::Error> {
    let (from, v) = eval(cx, value)?;
    Ok((to, v.map(|x| convert(from, to, x))))
}

#[inline(never)]
fn reinterpret<C: EvalContext>(cx: &mut C, to: ScalarType, value: &Expr) -> Result<(ScalarType, Val), C::Error> {
    let (from, v) = eval(cx, value)?;
    Ok((to, v.map(|x| value::reinterpret(from, to, x))))
}

#[inline(never)]
fn binary<C: EvalContext>(cx: &mut C, op: BinOp, a: &Expr, b: &Expr) -> Result<(ScalarType, Val), C::Error> {
    let (ty, x) = eval(cx, a)?;
    let (_, y) = eval(cx, b)?;
    lanewise(cx, ty, x.zip(y, "binary operand", |x, y| value::binary(op, ty, x, y)))
}

#[inline(never)]
fn compare<C: EvalContext>(cx: &mut C, op: CmpOp, a: &Expr, b: &Expr) -> Result<(ScalarType, Val), C::Error> {
    let (ty, x) = eval(cx, a)?;
    let (_, y) = eval(cx, b)?;
    lanewise(cx, ScalarType::Bool, x.zip(y, "comparison operand", |x, y| Scalar::from_bool(value::compare(op, ty, x, y))))
}

/// `a && b` (`or` false) or `a || b` (`or` true), both operands evaluated.
#[inline(never)]
fn logic<C: EvalContext>(cx: &mut C, a: &Expr, b: &Expr, or: bool) -> Result<(ScalarType, Val), C::Error> {
    let (_, x) = eval(cx, a)?;
    let (_, y) = eval(cx, b)?;
    let v = x.zip(y, "logical operand", |x, y| Scalar::from_bool(if or { x.as_bool() || y.as_bool() } else { x.as_bool() && y.as_bool() }));
    lanewise(cx, ScalarType::Bool, v)
}

#[inline(never)]
fn not<C: EvalContext>(cx: &mut C, a: &Expr) -> Result<(ScalarType, Val), C::Error> {
    let (_, x) = eval(cx, a)?;
    Ok((ScalarType::Bool, x.map(|x| Scalar::from_bool(!x.as_bool()))))
}

/// `cond ? t : f`, with the condition and both arms evaluated.
#[inline(never)]
fn select<C: EvalContext>(cx: &mut C, cond: &Expr, t: &Expr, f: &Expr) -> Result<(ScalarType, Val), C::Error> {
    let (_, c) = eval(cx, cond)?;
    let (ty, t) = eval(cx, t)?;
    let (_, f) = eval(cx, f)?;
    lanewise(cx, ty, pick(c, t, f))
}

#[inline(never)]
fn let_in<C: EvalContext>(cx: &mut C, name: &Name, value: &Expr, body: &Expr) -> Result<(ScalarType, Val), C::Error> {
    let (ty, v) = eval(cx, value)?;
    let slot = cx.scope().push(name.clone(), ty, v);
    let result = eval(cx, body);
    cx.scope().truncate(slot);
    result
}

#[inline(never)]
fn load<C: EvalContext>(cx: &mut C, buffer: &Name, index: &Expr, ty: ScalarType) -> Result<(ScalarType, Val), C::Error> {
    let (_, index) = eval(cx, index)?;
    Ok((ty, cx.load(buffer, index, ty)?))
}

#[inline(never)]
fn broadcast<C: EvalContext>(cx: &mut C, value: &Expr, lanes: u32) -> Result<(ScalarType, Val), C::Error> {
    cx.admit_vector("Broadcast")?;
    let (ty, v) = eval(cx, value)?;
    let v = v.scalar("Broadcast value").map_err(|error| cx.error(error))?;
    if lanes == 0 {
        return Err(cx.error(EvalError::ZeroLanes { node: "Broadcast" }));
    }
    Ok((ty, Val::splat(v, lanes)))
}

/// A lane-wise result of type `ty`, its failure turned into the executor's.
fn lanewise<C: EvalContext>(cx: &C, ty: ScalarType, v: Result<Val, EvalError>) -> Result<(ScalarType, Val), C::Error> {
    v.map(|v| (ty, v)).map_err(|error| cx.error(error))
}

/// Lane-wise `cond ? t : f`; a scalar condition picks a whole value.
fn pick(cond: Val, t: Val, f: Val) -> Result<Val, EvalError> {
    match (cond, t, f) {
        (Val::Scalar(c), t, f) => {
            if t.lanes() != f.lanes() {
                return Err(lane_mismatch("Select false value", t.lanes(), f.lanes()));
            }
            Ok(if c.as_bool() { t } else { f })
        }
        (Val::Vector(c), Val::Vector(mut t), Val::Vector(f)) if c.len() == t.len() && c.len() == f.len() => {
            for ((lane, c), f) in t.iter_mut().zip(c).zip(f) {
                if !c.as_bool() {
                    *lane = f;
                }
            }
            Ok(Val::Vector(t))
        }
        (c, t, f) => {
            let got = if t.lanes() != c.lanes() { t.lanes() } else { f.lanes() };
            Err(lane_mismatch("Select value", c.lanes(), got))
        }
    }
}

/// A call: a math intrinsic here, a Func or input through the context with
/// the arguments evaluated as (`i32`) coordinates.
#[inline(never)]
fn call<C: EvalContext>(cx: &mut C, target: &CallTarget, args: &[Expr]) -> Result<Val, C::Error> {
    let f = match target {
        CallTarget::Math(f) => *f,
        CallTarget::Func(def) | CallTarget::Input(def) => {
            let mut coords = Vec::with_capacity(args.len());
            for a in args {
                coords.push(eval_scalar(cx, a, "call argument")?.as_i128() as i64);
            }
            let v = match target {
                CallTarget::Func(_) => cx.call_func(&def.name, def.value_index, &coords)?,
                _ => cx.read_input(&def.name, &coords)?,
            };
            return Ok(Val::Scalar(v));
        }
    };
    let expected = f.arity();
    if args.len() != expected {
        return Err(cx.error(EvalError::MathArity { function: f.name(), expected, got: args.len() }));
    }
    let (ty, x) = eval(cx, &args[0])?;
    // Every argument is evaluated (there are at most three), then the
    // function applies lane by lane on the first argument's type.
    let mut rest = [Val::Scalar(Scalar::Int(0)), Val::Scalar(Scalar::Int(0))];
    for (slot, a) in rest.iter_mut().zip(&args[1..]) {
        let (_, v) = eval(cx, a)?;
        if v.lanes() != x.lanes() {
            return Err(cx.error(lane_mismatch("math argument", x.lanes(), v.lanes())));
        }
        *slot = v;
    }
    let apply = |i: usize, first: Scalar| value::math(f, ty, &[first, rest[0].lane(i), rest[1].lane(i)][..expected]);
    Ok(match x {
        Val::Scalar(s) => Val::Scalar(apply(0, s)),
        Val::Vector(mut lanes) => {
            lanes.iter_mut().enumerate().for_each(|(i, lane)| *lane = apply(i, *lane));
            Val::Vector(lanes)
        }
    })
}

/// `base, base + stride, ..., base + (lanes - 1) * stride` in the base's type.
#[inline(never)]
fn ramp<C: EvalContext>(cx: &mut C, base: &Expr, stride: &Expr, lanes: u32) -> Result<(ScalarType, Val), C::Error> {
    cx.admit_vector("Ramp")?;
    let (ty, base) = eval(cx, base)?;
    let base = base.scalar("Ramp base").map_err(|error| cx.error(error))?;
    let stride = eval_scalar(cx, stride, "Ramp stride")?;
    if lanes == 0 {
        return Err(cx.error(EvalError::ZeroLanes { node: "Ramp" }));
    }
    let lane = |i: u32| {
        let offset = value::binary(BinOp::Mul, ty, stride, Scalar::from_i128(i.into(), ty));
        value::binary(BinOp::Add, ty, base, offset)
    };
    let v = if lanes == 1 { Val::Scalar(base) } else { Val::Vector((0..lanes).map(lane).collect()) };
    Ok((ty, v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::expr::MathFn;

    /// An executor over one buffer `mem` of four `i32`s, `0, 10, 20, 30`.
    #[derive(Default)]
    struct Memory {
        scope: Scope,
    }

    /// Why evaluating against [`Memory`] failed.
    #[derive(Debug, PartialEq)]
    enum Failure {
        Eval(EvalError),
        /// A param, Func call or input read: the memory has none.
        Unsupported {
            what: &'static str,
            name: Name,
        },
        OutOfBounds {
            buffer: Name,
            index: i128,
        },
    }

    impl EvalContext for Memory {
        type Error = Failure;

        fn scope(&mut self) -> &mut Scope {
            &mut self.scope
        }

        fn error(&self, error: EvalError) -> Failure {
            Failure::Eval(error)
        }

        fn param(&mut self, name: &Name, _: ScalarType) -> Result<Scalar, Failure> {
            Err(Failure::Unsupported { what: "param", name: name.clone() })
        }

        fn call_func(&mut self, func: &Name, _: usize, _: &[i64]) -> Result<Scalar, Failure> {
            Err(Failure::Unsupported { what: "Func call", name: func.clone() })
        }

        fn read_input(&mut self, input: &Name, _: &[i64]) -> Result<Scalar, Failure> {
            Err(Failure::Unsupported { what: "input read", name: input.clone() })
        }

        fn load(&mut self, buffer: &Name, index: Val, _: ScalarType) -> Result<Val, Failure> {
            index.try_map(|i| match i.as_i128() {
                i @ 0..4 => Ok(Scalar::Int(10 * i as i64)),
                index => Err(Failure::OutOfBounds { buffer: buffer.clone(), index }),
            })
        }
    }

    fn run(e: Expr) -> Result<Val, Failure> {
        eval(&mut Memory::default(), &e).map(|(_, v)| v)
    }

    fn load(index: i64) -> Expr {
        Expr::load("mem", Expr::i32(index), Type::i32())
    }

    fn bools(lanes: &[bool]) -> Val {
        Val::Vector(lanes.iter().map(|&b| Scalar::from_bool(b)).collect())
    }

    fn ints(lanes: &[i64]) -> Val {
        Val::Vector(lanes.iter().map(|&i| Scalar::Int(i)).collect())
    }

    #[test]
    fn logic_and_select_are_lanewise() {
        let ramp = Expr::ramp(Expr::i32(0), Expr::i32(1), 4);
        let a = Expr::cmp(CmpOp::Lt, ramp.clone(), Expr::i32(2));
        let b = Expr::cmp(CmpOp::Eq, Expr::binary(BinOp::Mod, ramp.clone(), Expr::i32(2)), Expr::i32(0));
        assert_eq!(run(a.clone()), Ok(bools(&[true, true, false, false])));
        assert_eq!(run(b.clone()), Ok(bools(&[true, false, true, false])));
        assert_eq!(run(Expr::and(a.clone(), b.clone())), Ok(bools(&[true, false, false, false])));
        assert_eq!(run(Expr::or(a.clone(), b.clone())), Ok(bools(&[true, true, true, false])));
        assert_eq!(run(Expr::not(a.clone())), Ok(bools(&[false, false, true, true])));
        for (x, y) in [(false, false), (false, true), (true, false), (true, true)] {
            assert_eq!(run(Expr::and(Expr::bool(x), Expr::bool(y))), Ok(Val::Scalar(Scalar::from_bool(x && y))));
            assert_eq!(run(Expr::or(Expr::bool(x), Expr::bool(y))), Ok(Val::Scalar(Scalar::from_bool(x || y))));
        }
        // A vector condition picks lane by lane; a scalar one a whole vector.
        let tens = Expr::binary(BinOp::Mul, ramp.clone(), Expr::i32(10));
        assert_eq!(run(Expr::select(a.clone(), tens.clone(), Expr::i32(-1))), Ok(ints(&[0, 10, -1, -1])));
        let whole = |c: bool| Expr::new(ExprNode::Select { cond: Expr::bool(c), t: tens.clone(), f: ramp.clone() });
        assert_eq!(run(whole(true)), Ok(ints(&[0, 10, 20, 30])));
        assert_eq!(run(whole(false)), Ok(ints(&[0, 1, 2, 3])));
        // Other scalar/vector mixes are errors, never implicit broadcasts.
        let mixed = Expr::new(ExprNode::And { a, b: Expr::bool(true) });
        assert_eq!(run(mixed), Err(Failure::Eval(EvalError::LaneMismatch { context: "logical operand", expected: 4, got: 1 })));
        let mixed = Expr::new(ExprNode::Binary { op: BinOp::Add, a: ramp, b: Expr::i32(1) });
        assert_eq!(run(mixed), Err(Failure::Eval(EvalError::LaneMismatch { context: "binary operand", expected: 4, got: 1 })));
    }

    /// Every operand is evaluated, as compiled code does: an out-of-bounds
    /// load fails even where `&&`, `||` or `Select` would not need its value.
    #[test]
    fn logic_select_and_math_evaluate_every_operand() {
        let oob = || Expr::cmp(CmpOp::Gt, load(4), Expr::i32(0));
        let fault = || Err(Failure::OutOfBounds { buffer: "mem".into(), index: 4 });
        assert_eq!(run(Expr::and(Expr::bool(false), oob())), fault());
        assert_eq!(run(Expr::or(Expr::bool(true), oob())), fault());
        assert_eq!(run(Expr::select(Expr::bool(true), Expr::i32(1), load(4))), fault());
        assert_eq!(run(Expr::select(Expr::bool(false), load(4), Expr::i32(1))), fault());
        let clamped = Expr::math(MathFn::PromiseClamped, vec![Expr::i32(2), Expr::i32(0), load(4)]);
        assert_eq!(run(clamped), fault());
        // In bounds, the operands that decide the result win.
        assert_eq!(run(Expr::and(Expr::bool(false), Expr::cmp(CmpOp::Gt, load(3), Expr::i32(0)))), Ok(Val::Scalar(Scalar::UInt(0))));
        assert_eq!(run(Expr::select(Expr::bool(true), load(1), load(3))), Ok(Val::Scalar(Scalar::Int(10))));
        // Operands evaluate left to right: the first failure is reported.
        let both = Expr::binary(BinOp::Add, Expr::ivar("ghost"), load(4));
        assert_eq!(run(both), Err(Failure::Eval(EvalError::UnboundVariable { name: "ghost".into() })));
    }
}
