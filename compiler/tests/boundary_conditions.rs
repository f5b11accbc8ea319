//! Boundary conditions on Funcs and inputs: the reference evaluator gives
//! what a direct model of each rule gives (every executor is held to the
//! reference by the catalog's `func_boundaries` case in the differential
//! suites), and mistakes in asking for one are errors naming the source.

use compiler::error::LangError;
use compiler::exec::buffer::Buffer;
use compiler::ir::value::Scalar;
use compiler::lang::boundary::{
    constant_exterior_within, mirror_image, mirror_image_within, mirror_interior, mirror_interior_within, repeat_edge_within,
};
use compiler::lang::ops::cast;
use compiler::{Expr, Func, ImageParam, Pipeline, ScalarType, Type, Var};
use std::collections::BTreeMap;

/// `src(x) = 10 x + 1` (a Func), extended by `extend` over the box
/// `[min, min + extent)`, evaluated on `[-25, 25)`.
fn extended(min: i32, extent: i32, extend: impl Fn(&Func, &[(Expr, Expr)]) -> Func) -> Vec<i64> {
    let x = Var::new("x");
    let src = Func::new("src");
    src.define(&[&x], x.expr() * 10 + 1);
    let e = extend(&src, &[(Expr::i32(min.into()), Expr::i32(extent.into()))]);
    let out = Func::new("out");
    out.define(&[&x], e.at([x.expr()]));
    let p = Pipeline::new(&[&out]).unwrap();
    let b = compiler::exec::reference::realize(&p, &BTreeMap::new(), &BTreeMap::new(), "out", &[(-25, 50)]).unwrap();
    (-25..25).map(|i| b.get(&[i]).unwrap().as_i128() as i64).collect()
}

/// The coordinate in `[min, min + extent)` that `x` reads under each rule.
fn model(x: i64, min: i64, extent: i64, rule: &str) -> Option<i64> {
    let m = x - min;
    let reflect = |period: i64, back: i64| {
        let r = if period == 0 { 0 } else { m.rem_euclid(period) };
        if r < extent {
            r
        } else {
            period - back - r
        }
    };
    let inside = (0..extent).contains(&m);
    Some(
        min + match rule {
            "repeat_edge" => m.clamp(0, extent - 1),
            "constant_exterior" if !inside => return None,
            "constant_exterior" => m,
            "mirror_image" => reflect(2 * extent, 1),
            _ => reflect(2 * extent - 2, 0),
        },
    )
}

#[test]
fn each_rule_on_a_func_reads_what_the_model_says() {
    type Extend = fn(&Func, &[(Expr, Expr)]) -> Func;
    let rules: [(&str, Extend); 4] = [
        ("repeat_edge", |f, b| repeat_edge_within(f, b)),
        ("constant_exterior", |f, b| constant_exterior_within(f, b, Expr::i32(-7))),
        ("mirror_image", |f, b| mirror_image_within(f, b)),
        ("mirror_interior", |f, b| mirror_interior_within(f, b)),
    ];
    for (min, extent) in [(0, 5), (-3, 4), (2, 1), (7, 2)] {
        for (rule, extend) in rules {
            let got = extended(min, extent, extend);
            for (i, x) in (-25..25).enumerate() {
                let want = model(x, min.into(), extent.into(), rule).map_or(-7, |c| 10 * c + 1);
                assert_eq!(got[i], want, "{rule} over [{min}, {}) at {x}", min + extent);
            }
        }
    }
}

#[test]
fn mirrors_of_an_input_read_inside_its_buffer() {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::U8, 2);
    let (image, interior) = (mirror_image(&input), mirror_interior(&input));
    let out = Func::new("out");
    out.define(&[&x, &y], cast(Type::i32(), image.at([x.expr(), y.expr()])) * 1000 + cast(Type::i32(), interior.at([x.expr(), y.expr()])));
    let p = Pipeline::new(&[&out]).unwrap();
    let (min, extent) = ((3, -2), (6, 5));
    let mut buffer = Buffer::new("input", ScalarType::U8, &[(min.0, extent.0), (min.1, extent.1)]).unwrap();
    buffer.fill(|c| Scalar::UInt((c[0] * 16 + c[1] + 40) as u64));
    let inputs: BTreeMap<String, Buffer> = [("input".to_string(), buffer)].into_iter().collect();
    let b = compiler::exec::reference::realize(&p, &inputs, &BTreeMap::new(), "out", &[(-10, 30), (-12, 20)]).unwrap();
    for cx in -10..20 {
        for cy in -12..8 {
            let value = |rule| {
                let (mx, my) = (model(cx, min.0, extent.0, rule).unwrap(), model(cy, min.1, extent.1, rule).unwrap());
                mx * 16 + my + 40
            };
            let want = value("mirror_image") * 1000 + value("mirror_interior");
            assert_eq!(b.get(&[cx, cy]).unwrap(), Scalar::Int(want), "at ({cx}, {cy})");
        }
    }
}

#[test]
fn mistakes_name_the_source() {
    let x = Var::new("x");
    let undefined = Func::new("later");
    let defined = Func::new("src");
    defined.define(&[&x], x.expr());
    let cases = [
        (repeat_edge_within(&undefined, &[(Expr::i32(0), Expr::i32(4))]), "later", "before it is defined"),
        (mirror_image_within(&defined, &[(Expr::i32(0), Expr::i32(4)), (Expr::i32(0), Expr::i32(4))]), "src", "2 bounds, but it has 1"),
        (mirror_interior_within(&defined, &[(Expr::i32(0), Expr::float(4.0, Type::f32()))]), "src", "extent of dimension 0"),
    ];
    for (extended, source, why) in cases {
        let out = Func::new("out");
        out.define(&[&x], extended.at([x.expr()]));
        let err = Pipeline::new(&[&out]).unwrap_err();
        assert!(matches!(&err, LangError::Invalid { func, .. } if func == source), "{err}");
        assert!(err.to_string().contains(why), "{err}");
    }
}

/// A dimension given `None` is left unbounded, an inner one too: a 3-D
/// source clamped in its last dimension only (Halide's undefined `Range`),
/// and one clamped in its first and last but not its middle one.
#[test]
fn any_dimension_may_be_left_unbounded() {
    let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
    let src = Func::new("src");
    src.define(&[&x, &y, &c], x.expr() * 100 + y.expr() * 10 + c.expr());
    let channels = repeat_edge_within(&src, &[None, None, Some((Expr::i32(0), Expr::i32(3)))]);
    let rows = mirror_image_within(&src, &[Some((Expr::i32(0), Expr::i32(4))), None, Some((Expr::i32(0), Expr::i32(3)))]);
    let out = Func::new("out");
    out.define(&[&x, &y, &c], channels.at([x.expr(), y.expr(), c.expr()]) * 10_000 + rows.at([x.expr(), y.expr(), c.expr()]));
    let p = Pipeline::new(&[&out]).unwrap();
    let region = [(-3, 10), (-2, 8), (-2, 7)];
    let b = compiler::exec::reference::realize(&p, &BTreeMap::new(), &BTreeMap::new(), "out", &region).unwrap();
    let clamp = |v: i64, lo: i64, hi: i64| v.clamp(lo, hi);
    for xv in -3..7 {
        for yv in -2..6 {
            for cv in -2..5 {
                let channels = xv * 100 + yv * 10 + clamp(cv, 0, 2);
                let (mx, mc) = (model(xv, 0, 4, "mirror_image").unwrap(), model(cv, 0, 3, "mirror_image").unwrap());
                let rows = mx * 100 + yv * 10 + mc;
                assert_eq!(b.get(&[xv, yv, cv]).unwrap(), Scalar::Int(channels * 10_000 + rows), "at ({xv}, {yv}, {cv})");
            }
        }
    }
    // An input's buffer box, bounded in its channels only.
    let input = ImageParam::new("input", ScalarType::U8, 3);
    let edge = constant_exterior_within(&input, &[None, None, Some((input.min(2), input.extent(2)))], Expr::i32(9));
    let out = Func::new("out");
    out.define(&[&x, &y, &c], cast(Type::i32(), edge.at([x.expr(), y.expr(), c.expr()])));
    let p = Pipeline::new(&[&out]).unwrap();
    let mut buffer = Buffer::new("input", ScalarType::U8, &[(0, 2), (0, 2), (0, 2)]).unwrap();
    buffer.fill(|k| Scalar::Int(k[0] + 2 * k[1] + 4 * k[2]));
    let inputs = BTreeMap::from([("input".to_string(), buffer)]);
    let b = compiler::exec::reference::realize(&p, &inputs, &BTreeMap::new(), "out", &[(0, 2), (0, 2), (-1, 4)]).unwrap();
    for (k, want) in [([1, 1, -1], 9), ([1, 1, 0], 3), ([0, 1, 1], 6), ([1, 0, 2], 9)] {
        assert_eq!(b.get(&k).unwrap(), Scalar::Int(want), "at {k:?}");
    }
}

/// Two conditions of one kind on one source (asked for in two places of a
/// program, or over two boxes) are two Funcs, named after the source, the
/// second numbered; neither clashes with a user's name.
#[test]
fn two_conditions_of_one_source_get_their_own_names() {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::U8, 2);
    let (a, b) = (compiler::lang::boundary::repeat_edge(&input), compiler::lang::boundary::repeat_edge(&input));
    let inner = repeat_edge_within(&input, &[(Expr::i32(1), Expr::i32(2)), (Expr::i32(1), Expr::i32(2))]);
    let out = Func::new("out");
    let read = |f: &Func| cast(Type::i32(), f.at([x.expr(), y.expr()]));
    out.define(&[&x, &y], read(&a) + read(&b) * 10 + read(&inner) * 100);
    let p = Pipeline::new(&[&out]).unwrap();
    let mut names: Vec<&str> = p.funcs.iter().map(|f| &*f.name).collect();
    names.sort();
    assert_eq!(names, ["input_repeat_edge", "input_repeat_edge1", "input_repeat_edge2", "out"]);
    let mut buffer = Buffer::new("input", ScalarType::U8, &[(0, 4), (0, 4)]).unwrap();
    buffer.fill(|k| Scalar::Int(k[0] + 4 * k[1]));
    let inputs = BTreeMap::from([("input".to_string(), buffer)]);
    let got = compiler::exec::reference::realize(&p, &inputs, &BTreeMap::new(), "out", &[(-1, 6), (-1, 6)]).unwrap();
    let at = |xv: i64, yv: i64, lo: i64, hi: i64| xv.clamp(lo, hi) + 4 * yv.clamp(lo, hi);
    for xv in -1..5 {
        for yv in -1..5 {
            let want = at(xv, yv, 0, 3) * 11 + at(xv, yv, 1, 2) * 100;
            assert_eq!(got.get(&[xv, yv]).unwrap(), Scalar::Int(want), "at ({xv}, {yv})");
        }
    }
}
