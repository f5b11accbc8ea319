//! Layer normalization (Ba et al. 2016) over the hidden dimension of an
//! f32 tensor, as BERT applies it after each sublayer (`input(i, t, b)`:
//! hidden unit, token, sequence of the batch): the mean and the (biased)
//! variance of each token's hidden vector, two reductions, then
//! `(input - mean) * inv_std * gamma(i) + beta(i)` with
//! `inv_std = 1 / sqrt(variance + 1e-12)` (BERT's epsilon). The paper size
//! is BERT-base's: 768 hidden units, 384 tokens, batch 4.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::ScalarType;
use compiler::lang::ops::sqrt;
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::target::Target;

/// BERT's epsilon.
const EPSILON: f32 = 1e-12;

/// The layer-normalization pipeline at `size`: batch 4 of 384 tokens of 768
/// (small: batch 2 of 5 tokens of 24).
pub fn app(size: Size, _host: &Target) -> App {
    let (hidden, tokens, batch): (i32, i64, i64) = pick(size, (768, 384, 4), (24, 5, 2));
    let (i, t, b) = (Var::new("i"), Var::new("t"), Var::new("b"));
    let input = ImageParam::new("input", ScalarType::F32, 3);
    let gamma = ImageParam::new("gamma", ScalarType::F32, 1);
    let beta = ImageParam::new("beta", ScalarType::F32, 1);
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(hidden.into()))]);
    let token = [t.expr(), b.expr()];
    let row_sum = Func::new("row_sum");
    row_sum.define(&[&t, &b], 0.0f32);
    row_sum.add_update(token.clone(), input.at([r.x().expr(), t.expr(), b.expr()]));
    let mean = Func::new("mean");
    mean.define(&[&t, &b], row_sum.at(token.clone()) / hidden as f32);
    let sq_sum = Func::new("sq_sum");
    sq_sum.define(&[&t, &b], 0.0f32);
    let centered = input.at([r.x().expr(), t.expr(), b.expr()]) - mean.at(token.clone());
    sq_sum.add_update(token.clone(), centered.clone() * centered);
    let inv_std = Func::new("inv_std");
    inv_std.define(&[&t, &b], 1.0f32 / sqrt(sq_sum.at(token.clone()) / hidden as f32 + EPSILON));
    let output = Func::new("output");
    output.define(
        &[&i, &t, &b],
        (input.at([i.expr(), t.expr(), b.expr()]) - mean.at(token.clone())) * inv_std.at(token) * gamma.at([i.expr()])
            + beta.at([i.expr()]),
    );
    let pipeline = Pipeline::new(&[&output]).expect("layer_norm is well formed");
    let tensor = vec![(0, hidden.into()), (0, tokens), (0, batch)];
    let vector = vec![(0, hidden.into())];
    App {
        name: "layer_norm",
        pipeline,
        expert: None,
        inputs: vec![("input".into(), tensor.clone()), ("gamma".into(), vector.clone()), ("beta".into(), vector)],
        output: tensor,
        params: vec![],
    }
}
