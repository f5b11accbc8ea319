//! Wire pipelines and schedules that are not valid are errors that name
//! the Func and the problem: a missing `oneof`, an unknown type, a call of
//! an unknown Func, a call with the wrong arity, a Func defined twice, a
//! name the compiler reserves; mutated encodings never make conversion
//! panic.

#[path = "common/mutate.rs"]
mod mutate;

use compiler::{PipelineDef, Schedule};
use mutate::mutate;
use proto::v1;
use proto::v1::expr::Node;
use random_pipelines::{generate, GeneratorParams};

fn valid() -> v1::Pipeline {
    let p = generate(&GeneratorParams { seed: 7, max_stages: 4, input_size: (32, 32, 3), ..Default::default() }).unwrap().pipeline;
    v1::Pipeline::try_from(&p).unwrap()
}

fn error_of(w: &v1::Pipeline) -> String {
    PipelineDef::try_from(w).expect_err("the pipeline is invalid").to_string()
}

/// A call of `callee` with `n` i32 coordinates.
fn call(callee: &str, n: usize) -> v1::Expr {
    let zero = v1::Expr { node: Some(Node::IntImm(v1::IntImm { value: 0, r#type: v1::ScalarType::I32 as i32 })) };
    v1::Expr {
        node: Some(Node::Call(v1::Call {
            target: Some(v1::call::Target::Func(callee.to_string())),
            args: vec![zero; n],
            r#type: v1::ScalarType::F32 as i32,
            value_index: 0,
        })),
    }
}

#[test]
fn a_call_of_an_unknown_func_names_both() {
    let mut w = valid();
    let last = w.funcs.last_mut().unwrap();
    last.value = Some(call("nowhere", 2));
    let e = error_of(&w);
    assert!(e.contains(&w.funcs.last().unwrap().name) && e.contains("unknown Func nowhere"), "{e}");
}

#[test]
fn a_call_with_the_wrong_arity_says_how_many() {
    let mut w = valid();
    let callee = w.funcs[0].clone();
    let last = w.funcs.last_mut().unwrap();
    last.r#type = callee.r#type;
    last.value = Some(v1::Expr {
        node: Some(Node::Call(v1::Call {
            target: Some(v1::call::Target::Func(callee.name.clone())),
            args: vec![],
            r#type: callee.r#type,
            value_index: 0,
        })),
    });
    let e = error_of(&w);
    assert!(e.contains(&format!("calls {} with 0 coordinates, but it has {} dimensions", callee.name, callee.args.len())), "{e}");
}

#[test]
fn a_func_defined_twice_is_named() {
    let mut w = valid();
    w.funcs.push(w.funcs[0].clone());
    assert_eq!(error_of(&w), format!("Func {} is defined twice", w.funcs[0].name));
}

#[test]
fn a_missing_oneof_and_an_unknown_type_are_named() {
    let mut w = valid();
    w.funcs[0].value = Some(v1::Expr { node: None });
    let e = error_of(&w);
    assert!(e.contains(&format!("Func {}, pure definition: missing expression node", w.funcs[0].name)), "{e}");
    let mut w = valid();
    w.funcs[0].r#type = 99;
    let e = error_of(&w);
    assert!(e.contains(&format!("Func {}: type has unknown value 99", w.funcs[0].name)), "{e}");
}

#[test]
fn operands_of_different_types_are_refused() {
    let mut w = valid();
    let i = |t: v1::ScalarType| v1::Expr { node: Some(Node::IntImm(v1::IntImm { value: 1, r#type: t as i32 })) };
    w.funcs[0].r#type = v1::ScalarType::I32 as i32;
    w.funcs[0].value = Some(v1::Expr {
        node: Some(Node::Binary(Box::new(v1::Binary {
            op: v1::BinaryOp::Add as i32,
            a: Some(Box::new(i(v1::ScalarType::I32))),
            b: Some(Box::new(i(v1::ScalarType::I16))),
        }))),
    });
    let e = error_of(&w);
    assert!(e.contains("types i32 and i16"), "{e}");
}

#[test]
fn reserved_names_fail_the_compilers_checks() {
    let mut w = valid();
    let old = w.funcs[0].name.clone();
    let new = format!("{old}.x");
    let rename = |s: &mut String| {
        if *s == old {
            s.clone_from(&new)
        }
    };
    w.funcs[0].name.clone_from(&new);
    w.outputs.iter_mut().for_each(rename);
    fn visit(e: &mut v1::Expr, f: &dyn Fn(&mut String)) {
        if let Some(Node::Call(c)) = &mut e.node {
            if let Some(v1::call::Target::Func(n)) = &mut c.target {
                f(n);
            }
        }
        match &mut e.node {
            Some(Node::Call(c)) => c.args.iter_mut().for_each(|a| visit(a, f)),
            Some(Node::Cast(c)) => c.value.iter_mut().for_each(|a| visit(a, f)),
            Some(Node::Binary(b)) => [&mut b.a, &mut b.b].into_iter().flatten().for_each(|a| visit(a, f)),
            Some(Node::Select(s)) => [&mut s.condition, &mut s.if_true, &mut s.if_false].into_iter().flatten().for_each(|a| visit(a, f)),
            _ => {}
        }
    }
    for func in &mut w.funcs {
        func.value.iter_mut().for_each(|e| visit(e, &rename));
    }
    let e = error_of(&w);
    assert!(e.contains("compiler's checks") && e.contains(&new), "{e}");
}

#[test]
fn a_schedule_with_a_missing_level_or_a_repeated_func_is_refused() {
    let func = v1::FuncSchedule { func: "f".into(), compute: None, ..Default::default() };
    let e = Schedule::try_from(&v1::Schedule { funcs: vec![func] }).unwrap_err().to_string();
    assert_eq!(e, "schedule of Func f: missing compute level");
    let root = v1::LoopLevel { level: Some(v1::loop_level::Level::Root(v1::Root {})) };
    let func = v1::FuncSchedule { func: "f".into(), compute: Some(root), ..Default::default() };
    let e = Schedule::try_from(&v1::Schedule { funcs: vec![func.clone(), func] }).unwrap_err().to_string();
    assert_eq!(e, "schedule of Func f: the Func is scheduled twice");
}

#[test]
fn mutated_encodings_are_errors_or_pipelines_never_panics() {
    use prost::Message;
    use rand::{Rng, SeedableRng};
    let bytes = valid().encode_to_vec();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let (mut undecodable, mut refused, mut accepted) = (0, 0, 0);
    for _ in 0..5000 {
        let mut b = bytes.clone();
        for _ in 0..rng.random_range(1..3) {
            b = mutate(&b, &mut rng);
        }
        match v1::Pipeline::decode(b.as_slice()) {
            Err(_) => undecodable += 1,
            Ok(w) => match PipelineDef::try_from(&w) {
                Ok(_) => accepted += 1,
                Err(_) => refused += 1,
            },
        }
    }
    println!("5000 mutated pipelines: {undecodable} do not decode, {refused} refused, {accepted} accepted");
    assert!(refused > 0 && accepted > 0);
}

#[test]
fn a_bitwise_operator_on_floats_is_named() {
    let mut w = valid();
    let float = |v: f64| v1::Expr { node: Some(Node::FloatImm(v1::FloatImm { value: v, r#type: v1::ScalarType::F32 as i32 })) };
    let last = w.funcs.last_mut().unwrap();
    last.r#type = v1::ScalarType::F32 as i32;
    last.value = Some(v1::Expr {
        node: Some(Node::Binary(Box::new(v1::Binary {
            op: v1::BinaryOp::BitXor as i32,
            a: Some(Box::new(float(1.0))),
            b: Some(Box::new(float(2.0))),
        }))),
    });
    let e = error_of(&w);
    assert!(e.contains(&w.funcs.last().unwrap().name) && e.contains("BitXor needs integer operands, not f32"), "{e}");
}

#[test]
fn ill_typed_intrinsics_are_named() {
    let float = v1::Expr { node: Some(Node::FloatImm(v1::FloatImm { value: 1.0, r#type: v1::ScalarType::F32 as i32 })) };
    let math = |f: v1::MathFn, ty: v1::ScalarType| v1::Expr {
        node: Some(Node::Call(v1::Call {
            target: Some(v1::call::Target::Math(f as i32)),
            args: vec![float.clone()],
            r#type: ty as i32,
            value_index: 0,
        })),
    };
    for (f, ty, why) in [
        (
            v1::MathFn::Popcount,
            v1::ScalarType::F32,
            "popcount of (f32) returning f32 is ill-typed: bit counts take and return one integer type",
        ),
        (
            v1::MathFn::IsNan,
            v1::ScalarType::F32,
            "is_nan of (f32) returning f32 is ill-typed: float classes take a float and return a bool",
        ),
    ] {
        let mut w = valid();
        let last = w.funcs.last_mut().unwrap();
        last.r#type = ty as i32;
        last.value = Some(math(f, ty));
        let e = error_of(&w);
        assert!(e.contains(&w.funcs.last().unwrap().name) && e.contains(why), "{e}");
    }
}

#[test]
fn a_reinterpret_that_changes_the_width_is_named() {
    let float = v1::Expr { node: Some(Node::FloatImm(v1::FloatImm { value: 1.0, r#type: v1::ScalarType::F32 as i32 })) };
    let mut w = valid();
    let last = w.funcs.last_mut().unwrap();
    last.r#type = v1::ScalarType::U16 as i32;
    last.value = Some(v1::Expr {
        node: Some(Node::Reinterpret(Box::new(v1::Reinterpret { r#type: v1::ScalarType::U16 as i32, value: Some(Box::new(float)) }))),
    });
    let e = error_of(&w);
    assert!(e.contains(&w.funcs.last().unwrap().name) && e.contains("reinterpret of a f32 value as u16"), "{e}");
}

#[test]
fn tuple_values_must_match_their_types_and_calls_a_value_the_func_has() {
    let mut w = valid();
    let first = &mut w.funcs[0];
    first.tuple_types.push(first.r#type);
    let e = error_of(&w);
    assert!(e.contains(&w.funcs[0].name) && e.contains("1 Tuple types for 0 Tuple values"), "{e}");
    w.funcs[0].tuple_types.clear();
    let callee = w.funcs[0].clone();
    let last = w.funcs.last_mut().unwrap();
    last.r#type = callee.r#type;
    let zero = v1::Expr { node: Some(Node::IntImm(v1::IntImm { value: 0, r#type: v1::ScalarType::I32 as i32 })) };
    last.value = Some(v1::Expr {
        node: Some(Node::Call(v1::Call {
            target: Some(v1::call::Target::Func(callee.name.clone())),
            args: vec![zero; callee.args.len()],
            r#type: callee.r#type,
            value_index: 1,
        })),
    });
    let e = error_of(&w);
    assert!(e.contains(&format!("calls value 1 of {}, which has 1 value(s)", callee.name)), "{e}");
}
