//! Operator overloading and the free functions of the language (`select`,
//! `min`, `clamp`, math, casts, `reinterpret`), so that algorithms read like math:
//! `(input.at([&x - 1, &y]) + input.at([&x, &y])) / 2`.

use crate::ir::expr::{BinOp, CmpOp, Expr, MathFn};
use crate::ir::types::Type;
use crate::lang::{Param, RVar, Var};
use std::ops;

/// Anything that converts into an expression by reference.
pub trait AsExpr {
    /// The expression this value stands for.
    fn as_expr(&self) -> Expr;
}

impl AsExpr for Expr {
    fn as_expr(&self) -> Expr {
        self.clone()
    }
}
impl AsExpr for Var {
    fn as_expr(&self) -> Expr {
        self.expr()
    }
}
impl AsExpr for RVar {
    fn as_expr(&self) -> Expr {
        self.expr()
    }
}
impl AsExpr for Param {
    fn as_expr(&self) -> Expr {
        self.expr()
    }
}
impl AsExpr for i32 {
    fn as_expr(&self) -> Expr {
        Expr::from(*self)
    }
}
impl AsExpr for f32 {
    fn as_expr(&self) -> Expr {
        Expr::from(*self)
    }
}
impl AsExpr for f64 {
    fn as_expr(&self) -> Expr {
        Expr::from(*self)
    }
}
impl<T: AsExpr> AsExpr for &T {
    fn as_expr(&self) -> Expr {
        (*self).as_expr()
    }
}

macro_rules! into_expr {
    ($($t:ty),*) => {$(
        impl From<$t> for Expr { fn from(v: $t) -> Expr { v.as_expr() } }
        impl From<&$t> for Expr { fn from(v: &$t) -> Expr { v.as_expr() } }
    )*};
}
into_expr!(Var, RVar, Param);

macro_rules! binary_ops {
    ($($lhs:ty),*) => {$(
        impl<R: AsExpr> ops::Add<R> for $lhs { type Output = Expr; fn add(self, r: R) -> Expr { Expr::binary(BinOp::Add, self.as_expr(), r.as_expr()) } }
        impl<R: AsExpr> ops::Sub<R> for $lhs { type Output = Expr; fn sub(self, r: R) -> Expr { Expr::binary(BinOp::Sub, self.as_expr(), r.as_expr()) } }
        impl<R: AsExpr> ops::Mul<R> for $lhs { type Output = Expr; fn mul(self, r: R) -> Expr { Expr::binary(BinOp::Mul, self.as_expr(), r.as_expr()) } }
        impl<R: AsExpr> ops::Div<R> for $lhs { type Output = Expr; fn div(self, r: R) -> Expr { Expr::binary(BinOp::Div, self.as_expr(), r.as_expr()) } }
        impl<R: AsExpr> ops::Rem<R> for $lhs { type Output = Expr; fn rem(self, r: R) -> Expr { Expr::binary(BinOp::Mod, self.as_expr(), r.as_expr()) } }
        impl<R: AsExpr> ops::BitAnd<R> for $lhs { type Output = Expr; fn bitand(self, r: R) -> Expr { Expr::bitwise(BinOp::BitAnd, self.as_expr(), r.as_expr()) } }
        impl<R: AsExpr> ops::BitOr<R> for $lhs { type Output = Expr; fn bitor(self, r: R) -> Expr { Expr::bitwise(BinOp::BitOr, self.as_expr(), r.as_expr()) } }
        impl<R: AsExpr> ops::BitXor<R> for $lhs { type Output = Expr; fn bitxor(self, r: R) -> Expr { Expr::bitwise(BinOp::BitXor, self.as_expr(), r.as_expr()) } }
        impl<R: AsExpr> ops::Shl<R> for $lhs { type Output = Expr; fn shl(self, r: R) -> Expr { Expr::shift(BinOp::Shl, self.as_expr(), r.as_expr()) } }
        impl<R: AsExpr> ops::Shr<R> for $lhs { type Output = Expr; fn shr(self, r: R) -> Expr { Expr::shift(BinOp::Shr, self.as_expr(), r.as_expr()) } }
        impl ops::Neg for $lhs { type Output = Expr; fn neg(self) -> Expr { let e = self.as_expr(); Expr::binary(BinOp::Sub, Expr::int(0, e.ty()), e) } }
        impl ops::Not for $lhs { type Output = Expr; fn not(self) -> Expr { Expr::bit_not(self.as_expr()) } }
    )*};
}
binary_ops!(Expr, &Expr, Var, &Var, RVar, &RVar, Param, &Param);

macro_rules! scalar_lhs_ops {
    ($($lhs:ty),*) => {$(
        impl ops::Add<Expr> for $lhs { type Output = Expr; fn add(self, r: Expr) -> Expr { Expr::binary(BinOp::Add, self.as_expr(), r) } }
        impl ops::Sub<Expr> for $lhs { type Output = Expr; fn sub(self, r: Expr) -> Expr { Expr::binary(BinOp::Sub, self.as_expr(), r) } }
        impl ops::Mul<Expr> for $lhs { type Output = Expr; fn mul(self, r: Expr) -> Expr { Expr::binary(BinOp::Mul, self.as_expr(), r) } }
        impl ops::Div<Expr> for $lhs { type Output = Expr; fn div(self, r: Expr) -> Expr { Expr::binary(BinOp::Div, self.as_expr(), r) } }
        impl ops::Add<&Var> for $lhs { type Output = Expr; fn add(self, r: &Var) -> Expr { Expr::binary(BinOp::Add, self.as_expr(), r.expr()) } }
        impl ops::Mul<&Var> for $lhs { type Output = Expr; fn mul(self, r: &Var) -> Expr { Expr::binary(BinOp::Mul, self.as_expr(), r.expr()) } }
    )*};
}
scalar_lhs_ops!(i32, f32, f64);

// `1 << k`, `0xFF & e`, ...: the literal takes the expression's type (of a
// shift, the literal is the value shifted and keeps its own type, i32).
impl ops::BitAnd<Expr> for i32 {
    type Output = Expr;
    fn bitand(self, r: Expr) -> Expr {
        Expr::bitwise(BinOp::BitAnd, self.as_expr(), r)
    }
}
impl ops::BitOr<Expr> for i32 {
    type Output = Expr;
    fn bitor(self, r: Expr) -> Expr {
        Expr::bitwise(BinOp::BitOr, self.as_expr(), r)
    }
}
impl ops::BitXor<Expr> for i32 {
    type Output = Expr;
    fn bitxor(self, r: Expr) -> Expr {
        Expr::bitwise(BinOp::BitXor, self.as_expr(), r)
    }
}
impl ops::Shl<Expr> for i32 {
    type Output = Expr;
    fn shl(self, r: Expr) -> Expr {
        Expr::shift(BinOp::Shl, self.as_expr(), r)
    }
}
impl ops::Shr<Expr> for i32 {
    type Output = Expr;
    fn shr(self, r: Expr) -> Expr {
        Expr::shift(BinOp::Shr, self.as_expr(), r)
    }
}

/// Comparisons and logic as methods (Rust's comparison traits must return bool).
pub trait CompareExt: AsExpr {
    /// `self < r` (bool).
    fn lt(&self, r: impl AsExpr) -> Expr {
        Expr::cmp(CmpOp::Lt, self.as_expr(), r.as_expr())
    }
    /// `self <= r` (bool).
    fn le(&self, r: impl AsExpr) -> Expr {
        Expr::cmp(CmpOp::Le, self.as_expr(), r.as_expr())
    }
    /// `self > r` (bool).
    fn gt(&self, r: impl AsExpr) -> Expr {
        Expr::cmp(CmpOp::Gt, self.as_expr(), r.as_expr())
    }
    /// `self >= r` (bool).
    fn ge(&self, r: impl AsExpr) -> Expr {
        Expr::cmp(CmpOp::Ge, self.as_expr(), r.as_expr())
    }
    /// `self == r` (bool); named `eq_` to stay clear of `PartialEq::eq`.
    fn eq_(&self, r: impl AsExpr) -> Expr {
        Expr::cmp(CmpOp::Eq, self.as_expr(), r.as_expr())
    }
    /// `self != r` (bool); named `ne_` to stay clear of `PartialEq::ne`.
    fn ne_(&self, r: impl AsExpr) -> Expr {
        Expr::cmp(CmpOp::Ne, self.as_expr(), r.as_expr())
    }
}
impl<T: AsExpr> CompareExt for T {}

/// `cond ? t : f`, both sides evaluated; the types of `t` and `f` are
/// matched.
pub fn select(cond: impl AsExpr, t: impl AsExpr, f: impl AsExpr) -> Expr {
    Expr::select(cond.as_expr(), t.as_expr(), f.as_expr())
}
/// The smaller of `a` and `b`, their types matched first.
pub fn min(a: impl AsExpr, b: impl AsExpr) -> Expr {
    Expr::min(a.as_expr(), b.as_expr())
}
/// The larger of `a` and `b`, their types matched first.
pub fn max(a: impl AsExpr, b: impl AsExpr) -> Expr {
    Expr::max(a.as_expr(), b.as_expr())
}
/// `min(max(x, lo), hi)`, with `lo` and `hi` cast to the type of `x`.
pub fn clamp(x: impl AsExpr, lo: impl AsExpr, hi: impl AsExpr) -> Expr {
    Expr::clamp(x.as_expr(), lo.as_expr(), hi.as_expr())
}
/// `e` converted to `ty` (integers wrap; floats to integers truncate towards
/// zero and saturate).
pub fn cast(ty: Type, e: impl AsExpr) -> Expr {
    Expr::cast(ty, e.as_expr())
}
/// The bits of `e` read as a value of `ty`, a type of the same width
/// (`reinterpret(Type::u32(), x)` gives the bits of an `f32` `x`); other
/// widths are an error `Pipeline::new` reports, naming the Func.
pub fn reinterpret(ty: Type, e: impl AsExpr) -> Expr {
    Expr::reinterpret(ty, e.as_expr())
}
/// A value whose name is bound once and used in `body`.
pub fn let_in(name: &str, value: impl AsExpr, body: impl FnOnce(Expr) -> Expr) -> Expr {
    let value = value.as_expr();
    let var = Expr::var(name, value.ty());
    Expr::let_in(name, value, body(var))
}

/// Several values, each bound once to its name and used in `body`, which
/// gets their variables in the order given (`let_all([("a", a), ("b",
/// b)], |[a, b]| a * b)`); the first binding is outermost.
pub fn let_all<const N: usize>(bindings: [(&str, Expr); N], body: impl FnOnce([Expr; N]) -> Expr) -> Expr {
    let vars = bindings.each_ref().map(|(name, value)| Expr::var(*name, value.ty()));
    bindings.into_iter().rev().fold(body(vars), |inner, (name, value)| Expr::let_in(name, value, inner))
}

macro_rules! unary_math {
    ($($name:ident => $f:ident),*) => {$(
        /// The math intrinsic of this name applied to `e` (integer arguments
        /// of the float intrinsics are cast to f32).
        pub fn $name(e: impl AsExpr) -> Expr { Expr::math(MathFn::$f, vec![e.as_expr()]) }
    )*};
}
unary_math!(abs => Abs, sqrt => Sqrt, exp => Exp, log => Log, sin => Sin, cos => Cos, tanh => Tanh, floor => Floor, ceil => Ceil, round => Round,
    trunc => Trunc, popcount => Popcount, count_leading_zeros => CountLeadingZeros, count_trailing_zeros => CountTrailingZeros,
    is_nan => IsNan, is_inf => IsInf, is_finite => IsFinite);

/// `a` to the power `b`, in floating point (integer arguments are cast to the
/// other's float type, or f32).
pub fn pow(a: impl AsExpr, b: impl AsExpr) -> Expr {
    Expr::math(MathFn::Pow, vec![a.as_expr(), b.as_expr()])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::expr::ExprNode;

    #[test]
    fn let_all_binds_each_value_once_the_first_outermost() {
        let x = Expr::ivar("x");
        let e = let_all([("a", x.clone() + 1), ("b", cast(Type::f32(), x) * 2.0f32)], |[a, b]| cast(Type::f32(), a) * b);
        assert_eq!(e.ty(), Type::f32());
        let ExprNode::Let { name, body, .. } = e.node() else { panic!("{e}") };
        assert_eq!(&**name, "a");
        let ExprNode::Let { name, value, .. } = body.node() else { panic!("{e}") };
        assert_eq!((&**name, value.ty()), ("b", Type::f32()));
    }
}
