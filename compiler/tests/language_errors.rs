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

/// `out(x, y) = sum(input(r, y) * w(x))` (and the `argmax` of the same):
/// the helper Funcs of the inline reductions are over `(x, y)`, the
/// order of `out`'s variables, not `(y, x)` as the variables first
/// appear; the calls follow, so the values are unchanged.
#[test]
fn inline_reduction_helpers_take_the_callers_variable_order() {
    use compiler::exec::reference::realize;
    use compiler::lang::reductions::{argmax, sum};
    use std::collections::BTreeMap;
    let (x, y) = xy();
    let input = ImageParam::new("input", ScalarType::I32, 2);
    let w = ImageParam::new("w", ScalarType::I32, 1);
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(4))]);
    let term = input.at([r.x().expr(), y.expr()]) * w.at([x.expr()]);
    let out = Func::new("out");
    out.define(&[&x, &y], sum(term.clone()) * 10 + argmax(term)[0].clone());
    let p = Pipeline::new(&[&out]).unwrap();
    let helpers: Vec<&FuncDef> = p.funcs.iter().filter(|f| *f.name != *"out").collect();
    assert_eq!(helpers.len(), 2, "sum and argmax");
    for h in helpers {
        let args: Vec<&str> = h.args.iter().map(|a| &**a).collect();
        assert_eq!(args, ["x", "y"], "{}", h.name);
    }
    let mut inp = Buffer::new("input", ScalarType::I32, &[(0, 4), (0, 3)]).unwrap();
    inp.fill(|c| Scalar::Int((c[0] * 7 + c[1] * 3) % 5 - 2));
    let mut wb = Buffer::new("w", ScalarType::I32, &[(0, 5)]).unwrap();
    wb.fill(|c| Scalar::Int(c[0] - 2));
    let inputs = BTreeMap::from([("input".to_string(), inp.clone()), ("w".to_string(), wb.clone())]);
    let got = realize(&p, &inputs, &BTreeMap::new(), "out", &[(0, 5), (0, 3)]).unwrap();
    for xv in 0..5 {
        for yv in 0..3 {
            let terms: Vec<i64> = (0..4).map(|rv| inp.get(&[rv, yv]).unwrap().as_i128() as i64 * (xv - 2)).collect();
            let best = terms.iter().copied().max().unwrap();
            let want = terms.iter().sum::<i64>() * 10 + terms.iter().position(|&t| t == best).unwrap() as i64;
            assert_eq!(got.get(&[xv, yv]).unwrap(), Scalar::Int(want), "at ({xv}, {yv})");
        }
    }
}

#[test]
fn reinterpret_needs_one_width_and_no_bool() {
    let x = Var::new("x");
    for (to, value) in [(Type::u16(), cast(Type::f32(), x.expr())), (Type::i8(), x.expr().lt(3)), (Type::f64(), x.expr())] {
        let from = value.ty();
        let f = Func::new("f");
        f.define(&[&x], reinterpret(to, value));
        let err = Pipeline::new(&[&f]).unwrap_err();
        assert!(matches!(&err, LangError::Reinterpret { func, from: a, to: b, .. } if func == "f" && *a == from && *b == to), "{err}");
    }
    let g = Func::new("g");
    g.define(&[&x], reinterpret(Type::u32(), cast(Type::f32(), x.expr())));
    Pipeline::new(&[&g]).expect("f32 to u32 keeps the width");
}

/// Tuple mistakes name the Func and say how many values it has: a call
/// that picks no value, an update with the wrong number of values or a
/// value of the wrong type, a call of a value the Tuple does not have.
#[test]
fn tuple_mistakes_are_named() {
    let x = Var::new("x");
    let pair = || {
        let t = Func::new("t");
        t.define_tuple(&[&x], [x.expr(), cast(Type::f32(), x.expr())]);
        t
    };
    let t = pair();
    let f = Func::new("f");
    f.define(&[&x], t.at([x.expr()]));
    let err = Pipeline::new(&[&f]).unwrap_err();
    assert!(err.to_string().contains("t") && err.to_string().contains("Tuple of 2 values"), "{err}");

    let t = pair();
    t.update_tuple([x.expr()], [x.expr()]);
    let err = Pipeline::new(&[&t]).unwrap_err();
    assert!(err.to_string().contains("update 1 gives 1 value(s), but its definition has 2"), "{err}");

    let t = pair();
    t.update_tuple([x.expr()], [x.expr(), x.expr()]);
    let err = Pipeline::new(&[&t]).unwrap_err();
    assert!(matches!(&err, LangError::UpdateType { func, stage: 1, .. } if func == "t"), "{err}");

    let t = pair();
    let f = Func::new("f");
    f.define(&[&x], t.value_at([x.expr()], 2));
    let err = Pipeline::new(&[&f]).unwrap_err();
    assert!(err.to_string().contains("calls value 2 of t, which has 2 value(s)"), "{err}");

    let t = Func::new("t");
    t.define_tuple(&[&x], Vec::<Expr>::new());
    assert!(Pipeline::new(&[&t]).unwrap_err().to_string().contains("at least one value"));

    let t = pair();
    let p = Pipeline::new(&[&t]).unwrap();
    let err = compiler::exec::reference::realize(&p, &Default::default(), &Default::default(), "t", &[(0, 4)]).unwrap_err();
    assert!(err.to_string().contains("Tuple of 2 values"), "{err}");
}

#[test]
fn estimates_outside_the_32_bit_coordinate_space_are_errors() {
    let (x, _) = xy();
    for (min, extent) in [(0, i64::MAX), (0, -1), (i64::MIN, 10), (i64::from(i32::MAX), 2), (0, 1 << 40)] {
        let f = Func::new("f");
        f.define(&[&x], x.expr() + 1);
        f.set_estimate(0, min, extent);
        let err = Pipeline::new(&[&f]).unwrap_err();
        assert!(matches!(&err, LangError::Estimate { what, .. } if what == "Func f"), "{min}, {extent}: {err}");
    }
    let f = Func::new("f");
    f.define(&[&x], x.expr() + 1);
    f.set_estimate(0, i64::from(i32::MIN), i64::from(i32::MAX));
    Pipeline::new(&[&f]).unwrap();
}

#[test]
fn a_params_estimate_reaches_the_pipeline_whenever_it_is_set() {
    let (x, _) = xy();
    let gain = Param::new("gain", Type::f32());
    let offset = Param::new("offset", Type::i32());
    let f = Func::new("f");
    f.define(&[&x], cast(Type::f32(), &x + offset.expr()) * gain.expr());
    // Set after the param is used, and through a copy of the handle.
    gain.clone().set_estimate(2.5);
    let p = Pipeline::new(&[&f]).unwrap();
    let estimate = |name: &str| p.params.iter().find(|q| &*q.name == name).map(|q| q.estimate);
    assert_eq!(estimate("gain"), Some(Some(2.5)));
    assert_eq!(estimate("offset"), Some(None));
    assert_eq!(gain.estimate(), Some(2.5));
    // A plain-data pipeline: what it prints and reads back from JSON is what it is.
    let json = serde_json::to_string(&p).unwrap();
    let back: PipelineDef = serde_json::from_str(&json).unwrap();
    assert_eq!(back, p);
}

#[test]
fn a_params_estimate_must_be_one_finite_number() {
    let (x, _) = xy();
    let (a, b) = (Param::new("k", Type::i32()), Param::new("k", Type::i32()));
    a.set_estimate(3.0);
    b.set_estimate(4.0);
    let f = Func::new("f");
    f.define(&[&x], &x + a.expr() + b.expr());
    let err = Pipeline::new(&[&f]).unwrap_err();
    assert!(matches!(&err, LangError::Estimate { what, why } if what == "param k" && why.contains("3 and 4")), "{err}");
    b.set_estimate(3.0);
    assert_eq!(Pipeline::new(&[&f]).unwrap().params[0].estimate, Some(3.0));
    a.set_estimate(f64::NAN);
    b.set_estimate(f64::NAN);
    let err = Pipeline::new(&[&f]).unwrap_err();
    assert!(matches!(&err, LangError::Estimate { what, .. } if what == "param k"), "{err}");
}

#[test]
fn an_input_estimate_of_a_dimension_it_lacks_is_an_error() {
    let (x, y) = xy();
    let input = ImageParam::new("input", ScalarType::U8, 2);
    input.set_estimate(0, 0, 640).set_estimate(2, 0, 3);
    let f = Func::new("f");
    f.define(&[&x, &y], input.at([x.expr(), y.expr()]));
    let err = Pipeline::new(&[&f]).unwrap_err();
    assert!(matches!(&err, LangError::Estimate { what, why } if what == "input input" && why.contains("dimension 2")), "{err}");
}

/// The Funcs inline reductions make are named after the Func that calls
/// them, whatever the process built before: a schedule written for one
/// build of a pipeline names the same Funcs in the next.
#[test]
fn inline_reduction_helpers_are_named_after_their_callers() {
    use compiler::lang::reductions::{maximum, sum};
    let build = || {
        let (x, y) = xy();
        let input = ImageParam::new("input", ScalarType::F32, 2);
        let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(3))]);
        let blur = Func::new("blur");
        blur.define(&[&x, &y], sum(input.at([&x + r.x(), y.expr()])) / maximum(input.at([x.expr(), &y + r.x()])));
        let out = Func::new("out");
        out.define(&[&x, &y], sum(blur.at([x.expr(), &y + r.x()])));
        Pipeline::new(&[&out]).unwrap()
    };
    let first = build();
    let names: Vec<&str> = first.funcs.iter().map(|f| &*f.name).collect();
    assert_eq!(names, ["blur_sum", "blur_maximum", "blur", "out_sum", "out"]);
    let second = build();
    assert_eq!(first, second, "the same algorithm built twice");
    // A user's Func already named like a helper keeps its name.
    let (x, _) = xy();
    let taken = Func::new("f_sum");
    taken.define(&[&x], x.expr());
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(3))]);
    let f = Func::new("f");
    f.define(&[&x], sum(taken.at([&x + r.x()])));
    let p = Pipeline::new(&[&f]).unwrap();
    let names: Vec<&str> = p.funcs.iter().map(|f| &*f.name).collect();
    assert_eq!(names, ["f_sum", "f_sum1", "f"]);
}
