//! The typing rules of the bitwise operators, shifts and float literals:
//! integer `&`, `|`, `^` and `!` are bitwise and keep the integer type,
//! bools stay logical, shifts have the type of the value shifted, a float
//! literal takes the type of the float expression it meets; what Halide
//! rejects is an error naming the Func, never a panic.

use compiler::error::LangError;
use compiler::ir::expr::ExprNode;
use compiler::lang::ops::*;
use compiler::*;

/// The type of a Func `f(x) = e` once the pipeline is built.
fn type_of(e: impl Into<Expr>) -> Result<Type, LangError> {
    let x = Var::new("x");
    let f = Func::new("f");
    f.define(&[&x], e);
    Pipeline::new(&[&f]).map(|p| p.funcs.last().unwrap().types[0])
}

fn input(t: ScalarType) -> Expr {
    let name = format!("in_{t}");
    ImageParam::new(&name, t, 1).at([Var::new("x").expr()])
}

#[test]
fn integer_bitwise_operators_keep_the_integer_type() {
    assert_eq!(type_of(input(ScalarType::U32) & 0xFFFF).unwrap(), Type::u32(), "a mask is not a logical and");
    assert_eq!(type_of(input(ScalarType::U8) | input(ScalarType::U16)).unwrap(), Type::u16(), "the wider of one signedness");
    assert_eq!(type_of(input(ScalarType::I8) ^ input(ScalarType::I64)).unwrap(), Type::i64());
    assert_eq!(type_of(0x0F & input(ScalarType::I16)).unwrap(), Type::i16(), "a literal takes the other type");
    assert_eq!(type_of(!input(ScalarType::U8)).unwrap(), Type::u8());
    assert_eq!(type_of(input(ScalarType::U8) << input(ScalarType::I32)).unwrap(), Type::u8(), "a shift has the value's type");
    assert_eq!(type_of(1 << input(ScalarType::U8)).unwrap(), Type::i32());
    assert_eq!(type_of(input(ScalarType::I16) >> 3).unwrap(), Type::i16());
}

#[test]
fn bool_operators_stay_logical() {
    let (a, b) = (input(ScalarType::U8).gt(3), input(ScalarType::I32).lt(0));
    assert_eq!(type_of(select(a.clone() & b.clone(), 1, 0)).unwrap(), Type::i32());
    for e in [a.clone() & b.clone(), a.clone() | b.clone(), a.clone() ^ b.clone(), !a] {
        assert_eq!(e.ty(), Type::bool(), "{e}");
        assert!(!matches!(e.node(), ExprNode::Binary { .. }), "{e} is logical");
    }
}

/// The error of `f(x) = e`, which must name f and mention `needle`.
fn rejected(e: Expr, needle: &str) {
    let err = type_of(e).unwrap_err();
    assert!(matches!(&err, LangError::Operands { func, .. } if func == "f"), "{err}");
    assert!(err.to_string().contains(needle), "{err} should mention {needle}");
}

#[test]
fn what_halide_rejects_is_an_error_naming_the_func() {
    rejected(input(ScalarType::F32) & 1, "integer operands");
    rejected(input(ScalarType::U8) & input(ScalarType::F32), "integer operands");
    rejected(input(ScalarType::F64) << 2, "integer operands");
    rejected(input(ScalarType::I32) >> input(ScalarType::F32), "integer operands");
    rejected(!input(ScalarType::F32), "integer operands");
    rejected(input(ScalarType::U8) & input(ScalarType::I16), "both signed or both unsigned");
    rejected(input(ScalarType::U8) | 300, "the constant 300 does not fit u8");
    rejected(input(ScalarType::U16) ^ -1, "the constant -1 does not fit u16");
    rejected(input(ScalarType::U8).gt(3) & input(ScalarType::U16), "integer operands");
}

#[test]
fn a_float_literal_takes_the_type_of_the_float_expression() {
    let f = input(ScalarType::F32);
    assert_eq!(type_of(f.clone() * 0.5).unwrap(), Type::f32(), "an f64 literal meets an f32 expression");
    assert_eq!(type_of(0.25 + f.clone()).unwrap(), Type::f32());
    assert_eq!(type_of(select(f.clone().gt(0.0), f.clone(), 0.1)).unwrap(), Type::f32());
    assert_eq!(type_of(min(f.clone(), 1e30)).unwrap(), Type::f32());
    // 0.1 rounds to the nearest f32, as `0.1f32` does.
    let e = f.clone() * 0.1;
    let ExprNode::Binary { b, .. } = e.node() else { panic!("{e}") };
    assert_eq!(b.as_float(), Some(0.1f32 as f64));
    // An f64 expression keeps f64, and so does an f32 literal meeting it.
    let d = input(ScalarType::F64);
    assert_eq!(type_of(d.clone() * 0.5f32).unwrap(), Type::f64());
    assert_eq!(type_of(d * 0.5).unwrap(), Type::f64());
    // Integers meeting a float literal become the literal's type.
    assert_eq!(type_of(input(ScalarType::I32) * 0.5).unwrap(), Type::f64());
}

#[test]
fn a_float_literal_that_does_not_fit_is_an_error() {
    for (literal, shown) in [(1e300, "1e300"), (-1e39, "-1e39"), (1e-50, "1e-50")] {
        let err = type_of(input(ScalarType::F32) * literal).unwrap_err();
        assert!(matches!(&err, LangError::FloatLiteral { func, ty, .. } if func == "f" && *ty == Type::f32()), "{err}");
        assert!(err.to_string().contains(shown), "{err}");
    }
    // The largest f32 and infinities fit.
    assert!(type_of(input(ScalarType::F32) * f32::MAX as f64).is_ok());
    assert!(type_of(input(ScalarType::F32) + f64::INFINITY).is_ok());
}

#[test]
fn min_and_max_of_mixed_signedness_meet_as_signed_of_the_wider_width() {
    // Halide's rule for any binary operator: int(a) with uint(b) is int of
    // the wider width; a literal takes the other operand's type.
    assert_eq!(type_of(min(input(ScalarType::U8), input(ScalarType::I8))).unwrap(), Type::i8());
    assert_eq!(type_of(max(input(ScalarType::U16), input(ScalarType::I8))).unwrap(), Type::i16());
    assert_eq!(type_of(min(input(ScalarType::I16), input(ScalarType::U32))).unwrap(), Type::i32());
    assert_eq!(type_of(max(input(ScalarType::U8), 200)).unwrap(), Type::u8(), "a literal takes the other type");
    assert_eq!(type_of(min(input(ScalarType::U8), input(ScalarType::U16))).unwrap(), Type::u16());
}
