//! Expressions on the wire: a tree with one `oneof` per node kind.
//!
//! From the wire, every node is checked as it is built, in a [`Scope`]
//! (the Func and definition it belongs to, the variables it may use, the
//! declarations of the pipeline): operands must already have matching
//! types (nothing is cast implicitly, so the typed constructors of
//! `compiler::Expr` rebuild exactly the tree that was sent), variables must
//! be the definition's own, params and inputs declared, Funcs called listed
//! earlier with one i32 coordinate per dimension. To the wire, the nodes
//! only lowering makes (loads, ramps, broadcasts, unlowered reduction
//! variables, `promise_clamped`) and vector types are errors.

use crate::error::{FromWireError, ToWireError};
use crate::types::{scalar_from_wire, type_from_wire, type_to_wire};
use crate::v1;
use crate::v1::expr::Node;
use compiler::ir::expr::{BinOp, CallTarget, CmpOp, DefRef, ExprNode, MathFn, Name};
use compiler::{Expr, ScalarType, Type};
use std::collections::HashMap;

/// What the pipeline declares, for checking calls, params and types.
#[derive(Default)]
pub(crate) struct Decls {
    /// Func name → (index in the pipeline, dimensions, type of each value).
    pub funcs: HashMap<Name, (usize, usize, Vec<Type>)>,
    /// Input name → (dimensions, element type).
    pub inputs: HashMap<Name, (usize, ScalarType)>,
    /// Param name → type.
    pub params: HashMap<Name, Type>,
}

/// Where an expression is and what it may refer to.
pub(crate) struct Scope<'a> {
    /// The pipeline's declarations.
    pub decls: &'a Decls,
    /// The Func's index in the pipeline (it may call Funcs before it).
    pub index: usize,
    /// The Func's name, when a definition may call the Func itself (updates).
    pub self_name: Option<&'a str>,
    /// `Func f, update 0` and the like, for errors.
    pub at: String,
    /// Free variables the expression may use (all i32).
    pub vars: Vec<Name>,
    /// Names bound by enclosing lets, with their types.
    lets: Vec<(Name, Type)>,
}

impl<'a> Scope<'a> {
    /// A scope with no enclosing lets.
    pub fn new(decls: &'a Decls, index: usize, self_name: Option<&'a str>, at: String, vars: Vec<Name>) -> Scope<'a> {
        Scope { decls, index, self_name, at, vars, lets: vec![] }
    }

    fn err(&self, why: impl Into<String>) -> FromWireError {
        FromWireError::invalid(&self.at, why)
    }

    /// A required child expression.
    pub fn child(&mut self, e: Option<&v1::Expr>, field: &'static str) -> Result<Expr, FromWireError> {
        match e {
            Some(e) => self.expr(e),
            None => Err(FromWireError::missing(&self.at, field)),
        }
    }

    /// An expression of type `want`.
    pub fn typed_child(&mut self, e: Option<&v1::Expr>, field: &'static str, want: Type) -> Result<Expr, FromWireError> {
        let e = self.child(e, field)?;
        if e.ty() != want {
            return Err(self.err(format!("{field} has type {}, expected {}", e.ty().scalar.name(), want.scalar.name())));
        }
        Ok(e)
    }

    /// Two operands of one type.
    fn operands(&mut self, a: Option<&v1::Expr>, b: Option<&v1::Expr>, op: &str) -> Result<(Expr, Expr), FromWireError> {
        let a = self.child(a, "operand a")?;
        let b = self.child(b, "operand b")?;
        if a.ty() != b.ty() {
            return Err(self.err(format!(
                "the operands of {op} have types {} and {} (send an explicit cast)",
                a.ty().scalar.name(),
                b.ty().scalar.name()
            )));
        }
        Ok((a, b))
    }

    /// The expression `e` as the compiler's, checked node by node.
    pub fn expr(&mut self, e: &v1::Expr) -> Result<Expr, FromWireError> {
        let node = e.node.as_ref().ok_or_else(|| FromWireError::missing(&self.at, "expression node"))?;
        match node {
            Node::IntImm(i) => {
                let t = scalar_from_wire(i.r#type, &self.at, "constant type")?;
                if !t.is_signed_int() || !(t.int_min()..=t.int_max()).contains(&(i.value as i128)) {
                    return Err(self.err(format!("the signed constant {} does not fit type {}", i.value, t.name())));
                }
                Ok(Expr::int(i.value, Type::scalar(t)))
            }
            Node::UintImm(u) => {
                let t = scalar_from_wire(u.r#type, &self.at, "constant type")?;
                if !(t.is_unsigned_int() || t.is_bool()) || u.value as i128 > t.int_max() {
                    return Err(self.err(format!("the unsigned constant {} does not fit type {}", u.value, t.name())));
                }
                Ok(Expr::int(u.value as i64, Type::scalar(t)))
            }
            Node::FloatImm(f) => {
                let t = scalar_from_wire(f.r#type, &self.at, "constant type")?;
                if !t.is_float() {
                    return Err(self.err(format!("the float constant {} has type {}", f.value, t.name())));
                }
                Ok(Expr::float(f.value, Type::scalar(t)))
            }
            Node::Var(v) => self.var(v),
            Node::Param(p) => self.param(p),
            Node::Cast(c) => {
                let t = type_from_wire(c.r#type, &self.at, "cast type")?;
                let value = self.child(c.value.as_deref(), "cast value")?;
                Ok(Expr::cast(t, value))
            }
            Node::Reinterpret(r) => {
                let t = type_from_wire(r.r#type, &self.at, "reinterpret type")?;
                let value = self.child(r.value.as_deref(), "reinterpret value")?;
                if !value.ty().scalar.reinterprets_as(t.scalar) {
                    return Err(self.err(format!(
                        "reinterpret of a {} value as {}: the types must have one width, neither bool",
                        value.ty().scalar.name(),
                        t.scalar.name()
                    )));
                }
                Ok(Expr::reinterpret(t, value))
            }
            Node::Binary(b) => {
                let op = match v1::BinaryOp::try_from(b.op) {
                    Ok(v1::BinaryOp::Add) => BinOp::Add,
                    Ok(v1::BinaryOp::Sub) => BinOp::Sub,
                    Ok(v1::BinaryOp::Mul) => BinOp::Mul,
                    Ok(v1::BinaryOp::Div) => BinOp::Div,
                    Ok(v1::BinaryOp::Mod) => BinOp::Mod,
                    Ok(v1::BinaryOp::Min) => BinOp::Min,
                    Ok(v1::BinaryOp::Max) => BinOp::Max,
                    Ok(v1::BinaryOp::BitAnd) => BinOp::BitAnd,
                    Ok(v1::BinaryOp::BitOr) => BinOp::BitOr,
                    Ok(v1::BinaryOp::BitXor) => BinOp::BitXor,
                    Ok(v1::BinaryOp::Shl) => BinOp::Shl,
                    Ok(v1::BinaryOp::Shr) => BinOp::Shr,
                    Ok(v1::BinaryOp::Unspecified) => return Err(FromWireError::missing(&self.at, "binary op")),
                    Err(_) => return Err(FromWireError::UnknownEnum { at: self.at.clone(), field: "binary op", value: b.op }),
                };
                let (a, c) = self.operands(b.a.as_deref(), b.b.as_deref(), &format!("{op:?}"))?;
                if !op.accepts(a.ty().scalar) {
                    return Err(self.err(format!("{op:?} needs integer operands, not {}", a.ty().scalar.name())));
                }
                Ok(Expr::binary(op, a, c))
            }
            Node::Compare(c) => {
                let op = match v1::CompareOp::try_from(c.op) {
                    Ok(v1::CompareOp::Eq) => CmpOp::Eq,
                    Ok(v1::CompareOp::Ne) => CmpOp::Ne,
                    Ok(v1::CompareOp::Lt) => CmpOp::Lt,
                    Ok(v1::CompareOp::Le) => CmpOp::Le,
                    Ok(v1::CompareOp::Gt) => CmpOp::Gt,
                    Ok(v1::CompareOp::Ge) => CmpOp::Ge,
                    Ok(v1::CompareOp::Unspecified) => return Err(FromWireError::missing(&self.at, "compare op")),
                    Err(_) => return Err(FromWireError::UnknownEnum { at: self.at.clone(), field: "compare op", value: c.op }),
                };
                let (a, b) = self.operands(c.a.as_deref(), c.b.as_deref(), &format!("{op:?}"))?;
                Ok(Expr::cmp(op, a, b))
            }
            Node::LogicalAnd(l) => {
                let a = self.typed_child(l.a.as_deref(), "operand a", Type::bool())?;
                let b = self.typed_child(l.b.as_deref(), "operand b", Type::bool())?;
                Ok(Expr::and(a, b))
            }
            Node::LogicalOr(l) => {
                let a = self.typed_child(l.a.as_deref(), "operand a", Type::bool())?;
                let b = self.typed_child(l.b.as_deref(), "operand b", Type::bool())?;
                Ok(Expr::or(a, b))
            }
            Node::LogicalNot(l) => Ok(Expr::not(self.typed_child(l.a.as_deref(), "operand a", Type::bool())?)),
            Node::Select(s) => {
                let cond = self.typed_child(s.condition.as_deref(), "select condition", Type::bool())?;
                let (t, f) = self.operands(s.if_true.as_deref(), s.if_false.as_deref(), "select")?;
                Ok(Expr::select(cond, t, f))
            }
            Node::LetIn(l) => {
                let value = self.child(l.value.as_deref(), "let value")?;
                let name: Name = l.name.as_str().into();
                self.lets.push((name.clone(), value.ty()));
                let body = self.child(l.body.as_deref(), "let body");
                self.lets.pop();
                Ok(Expr::let_in(name, value, body?))
            }
            Node::Call(c) => self.call(c),
        }
    }

    fn var(&self, v: &v1::Var) -> Result<Expr, FromWireError> {
        let t = type_from_wire(v.r#type, &self.at, "variable type")?;
        if let Some((_, let_ty)) = self.lets.iter().rev().find(|(n, _)| **n == *v.name) {
            if *let_ty != t {
                return Err(self.err(format!(
                    "variable {} is bound by a let to a {} but used as a {}",
                    v.name,
                    let_ty.scalar.name(),
                    t.scalar.name()
                )));
            }
        } else if !self.vars.iter().any(|n| **n == *v.name) {
            let allowed: Vec<&str> = self.vars.iter().map(|n| &**n).collect();
            return Err(self.err(format!("uses variable {}, which is not one of its variables ({})", v.name, allowed.join(", "))));
        } else if t != Type::i32() {
            return Err(self.err(format!("variable {} is a coordinate (i32), not {}", v.name, t.scalar.name())));
        }
        Ok(Expr::var(v.name.as_str(), t))
    }

    fn param(&self, p: &v1::ParamRef) -> Result<Expr, FromWireError> {
        let t = type_from_wire(p.r#type, &self.at, "param type")?;
        let declared = match self.decls.params.get(p.name.as_str()) {
            Some(&declared) => declared,
            None if self.is_buffer_field(&p.name) => Type::i32(),
            None => return Err(self.err(format!("uses param {}, which the pipeline does not declare", p.name))),
        };
        if declared != t {
            return Err(self.err(format!("param {} is declared {} but used as {}", p.name, declared.scalar.name(), t.scalar.name())));
        }
        Ok(Expr::param(p.name.as_str(), t))
    }

    /// Whether `name` is `{input}.min.{d}` or `{input}.extent.{d}` of a
    /// declared input with more than `d` dimensions.
    fn is_buffer_field(&self, name: &str) -> bool {
        let mut parts = name.rsplitn(3, '.');
        let (Some(d), Some(field), Some(input)) = (parts.next(), parts.next(), parts.next()) else {
            return false;
        };
        let Ok(d) = d.parse::<usize>() else {
            return false;
        };
        matches!(field, "min" | "extent") && self.decls.inputs.get(input).is_some_and(|&(dims, _)| d < dims)
    }

    fn call(&mut self, c: &v1::Call) -> Result<Expr, FromWireError> {
        let target = c.target.as_ref().ok_or_else(|| FromWireError::missing(&self.at, "call target"))?;
        let ty = type_from_wire(c.r#type, &self.at, "call type")?;
        let args = c.args.iter().map(|a| self.expr(a)).collect::<Result<Vec<_>, _>>()?;
        let (target, dims, callee_ty, callee) = match target {
            v1::call::Target::Func(name) => {
                let Some((index, dims, types)) = self.decls.funcs.get(name.as_str()) else {
                    return Err(FromWireError::UnknownFunc { at: self.at.clone(), callee: name.clone() });
                };
                let (index, dims, value_index) = (*index, *dims, c.value_index as usize);
                let Some(&fty) = types.get(value_index) else {
                    return Err(self.err(format!("calls value {value_index} of {name}, which has {} value(s)", types.len())));
                };
                let is_self = self.self_name == Some(name.as_str());
                if index >= self.index && !is_self {
                    return Err(FromWireError::CallsLater { at: self.at.clone(), callee: name.clone() });
                }
                (CallTarget::Func(DefRef::unlinked(name.as_str().into(), value_index)), dims, fty, name)
            }
            v1::call::Target::Input(name) => {
                let Some(&(dims, ety)) = self.decls.inputs.get(name.as_str()) else {
                    return Err(self.err(format!("reads input {name}, which the pipeline does not declare")));
                };
                (CallTarget::Input(DefRef::unlinked(name.as_str().into(), 0)), dims, Type::scalar(ety), name)
            }
            v1::call::Target::Math(m) => return self.math(*m, args, ty),
        };
        if args.len() != dims {
            return Err(FromWireError::Arity { at: self.at.clone(), callee: callee.clone(), expected: dims, got: args.len() });
        }
        if let Some(i) = args.iter().position(|a| a.ty() != Type::i32()) {
            return Err(self.err(format!("coordinate {i} of the call of {callee} is {}, not i32", args[i].ty().scalar.name())));
        }
        if ty != callee_ty {
            return Err(self.err(format!(
                "the call of {callee} has type {}, but {callee} is {}",
                ty.scalar.name(),
                callee_ty.scalar.name()
            )));
        }
        Ok(Expr::call(target, args, ty))
    }

    fn math(&self, m: i32, args: Vec<Expr>, ty: Type) -> Result<Expr, FromWireError> {
        let f = match v1::MathFn::try_from(m) {
            Ok(v1::MathFn::Abs) => MathFn::Abs,
            Ok(v1::MathFn::Sqrt) => MathFn::Sqrt,
            Ok(v1::MathFn::Exp) => MathFn::Exp,
            Ok(v1::MathFn::Log) => MathFn::Log,
            Ok(v1::MathFn::Pow) => MathFn::Pow,
            Ok(v1::MathFn::Sin) => MathFn::Sin,
            Ok(v1::MathFn::Cos) => MathFn::Cos,
            Ok(v1::MathFn::Tanh) => MathFn::Tanh,
            Ok(v1::MathFn::Floor) => MathFn::Floor,
            Ok(v1::MathFn::Ceil) => MathFn::Ceil,
            Ok(v1::MathFn::Round) => MathFn::Round,
            Ok(v1::MathFn::Trunc) => MathFn::Trunc,
            Ok(v1::MathFn::Popcount) => MathFn::Popcount,
            Ok(v1::MathFn::CountLeadingZeros) => MathFn::CountLeadingZeros,
            Ok(v1::MathFn::CountTrailingZeros) => MathFn::CountTrailingZeros,
            Ok(v1::MathFn::IsNan) => MathFn::IsNan,
            Ok(v1::MathFn::IsInf) => MathFn::IsInf,
            Ok(v1::MathFn::IsFinite) => MathFn::IsFinite,
            Ok(v1::MathFn::Unspecified) => return Err(FromWireError::missing(&self.at, "math function")),
            Err(_) => return Err(FromWireError::UnknownEnum { at: self.at.clone(), field: "math function", value: m }),
        };
        if args.len() != f.arity() {
            return Err(FromWireError::Arity { at: self.at.clone(), callee: f.name().to_string(), expected: f.arity(), got: args.len() });
        }
        let arg = args[0].ty();
        if args.iter().any(|a| a.ty() != arg) || !f.accepts(arg.scalar) || f.result_type(arg) != ty {
            let given: Vec<&str> = args.iter().map(|a| a.ty().scalar.name()).collect();
            return Err(self.err(format!(
                "{} of ({}) returning {} is ill-typed: {}",
                f.name(),
                given.join(", "),
                ty.scalar.name(),
                math_typing(f)
            )));
        }
        Ok(Expr::math(f, args))
    }
}

/// The typing rule of `f`, in words.
fn math_typing(f: MathFn) -> &'static str {
    if f == MathFn::Abs {
        "abs takes and returns one number type"
    } else if f.is_bit_count() {
        "bit counts take and return one integer type"
    } else if f.is_float_class() {
        "float classes take a float and return a bool"
    } else {
        "float functions take and return one float type"
    }
}

/// The deepest expression the wire carries. prost refuses to decode
/// messages nested more than 100 deep (which keeps decoding hostile input
/// off the end of the stack); each expression level is two messages (the
/// `Expr` and its node), and a `ScheduleRequest` puts the outermost
/// expression of an RDom bound 7 messages deep.
pub const MAX_EXPR_DEPTH: usize = 45;

/// An expression's wire form; `at` names where it is, for errors.
pub(crate) fn expr_to_wire(e: &Expr, at: &str) -> Result<v1::Expr, ToWireError> {
    expr_to_wire_at(e, at, 1)
}

fn expr_to_wire_at(e: &Expr, at: &str, depth: usize) -> Result<v1::Expr, ToWireError> {
    if depth > MAX_EXPR_DEPTH {
        return Err(ToWireError::TooDeep { at: at.to_string(), max: MAX_EXPR_DEPTH });
    }
    let boxed = |e: &Expr| expr_to_wire_at(e, at, depth + 1).map(Box::new);
    let ty = |t: Type| type_to_wire(t, at);
    let not_algorithm = |what: &str| ToWireError::NotAnAlgorithm { at: at.to_string(), what: what.to_string() };
    let node = match e.node() {
        ExprNode::IntImm { value, ty: t } => Node::IntImm(v1::IntImm { value: *value, r#type: ty(*t)? }),
        ExprNode::UIntImm { value, ty: t } => Node::UintImm(v1::UIntImm { value: *value, r#type: ty(*t)? }),
        ExprNode::FloatImm { value, ty: t } => Node::FloatImm(v1::FloatImm { value: *value, r#type: ty(*t)? }),
        ExprNode::Var { name, ty: t } => Node::Var(v1::Var { name: name.to_string(), r#type: ty(*t)? }),
        ExprNode::Param { name, ty: t, .. } => Node::Param(v1::ParamRef { name: name.to_string(), r#type: ty(*t)? }),
        ExprNode::Cast { ty: t, value } => Node::Cast(Box::new(v1::Cast { r#type: ty(*t)?, value: Some(boxed(value)?) })),
        ExprNode::Reinterpret { ty: t, value } => {
            Node::Reinterpret(Box::new(v1::Reinterpret { r#type: ty(*t)?, value: Some(boxed(value)?) }))
        }
        ExprNode::Binary { op, a, b } => {
            let op = match op {
                BinOp::Add => v1::BinaryOp::Add,
                BinOp::Sub => v1::BinaryOp::Sub,
                BinOp::Mul => v1::BinaryOp::Mul,
                BinOp::Div => v1::BinaryOp::Div,
                BinOp::Mod => v1::BinaryOp::Mod,
                BinOp::Min => v1::BinaryOp::Min,
                BinOp::Max => v1::BinaryOp::Max,
                BinOp::BitAnd => v1::BinaryOp::BitAnd,
                BinOp::BitOr => v1::BinaryOp::BitOr,
                BinOp::BitXor => v1::BinaryOp::BitXor,
                BinOp::Shl => v1::BinaryOp::Shl,
                BinOp::Shr => v1::BinaryOp::Shr,
            };
            Node::Binary(Box::new(v1::Binary { op: op as i32, a: Some(boxed(a)?), b: Some(boxed(b)?) }))
        }
        ExprNode::Cmp { op, a, b } => {
            let op = match op {
                CmpOp::Eq => v1::CompareOp::Eq,
                CmpOp::Ne => v1::CompareOp::Ne,
                CmpOp::Lt => v1::CompareOp::Lt,
                CmpOp::Le => v1::CompareOp::Le,
                CmpOp::Gt => v1::CompareOp::Gt,
                CmpOp::Ge => v1::CompareOp::Ge,
            };
            Node::Compare(Box::new(v1::Compare { op: op as i32, a: Some(boxed(a)?), b: Some(boxed(b)?) }))
        }
        ExprNode::And { a, b } => Node::LogicalAnd(Box::new(v1::LogicalAnd { a: Some(boxed(a)?), b: Some(boxed(b)?) })),
        ExprNode::Or { a, b } => Node::LogicalOr(Box::new(v1::LogicalOr { a: Some(boxed(a)?), b: Some(boxed(b)?) })),
        ExprNode::Not { a } => Node::LogicalNot(Box::new(v1::LogicalNot { a: Some(boxed(a)?) })),
        ExprNode::Select { cond, t, f } => {
            Node::Select(Box::new(v1::Select { condition: Some(boxed(cond)?), if_true: Some(boxed(t)?), if_false: Some(boxed(f)?) }))
        }
        ExprNode::Let { name, value, body } => {
            Node::LetIn(Box::new(v1::LetIn { name: name.to_string(), value: Some(boxed(value)?), body: Some(boxed(body)?) }))
        }
        ExprNode::Call { target, args, ty: t } => {
            let value_index = match target {
                CallTarget::Func(r) => r.value_index as u32,
                _ => 0,
            };
            let target = match target {
                CallTarget::Func(r) => v1::call::Target::Func(r.name.to_string()),
                CallTarget::Input(r) => v1::call::Target::Input(r.name.to_string()),
                CallTarget::Math(m) => v1::call::Target::Math(math_to_wire(*m).ok_or_else(|| not_algorithm(m.name()))? as i32),
            };
            let args = args.iter().map(|a| expr_to_wire_at(a, at, depth + 1)).collect::<Result<_, _>>()?;
            Node::Call(v1::Call { target: Some(target), args, r#type: ty(*t)?, value_index })
        }
        ExprNode::RVar { .. } => return Err(not_algorithm("an unlowered reduction variable")),
        ExprNode::Load { .. } => return Err(not_algorithm("a load")),
        ExprNode::Ramp { .. } => return Err(not_algorithm("a ramp")),
        ExprNode::Broadcast { .. } => return Err(not_algorithm("a broadcast")),
    };
    Ok(v1::Expr { node: Some(node) })
}

fn math_to_wire(m: MathFn) -> Option<v1::MathFn> {
    Some(match m {
        MathFn::Abs => v1::MathFn::Abs,
        MathFn::Sqrt => v1::MathFn::Sqrt,
        MathFn::Exp => v1::MathFn::Exp,
        MathFn::Log => v1::MathFn::Log,
        MathFn::Pow => v1::MathFn::Pow,
        MathFn::Sin => v1::MathFn::Sin,
        MathFn::Cos => v1::MathFn::Cos,
        MathFn::Tanh => v1::MathFn::Tanh,
        MathFn::Floor => v1::MathFn::Floor,
        MathFn::Ceil => v1::MathFn::Ceil,
        MathFn::Round => v1::MathFn::Round,
        MathFn::Trunc => v1::MathFn::Trunc,
        MathFn::Popcount => v1::MathFn::Popcount,
        MathFn::CountLeadingZeros => v1::MathFn::CountLeadingZeros,
        MathFn::CountTrailingZeros => v1::MathFn::CountTrailingZeros,
        MathFn::IsNan => v1::MathFn::IsNan,
        MathFn::IsInf => v1::MathFn::IsInf,
        MathFn::IsFinite => v1::MathFn::IsFinite,
        MathFn::PromiseClamped => return None,
    })
}
