//! Numerically stable softmax over the last (innermost) dimension of an
//! f32 tensor, as a transformer's attention applies it to its scores
//! (`input(k, q, h)`: key, query, head): the largest value of each row,
//! `exps = exp(input - row_max)`, their sum, and `exps / row_sum`. The
//! paper size is BERT-base's attention scores at sequence length 384: 12
//! heads of 384x384.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::ops::{exp, max};
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::target::Target;

/// The softmax pipeline at `size`: 12 heads of 384x384 scores (small: 3
/// heads of 11 rows of 13).
pub fn app(size: Size, _host: &Target) -> App {
    let (len, rows, heads): (i32, i64, i64) = pick(size, (384, 384, 12), (13, 11, 3));
    let (k, q, h) = (Var::new("k"), Var::new("q"), Var::new("h"));
    let input = ImageParam::new("input", ScalarType::F32, 3);
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(len.into()))]);
    let row = [q.expr(), h.expr()];
    let row_max = Func::new("row_max");
    row_max.define(&[&q, &h], Expr::float(f64::NEG_INFINITY, Type::f32()));
    row_max.update(row.clone(), max(row_max.at(row.clone()), input.at([r.x().expr(), q.expr(), h.expr()])));
    let exps = Func::new("exps");
    exps.define(&[&k, &q, &h], exp(input.at([k.expr(), q.expr(), h.expr()]) - row_max.at(row.clone())));
    let row_sum = Func::new("row_sum");
    row_sum.define(&[&q, &h], 0.0f32);
    row_sum.add_update(row.clone(), exps.at([r.x().expr(), q.expr(), h.expr()]));
    let output = Func::new("output");
    output.define(&[&k, &q, &h], exps.at([k.expr(), q.expr(), h.expr()]) / row_sum.at(row));
    let pipeline = Pipeline::new(&[&output]).expect("softmax is well formed");
    let tensor = vec![(0, len.into()), (0, rows), (0, heads)];
    App { name: "softmax", pipeline, expert: None, inputs: vec![("input".into(), tensor.clone())], output: tensor, params: vec![] }
}
