//! Max pooling as ResNet's stem applies it after its first convolution
//! (He et al. 2016, table 1: "3x3 max pool, stride 2"; padding 1 as the
//! reference implementations pad it): over an f32 activation tensor with
//! channels innermost, `input(c, x, y, n)`, padded with `-inf` (so the
//! padding never wins),
//! `pool(c, x, y, n) = max_{r in 3x3} input(c, 2x + r.x - 1, 2y + r.y - 1, n)`.
//! The paper size is ResNet-50's at batch 4: 112x112x64 in, 56x56x64 out.

use crate::{pick, App, Size};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::boundary::constant_exterior;
use compiler::lang::ops::max;
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::target::Target;

/// The max-pooling pipeline at `size`: batch 4, 64 channels, 112x112 in
/// (small: batch 2, 8 channels, 9x7 in).
pub fn app(size: Size, _host: &Target) -> App {
    let (n, ch, w, h): (i64, i64, i64, i64) = pick(size, (4, 64, 112, 112), (2, 8, 9, 7));
    // 3x3 windows, stride 2, padding 1.
    let (ow, oh) = ((w + 2 - 3) / 2 + 1, (h + 2 - 3) / 2 + 1);
    let (c, x, y, b) = (Var::new("c"), Var::new("x"), Var::new("y"), Var::new("n"));
    let input = ImageParam::new("input", ScalarType::F32, 4);
    let padded = constant_exterior(&input, Expr::float(f64::NEG_INFINITY, Type::f32()));
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(3)), (Expr::i32(0), Expr::i32(3))]);
    let pool = Func::new("pool");
    let at = [c.expr(), x.expr(), y.expr(), b.expr()];
    pool.define(&[&c, &x, &y, &b], Expr::float(f64::NEG_INFINITY, Type::f32()));
    pool.update(
        at.clone(),
        max(pool.at(at), padded.at([c.expr(), x.expr() * 2 + r.x().expr() - 1, y.expr() * 2 + r.y().expr() - 1, b.expr()])),
    );
    let pipeline = Pipeline::new(&[&pool]).expect("max_pool is well formed");
    App {
        name: "max_pool",
        pipeline,
        expert: None,
        inputs: vec![("input".into(), vec![(0, ch), (0, w), (0, h), (0, n)])],
        output: vec![(0, ch), (0, ow), (0, oh), (0, n)],
        params: vec![],
    }
}
