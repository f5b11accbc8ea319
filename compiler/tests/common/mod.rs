//! A catalog of small but varied pipelines, with inputs, for the tests.

#![allow(dead_code)]

pub mod differential;

use compiler::exec::buffer::Buffer;
use compiler::ir::value::Scalar;
use compiler::lang::boundary::{
    constant_exterior, constant_exterior_within, mirror_image_within, mirror_interior, mirror_interior_within, repeat_edge,
    repeat_edge_within,
};
use compiler::lang::ops::*;
use compiler::lang::pipeline::PipelineDef;
use compiler::lang::reductions::{argmax, maximum, sum};
use compiler::*;
use std::collections::BTreeMap;

/// One test case: a pipeline, its inputs and params, and the output region.
pub struct Case {
    pub name: &'static str,
    pub pipeline: PipelineDef,
    pub inputs: BTreeMap<String, Buffer>,
    pub params: BTreeMap<String, Scalar>,
    pub output: String,
    pub region: Vec<(i64, i64)>,
}

/// A deterministic pseudo-random input over a generous region.
pub fn input_buffer(name: &str, ty: ScalarType, region: &[(i64, i64)], max: u64) -> Buffer {
    let mut b = Buffer::new(name, ty, region).unwrap();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15 ^ (name.len() as u64);
    b.fill(|_| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let v = (state >> 33) % (max + 1);
        if ty.is_float() {
            Scalar::Float(v as f64 / 7.0)
        } else if ty.is_signed_int() {
            Scalar::Int(v as i64 - (max / 2) as i64)
        } else {
            Scalar::UInt(v)
        }
    });
    b
}

/// Inputs cover much more than the output reads: splits that round up or
/// shift inwards legitimately compute (and so read) past the required
/// region, as in Halide, and nested ones add up.
const IN2: [(i64, i64); 2] = [(-64, 160), (-64, 160)];
const OUT2: [(i64, i64); 2] = [(-3, 19), (2, 13)];

fn vars() -> (Var, Var) {
    (Var::new("x"), Var::new("y"))
}

fn case2(name: &'static str, out: &Func, inputs: Vec<Buffer>) -> Case {
    Case {
        name,
        pipeline: Pipeline::new(&[out]).unwrap(),
        inputs: inputs.into_iter().map(|b| (b.name.clone(), b)).collect(),
        params: BTreeMap::new(),
        output: out.name().to_string(),
        region: OUT2.to_vec(),
    }
}

pub fn blur() -> Case {
    let (x, y) = vars();
    let input = ImageParam::new("input", ScalarType::U16, 2);
    let bx = Func::new("blur_x");
    bx.define(&[&x, &y], (input.at([&x - 1, y.expr()]) + input.at([x.expr(), y.expr()]) + input.at([&x + 1, y.expr()])) / 3);
    let out = Func::new("blur_y");
    out.define(&[&x, &y], (bx.at([x.expr(), &y - 1]) + bx.at([x.expr(), y.expr()]) + bx.at([x.expr(), &y + 1])) / 3);
    case2("blur", &out, vec![input_buffer("input", ScalarType::U16, &IN2, 4000)])
}

pub fn stencil_chain() -> Case {
    let (x, y) = vars();
    let input = ImageParam::new("input", ScalarType::I32, 2);
    let mut prev: Func = Func::new("s0");
    prev.define(&[&x, &y], input.at([x.expr(), y.expr()]));
    for i in 1..4 {
        let f = Func::new(&format!("s{i}"));
        let p = prev.clone();
        let e = p.at([&x - 1, &y - 1]) + p.at([&x + 1, y.expr()]) * 2 - p.at([x.expr(), &y + 1]) + p.at([x.expr(), y.expr()]) / 4;
        f.define(&[&x, &y], e);
        prev = f;
    }
    case2("stencil_chain", &prev, vec![input_buffer("input", ScalarType::I32, &IN2, 1000)])
}

pub fn down_up_sample() -> Case {
    let (x, y) = vars();
    let input = ImageParam::new("input", ScalarType::U8, 2);
    let down = Func::new("down");
    let px = |dx: i32, dy: i32| cast(Type::u16(), input.at([&x * 2 + dx, &y * 2 + dy]));
    down.define(&[&x, &y], (px(0, 0) + px(1, 0) + px(0, 1) + px(1, 1)) / 4);
    let up = Func::new("up");
    up.define(&[&x, &y], (down.at([&x / 2, &y / 2]) + down.at([(&x + 1) / 2, (&y + 1) / 2])) / 2);
    let out = Func::new("out");
    out.define(&[&x, &y], cast(Type::u8(), up.at([x.expr(), y.expr()]) + (cast(Type::u16(), input.at([x.expr(), y.expr()])) / 2)));
    case2("down_up_sample", &out, vec![input_buffer("input", ScalarType::U8, &IN2, 255)])
}

pub fn row_sum() -> Case {
    let (x, y) = vars();
    let input = ImageParam::new("input", ScalarType::I16, 2);
    let r = RDom::new("r", &[(Expr::i32(-2), Expr::i32(5))]);
    let rows = Func::new("rows");
    rows.define(&[&x, &y], sum(cast(Type::i32(), input.at([&x + r.x().expr(), y.expr()]))));
    let out = Func::new("out");
    out.define(&[&x, &y], rows.at([x.expr(), y.expr()]) - rows.at([x.expr(), &y - 1]));
    case2("row_sum", &out, vec![input_buffer("input", ScalarType::I16, &IN2, 30000)])
}

pub fn histogram() -> Case {
    let x = Var::new("x");
    let input = ImageParam::new("input", ScalarType::U8, 2);
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(16)), (Expr::i32(0), Expr::i32(12))]);
    let hist = Func::new("hist");
    hist.define(&[&x], Expr::int(0, Type::i32()));
    let bin = clamp(cast(Type::i32(), input.at([r.x().expr(), r.y().expr()])) / 16, 0, 15);
    hist.update([bin.clone()], hist.at([bin]) + 1);
    let out = Func::new("out");
    out.define(&[&x], hist.at([x.expr()]) * 3 + hist.at([&x + 1]));
    Case {
        name: "histogram",
        pipeline: Pipeline::new(&[&out]).unwrap(),
        inputs: [("input".to_string(), input_buffer("input", ScalarType::U8, &[(0, 16), (0, 12)], 255))].into(),
        params: BTreeMap::new(),
        output: "out".into(),
        region: vec![(0, 15)],
    }
}

pub fn scan() -> Case {
    let (x, y) = vars();
    let input = ImageParam::new("input", ScalarType::I32, 2);
    let r = RDom::new("r", &[(Expr::i32(-2), Expr::i32(20))]);
    let acc = Func::new("acc");
    acc.define(&[&x, &y], input.at([x.expr(), y.expr()]));
    acc.update([r.x().expr(), y.expr()], acc.at([r.x() - 1, y.expr()]) + acc.at([r.x().expr(), y.expr()]));
    let out = Func::new("out");
    out.define(&[&x, &y], acc.at([x.expr(), y.expr()]) * 2 + acc.at([&x + 1, y.expr()]));
    case2("scan", &out, vec![input_buffer("input", ScalarType::I32, &IN2, 100)])
}

pub fn diamond_dag() -> Case {
    let (x, y) = vars();
    let input = ImageParam::new("input", ScalarType::I16, 2);
    let a = Func::new("a");
    a.define(&[&x, &y], input.at([x.expr(), y.expr()]) * 3);
    let b = Func::new("b");
    b.define(&[&x, &y], a.at([&x - 1, y.expr()]) + a.at([&x + 1, y.expr()]));
    let c = Func::new("c");
    c.define(&[&x, &y], a.at([x.expr(), &y - 1]) - a.at([x.expr(), &y + 2]));
    let out = Func::new("out");
    out.define(&[&x, &y], max(b.at([x.expr(), y.expr()]), c.at([&x + 1, y.expr()])) + b.at([x.expr(), &y + 1]));
    case2("diamond_dag", &out, vec![input_buffer("input", ScalarType::I16, &IN2, 20000)])
}

/// Three Funcs, each reading the one before at two offsets clamped to the
/// image (the bounds of each are those of the next, twice, through a clamp:
/// written out rather than named, they double with every Func), over an
/// input smaller than the output, read clamped as well.
pub fn clamped_chain() -> Case {
    let (x, y) = vars();
    let input = ImageParam::new("input", ScalarType::I32, 2);
    let (w, h) = (input.width(), input.height());
    let mut prev = Func::new("c0");
    prev.define(&[&x, &y], input.at([clamp(x.expr(), 0, w.clone() - 1), clamp(y.expr(), 0, h.clone() - 1)]));
    for k in 1..=3 {
        let f = Func::new(&format!("c{k}"));
        let at = |dx: i32, dy: i32| prev.at([clamp(&x + dx, 0, w.clone() - 1), clamp(&y + dy, 0, h.clone() - 1)]);
        f.define(&[&x, &y], at(-1, 0) * 3 + at(1, 1));
        prev = f;
    }
    case2("clamped_chain", &prev, vec![input_buffer("input", ScalarType::I32, &[(0, 16), (0, 12)], 50)])
}

pub fn float_math() -> Case {
    let (x, y) = vars();
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let g = Func::new("g");
    g.define(&[&x, &y], sqrt(input.at([x.expr(), y.expr()]) + 1.0f32) * 0.75f32 - exp(input.at([&x + 1, y.expr()]) * -0.125f32));
    let h = Func::new("h");
    h.define(&[&x, &y], select(g.at([x.expr(), y.expr()]).gt(1.5f32), floor(g.at([x.expr(), &y - 1]) * 4.0f32), g.at([&x - 1, y.expr()])));
    // Our own f32 log and pow: expanded in vectorized loops, called elsewhere.
    let at = |dx: i32, dy: i32| input.at([&x + dx, &y + dy]);
    let l = Func::new("l");
    l.define(
        &[&x, &y],
        log(at(0, 0) + 0.5f32) * 3.0f32
            + pow(at(1, 0) * 0.05f32 + 0.25f32, at(0, -1) * 0.1f32 - 2.0f32)
            + pow(at(0, 0) * 0.1f32 - 2.0f32, 3.0f32),
    );
    let out = Func::new("out");
    out.define(
        &[&x, &y],
        cast(Type::u8(), clamp(h.at([x.expr(), y.expr()]) * 37.0f32, 0.0f32, 255.0f32))
            + cast(Type::u8(), x.expr())
            + cast(Type::u8(), clamp(l.at([x.expr(), y.expr()]) * 9.0f32 + 40.0f32, 0.0f32, 255.0f32)),
    );
    case2("float_math", &out, vec![input_buffer("input", ScalarType::F32, &IN2, 300)])
}

pub fn int_wrap() -> Case {
    let (x, y) = vars();
    let input = ImageParam::new("input", ScalarType::I8, 2);
    let f = Func::new("f");
    f.define(&[&x, &y], input.at([x.expr(), y.expr()]) * Expr::int(7, Type::i8()) + input.at([&x + 1, y.expr()]));
    let out = Func::new("out");
    out.define(
        &[&x, &y],
        cast(Type::i32(), f.at([x.expr(), y.expr()])) / 3 + (cast(Type::i32(), f.at([x.expr(), &y + 1])) % 5) - (x.expr() - 7) / 4,
    );
    case2("int_wrap", &out, vec![input_buffer("input", ScalarType::I8, &IN2, 250)])
}

pub fn boundary() -> Case {
    let (x, y) = vars();
    let input = ImageParam::new("input", ScalarType::U16, 2);
    let clamped = repeat_edge(&input);
    let outside = constant_exterior(&input, Expr::i32(7));
    let out = Func::new("out");
    out.define(&[&x, &y], clamped.at([&x - 2, &y + 3]) + outside.at([&x + 1, y.expr()]) / 2);
    // The input is smaller than the region read: boundary conditions cover the rest.
    case2("boundary", &out, vec![input_buffer("input", ScalarType::U16, &[(0, 10), (3, 8)], 1000)])
}

/// Boundary conditions on a Func (with an update) over a box given by a
/// constant and a param, in each of the four ways (one bounding only its
/// first dimension), and an input small enough to be mirrored about its
/// edge.
pub fn func_boundaries() -> Case {
    let (x, y) = vars();
    let input = ImageParam::new("input", ScalarType::I16, 2);
    let small = ImageParam::new("small", ScalarType::U8, 2);
    let width = Param::new("width", Type::i32());
    let f = Func::new("f");
    f.define(&[&x, &y], cast(Type::i32(), input.at([x.expr(), y.expr()])) * 3 + x.expr());
    f.update([x.expr(), y.expr()], f.at([x.expr(), y.expr()]) - y.expr() * 5);
    let bounds = [(Expr::i32(2), width.expr()), (Expr::i32(-1), Expr::i32(6))];
    let edge = repeat_edge_within(&f, &bounds);
    let constant = constant_exterior_within(&f, &bounds, Expr::i32(-5));
    let image = mirror_image_within(&f, &bounds);
    let interior = mirror_interior_within(&f, &bounds[..1]);
    let mirrored = mirror_interior(&small);
    // Bounded in its inner dimension only.
    let rows = repeat_edge_within(&f, &[None, Some((Expr::i32(-1), Expr::i32(6)))]);
    let out = Func::new("out");
    out.define(
        &[&x, &y],
        edge.at([&x - 3, &y + 2])
            + constant.at([&x + 1, &y - 2])
            + image.at([x.expr() * 2 - 5, y.expr()])
            + interior.at([&x - 4, y.expr()])
            + cast(Type::i32(), mirrored.at([x.expr() * 2, &y - 20]))
            + rows.at([&x + 1, y.expr() * 2 - 3]),
    );
    let inputs = vec![input_buffer("input", ScalarType::I16, &IN2, 3000), input_buffer("small", ScalarType::U8, &[(0, 10), (3, 8)], 255)];
    let mut c = case2("func_boundaries", &out, inputs);
    c.params.insert("width".into(), Scalar::Int(7));
    c
}

pub fn matmul() -> Case {
    let (x, y) = vars();
    let a = ImageParam::new("a", ScalarType::F32, 2);
    let b = ImageParam::new("b", ScalarType::F32, 2);
    let k = RDom::new("k", &[(Expr::i32(0), Expr::i32(9))]);
    let prod = Func::new("prod");
    prod.define(&[&x, &y], 0.0f32.as_expr());
    prod.update([x.expr(), y.expr()], prod.at([x.expr(), y.expr()]) + a.at([k.x().expr(), y.expr()]) * b.at([x.expr(), k.x().expr()]));
    let out = Func::new("out");
    out.define(&[&x, &y], prod.at([x.expr(), y.expr()]) * 2.0f32);
    case2("matmul", &out, vec![input_buffer("a", ScalarType::F32, &IN2, 50), input_buffer("b", ScalarType::F32, &IN2, 50)])
}

pub fn conv1d_update() -> Case {
    let (x, y) = vars();
    let input = ImageParam::new("input", ScalarType::I32, 2);
    let w = Func::new("w");
    w.define(&[&x], x.expr() * x.expr() - 3);
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(4))]);
    let conv = Func::new("conv");
    conv.define(&[&x, &y], Expr::i32(0));
    conv.update([x.expr(), y.expr()], conv.at([x.expr(), y.expr()]) + w.at([r.x().expr()]) * input.at([&x + r.x().expr(), y.expr()]));
    let out = Func::new("out");
    out.define(&[&x, &y], conv.at([x.expr(), y.expr()]));
    case2("conv1d_update", &out, vec![input_buffer("input", ScalarType::I32, &IN2, 40)])
}

pub fn arg_max() -> Case {
    let (x, y) = vars();
    let input = ImageParam::new("input", ScalarType::U8, 2);
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(5))]);
    let am = argmax(input.at([&x + r.x().expr(), y.expr()]));
    let out = Func::new("out");
    let largest = cast(Type::i32(), maximum(input.at([x.expr(), &y + r.x().expr()])));
    out.define(&[&x, &y], am[0].clone() * 100 + largest * 3 + cast(Type::i32(), am[1].clone()));
    case2("arg_max", &out, vec![input_buffer("input", ScalarType::U8, &IN2, 255)])
}

pub fn triangle() -> Case {
    let x = Var::new("x");
    let input = ImageParam::new("input", ScalarType::I32, 1);
    let r = RDom::with_where("r", &[(Expr::i32(0), Expr::i32(8)), (Expr::i32(0), Expr::i32(8))], |r| r.x().lt(r.y()));
    let tri = Func::new("tri");
    tri.define(&[&x], Expr::i32(1));
    tri.update([x.expr()], tri.at([x.expr()]) * 3 + input.at([&x + r.x().expr()]) - r.y().expr());
    let out = Func::new("out");
    out.define(&[&x], tri.at([x.expr()]));
    Case {
        name: "triangle",
        pipeline: Pipeline::new(&[&out]).unwrap(),
        inputs: [("input".to_string(), input_buffer("input", ScalarType::I32, &[(-10, 60)], 9))].into(),
        params: BTreeMap::new(),
        output: "out".into(),
        region: vec![(-3, 21)],
    }
}

pub fn params_and_lut() -> Case {
    let (x, y) = vars();
    let input = ImageParam::new("input", ScalarType::U8, 2);
    let gain = Param::new("gain", Type::i32());
    let lut = Func::new("lut");
    lut.define(&[&x], (x.expr() * gain.expr()) % 251);
    let out = Func::new("out");
    out.define(
        &[&x, &y],
        lut.at([cast(Type::i32(), input.at([x.expr(), y.expr()]))]) + lut.at([cast(Type::i32(), input.at([&x + 1, y.expr()]))]),
    );
    let mut c = case2("params_and_lut", &out, vec![input_buffer("input", ScalarType::U8, &IN2, 255)]);
    c.params.insert("gain".into(), Scalar::Int(37));
    c
}

/// Bitwise operators and shifts of every integer type: counts of both
/// signs, zero, the width and beyond (an `i8` input in [-80, 80]), given in
/// the value's type and as the `i8` count itself (for an unsigned value, a
/// negative count becomes the other shift), and `!`.
pub fn bitwise() -> Case {
    let (x, y) = vars();
    let values = ImageParam::new("values", ScalarType::I32, 2);
    let counts = ImageParam::new("counts", ScalarType::I8, 2);
    let types = [Type::u8(), Type::i8(), Type::u16(), Type::i16(), Type::u32(), Type::i32(), Type::u64(), Type::i64()];
    let mut terms = vec![];
    for (k, t) in types.into_iter().enumerate() {
        let v = cast(t, values.at([x.expr(), y.expr()]) * 40503) * cast(t, values.at([&x + 1, y.expr()]) | 1);
        let c = counts.at([x.expr(), &y + k as i32]);
        let n = cast(t, c.clone());
        let f = Func::new(&format!("f{k}"));
        f.define(
            &[&x, &y],
            ((v.clone() & 0x5A) | (v.clone() >> n.clone())) ^ (v.clone() << n) ^ (v.clone() >> c.clone()) ^ (v.clone() << c) ^ !v,
        );
        terms.push(cast(Type::i64(), f.at([x.expr(), y.expr()])) & 0x7FFF_FFFF);
    }
    let out = Func::new("out");
    out.define(&[&x, &y], terms.into_iter().reduce(|a, b| a + b).unwrap());
    case2("bitwise", &out, vec![input_buffer("values", ScalarType::I32, &IN2, 1 << 31), input_buffer("counts", ScalarType::I8, &IN2, 160)])
}

/// Tuple Funcs: a pure pair of values of two types (inlinable), and a
/// Tuple reduction whose update computes each value from both old ones
/// (every value read before any is written).
pub fn tuples() -> Case {
    let (x, y) = vars();
    let input = ImageParam::new("input", ScalarType::I16, 2);
    let r = RDom::new("r", &[(Expr::i32(-1), Expr::i32(4))]);
    let here = || input.at([x.expr(), y.expr()]);
    let pair = Func::new("pair");
    pair.define_tuple(&[&x, &y], [cast(Type::f32(), here()) * 0.5f32, cast(Type::i32(), here()) + 1]);
    let acc = Func::new("acc");
    acc.define_tuple(&[&x, &y], [Expr::i32(0), Expr::float(1.0, Type::f32())]);
    let [a, b] = [0, 1].map(|k| acc.value_at([x.expr(), y.expr()], k));
    let read = cast(Type::i32(), input.at([&x + r.x().expr(), y.expr()]));
    acc.update_tuple(
        [x.expr(), y.expr()],
        [
            a.clone() * 3 + cast(Type::i32(), b.clone()) + read,
            b * 0.5f32 + cast(Type::f32(), a & 7) - pair.value_at([x.expr(), y.expr()], 0),
        ],
    );
    let out = Func::new("out");
    let [p0, p1] = [0, 1].map(|k| pair.value_at([&x + 1, y.expr()], k));
    let [a, b] = [0, 1].map(|k| acc.value_at([x.expr(), &y - 1], k));
    out.define(&[&x, &y], p1 + a + cast(Type::i32(), b + p0));
    case2("tuples", &out, vec![input_buffer("input", ScalarType::I16, &IN2, 900)])
}

/// Every catalog case.
/// Invokes macro `$m` with the name of every catalog pipeline.
#[allow(unused_macros)]
macro_rules! for_each_case {
    ($m:ident) => {
        $m!(
            blur,
            stencil_chain,
            down_up_sample,
            row_sum,
            histogram,
            scan,
            diamond_dag,
            clamped_chain,
            float_math,
            int_wrap,
            boundary,
            func_boundaries,
            matmul,
            conv1d_update,
            arg_max,
            triangle,
            params_and_lut,
            bitwise,
            tuples,
        );
    };
}

pub fn all_cases() -> Vec<Case> {
    vec![
        blur(),
        stencil_chain(),
        down_up_sample(),
        row_sum(),
        histogram(),
        scan(),
        diamond_dag(),
        clamped_chain(),
        float_math(),
        int_wrap(),
        boundary(),
        func_boundaries(),
        matmul(),
        conv1d_update(),
        arg_max(),
        triangle(),
        params_and_lut(),
        bitwise(),
        tuples(),
    ]
}
