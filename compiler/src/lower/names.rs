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

/// `f.s{s}.{v}`: the loop variable of loop `var` of stage `stage` of `func`.
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

/// `f.s{s}.{v}.min`: the stage's lower bound in variable `var` (defined by
/// bounds inference).
pub fn stage_min(func: &str, stage: usize, var: &str) -> String {
    format!("{func}.s{stage}.{var}.min")
}

/// `f.s{s}.{v}.max`: the stage's upper bound in variable `var` (defined by
/// bounds inference).
pub fn stage_max(func: &str, stage: usize, var: &str) -> String {
    format!("{func}.s{stage}.{var}.max")
}

/// `{l}.loop_min`: the first value of loop symbol `symbol` (defined by loop
/// synthesis).
pub fn loop_min(symbol: &str) -> String {
    format!("{symbol}.loop_min")
}

/// `{l}.loop_extent`: the extent of loop symbol `symbol` (defined by loop
/// synthesis).
pub fn loop_extent(symbol: &str) -> String {
    format!("{symbol}.loop_extent")
}

/// `f.{x}.min`: the lowest coordinate of `func` its consumers require in pure
/// dimension `var`.
pub fn required_min(func: &str, var: &str) -> String {
    format!("{func}.{var}.min")
}

/// `f.{x}.max`: the highest coordinate of `func` its consumers require in
/// pure dimension `var`.
pub fn required_max(func: &str, var: &str) -> String {
    format!("{func}.{var}.max")
}
