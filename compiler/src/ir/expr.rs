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
///
/// The bitwise operators and shifts take integer operands only (both of the
/// result's type); their semantics are in [`crate::ir::semantics::bit_op`]:
/// a shift by a negative count shifts the other way, and a count of the
/// type's width or more shifts every bit out (`<<` gives 0, `>>` gives 0 or,
/// for a negative signed value, -1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BinOp {
    /// `a + b`, wrapping for integers.
    Add,
    /// `a - b`, wrapping for integers.
    Sub,
    /// `a * b`, wrapping for integers.
    Mul,
    /// `a / b`: Euclidean for integers (0 for a zero divisor), IEEE for
    /// floats.
    Div,
    /// `a % b`: Euclidean for integers (never negative; 0 for a zero
    /// divisor), `a - b * floor(a / b)` for floats.
    Mod,
    /// The smaller of `a` and `b`.
    Min,
    /// The larger of `a` and `b`.
    Max,
    /// Bitwise and.
    BitAnd,
    /// Bitwise or.
    BitOr,
    /// Bitwise exclusive or.
    BitXor,
    /// Shift left: `a * 2^b`, wrapped.
    Shl,
    /// Shift right: `floor(a / 2^b)` (arithmetic for signed types, logical
    /// for unsigned ones).
    Shr,
}

impl BinOp {
    /// Whether this is a bitwise operator or a shift (integer operands only).
    pub fn is_bitwise(self) -> bool {
        matches!(self, BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr)
    }

    /// Whether operands of type `t` are allowed: every type for arithmetic,
    /// integers (not bool, not floats) for bitwise operators and shifts.
    pub fn accepts(self, t: ScalarType) -> bool {
        !self.is_bitwise() || t.is_int()
    }

    /// The operator as written (`+`, `<<`, ...), or `None` for `min`/`max`.
    pub fn symbol(self) -> Option<&'static str> {
        match self {
            BinOp::Add => Some("+"),
            BinOp::Sub => Some("-"),
            BinOp::Mul => Some("*"),
            BinOp::Div => Some("/"),
            BinOp::Mod => Some("%"),
            BinOp::BitAnd => Some("&"),
            BinOp::BitOr => Some("|"),
            BinOp::BitXor => Some("^"),
            BinOp::Shl => Some("<<"),
            BinOp::Shr => Some(">>"),
            BinOp::Min | BinOp::Max => None,
        }
    }
}

/// Comparison operators (their result is bool).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CmpOp {
    /// `a == b`.
    Eq,
    /// `a != b`.
    Ne,
    /// `a < b`.
    Lt,
    /// `a <= b`.
    Le,
    /// `a > b`.
    Gt,
    /// `a >= b`.
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
/// most negative value); the bit counts take and return integers; the float
/// classes take floats and return bools; the others take and return floats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MathFn {
    /// The absolute value, of the operand's type.
    Abs,
    /// The square root.
    Sqrt,
    /// The exponential, `e^x` for the operand `x`.
    Exp,
    /// The natural logarithm.
    Log,
    /// `pow(a, b)`: `a` to the power `b` (two arguments).
    Pow,
    /// The sine, in radians.
    Sin,
    /// The cosine, in radians.
    Cos,
    /// The hyperbolic tangent.
    Tanh,
    /// Towards negative infinity, to an integral float.
    Floor,
    /// Towards positive infinity, to an integral float.
    Ceil,
    /// To the nearest integer, ties to even (Halide's `round`).
    Round,
    /// Towards zero.
    Trunc,
    /// The number of set bits, in the operand's type.
    Popcount,
    /// The number of zero bits above the highest set bit (the width for 0).
    CountLeadingZeros,
    /// The number of zero bits below the lowest set bit (the width for 0).
    CountTrailingZeros,
    /// Whether a float is NaN (bool).
    IsNan,
    /// Whether a float is an infinity of either sign (bool).
    IsInf,
    /// Whether a float is neither NaN nor infinite (bool).
    IsFinite,
    /// `promise_clamped(value, lo, hi)`: `value`, which the compiler knows
    /// lies in `[lo, hi]`. Loop synthesis states what bounds inference could
    /// not derive (a fused loop's outer coordinate); lowering strips it
    /// after the passes that read it.
    PromiseClamped,
}

impl MathFn {
    /// The intrinsic's name as the language and the printer write it (`sqrt`,
    /// `count_leading_zeros`, ...).
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
            MathFn::Trunc => "trunc",
            MathFn::Popcount => "popcount",
            MathFn::CountLeadingZeros => "count_leading_zeros",
            MathFn::CountTrailingZeros => "count_trailing_zeros",
            MathFn::IsNan => "is_nan",
            MathFn::IsInf => "is_inf",
            MathFn::IsFinite => "is_finite",
            MathFn::PromiseClamped => "promise_clamped",
        }
    }

    /// Whether it counts bits of an integer (and returns that integer type).
    pub fn is_bit_count(self) -> bool {
        matches!(self, MathFn::Popcount | MathFn::CountLeadingZeros | MathFn::CountTrailingZeros)
    }

    /// Whether it classifies a float (and returns a bool).
    pub fn is_float_class(self) -> bool {
        matches!(self, MathFn::IsNan | MathFn::IsInf | MathFn::IsFinite)
    }

    /// Whether its arguments may be of type `t`: any number for `abs` and
    /// `promise_clamped`, integers for the bit counts, floats for the rest.
    pub fn accepts(self, t: ScalarType) -> bool {
        match self {
            MathFn::Abs | MathFn::PromiseClamped => t.is_int() || t.is_float(),
            _ if self.is_bit_count() => t.is_int(),
            _ => t.is_float(),
        }
    }

    /// The type of its result for arguments of type `arg`.
    pub fn result_type(self, arg: Type) -> Type {
        if self.is_float_class() {
            Type::bool().with_lanes(arg.lanes)
        } else {
            arg
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
/// it calls (or from a param to the handle holding its estimate), so that a
/// pipeline can be collected from its outputs. It is opaque here (the
/// language module owns the definition type), compares equal to any other
/// link, and is not serialized: everything after pipeline construction
/// refers to Funcs and params by name.
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
    /// The Func's or input's name.
    pub name: Name,
    /// The definition called, when the call was written in the language;
    /// `None` once deserialized.
    #[serde(skip)]
    pub link: Option<FuncLink>,
    /// Which value of a Tuple Func the call reads (`f(x)[1]`); 0 for a
    /// single-valued Func and for an input.
    #[serde(default)]
    pub value_index: usize,
}

impl DefRef {
    /// A reference to value `value_index` of `name`, without a link.
    pub fn unlinked(name: Name, value_index: usize) -> DefRef {
        DefRef { name, link: None, value_index }
    }
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
    /// The first value of the reduction variable.
    pub min: Expr,
    /// How many values the reduction variable takes, from `min` up.
    pub extent: Expr,
}

/// A reduction domain: a box (innermost dimension first) and an optional
/// predicate that filters its points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RDomDef {
    /// The RDom's name; its dimensions' variables are named after it (`r.x`,
    /// `r.y`, ...).
    pub name: Name,
    /// The dimensions, innermost first.
    pub dims: Vec<RDomDim>,
    /// The condition a point must meet to be visited; `None` visits every
    /// point of the box.
    pub predicate: Option<Expr>,
}

/// The node of an expression tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ExprNode {
    /// Signed integer constant (i8..i64).
    IntImm {
        /// The value, wrapped to `ty`.
        value: i64,
        /// The constant's type.
        ty: Type,
    },
    /// Unsigned integer or bool constant.
    UIntImm {
        /// The value, wrapped to `ty` (0 or 1 for a bool).
        value: u64,
        /// The constant's type.
        ty: Type,
    },
    /// Floating-point constant.
    FloatImm {
        /// The value (rounded to f32 for an f32 constant); JSON spells a
        /// non-finite one `"inf"`, `"-inf"` or `"nan"`.
        #[serde(with = "crate::ir::float_serde")]
        value: f64,
        /// The constant's type.
        ty: Type,
    },
    /// A free variable: a pure Var, a loop variable, a let name, a scalar
    /// param or a buffer field such as `input.min.0`.
    Var {
        /// The variable's name.
        name: Name,
        /// The variable's type.
        ty: Type,
    },
    /// A scalar parameter of the pipeline, bound when it runs.
    Param {
        /// The parameter's name.
        name: Name,
        /// The parameter's type.
        ty: Type,
        /// The [`crate::lang::Param`] handle it was written with (which holds
        /// its estimate), until the pipeline is collected; `None` after, and
        /// once deserialized.
        #[serde(skip)]
        link: Option<FuncLink>,
    },
    /// A reduction variable, as written in an algorithm. Definitions store it
    /// as a plain `Var` named after the RDom dimension.
    RVar {
        /// The reduction domain it belongs to.
        rdom: Arc<RDomDef>,
        /// Its dimension in `rdom` (0 for the innermost).
        dim: usize,
    },
    /// `value` converted to `ty` (see [`crate::ir::value::cast`]: integers
    /// wrap, floats to integers truncate and saturate).
    Cast {
        /// The type converted to, with the lanes of `value`.
        ty: Type,
        /// The value converted.
        value: Expr,
    },
    /// The bits of `value` read as a value of `ty`, which has the same
    /// width (`f32` <-> `u32`/`i32`, `i64` <-> `f64`, `u8` <-> `i8`, ...):
    /// Halide's `reinterpret`. Bools have no bit pattern to reinterpret.
    Reinterpret {
        /// The type whose bits are read, with the lanes of `value`.
        ty: Type,
        /// The value whose bits are read.
        value: Expr,
    },
    /// `a op b`, both operands of the node's type.
    Binary {
        /// The operator.
        op: BinOp,
        /// The left operand.
        a: Expr,
        /// The right operand, of the type of `a`.
        b: Expr,
    },
    /// `a op b`: a bool with the operands' lanes.
    Cmp {
        /// The comparison.
        op: CmpOp,
        /// The left operand.
        a: Expr,
        /// The right operand, of the type of `a`.
        b: Expr,
    },
    /// Logical and of two bools.
    And {
        /// The left operand (bool).
        a: Expr,
        /// The right operand (bool).
        b: Expr,
    },
    /// Logical or of two bools.
    Or {
        /// The left operand (bool).
        a: Expr,
        /// The right operand (bool).
        b: Expr,
    },
    /// Logical not of a bool.
    Not {
        /// The operand (bool).
        a: Expr,
    },
    /// `cond ? t : f`, both sides evaluated.
    Select {
        /// The condition (bool).
        cond: Expr,
        /// The value where `cond` holds.
        t: Expr,
        /// The value where `cond` does not hold, of the type of `t`.
        f: Expr,
    },
    /// `body` with `name` bound to the value of `value`.
    Let {
        /// The name bound.
        name: Name,
        /// The value bound to `name`.
        value: Expr,
        /// The expression in which `name` is bound: the node's value.
        body: Expr,
    },
    /// A call of a Func, an input or a math intrinsic.
    Call {
        /// What is called.
        target: CallTarget,
        /// The coordinates of a Func or input (integers, innermost dimension
        /// first), or the arguments of an intrinsic.
        args: Vec<Expr>,
        /// The type of the value the call gives.
        ty: Type,
    },
    /// A load from a flattened buffer (after storage flattening).
    Load {
        /// The flattened buffer read.
        buffer: Name,
        /// The element index into the buffer (a vector of indices for a
        /// vector load).
        index: Expr,
        /// The element type, with the lanes of `index`.
        ty: Type,
    },
    /// The vector `base, base + stride, ..., base + (lanes-1)*stride`.
    Ramp {
        /// The first lane (scalar).
        base: Expr,
        /// The difference between consecutive lanes, of the type of `base`.
        stride: Expr,
        /// The number of lanes.
        lanes: u32,
    },
    /// A scalar repeated over `lanes` lanes.
    Broadcast {
        /// The scalar repeated.
        value: Expr,
        /// The number of lanes.
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
        | ExprNode::Reinterpret { ty, .. }
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

/// Whether `node` or a node under it is a load or a call (but for
/// `promise_clamped`, which is its first argument's value: index arithmetic
/// that the simplifier must be able to cancel).
fn node_reads_memory(node: &ExprNode) -> bool {
    let promise = matches!(node, ExprNode::Call { target: CallTarget::Math(MathFn::PromiseClamped), .. });
    let mut reads = !promise && matches!(node, ExprNode::Load { .. } | ExprNode::Call { .. });
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

    /// The node at the root of the expression.
    pub fn node(&self) -> &ExprNode {
        &self.0.node
    }

    /// True when both handles point at the same node (cheap identity test).
    pub fn same_as(&self, other: &Expr) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The address of the shared node: a key for caches that also hold
    /// the node, or for walks of a tree that is alive throughout (so the
    /// address is not reused while it is a key).
    pub fn address(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    /// Whether another handle holds this node too (it may be met again
    /// in a walk of a shared expression).
    pub fn is_shared(&self) -> bool {
        Arc::strong_count(&self.0) > 1
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

    /// A float constant of the given float type (rounded to f32 for f32).
    pub fn float(value: f64, ty: Type) -> Expr {
        let value = if ty.scalar == ScalarType::F32 { value as f32 as f64 } else { value };
        Expr::new(ExprNode::FloatImm { value, ty })
    }

    /// A bool constant.
    pub fn bool(value: bool) -> Expr {
        Expr::new(ExprNode::UIntImm { value: value as u64, ty: Type::bool() })
    }

    /// A variable of the given type.
    pub fn var(name: impl Into<Name>, ty: Type) -> Expr {
        Expr::new(ExprNode::Var { name: name.into(), ty })
    }

    /// A scalar param of the given type, linked to no handle.
    pub fn param(name: impl Into<Name>, ty: Type) -> Expr {
        Expr::new(ExprNode::Param { name: name.into(), ty, link: None })
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

    /// The constant value, if this is a float constant.
    pub fn as_float(&self) -> Option<f64> {
        match self.node() {
            ExprNode::FloatImm { value, .. } => Some(*value),
            _ => None,
        }
    }

    /// Whether this is a constant (integer, bool or float).
    pub fn is_const(&self) -> bool {
        matches!(self.node(), ExprNode::IntImm { .. } | ExprNode::UIntImm { .. } | ExprNode::FloatImm { .. })
    }

    /// Whether this is the integer or bool constant `v`.
    pub fn is_const_int(&self, v: i64) -> bool {
        self.as_int() == Some(v)
    }

    /// The variable's name, if this is a variable.
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

    /// The comparison `a op b` (bool); operand types are matched first.
    pub fn cmp(op: CmpOp, a: Expr, b: Expr) -> Expr {
        let (a, b) = match_types(a, b);
        Expr::new(ExprNode::Cmp { op, a, b })
    }

    /// `a && b`; non-bool operands are compared with zero first, and a scalar
    /// operand is broadcast to the other's lanes.
    pub fn and(a: Expr, b: Expr) -> Expr {
        let (a, b) = match_lanes(a.into_bool(), b.into_bool());
        Expr::new(ExprNode::And { a, b })
    }

    /// `a || b`; non-bool operands are compared with zero first, and a scalar
    /// operand is broadcast to the other's lanes.
    pub fn or(a: Expr, b: Expr) -> Expr {
        let (a, b) = match_lanes(a.into_bool(), b.into_bool());
        Expr::new(ExprNode::Or { a, b })
    }

    /// `!a`, logical; a non-bool operand is compared with zero first (for the
    /// bitwise not see `bit_not`).
    #[allow(clippy::should_implement_trait)] // `!` is the bitwise not of integers, as in Halide
    pub fn not(a: Expr) -> Expr {
        Expr::new(ExprNode::Not { a: a.into_bool() })
    }

    /// `a & b`, `a | b` or `a ^ b` (`op` one of `BitAnd`, `BitOr`,
    /// `BitXor`): logical on bools (`^` is `!=`), bitwise on integers with
    /// Halide's typing (an integer literal takes the other operand's type
    /// and must fit it; integers of one signedness widen to the wider; the
    /// result has the operands' type). Floats, a bool with an integer, and
    /// integers of mixed signedness give an ill-typed node that
    /// `Pipeline::new` reports, naming the Func.
    pub fn bitwise(op: BinOp, a: Expr, b: Expr) -> Expr {
        if a.ty().is_bool() && b.ty().is_bool() {
            match op {
                BinOp::BitAnd => return Expr::and(a, b),
                BinOp::BitOr => return Expr::or(a, b),
                BinOp::BitXor => return Expr::cmp(CmpOp::Ne, a, b),
                _ => {}
            }
        }
        let (a, b) = bitwise_operands(a, b);
        Expr::new(ExprNode::Binary { op, a, b })
    }

    /// `!a`: logical not of a bool, bitwise not (`a ^ !0`) of an integer;
    /// of anything else an ill-typed node `Pipeline::new` reports.
    pub fn bit_not(a: Expr) -> Expr {
        let ty = a.ty();
        if ty.is_bool() {
            return Expr::not(a);
        }
        let ones = if ty.is_int() { Expr::int(-1, ty) } else { Expr::float(-1.0, ty) };
        Expr::new(ExprNode::Binary { op: BinOp::BitXor, a, b: ones })
    }

    /// `x << n` or `x >> n` (`op` one of `Shl`, `Shr`), of the type of `x`
    /// (as in Halide), with the semantics of
    /// [`crate::ir::semantics::bit_op`]. The count is converted to that
    /// type without changing the result: first clamped to `[-bits, bits]`
    /// (every count beyond gives the same result), and a negative count of
    /// an unsigned `x` (which its type cannot hold) becomes the other shift
    /// by `-n`. A float operand gives an ill-typed node `Pipeline::new`
    /// reports.
    pub fn shift(op: BinOp, x: Expr, n: Expr) -> Expr {
        let (t, c) = (x.ty().element(), n.ty().element());
        if !(t.is_int() && c.is_int()) {
            return Expr::new(ExprNode::Binary { op, a: x, b: n });
        }
        let other = if op == BinOp::Shl { BinOp::Shr } else { BinOp::Shl };
        let node = |op: BinOp, x: Expr, n: Expr| {
            let (x, n) = match_lanes(x, Expr::cast(t, n));
            Expr::new(ExprNode::Binary { op, a: x, b: n })
        };
        let bits = t.bits() as i64;
        if let Some(v) = n.as_int() {
            let v = v.clamp(-bits, bits);
            return if v < 0 && t.is_unsigned_int() { node(other, x, Expr::int(-v, t)) } else { node(op, x, Expr::int(v, t)) };
        }
        if t == c {
            return node(op, x, n);
        }
        let lo = if c.is_signed_int() { -bits } else { 0 };
        let n = Expr::clamp(n, Expr::int(lo, c), Expr::int(bits, c));
        if t.is_unsigned_int() && c.is_signed_int() {
            let negated = Expr::binary(BinOp::Sub, Expr::int(0, c), n.clone());
            let non_negative = Expr::cmp(CmpOp::Ge, n.clone(), Expr::int(0, c));
            return Expr::select(non_negative, node(op, x.clone(), n), node(other, x, negated));
        }
        node(op, x, n)
    }

    /// `cond ? t : f`, evaluated eagerly on both sides.
    pub fn select(cond: Expr, t: Expr, f: Expr) -> Expr {
        let (t, f) = match_types(t, f);
        let cond = cond.into_bool();
        let (cond, t) = match_lanes(cond, t);
        let (cond, f) = match_lanes(cond, f);
        Expr::new(ExprNode::Select { cond, t, f })
    }

    /// `value` converted to `ty` (lanes taken from `value`); `value` itself
    /// when it already has that type.
    pub fn cast(ty: Type, value: Expr) -> Expr {
        let ty = ty.with_lanes(value.ty().lanes);
        if value.ty() == ty {
            return value;
        }
        Expr::new(ExprNode::Cast { ty, value })
    }

    /// The bits of `value` as a value of `ty` (lanes taken from `value`);
    /// `value` itself when the types agree. Types of different widths (or a
    /// bool) give an ill-typed node `Pipeline::new` reports, naming the Func.
    pub fn reinterpret(ty: Type, value: Expr) -> Expr {
        let ty = ty.with_lanes(value.ty().lanes);
        if value.ty() == ty {
            return value;
        }
        Expr::new(ExprNode::Reinterpret { ty, value })
    }

    /// `body` with `name` bound to `value`.
    pub fn let_in(name: impl Into<Name>, value: Expr, body: Expr) -> Expr {
        Expr::new(ExprNode::Let { name: name.into(), value, body })
    }

    /// `min(a, b)`; operand types are matched first.
    pub fn min(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Min, a, b)
    }

    /// `max(a, b)`; operand types are matched first.
    pub fn max(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Max, a, b)
    }

    /// `min(max(x, lo), hi)`.
    pub fn clamp(x: Expr, lo: Expr, hi: Expr) -> Expr {
        let ty = x.ty();
        Expr::min(Expr::max(x, Expr::cast(ty, lo)), Expr::cast(ty, hi))
    }

    /// A call of a math intrinsic; float intrinsics cast integer arguments to
    /// f32 (`abs`, `promise_clamped` and the bit counts keep their type; a
    /// bit count of a float is an ill-typed node `Pipeline::new` reports).
    pub fn math(f: MathFn, args: Vec<Expr>) -> Expr {
        let args: Vec<Expr> = if matches!(f, MathFn::Abs | MathFn::PromiseClamped) || f.is_bit_count() {
            args
        } else {
            let float_ty = args.iter().map(|a| a.ty()).find(|t| t.is_float()).unwrap_or(Type::f32());
            args.into_iter().map(|a| Expr::cast(float_ty.with_lanes(a.ty().lanes), a)).collect()
        };
        let ty = f.result_type(args[0].ty());
        Expr::new(ExprNode::Call { target: CallTarget::Math(f), args, ty })
    }

    /// A call of `target` with `args`, of result type `ty`, as given
    /// (unchecked).
    pub fn call(target: CallTarget, args: Vec<Expr>, ty: Type) -> Expr {
        Expr::new(ExprNode::Call { target, args, ty })
    }

    /// A load of element `index` of the flattened `buffer`, of element type
    /// `ty` (lanes taken from `index`).
    pub fn load(buffer: impl Into<Name>, index: Expr, ty: Type) -> Expr {
        let ty = ty.with_lanes(index.ty().lanes);
        Expr::new(ExprNode::Load { buffer: buffer.into(), index, ty })
    }

    /// The vector `base, base + stride, ..., base + (lanes - 1) * stride`.
    pub fn ramp(base: Expr, stride: Expr, lanes: u32) -> Expr {
        Expr::new(ExprNode::Ramp { base, stride, lanes })
    }

    /// `value` repeated over `lanes` lanes; `value` itself for one lane.
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
        // A float literal takes the type of a narrower float expression it
        // meets (`e * 0.5` stays f32), as in Halide; otherwise the wider wins.
        (true, true) if ta.bits() < tb.bits() && b.as_float().is_some() && a.as_float().is_none() => return ta,
        (true, true) if tb.bits() < ta.bits() && a.as_float().is_some() && b.as_float().is_none() => return tb,
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

/// Casts both operands to their matched type and lane count (a float
/// literal narrowed to a float expression's type becomes a literal of that
/// type, see `float_literal`).
pub fn match_types(a: Expr, b: Expr) -> (Expr, Expr) {
    let t = matched_type(&a, &b);
    let convert = |e: Expr| match e.as_float() {
        Some(v) if t.is_float() && t.bits() < e.ty().bits() => float_literal(v, t),
        _ => Expr::cast(t, e),
    };
    match_lanes(convert(a), convert(b))
}

/// Whether the literal `v` fits the float type `ty`: it rounds to a value
/// of `ty` that is neither infinite (from a finite `v`) nor zero (from a
/// nonzero `v`). Rounding to the nearest value is fine (`0.1` meeting an
/// f32 expression is `0.1f32`, as in Halide and C).
pub fn float_fits(v: f64, ty: ScalarType) -> bool {
    if ty != ScalarType::F32 {
        return true;
    }
    let r = v as f32;
    let overflows = v.is_finite() && r.is_infinite();
    let underflows = v != 0.0 && r == 0.0;
    !(overflows || underflows)
}

/// The literal `v` as a constant of the float type `ty`. A value that does
/// not fit ([`float_fits`]) is kept unrounded in a constant of type `ty`, an
/// ill-formed node the language's checks report (naming the Func) before
/// anything evaluates it.
fn float_literal(v: f64, ty: Type) -> Expr {
    if float_fits(v, ty.scalar) {
        Expr::float(v, ty)
    } else {
        Expr::new(ExprNode::FloatImm { value: v, ty })
    }
}

/// The operands of a bitwise operator (`&`, `|`, `^`) with Halide's typing:
/// an integer literal takes the other operand's type (it must fit it), and
/// integers of one signedness widen to the wider. Any other pair (floats,
/// bools, mixed signedness, a literal that does not fit) is left as it is,
/// an ill-typed node the language's checks report.
fn bitwise_operands(a: Expr, b: Expr) -> (Expr, Expr) {
    let (ta, tb) = (a.ty().element(), b.ty().element());
    let fits = |v: i64, t: Type| t.is_int() && (t.scalar.int_min()..=t.scalar.int_max()).contains(&(v as i128));
    let t = match (a.as_int(), b.as_int()) {
        _ if ta == tb => Some(ta),
        (Some(v), None) if fits(v, tb) => Some(tb),
        (None, Some(v)) if fits(v, ta) => Some(ta),
        (None, None) if ta.is_int() && tb.is_int() && ta.is_signed_int() == tb.is_signed_int() => {
            Some(if ta.bits() >= tb.bits() { ta } else { tb })
        }
        _ => None,
    };
    match t {
        Some(t) => match_lanes(Expr::cast(t, a), Expr::cast(t, b)),
        None => (a, b),
    }
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
