//! Boundary conditions: Funcs that extend an input buffer to the whole
//! integer grid (clamp to the edge, a constant outside, or a mirror image).

use crate::ir::expr::Expr;
use crate::lang::ops::{clamp, select, CompareExt};
use crate::lang::{Func, ImageParam, Var};

fn dim_vars(input: &ImageParam) -> Vec<Var> {
    (0..input.dims()).map(|d| Var::new(&format!("_{d}"))).collect()
}

fn define_with(input: &ImageParam, suffix: &str, body: impl Fn(&[Expr]) -> Expr) -> Func {
    let vars = dim_vars(input);
    let f = Func::new(&format!("{}_{suffix}", input.name()));
    let coords: Vec<Expr> = vars.iter().map(Var::expr).collect();
    f.define(&vars.iter().collect::<Vec<_>>(), body(&coords));
    f
}

fn last(input: &ImageParam, d: usize) -> Expr {
    input.min(d) + input.extent(d) - 1
}

/// Coordinates outside the buffer read its nearest edge.
pub fn repeat_edge(input: &ImageParam) -> Func {
    define_with(input, "repeat_edge", |c| input.at(c.iter().enumerate().map(|(d, x)| clamp(x, input.min(d), last(input, d)))))
}

/// Coordinates outside the buffer read `value`.
pub fn constant_exterior(input: &ImageParam, value: Expr) -> Func {
    define_with(input, "constant_exterior", |c| {
        let inside =
            c.iter().enumerate().map(|(d, x)| x.ge(input.min(d)) & x.le(last(input, d))).reduce(|a, b| a & b).unwrap_or(Expr::bool(true));
        let clamped = input.at(c.iter().enumerate().map(|(d, x)| clamp(x, input.min(d), last(input, d))));
        select(inside, clamped, Expr::cast(crate::ir::types::Type::scalar(input_type(input)), value.clone()))
    })
}

/// Coordinates outside the buffer reflect back into it (the edge pixel is
/// repeated: ..., 1, 0, 0, 1, ...).
pub fn mirror_image(input: &ImageParam) -> Func {
    define_with(input, "mirror_image", |c| {
        input.at(c.iter().enumerate().map(|(d, x)| {
            let extent = input.extent(d);
            let m = (x - input.min(d)) % (extent.clone() * 2);
            let reflected = select(m.lt(extent.clone()), m.clone(), extent * 2 - 1 - m);
            // The clamp keeps bounds inference tight; the reflection already lies inside.
            clamp(reflected + input.min(d), input.min(d), last(input, d))
        }))
    })
}

fn input_type(input: &ImageParam) -> crate::ir::types::ScalarType {
    input.at((0..input.dims()).map(|_| Expr::i32(0))).ty().scalar
}
