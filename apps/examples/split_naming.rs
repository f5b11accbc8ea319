//! Times one schedule written two ways: splits whose outer loop keeps the
//! variable's name (`split(x, x, xi, 64)`, Halide's usual naming and what
//! `unroll`/`vectorize` do internally) and the same splits with fresh outer
//! names (`xo`, `yo`). Both must lower to the same loop nest and run
//! equally fast: a Func computed per tile covers the tile, not everything
//! from coordinate 0.
//!
//! `cargo run --release -p apps --example split_naming`

use apps::bench::{measure, SamplingOptions};
use apps::App;
use compiler::ops::clamp;
use compiler::schedule::Schedule;
use compiler::types::ScalarType;
use compiler::{Func, ImageParam, Pipeline, RDom, Var};

/// `f(x, y) = 0; f(x, y) += input(clamp(x + r, 0, 1023), clamp(y, 0, 255))`
/// over r in [0, 3); `out(x, y) = f(x, y)`.
fn pipeline() -> compiler::pipeline::PipelineDef {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let f = Func::new("f");
    f.define(&[&x, &y], 0.0f32);
    let r = RDom::new("r", &[(0.into(), 3.into())]);
    f.update([x.expr(), y.expr()], f.at([x.expr(), y.expr()]) + input.at([clamp(&x + r.x(), 0, 1023), clamp(&y, 0, 255)]));
    let out = Func::new("out");
    out.define(&[&x, &y], f.at([x.expr(), y.expr()]));
    Pipeline::new(&[&out]).expect("a valid pipeline")
}

fn schedule(outer_x: &str, outer_y: &str) -> Schedule {
    format!(
        "out.split(x, {outer_x}, xi, 64)\n\
         out.split(y, {outer_y}, yi, 3)\n\
         out.reorder(xi, yi, {outer_x}, {outer_y})\n\
         f.compute_at(out, {outer_x})\n\
         f.split(x, {outer_x}, xi, 16, round_up)\n\
         f.reorder(xi, {outer_x}, y)\n\
         f.unroll({outer_x}, 4)\n\
         f.unroll(y, 3)\n\
         f.vectorize(xi)\n\
         f.update(0).split(x, {outer_x}, xi, 16, round_up)\n\
         f.update(0).reorder(xi, {outer_x}, y, r.x)\n\
         f.update(0).unroll({outer_x}, 4)\n\
         f.update(0).unroll(y, 3)\n\
         f.update(0).vectorize(xi)\n"
    )
    .parse()
    .expect("a valid schedule")
}

fn main() -> anyhow::Result<()> {
    let same = schedule("x", "y");
    let app = App {
        name: "split_naming",
        pipeline: pipeline(),
        expert: same.clone(),
        inputs: vec![("input".to_string(), vec![(0, 1024), (0, 256)])],
        output: vec![(512, 512), (120, 120)],
        params: vec![],
    };
    let measured =
        measure(&app, &[("outer loops keep the name", same), ("fresh outer names", schedule("xo", "yo"))], &SamplingOptions::default())?;
    println!("| schedule | min (ms) | median (ms) | samples |\n|---|---:|---:|---:|");
    for row in &measured.rows {
        println!("| {} | {:.3} | {:.3} | {} |", row.schedule, row.min_ms, row.median_ms, row.samples);
    }
    println!("same-name / fresh-name (min): {:.2}", measured.rows[0].min_ms / measured.rows[1].min_ms);
    Ok(())
}
