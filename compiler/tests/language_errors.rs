//! Mistakes in an algorithm are reported when the pipeline is built, each
//! naming the Func at fault; none of them panics.

use compiler::error::LangError;
use compiler::lang::ops::*;
use compiler::*;

fn xy() -> (Var, Var) {
    (Var::new("x"), Var::new("y"))
}

#[test]
fn free_variable_in_a_pure_definition() {
    let (x, y) = xy();
    let f = Func::new("f");
    f.define(&[&x], y.expr() + 1);
    let err = Pipeline::new(&[&f]).unwrap_err();
    assert!(matches!(&err, LangError::FreeVariable { func, var, .. } if func == "f" && var == "y"), "{err}");
    assert!(err.to_string().contains("variable y"));
}

#[test]
fn wrong_number_of_coordinates() {
    let (x, y) = xy();
    let g = Func::new("g");
    g.define(&[&x, &y], x.expr() + y.expr());
    let f = Func::new("f");
    f.define(&[&x], g.at([x.expr()]));
    let err = Pipeline::new(&[&f]).unwrap_err();
    assert!(matches!(&err, LangError::Arity { func, expected: 2, got: 1, .. } if func == "g"), "{err}");
}

#[test]
fn float_coordinates_are_rejected() {
    let x = Var::new("x");
    let g = Func::new("g");
    g.define(&[&x], x.expr());
    let f = Func::new("f");
    f.define(&[&x], g.at([cast(Type::f32(), x.expr())]));
    let err = Pipeline::new(&[&f]).unwrap_err();
    assert!(matches!(&err, LangError::CoordinateType { func, callee, .. } if func == "f" && callee == "g"), "{err}");
}

#[test]
fn update_with_a_different_type() {
    let x = Var::new("x");
    let f = Func::new("f");
    f.define(&[&x], Expr::int(0, Type::u8()));
    f.update([x.expr()], 1.5f32.as_expr());
    let err = Pipeline::new(&[&f]).unwrap_err();
    assert!(matches!(&err, LangError::UpdateType { func, stage: 1, .. } if func == "f"), "{err}");
}

#[test]
fn pure_variable_moved_in_a_self_reference() {
    let (x, y) = xy();
    let f = Func::new("f");
    f.define(&[&x, &y], x.expr() + y.expr());
    f.update([x.expr(), y.expr()], f.at([&x + 1, y.expr()]));
    let err = Pipeline::new(&[&f]).unwrap_err();
    assert!(matches!(&err, LangError::PureVarMisplaced { func, var, position: 0, .. } if func == "f" && var == "x"), "{err}");
}

#[test]
fn free_variable_in_an_update() {
    let (x, y) = xy();
    let f = Func::new("f");
    f.define(&[&x], x.expr());
    f.update([Expr::i32(0)], y.expr());
    let err = Pipeline::new(&[&f]).unwrap_err();
    assert!(matches!(&err, LangError::FreeVariable { func, stage: 1, .. } if func == "f"), "{err}");
}

#[test]
fn reduction_variable_in_a_pure_definition() {
    let x = Var::new("x");
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(4))]);
    let f = Func::new("f");
    f.define(&[&x], x.expr() + r.x().expr());
    let err = Pipeline::new(&[&f]).unwrap_err();
    assert!(matches!(&err, LangError::RVarInPureDefinition { func, .. } if func == "f"), "{err}");
}

#[test]
fn called_but_never_defined() {
    let x = Var::new("x");
    let g = Func::new("g");
    let f = Func::new("f");
    f.define(&[&x], g.at([x.expr()]));
    let err = Pipeline::new(&[&f]).unwrap_err();
    assert!(matches!(&err, LangError::Undefined { func } if func == "g"), "{err}");
}

#[test]
fn two_funcs_with_one_name() {
    let x = Var::new("x");
    let a = Func::new("same");
    a.define(&[&x], x.expr());
    let b = Func::new("same");
    b.define(&[&x], x.expr() * 2);
    let f = Func::new("f");
    f.define(&[&x], a.at([x.expr()]) + b.at([x.expr()]));
    let err = Pipeline::new(&[&f]).unwrap_err();
    assert!(matches!(&err, LangError::DuplicateName { name } if name == "same"), "{err}");
}

#[test]
fn defined_twice() {
    let x = Var::new("x");
    let f = Func::new("f");
    f.define(&[&x], x.expr());
    f.define(&[&x], x.expr() + 1);
    let err = Pipeline::new(&[&f]).unwrap_err();
    assert!(matches!(&err, LangError::Redefined { func } if func == "f"), "{err}");
}

#[test]
fn update_before_definition() {
    let x = Var::new("x");
    let f = Func::new("f");
    f.update([x.expr()], x.expr());
    let err = Pipeline::new(&[&f]).unwrap_err();
    assert!(matches!(&err, LangError::UpdateBeforeDefinition { func } if func == "f"), "{err}");
}

#[test]
fn names_that_could_collide_with_derived_names_are_rejected() {
    let cases: [(&str, &str, &str); 4] = [("f.s0", "x", "Func"), ("f", "x.min", "Var"), ("2f", "x", "Func"), ("f g", "x", "Func")];
    for (func, var, kind) in cases {
        let x = Var::new(var);
        let f = Func::new(func);
        f.define(&[&x], x.expr());
        let err = Pipeline::new(&[&f]).unwrap_err();
        assert!(matches!(&err, LangError::InvalidName { kind: k, .. } if *k == kind), "{func}/{var}: {err}");
        assert!(err.to_string().contains(if kind == "Func" { func } else { var }), "{err}");
    }
    let input = compiler::ImageParam::new("in.put", compiler::ScalarType::F32, 1);
    let x = Var::new("x");
    let f = Func::new("f");
    f.define(&[&x], input.at([x.expr()]));
    let err = Pipeline::new(&[&f]).unwrap_err();
    assert!(matches!(&err, LangError::InvalidName { kind: "input", .. }), "{err}");
}
