//! The names lowering gives to loops and bounds, in one place so that every
//! pass agrees on them.
//!
//! For Func `f`, stage `s` and loop `v`:
//! - `f.s{s}.{v}` is the loop variable (also the full value of a pure or
//!   reduction variable `v` inside the stage's loop nest);
//! - `f.s{s}.{v}.min` / `.max` are the stage's bounds in variable `v`
//!   (defined by bounds inference);
//! - `{l}.loop_min` / `{l}.loop_extent` are the bounds of loop symbol `l`
//!   (defined by loop synthesis). They have names of their own because a
//!   split whose outer loop keeps the variable's name (`split(x, x, xi,
//!   16)`, and every `vectorize` or `unroll`) makes that loop's symbol the
//!   canonical `f.s{s}.{x}`: its bounds must not shadow the stage's;
//! - `f.{x}.min` / `f.{x}.max` are the region of `f` its consumers require in
//!   pure dimension `x` (the output buffer's region for outputs);
//! - buffer fields use [`crate::lang::pipeline::buffer_vars`] (`f.min.0`, ...).

pub fn stage_var(func: &str, stage: usize, var: &str) -> String {
    format!("{func}.s{stage}.{var}")
}

/// The Func, stage and loop of a loop variable named by [`stage_var`]
/// (the loop may contain dots: `r.x`).
pub fn parse_stage_var(name: &str) -> Option<(&str, usize, &str)> {
    let (func, rest) = name.split_once('.')?;
    let (stage, var) = rest.strip_prefix('s')?.split_once('.')?;
    Some((func, stage.parse().ok()?, var))
}

pub fn stage_min(func: &str, stage: usize, var: &str) -> String {
    format!("{func}.s{stage}.{var}.min")
}

pub fn stage_max(func: &str, stage: usize, var: &str) -> String {
    format!("{func}.s{stage}.{var}.max")
}

pub fn loop_min(symbol: &str) -> String {
    format!("{symbol}.loop_min")
}

pub fn loop_extent(symbol: &str) -> String {
    format!("{symbol}.loop_extent")
}

pub fn required_min(func: &str, var: &str) -> String {
    format!("{func}.{var}.min")
}

pub fn required_max(func: &str, var: &str) -> String {
    format!("{func}.{var}.max")
}
