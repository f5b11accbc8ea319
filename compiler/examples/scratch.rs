use compiler::ops::*;
use compiler::*;
fn main() {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::U16, 2);
    let bx = Func::new("blur_x");
    bx.define(&[&x, &y], (input.at([&x - 1, y.expr()]) + input.at([x.expr(), y.expr()]) + input.at([&x + 1, y.expr()])) / 3);
    let out = Func::new("out");
    out.define(&[&x, &y], (bx.at([x.expr(), &y - 1]) + bx.at([x.expr(), y.expr()]) + bx.at([x.expr(), &y + 1])) / 3);
    let p = Pipeline::new(&[&out]).unwrap();
    let mut s = compiler::schedule::Schedule::new();
    s.func("blur_x").store_root().compute_at("out", "y");
    let l = compiler::lower::lower_with(&p, &s, &compiler::lower::LowerOptions { keep_passes: true }).unwrap();
    for (n, st) in &l.passes { if n.contains("bounds") || n.contains("final") { println!("=== {n}\n{st}"); } }
}
