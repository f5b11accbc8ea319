//! Bitwise operators and shifts at their edges, on all three executors:
//! every integer type, values at the extremes, shift counts 0, 1, width-1,
//! width, beyond, negative and the count type's extremes, given in the
//! value's type and as an `i8` (a negative count of an unsigned value
//! becomes the other shift). The reference evaluator, the interpreter and
//! the JIT, scalar and vectorized, must all give what a direct model of
//! the semantics gives: `x << n` is `x * 2^n` wrapped, `x >> n` is
//! `floor(x / 2^n)`, a negative count shifts the other way, and a count of
//! the width or more shifts every bit out.

use compiler::exec::buffer::Buffer;
use compiler::ir::expr::BinOp;
use compiler::ir::types::{ScalarType, Type};
use compiler::ir::value::Scalar;
use compiler::lang::pipeline::PipelineDef;
use compiler::{Expr, Func, ImageParam, Pipeline, Var};
use std::collections::BTreeMap;

#[path = "support/executors_agree.rs"]
mod executors_agree;
use executors_agree::{assert_executors_agree, wrap};

const INT_TYPES: [ScalarType; 8] =
    [ScalarType::U8, ScalarType::I8, ScalarType::U16, ScalarType::I16, ScalarType::U32, ScalarType::I32, ScalarType::U64, ScalarType::I64];
const OPS: [BinOp; 5] = [BinOp::BitAnd, BinOp::BitOr, BinOp::BitXor, BinOp::Shl, BinOp::Shr];

/// The model: the operator on the values, the result wrapped to `t`.
fn model(op: BinOp, t: ScalarType, x: i128, n: i128) -> i128 {
    let w = t.bits() as i128;
    let left = |x: i128, n: i128| if n >= w { 0 } else { x * (1i128 << n) };
    let right = |x: i128, n: i128| {
        if n >= w {
            if x < 0 {
                -1
            } else {
                0
            }
        } else {
            x.div_euclid(1i128 << n)
        }
    };
    wrap(
        match op {
            BinOp::BitAnd => x & n,
            BinOp::BitOr => x | n,
            BinOp::BitXor => x ^ n,
            BinOp::Shl if n >= 0 => left(x, n),
            BinOp::Shl => right(x, -n),
            BinOp::Shr if n >= 0 => right(x, n),
            BinOp::Shr => left(x, -n),
            other => unreachable!("{other:?}"),
        },
        t,
    )
}

/// Sixteen values of `t`: zero, ones, the extremes, patterns.
fn values(t: ScalarType) -> Vec<i128> {
    let (min, max) = (t.int_min(), t.int_max());
    [0, 1, -1, 2, 3, -7, 100, -100, min, max, min + 1, max - 1, 0x5A5A_5A5A_5A5A_5A5A, 0x0F0F, -0x1234_5678, 1 << 20]
        .into_iter()
        .map(|v| wrap(v, t))
        .collect()
}

/// Counts of type `c` for values of `t`: both signs around zero, the
/// width, beyond, and the count type's extremes.
fn counts(t: ScalarType, c: ScalarType) -> Vec<i128> {
    let w = t.bits() as i128;
    [0, 1, 2, w - 1, w, w + 1, 2 * w, 100, -1, -2, -(w - 1), -w, -w - 1, c.int_min(), c.int_max()].into_iter().map(|v| wrap(v, c)).collect()
}

fn scalar(v: i128, t: ScalarType) -> Scalar {
    if t.is_signed_int() {
        Scalar::Int(v as i64)
    } else {
        Scalar::UInt(v as u64)
    }
}

/// A 1-D buffer holding `data`.
fn buffer(name: &str, t: ScalarType, data: &[i128]) -> Buffer {
    let mut b = Buffer::new(name, t, &[(0, data.len() as i64)]).unwrap();
    b.fill(|c| scalar(data[c[0] as usize], t));
    b
}

/// `out(i) = a(i) op b(i)` over every (value, count) pair of `t` with counts
/// of type `c`, checked on every executor against the model.
fn check(op: BinOp, t: ScalarType, c: ScalarType) {
    let (vs, ns) = (values(t), counts(t, c));
    let pairs: Vec<(i128, i128)> = ns.iter().flat_map(|&n| vs.iter().map(move |&v| (v, n))).collect();
    let a: Vec<i128> = pairs.iter().map(|p| p.0).collect();
    let b: Vec<i128> = pairs.iter().map(|p| p.1).collect();
    let x = Var::new("x");
    let (ia, ib) = (ImageParam::new("a", t, 1), ImageParam::new("b", c, 1));
    let (ea, eb) = (ia.at([x.expr()]), ib.at([x.expr()]));
    let e = match op {
        BinOp::BitAnd => ea & eb,
        BinOp::BitOr => ea | eb,
        BinOp::BitXor => ea ^ eb,
        BinOp::Shl => ea << eb,
        _ => ea >> eb,
    };
    let out = Func::new("out");
    out.define(&[&x], e);
    let p: PipelineDef = Pipeline::new(&[&out]).unwrap();
    assert_eq!(p.funcs[0].types, vec![Type::scalar(t)]);
    let inputs = BTreeMap::from([("a".to_string(), buffer("a", t, &a)), ("b".to_string(), buffer("b", c, &b))]);
    let region = vec![(0, pairs.len() as i64)];
    let reference = compiler::exec::reference::realize(&p, &inputs, &BTreeMap::new(), "out", &region).unwrap();
    for (i, &(v, n)) in pairs.iter().enumerate() {
        let want = scalar(model(op, t, v, n), t);
        assert_eq!(reference.get(&[i as i64]).unwrap(), want, "reference: {t} {v} {op:?} {c} {n}");
    }
    assert_executors_agree(&p, &inputs, &region, &reference, &format!("{t} {op:?} {c}"));
}

#[test]
fn every_operator_of_every_integer_type_agrees_with_the_model() {
    for t in INT_TYPES {
        for op in OPS {
            check(op, t, t);
        }
    }
}

#[test]
fn shift_counts_of_another_type_keep_their_value() {
    for t in INT_TYPES {
        for c in [ScalarType::I8, ScalarType::U8, ScalarType::I64] {
            check(BinOp::Shl, t, c);
            check(BinOp::Shr, t, c);
        }
    }
}

#[test]
fn a_count_literal_takes_the_value_type() {
    let x = Var::new("x");
    let a = ImageParam::new("a", ScalarType::U8, 1);
    let out = Func::new("out");
    out.define(&[&x], (a.at([x.expr()]) << 9) + (a.at([x.expr()]) >> -1) + (a.at([x.expr()]) >> Expr::i32(-300)));
    let p = Pipeline::new(&[&out]).unwrap();
    let inputs = BTreeMap::from([("a".to_string(), buffer("a", ScalarType::U8, &[0, 1, 127, 128, 255]))]);
    let got = compiler::exec::reference::realize(&p, &inputs, &BTreeMap::new(), "out", &[(0, 5)]).unwrap();
    let want = [0u64, 2, 254, 0, 254];
    for (i, w) in want.into_iter().enumerate() {
        assert_eq!(got.get(&[i as i64]).unwrap(), Scalar::UInt(w), "at {i}");
    }
}
