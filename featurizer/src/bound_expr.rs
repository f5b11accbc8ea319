//! Symbolic bounds compiled into something fast to evaluate.
//!
//! The DAG derives, once per pipeline, expressions such as "the largest `x`
//! of `blur_x` that `blur_y` reads when its loop over `x` spans
//! `[x.min, x.max]`" from the compiler's interval analysis. The search asks
//! such questions millions of times for concrete spans, so each expression
//! is compiled into a [`BoundExpr`]: an affine form over numbered slots
//! (the common case: one multiply-add per term) or a small tree of `i64`
//! operations with the language's semantics (Euclidean division, `x / 0 =
//! 0`). Slots are the `min` and `max` of each loop (or dimension) the bound
//! is expressed in: slot `2 * i` is loop `i`'s min, `2 * i + 1` its max.
//! An integer computed through floats (a coordinate such as
//! `i32(f32(x) * 1.5f)`) is kept as the expression and evaluated by the
//! compiler's own evaluator, so it rounds exactly as compiled code does.

use compiler::exec::eval::{eval, EvalContext, EvalError, Scope, Val};
use compiler::ir::expr::{BinOp, CallTarget, CmpOp, Expr, ExprNode, Name};
use compiler::ir::semantics;
use compiler::ir::types::ScalarType;
use compiler::ir::value::Scalar;
use compiler::ir::visit::{expr_any_node, node_count, walk_expr, Visitor};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// An expression that a bound cannot be compiled from, with the reason.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("cannot evaluate the bound `{expr}`: {why}")]
pub struct BoundError {
    /// The expression, as text.
    pub expr: String,
    /// What about it cannot be compiled (not an integer, an unknown variable,
    /// an unsupported node).
    pub why: &'static str,
}

/// The most nodes (counted as a tree) of a bound kept for the evaluator
/// ([`BoundExpr::Evaluated`]): the search evaluates bounds millions of
/// times between two looks at its deadline, so each must stay cheap. A
/// larger one is refused, as before such bounds were evaluated.
pub const MAX_EVALUATED_NODES: usize = 64;

/// A compiled integer bound over numbered slots.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum BoundExpr {
    /// `constant + sum(coefficient * slot)`.
    Affine {
        /// `(slot, coefficient)` pairs, at most one per slot.
        terms: Vec<(u32, i64)>,
        /// The constant term.
        constant: i64,
    },
    /// `op(a, b)` with the language's integer semantics, where it is not
    /// affine.
    Binary {
        /// The operation.
        op: BinOp,
        /// The left operand.
        a: Box<BoundExpr>,
        /// The right operand.
        b: Box<BoundExpr>,
    },
    /// `t` where `cond` holds, else `f`.
    Select {
        /// The condition.
        cond: Box<BoundCond>,
        /// The value where `cond` holds.
        t: Box<BoundExpr>,
        /// The value where it does not.
        f: Box<BoundExpr>,
    },
    /// An integer expression with steps in floats, evaluated with the
    /// compiler's semantics once its variables are bound to their slots.
    Evaluated {
        /// The expression: constants, variables, casts, arithmetic,
        /// comparisons, selects and math functions only.
        expr: Expr,
        /// Each free variable of `expr`, its type and its slot.
        slots: Vec<(Name, ScalarType, u32)>,
    },
}

/// A compiled condition of a [`BoundExpr::Select`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum BoundCond {
    /// `op(a, b)`: a comparison of two bounds.
    Cmp {
        /// The comparison.
        op: CmpOp,
        /// The left operand.
        a: BoundExpr,
        /// The right operand.
        b: BoundExpr,
    },
    /// Both conditions hold.
    And(Box<BoundCond>, Box<BoundCond>),
    /// Either condition holds.
    Or(Box<BoundCond>, Box<BoundCond>),
    /// The condition does not hold.
    Not(Box<BoundCond>),
    /// A constant truth value.
    Const(bool),
}

impl BoundExpr {
    /// The constant `c`.
    pub fn constant(c: i64) -> BoundExpr {
        BoundExpr::Affine { terms: vec![], constant: c }
    }

    /// The value of slot `s`.
    pub fn slot(s: u32) -> BoundExpr {
        BoundExpr::Affine { terms: vec![(s, 1)], constant: 0 }
    }

    /// Compiles `e`, whose free variables `slot_of` numbers.
    pub fn compile(e: &Expr, slot_of: &dyn Fn(&str) -> Option<u32>) -> Result<BoundExpr, BoundError> {
        let fail = |why| BoundError { expr: e.to_string(), why };
        if !e.ty().is_int() {
            return Err(fail("not an integer"));
        }
        Ok(match e.node() {
            ExprNode::IntImm { value, .. } => BoundExpr::constant(*value),
            ExprNode::UIntImm { value, .. } => BoundExpr::constant(i64::try_from(*value).map_err(|_| fail("constant too large"))?),
            ExprNode::Var { name, .. } => BoundExpr::slot(slot_of(name).ok_or_else(|| fail("unknown variable"))?),
            ExprNode::Cast { value, .. } if value.ty().is_int() => BoundExpr::compile(value, slot_of)?,
            ExprNode::Binary { op, a, b } => BoundExpr::binary(*op, BoundExpr::compile(a, slot_of)?, BoundExpr::compile(b, slot_of)?),
            ExprNode::Select { cond, t, f } => BoundExpr::Select {
                cond: Box::new(BoundCond::compile(cond, slot_of)?),
                t: Box::new(BoundExpr::compile(t, slot_of)?),
                f: Box::new(BoundExpr::compile(f, slot_of)?),
            },
            _ => BoundExpr::evaluated(e, slot_of).ok_or_else(|| fail("unsupported node"))?,
        })
    }

    /// `e` kept whole for the evaluator, if it reads nothing (no call of a
    /// Func or an input, no load or param: math such as `ceil` is fine),
    /// every variable has a slot and it has at most
    /// [`MAX_EVALUATED_NODES`] nodes.
    fn evaluated(e: &Expr, slot_of: &dyn Fn(&str) -> Option<u32>) -> Option<BoundExpr> {
        if node_count(e) > MAX_EVALUATED_NODES {
            return None;
        }
        let reads = |n: &ExprNode| {
            matches!(
                n,
                ExprNode::Call { target: CallTarget::Func(_) | CallTarget::Input(_), .. }
                    | ExprNode::Load { .. }
                    | ExprNode::Param { .. }
                    | ExprNode::RVar { .. }
                    | ExprNode::Let { .. }
                    | ExprNode::Ramp { .. }
                    | ExprNode::Broadcast { .. }
            )
        };
        if expr_any_node(e, reads) {
            return None;
        }
        struct Vars(Vec<(Name, ScalarType)>);
        impl Visitor for Vars {
            fn visit_expr(&mut self, e: &Expr) {
                if let ExprNode::Var { name, ty } = e.node() {
                    if !self.0.iter().any(|(n, _)| n == name) {
                        self.0.push((name.clone(), ty.scalar));
                    }
                }
                walk_expr(self, e);
            }
        }
        let mut vars = Vars(vec![]);
        vars.visit_expr(e);
        let slots = vars.0.into_iter().map(|(name, ty)| slot_of(&name).map(|slot| (name, ty, slot))).collect::<Option<Vec<_>>>()?;
        Some(BoundExpr::Evaluated { expr: e.clone(), slots })
    }

    /// `op(a, b)`, folded into an affine form where it stays affine.
    pub fn binary(op: BinOp, a: BoundExpr, b: BoundExpr) -> BoundExpr {
        match (op, &a, &b) {
            (BinOp::Add, BoundExpr::Affine { .. }, BoundExpr::Affine { .. }) => a.add_scaled(&b, 1),
            (BinOp::Sub, BoundExpr::Affine { .. }, BoundExpr::Affine { .. }) => a.add_scaled(&b, -1),
            (BinOp::Mul, BoundExpr::Affine { .. }, _) if b.as_constant().is_some() => a.scale(b.as_constant().unwrap()),
            (BinOp::Mul, _, BoundExpr::Affine { .. }) if a.as_constant().is_some() => b.scale(a.as_constant().unwrap()),
            _ => match (a.as_constant(), b.as_constant()) {
                (Some(x), Some(y)) => BoundExpr::constant(fold(op, x, y)),
                _ => BoundExpr::Binary { op, a: Box::new(a), b: Box::new(b) },
            },
        }
    }

    /// The value of a constant bound (an affine form without terms); `None`
    /// otherwise.
    pub fn as_constant(&self) -> Option<i64> {
        match self {
            BoundExpr::Affine { terms, constant } if terms.is_empty() => Some(*constant),
            _ => None,
        }
    }

    fn add_scaled(&self, other: &BoundExpr, k: i64) -> BoundExpr {
        let (BoundExpr::Affine { terms: ta, constant: ca }, BoundExpr::Affine { terms: tb, constant: cb }) = (self, other) else {
            unreachable!("add_scaled takes affine forms")
        };
        let mut terms = ta.clone();
        for (s, c) in tb {
            match terms.iter_mut().find(|(t, _)| t == s) {
                Some(entry) => entry.1 = entry.1.wrapping_add(c.wrapping_mul(k)),
                None => terms.push((*s, c.wrapping_mul(k))),
            }
        }
        terms.retain(|(_, c)| *c != 0);
        BoundExpr::Affine { terms, constant: ca.wrapping_add(cb.wrapping_mul(k)) }
    }

    fn scale(&self, k: i64) -> BoundExpr {
        let BoundExpr::Affine { terms, constant } = self else { unreachable!("scale takes an affine form") };
        if k == 0 {
            return BoundExpr::constant(0);
        }
        BoundExpr::Affine { terms: terms.iter().map(|(s, c)| (*s, c.wrapping_mul(k))).collect(), constant: constant.wrapping_mul(k) }
    }

    /// The value at the given slot values.
    pub fn eval(&self, slots: &[i64]) -> i64 {
        match self {
            BoundExpr::Affine { terms, constant } => {
                terms.iter().fold(*constant, |acc, (s, c)| acc.wrapping_add(c.wrapping_mul(slots[*s as usize])))
            }
            BoundExpr::Binary { op, a, b } => fold(*op, a.eval(slots), b.eval(slots)),
            BoundExpr::Select { cond, t, f } => {
                if cond.eval(slots) {
                    t.eval(slots)
                } else {
                    f.eval(slots)
                }
            }
            BoundExpr::Evaluated { expr, slots: vars } => evaluate(expr, vars, slots),
        }
    }

    /// The largest slot index read, plus one.
    pub fn slots_used(&self) -> u32 {
        match self {
            BoundExpr::Affine { terms, .. } => terms.iter().map(|(s, _)| s + 1).max().unwrap_or(0),
            BoundExpr::Binary { a, b, .. } => a.slots_used().max(b.slots_used()),
            BoundExpr::Select { cond, t, f } => cond.slots_used().max(t.slots_used()).max(f.slots_used()),
            BoundExpr::Evaluated { slots, .. } => slots.iter().map(|(_, _, s)| s + 1).max().unwrap_or(0),
        }
    }
}

/// The value of `expr` with each variable of `vars` bound to its slot's
/// value: the evaluator's integer, saturated to `i64`. The expression was
/// checked to read nothing, so evaluating it cannot fail; if it did, the
/// bound would be 0.
fn evaluate(expr: &Expr, vars: &[(Name, ScalarType, u32)], slots: &[i64]) -> i64 {
    struct Bound(Scope);
    impl EvalContext for Bound {
        type Error = EvalError;
        fn scope(&mut self) -> &mut Scope {
            &mut self.0
        }
        fn error(&self, error: EvalError) -> EvalError {
            error
        }
        fn param(&mut self, name: &Name, _: ScalarType) -> Result<Scalar, EvalError> {
            Err(EvalError::UnboundVariable { name: name.to_string() })
        }
        fn call_func(&mut self, func: &Name, _: usize, _: &[i64]) -> Result<Scalar, EvalError> {
            Err(EvalError::UnboundVariable { name: func.to_string() })
        }
        fn read_input(&mut self, input: &Name, _: &[i64]) -> Result<Scalar, EvalError> {
            Err(EvalError::UnboundVariable { name: input.to_string() })
        }
        fn load(&mut self, buffer: &Name, _: Val, _: ScalarType) -> Result<Val, EvalError> {
            Err(EvalError::UnboundVariable { name: buffer.to_string() })
        }
    }
    let mut cx = Bound(Scope::default());
    for (name, ty, slot) in vars {
        let value = slots[*slot as usize];
        let value = if ty.is_signed_int() { Scalar::Int(value) } else { Scalar::UInt(value as u64) };
        cx.0.push(name.clone(), *ty, Val::Scalar(value));
    }
    match eval(&mut cx, expr).and_then(|(_, v)| v.scalar("a bound")) {
        Ok(v) => v.as_i128().clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64,
        Err(_) => 0,
    }
}

impl BoundCond {
    fn compile(e: &Expr, slot_of: &dyn Fn(&str) -> Option<u32>) -> Result<BoundCond, BoundError> {
        Ok(match e.node() {
            ExprNode::UIntImm { value, .. } => BoundCond::Const(*value != 0),
            ExprNode::Cmp { op, a, b } => {
                BoundCond::Cmp { op: *op, a: BoundExpr::compile(a, slot_of)?, b: BoundExpr::compile(b, slot_of)? }
            }
            ExprNode::And { a, b } => BoundCond::And(Box::new(Self::compile(a, slot_of)?), Box::new(Self::compile(b, slot_of)?)),
            ExprNode::Or { a, b } => BoundCond::Or(Box::new(Self::compile(a, slot_of)?), Box::new(Self::compile(b, slot_of)?)),
            ExprNode::Not { a } => BoundCond::Not(Box::new(Self::compile(a, slot_of)?)),
            _ => return Err(BoundError { expr: e.to_string(), why: "unsupported condition" }),
        })
    }

    fn eval(&self, slots: &[i64]) -> bool {
        match self {
            BoundCond::Cmp { op, a, b } => op.holds(a.eval(slots), b.eval(slots)),
            BoundCond::And(a, b) => a.eval(slots) && b.eval(slots),
            BoundCond::Or(a, b) => a.eval(slots) || b.eval(slots),
            BoundCond::Not(a) => !a.eval(slots),
            BoundCond::Const(c) => *c,
        }
    }

    fn slots_used(&self) -> u32 {
        match self {
            BoundCond::Cmp { a, b, .. } => a.slots_used().max(b.slots_used()),
            BoundCond::And(a, b) | BoundCond::Or(a, b) => a.slots_used().max(b.slots_used()),
            BoundCond::Not(a) => a.slots_used(),
            BoundCond::Const(_) => 0,
        }
    }
}

/// `op(x, y)` on `i64` with the language's integer semantics.
fn fold(op: BinOp, x: i64, y: i64) -> i64 {
    match op {
        BinOp::Add => x.wrapping_add(y),
        BinOp::Sub => x.wrapping_sub(y),
        BinOp::Mul => x.wrapping_mul(y),
        BinOp::Div => semantics::div_euclid(x as i128, y as i128) as i64,
        BinOp::Mod => semantics::mod_euclid(x as i128, y as i128) as i64,
        BinOp::Min => x.min(y),
        BinOp::Max => x.max(y),
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => {
            semantics::bit_op(op, ScalarType::I64, x as i128, y as i128) as i64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use compiler::{ScalarType, Type};

    #[test]
    fn a_coordinate_computed_in_floats_is_evaluated_as_compiled_code_rounds_it() {
        let x = Expr::var("x.min", Type::i32());
        let scaled = |e: Expr| Expr::cast(Type::i32(), Expr::cast(Type::f32(), e) * Expr::float(1.5, Type::f32()));
        let bound = BoundExpr::compile(&scaled(x.clone()), &slots).unwrap();
        assert!(matches!(bound, BoundExpr::Evaluated { .. }), "{bound:?}");
        assert_eq!([3, 7, -3].map(|v| bound.eval(&[v, 0])), [4, 10, -4]);
        // Math on the way (a resampling's first tap: `ceil`) is evaluated too.
        let first_tap =
            Expr::cast(Type::i32(), compiler::lang::ops::ceil(Expr::cast(Type::f32(), x.clone()) * Expr::float(0.7, Type::f32())));
        let bound = BoundExpr::compile(&first_tap, &slots).unwrap();
        assert_eq!([3, 10, -3].map(|v| bound.eval(&[v, 0])), [3, 7, -2]);
        let mut deep = x;
        while node_count(&deep) <= MAX_EVALUATED_NODES {
            deep = scaled(deep);
        }
        assert_eq!(BoundExpr::compile(&deep, &slots).unwrap_err().why, "unsupported node");
    }

    fn slots(name: &str) -> Option<u32> {
        match name {
            "x.min" => Some(0),
            "x.max" => Some(1),
            _ => None,
        }
    }

    #[test]
    fn affine_bounds_fold_into_one_form() {
        let x = Expr::ivar("x.max");
        let e = (x.clone() * 2 + 3) - x + 1;
        let b = BoundExpr::compile(&e, &slots).unwrap();
        assert_eq!(b, BoundExpr::Affine { terms: vec![(1, 1)], constant: 4 });
        assert_eq!(b.eval(&[0, 10]), 14);
    }

    #[test]
    fn division_rounds_down_and_min_max_select_evaluate() {
        let (lo, hi) = (Expr::ivar("x.min"), Expr::ivar("x.max"));
        let e = Expr::min(hi.clone() / 2, Expr::int(7, Type::i32()));
        let b = BoundExpr::compile(&e, &slots).unwrap();
        assert_eq!(b.eval(&[0, -3]), -2);
        assert_eq!(b.eval(&[0, 100]), 7);
        let s = Expr::select(Expr::cmp(CmpOp::Lt, lo.clone(), hi.clone()), lo, hi);
        let b = BoundExpr::compile(&s, &slots).unwrap();
        assert_eq!(b.eval(&[4, 9]), 4);
        assert_eq!(b.eval(&[9, 4]), 4);
    }

    #[test]
    fn unknown_variables_and_floats_are_refused() {
        assert!(BoundExpr::compile(&Expr::ivar("y"), &slots).is_err());
        assert!(BoundExpr::compile(&Expr::float(1.5, Type::scalar(ScalarType::F32)), &slots).is_err());
    }
}
