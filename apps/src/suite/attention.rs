//! Multi-head scaled dot-product attention (Vaswani et al. 2017, equation
//! 1), `softmax(Q K^T / sqrt(d)) V` per head, in f32, with the head's
//! features innermost (`q(e, i, h)`: feature, token, head; likewise `k`
//! and `v`): the dot products `dot(j, i, h)` of query `i` with key `j`,
//! scaled by `1 / sqrt(d)`; a numerically stable softmax over the keys
//! (`row_max`, `exps`, `row_sum`, `weights`); and the weighted sum of the
//! values, `output(e, i, h) = sum_j weights(j, i, h) * v(e, j, h)`. The
//! paper size is BERT-base's: 12 heads of 64 features, 384 tokens.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::ops::{exp, max};
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::target::Target;

/// The attention pipeline at `size`: 12 heads, 384 tokens, 64 features
/// per head (small: 2 heads, 13 tokens, 8 features).
pub fn app(size: Size, _host: &Target) -> App {
    let (d, s, heads): (i32, i32, i64) = pick(size, (64, 384, 12), (8, 13, 2));
    let (e, i, j, h) = (Var::new("e"), Var::new("i"), Var::new("j"), Var::new("h"));
    let (q, k, v) =
        (ImageParam::new("q", ScalarType::F32, 3), ImageParam::new("k", ScalarType::F32, 3), ImageParam::new("v", ScalarType::F32, 3));
    let rd = RDom::new("rd", &[(Expr::i32(0), Expr::i32(d.into()))]);
    let rj = RDom::new("rj", &[(Expr::i32(0), Expr::i32(s.into()))]);
    let pair = [j.expr(), i.expr(), h.expr()];
    let dot = Func::new("dot");
    dot.define(&[&j, &i, &h], 0.0f32);
    dot.add_update(pair.clone(), q.at([rd.x().expr(), i.expr(), h.expr()]) * k.at([rd.x().expr(), j.expr(), h.expr()]));
    let scale = 1.0f32 / (d as f32).sqrt();
    let scores = Func::new("scores");
    scores.define(&[&j, &i, &h], dot.at(pair.clone()) * scale);
    let row = [i.expr(), h.expr()];
    let row_max = Func::new("row_max");
    row_max.define(&[&i, &h], Expr::float(f64::NEG_INFINITY, Type::f32()));
    row_max.update(row.clone(), max(row_max.at(row.clone()), scores.at([rj.x().expr(), i.expr(), h.expr()])));
    let exps = Func::new("exps");
    exps.define(&[&j, &i, &h], exp(scores.at(pair.clone()) - row_max.at(row.clone())));
    let row_sum = Func::new("row_sum");
    row_sum.define(&[&i, &h], 0.0f32);
    row_sum.add_update(row.clone(), exps.at([rj.x().expr(), i.expr(), h.expr()]));
    let weights = Func::new("weights");
    weights.define(&[&j, &i, &h], exps.at(pair) / row_sum.at(row));
    let output = Func::new("output");
    let out = [e.expr(), i.expr(), h.expr()];
    output.define(&[&e, &i, &h], 0.0f32);
    output.add_update(out, weights.at([rj.x().expr(), i.expr(), h.expr()]) * v.at([e.expr(), rj.x().expr(), h.expr()]));
    let pipeline = Pipeline::new(&[&output]).expect("attention is well formed");
    let tensor = vec![(0, d.into()), (0, s.into()), (0, heads)];
    App {
        name: "attention",
        pipeline,
        expert: None,
        inputs: vec![("q".into(), tensor.clone()), ("k".into(), tensor.clone()), ("v".into(), tensor.clone())],
        output: tensor,
        params: vec![],
    }
}
