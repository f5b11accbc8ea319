//! Times one schedule written two ways, side by side: splits whose outer
//! loop keeps the variable's name (`split(x, x, xi, 64)`, Halide's usual
//! naming and what `unroll`/`vectorize` do internally) and the same splits
//! with fresh outer names (`xo`, `yo`). Both lower to the same loop nest
//! and must run equally fast: a Func computed per tile covers the tile,
//! not everything from coordinate 0.
//!
//! `cargo run --release -p codegen --example split_naming`

#[path = "../tests/support/split_naming.rs"]
mod split_naming;

use codegen::timing::{pattern_input, time_compiled, Sampling};
use compiler::exec::realize::{bind_arguments, BoundArguments};
use compiler::ir::types::ScalarType;
use std::collections::BTreeMap;

fn main() -> anyhow::Result<()> {
    let p = split_naming::pipeline();
    let inputs = BTreeMap::from([("input".to_string(), pattern_input("input", ScalarType::F32, &[(0, 1024), (0, 256)])?)]);
    let regions = [("out", vec![(512, 512), (120, 120)])];
    println!("| schedule | min (ms) | median (ms) | samples |\n|---|---:|---:|---:|");
    let mut mins = vec![];
    for (name, (ox, oy)) in [("outer loops keep the name", ("x", "y")), ("fresh outer names", ("xo", "yo"))] {
        let lowered = compiler::lower::lower(&p, &split_naming::schedule(ox, oy))?;
        let compiled = codegen::compile(&lowered)?;
        let BoundArguments { mut buffers, scalars } = bind_arguments(&p, &inputs, &BTreeMap::new(), &regions)?;
        let t = time_compiled(&compiled, &mut buffers, &scalars, &Sampling::default())?;
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        println!("| {name} | {:.3} | {:.3} | {} |", ms(t.min), ms(t.median), t.samples);
        mins.push(ms(t.min));
    }
    println!("same-name / fresh-name (min): {:.2}", mins[0] / mins[1]);
    Ok(())
}
