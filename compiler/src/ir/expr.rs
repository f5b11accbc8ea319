//! Expressions: the side-effect-free value language shared by the algorithm
//! (Func definitions) and the lowered statement IR.
//!
//! An [`Expr`] is an immutable, reference-counted tree. Constructors here do
//! the type matching of Halide (constants adopt the other operand's type,
//! narrower integers widen, integers meet floats as floats) so that every
//! node is well typed by construction.

use crate::ir::types::{ScalarType, Type};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// Interned-ish name of a variable, Func, buffer or loop.
pub type Name = Arc<str>;

/// Binary arithmetic operators. Integer division and modulo are Euclidean
/// (division floors for positive divisors; modulo is never negative), and
/// both yield 0 for a zero divisor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Min,
    Max,
}

/// Comparison operators (their result is bool).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    /// Whether `x op y` holds.
    pub fn holds<T: PartialOrd>(self, x: T, y: T) -> bool {
        match self {
            CmpOp::Eq => x == y,
            CmpOp::Ne => x != y,
            CmpOp::Lt => x < y,
            CmpOp::Le => x <= y,
            CmpOp::Gt => x > y,
            CmpOp::Ge => x >= y,
        }
    }
}

/// Math intrinsics. `Abs` keeps the operand type (integer abs wraps for the
/// most negative value); the others take and return floats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MathFn {
    Abs,
    Sqrt,
    Exp,
    Log,
    Pow,
    Sin,
    Cos,
    Tanh,
    Floor,
    Ceil,
    Round,
    /// `promise_clamped(value, lo, hi)`: `value`, which the compiler knows
    /// lies in `[lo, hi]`. Loop synthesis states what bounds inference could
    /// not derive (a fused loop's outer coordinate); lowering strips it
    /// after the passes that read it.
    PromiseClamped,
}

impl MathFn {
    pub fn name(self) -> &'static str {
        match self {
            MathFn::Abs => "abs",
            MathFn::Sqrt => "sqrt",
            MathFn::Exp => "exp",
            MathFn::Log => "log",
            MathFn::Pow => "pow",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Tanh => "tanh",
            MathFn::Floor => "floor",
            MathFn::Ceil => "ceil",
            MathFn::Round => "round",
            MathFn::PromiseClamped => "promise_clamped",
        }
    }

    /// How many arguments it takes.
    pub fn arity(self) -> usize {
        match self {
            MathFn::Pow => 2,
            MathFn::PromiseClamped => 3,
            _ => 1,
        }
    }
}

/// A link from a call in an algorithm to the definition of the Func or input
/// it calls, so that a pipeline can be collected from its outputs. It is opaque
/// here (the language module owns the definition type), compares equal to any
/// other link, and is not serialized: everything after pipeline construction
/// refers to Funcs by name.
#[derive(Clone)]
pub struct FuncLink(pub Arc<dyn std::any::Any + Send + Sync>);

impl fmt::Debug for FuncLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FuncLink")
    }
}

impl PartialEq for FuncLink {
    fn eq(&self, _: &FuncLink) -> bool {
        true
    }
}

/// A Func or input buffer named in a call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DefRef {
    pub name: Name,
    #[serde(skip)]
    pub link: Option<FuncLink>,
}

/// What a [`ExprNode::Call`] refers to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum CallTarget {
    /// A value of a Func at integer coordinates.
    Func(DefRef),
    /// An element of an input buffer at integer coordinates.
    Input(DefRef),
    /// A math intrinsic applied to its arguments.
    Math(MathFn),
}

/// One dimension of a reduction domain.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RDomDim {
    /// Full name of the reduction variable, e.g. `r.x`.
    pub name: Name,
    pub min: Expr,
    pub extent: Expr,
}

/// A reduction domain: a box (innermost dimension first) and an optional
/// predicate that filters its points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RDomDef {
    pub name: Name,
    pub dims: Vec<RDomDim>,
    pub predicate: Option<Expr>,
}

/// The node of an expression tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ExprNode {
    /// Signed integer constant (i8..i64).
    IntImm {
        value: i64,
        ty: Type,
    },
    /// Unsigned integer or bool constant.
    UIntImm {
        value: u64,
        ty: Type,
    },
    /// Floating-point constant.
    FloatImm {
        value: f64,
        ty: Type,
    },
    /// A free variable: a pure Var, a loop variable, a let name, a scalar
    /// param or a buffer field such as `input.min.0`.
    Var {
        name: Name,
        ty: Type,
    },
    /// A scalar parameter of the pipeline, bound when it runs.
    Param {
        name: Name,
        ty: Type,
    },
    /// A reduction variable, as written in an algorithm. Definitions store it
    /// as a plain `Var` named after the RDom dimension.
    RVar {
        rdom: Arc<RDomDef>,
        dim: usize,
    },
    Cast {
        ty: Type,
        value: Expr,
    },
    Binary {
        op: BinOp,
        a: Expr,
        b: Expr,
    },
    Cmp {
        op: CmpOp,
        a: Expr,
        b: Expr,
    },
    And {
        a: Expr,
        b: Expr,
    },
    Or {
        a: Expr,
        b: Expr,
    },
    Not {
        a: Expr,
    },
    Select {
        cond: Expr,
        t: Expr,
        f: Expr,
    },
    Let {
        name: Name,
        value: Expr,
        body: Expr,
    },
    Call {
        target: CallTarget,
        args: Vec<Expr>,
        ty: Type,
    },
    /// A load from a flattened buffer (after storage flattening).
    Load {
        buffer: Name,
        index: Expr,
        ty: Type,
    },
    /// The vector `base, base + stride, ..., base + (lanes-1)*stride`.
    Ramp {
        base: Expr,
        stride: Expr,
        lanes: u32,
    },
    /// A scalar repeated over `lanes` lanes.
    Broadcast {
        value: Expr,
        lanes: u32,
    },
}

/// An immutable, shareable expression. Each node caches its type and
/// whether it reads memory, so both questions cost O(1) however large the
/// tree (the simplifier asks them at every node of every bound it builds).
#[derive(Clone)]
pub struct Expr(Arc<ExprData>);

/// A node with the facts cached about it.
struct ExprData {
    node: ExprNode,
    ty: Type,
    reads_memory: bool,
}

impl PartialEq for Expr {
    /// Structural equality, with a shortcut for shared nodes.
    fn eq(&self, other: &Expr) -> bool {
        self.same_as(other) || (self.0.ty == other.0.ty && self.0.node == other.0.node)
    }
}

impl Serialize for Expr {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.node().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Expr {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Expr, D::Error> {
        ExprNode::deserialize(deserializer).map(Expr::new)
    }
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The type of the value `node` computes (its children's types cached).
fn node_type(node: &ExprNode) -> Type {
    match node {
        ExprNode::IntImm { ty, .. }
        | ExprNode::UIntImm { ty, .. }
        | ExprNode::FloatImm { ty, .. }
        | ExprNode::Var { ty, .. }
        | ExprNode::Param { ty, .. }
        | ExprNode::Cast { ty, .. }
        | ExprNode::Call { ty, .. }
        | ExprNode::Load { ty, .. } => *ty,
        ExprNode::RVar { .. } => Type::i32(),
        ExprNode::Binary { a, .. } => a.ty(),
        ExprNode::Cmp { a, .. } => Type::bool().with_lanes(a.ty().lanes),
        ExprNode::And { a, .. } | ExprNode::Or { a, .. } | ExprNode::Not { a } => a.ty(),
        ExprNode::Select { t, .. } => t.ty(),
        ExprNode::Let { body, .. } => body.ty(),
        ExprNode::Ramp { base, lanes, .. } => base.ty().with_lanes(*lanes),
        ExprNode::Broadcast { value, lanes } => value.ty().with_lanes(*lanes),
    }
}

/// Whether `node` or a node under it is a load or a call.
fn node_reads_memory(node: &ExprNode) -> bool {
    let mut reads = matches!(node, ExprNode::Load { .. } | ExprNode::Call { .. });
    crate::ir::visit::for_each_child(node, |child| reads |= child.reads_memory());
    reads
}

impl Expr {
    /// A node as given, unchecked: the typed constructors below are the
    /// public way to build expressions (they keep every node well typed).
    pub(crate) fn new(node: ExprNode) -> Expr {
        let ty = node_type(&node);
        let reads_memory = node_reads_memory(&node);
        Expr(Arc::new(ExprData { node, ty, reads_memory }))
    }

    pub fn node(&self) -> &ExprNode {
        &self.0.node
    }

    /// True when both handles point at the same node (cheap identity test).
    pub fn same_as(&self, other: &Expr) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The address of the shared node: a key for caches that also hold
    /// the node (so the address is not reused while it is a key).
    pub(crate) fn address(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    /// The type of the value this expression computes.
    pub fn ty(&self) -> Type {
        self.0.ty
    }

    /// Whether the expression contains a load or a call (whose values are
    /// unknown to analyses).
    pub fn reads_memory(&self) -> bool {
        self.0.reads_memory
    }

    // ---- leaves ---------------------------------------------------------

    /// An integer constant of the given (integer or bool) type, wrapped to it.
    pub fn int(value: i64, ty: Type) -> Expr {
        let scalar = ty.scalar;
        if scalar.is_float() {
            return Expr::float(value as f64, ty);
        }
        if scalar.is_signed_int() {
            let wrapped = crate::ir::semantics::wrap_signed(value as i128, scalar.bits());
            Expr::new(ExprNode::IntImm { value: wrapped, ty })
        } else {
            let wrapped = crate::ir::semantics::wrap_unsigned(value as i128, scalar.bits());
            Expr::new(ExprNode::UIntImm { value: wrapped, ty })
        }
    }

    /// An `i32` constant.
    pub fn i32(value: i64) -> Expr {
        Expr::int(value, Type::i32())
    }

    pub fn float(value: f64, ty: Type) -> Expr {
        let value = if ty.scalar == ScalarType::F32 { value as f32 as f64 } else { value };
        Expr::new(ExprNode::FloatImm { value, ty })
    }

    pub fn bool(value: bool) -> Expr {
        Expr::new(ExprNode::UIntImm { value: value as u64, ty: Type::bool() })
    }

    pub fn var(name: impl Into<Name>, ty: Type) -> Expr {
        Expr::new(ExprNode::Var { name: name.into(), ty })
    }

    /// An `i32` variable (the type of every coordinate and loop index).
    pub fn ivar(name: impl Into<Name>) -> Expr {
        Expr::var(name, Type::i32())
    }

    // ---- queries ---------------------------------------------------------

    /// The constant integer value, if this is an integer or bool constant.
    pub fn as_int(&self) -> Option<i64> {
        match self.node() {
            ExprNode::IntImm { value, .. } => Some(*value),
            ExprNode::UIntImm { value, .. } => i64::try_from(*value).ok(),
            _ => None,
        }
    }

    pub fn as_float(&self) -> Option<f64> {
        match self.node() {
            ExprNode::FloatImm { value, .. } => Some(*value),
            _ => None,
        }
    }

    pub fn is_const(&self) -> bool {
        matches!(self.node(), ExprNode::IntImm { .. } | ExprNode::UIntImm { .. } | ExprNode::FloatImm { .. })
    }

    pub fn is_const_int(&self, v: i64) -> bool {
        self.as_int() == Some(v)
    }

    pub fn as_var(&self) -> Option<&Name> {
        match self.node() {
            ExprNode::Var { name, .. } => Some(name),
            _ => None,
        }
    }

    // ---- typed constructors --------------------------------------------

    /// A binary operation; operand types are matched first.
    pub fn binary(op: BinOp, a: Expr, b: Expr) -> Expr {
        let (a, b) = match_types(a, b);
        Expr::new(ExprNode::Binary { op, a, b })
    }

    pub fn cmp(op: CmpOp, a: Expr, b: Expr) -> Expr {
        let (a, b) = match_types(a, b);
        Expr::new(ExprNode::Cmp { op, a, b })
    }

    pub fn and(a: Expr, b: Expr) -> Expr {
        let (a, b) = match_lanes(a.into_bool(), b.into_bool());
        Expr::new(ExprNode::And { a, b })
    }

    pub fn or(a: Expr, b: Expr) -> Expr {
        let (a, b) = match_lanes(a.into_bool(), b.into_bool());
        Expr::new(ExprNode::Or { a, b })
    }

    #[allow(clippy::should_implement_trait)] // `!` is left for the bitwise not of integers, as in Halide
    pub fn not(a: Expr) -> Expr {
        Expr::new(ExprNode::Not { a: a.into_bool() })
    }

    /// `cond ? t : f`, evaluated eagerly on both sides.
    pub fn select(cond: Expr, t: Expr, f: Expr) -> Expr {
        let (t, f) = match_types(t, f);
        let cond = cond.into_bool();
        let (cond, t) = match_lanes(cond, t);
        let (cond, f) = match_lanes(cond, f);
        Expr::new(ExprNode::Select { cond, t, f })
    }

    pub fn cast(ty: Type, value: Expr) -> Expr {
        let ty = ty.with_lanes(value.ty().lanes);
        if value.ty() == ty {
            return value;
        }
        Expr::new(ExprNode::Cast { ty, value })
    }

    pub fn let_in(name: impl Into<Name>, value: Expr, body: Expr) -> Expr {
        Expr::new(ExprNode::Let { name: name.into(), value, body })
    }

    pub fn min(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Min, a, b)
    }

    pub fn max(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Max, a, b)
    }

    /// `min(max(x, lo), hi)`.
    pub fn clamp(x: Expr, lo: Expr, hi: Expr) -> Expr {
        let ty = x.ty();
        Expr::min(Expr::max(x, Expr::cast(ty, lo)), Expr::cast(ty, hi))
    }

    /// A call of a math intrinsic; float intrinsics cast integer arguments to
    /// f32 (`abs` and `promise_clamped` keep their type).
    pub fn math(f: MathFn, args: Vec<Expr>) -> Expr {
        let args: Vec<Expr> = if matches!(f, MathFn::Abs | MathFn::PromiseClamped) {
            args
        } else {
            let float_ty = args.iter().map(|a| a.ty()).find(|t| t.is_float()).unwrap_or(Type::f32());
            args.into_iter().map(|a| Expr::cast(float_ty.with_lanes(a.ty().lanes), a)).collect()
        };
        let ty = args[0].ty();
        Expr::new(ExprNode::Call { target: CallTarget::Math(f), args, ty })
    }

    pub fn call(target: CallTarget, args: Vec<Expr>, ty: Type) -> Expr {
        Expr::new(ExprNode::Call { target, args, ty })
    }

    pub fn load(buffer: impl Into<Name>, index: Expr, ty: Type) -> Expr {
        let ty = ty.with_lanes(index.ty().lanes);
        Expr::new(ExprNode::Load { buffer: buffer.into(), index, ty })
    }

    pub fn ramp(base: Expr, stride: Expr, lanes: u32) -> Expr {
        Expr::new(ExprNode::Ramp { base, stride, lanes })
    }

    pub fn broadcast(value: Expr, lanes: u32) -> Expr {
        if lanes == 1 {
            return value;
        }
        Expr::new(ExprNode::Broadcast { value, lanes })
    }

    /// Converts to bool by comparing with zero, unless already bool.
    fn into_bool(self) -> Expr {
        if self.ty().is_bool() {
            self
        } else {
            let zero = Expr::int(0, self.ty().element());
            Expr::cmp(CmpOp::Ne, self, zero)
        }
    }
}

/// Broadcasts a scalar operand to the other operand's lane count.
fn match_lanes(a: Expr, b: Expr) -> (Expr, Expr) {
    let (la, lb) = (a.ty().lanes, b.ty().lanes);
    if la == lb {
        (a, b)
    } else if la == 1 {
        (Expr::broadcast(a, lb), b)
    } else if lb == 1 {
        (a, Expr::broadcast(b, la))
    } else {
        panic!("internal error: operands with {la} and {lb} lanes")
    }
}

/// The type both operands of a binary operation are converted to, following
/// Halide: equal types stay; a float meets anything as the (wider) float; an
/// integer constant adopts the other side's type; integers of one signedness
/// widen to the wider; mixed signedness meet as signed of the wider width.
pub fn matched_type(a: &Expr, b: &Expr) -> Type {
    let (ta, tb) = (a.ty().element(), b.ty().element());
    if ta == tb {
        return ta;
    }
    match (ta.is_float(), tb.is_float()) {
        (true, true) => return if ta.bits() >= tb.bits() { ta } else { tb },
        (true, false) => return ta,
        (false, true) => return tb,
        _ => {}
    }
    let a_const = a.as_int().is_some();
    let b_const = b.as_int().is_some();
    if a_const && !b_const {
        return tb;
    }
    if b_const && !a_const {
        return ta;
    }
    if ta.is_bool() {
        return tb;
    }
    if tb.is_bool() {
        return ta;
    }
    let bits = ta.bits().max(tb.bits());
    if ta.is_signed_int() == tb.is_signed_int() {
        return if ta.bits() >= tb.bits() { ta } else { tb };
    }
    Type::scalar(match bits {
        8 => ScalarType::I8,
        16 => ScalarType::I16,
        32 => ScalarType::I32,
        _ => ScalarType::I64,
    })
}

/// Casts both operands to their matched type and lane count.
pub fn match_types(a: Expr, b: Expr) -> (Expr, Expr) {
    let t = matched_type(&a, &b);
    let a = Expr::cast(t, a);
    let b = Expr::cast(t, b);
    match_lanes(a, b)
}

impl From<i32> for Expr {
    fn from(v: i32) -> Expr {
        Expr::i32(v as i64)
    }
}

impl From<f32> for Expr {
    fn from(v: f32) -> Expr {
        Expr::float(v as f64, Type::f32())
    }
}

impl From<f64> for Expr {
    fn from(v: f64) -> Expr {
        Expr::float(v, Type::f64())
    }
}

impl From<bool> for Expr {
    fn from(v: bool) -> Expr {
        Expr::bool(v)
    }
}

impl From<&Expr> for Expr {
    fn from(e: &Expr) -> Expr {
        e.clone()
    }
}
