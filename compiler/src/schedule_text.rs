//! The text form of schedules: one directive per line, as a person would
//! write it (`out.split(y, yo, yi, 8)`, `blur_x.compute_at(out, yo)`), and a
//! parser that reads it back into the same [`Schedule`].

use crate::schedule::{Directive, TailStrategy};

fn tail_suffix(tail: TailStrategy) -> String {
    if tail == TailStrategy::Auto {
        String::new()
    } else {
        format!(", {}", tail.name())
    }
}

/// The source text of one directive, e.g. `split(x, xo, xi, 8)`.
pub fn directive_text(d: &Directive) -> String {
    match d {
        Directive::Split { var, outer, inner, factor, tail } => {
            format!("split({var}, {outer}, {inner}, {factor}{})", tail_suffix(*tail))
        }
        Directive::Fuse { inner, outer, fused } => format!("fuse({inner}, {outer}, {fused})"),
        Directive::Reorder { vars } => {
            format!("reorder({})", vars.iter().map(|v| &**v).collect::<Vec<_>>().join(", "))
        }
        Directive::Tile { x, y, xo, yo, xi, yi, x_factor, y_factor, tail } => {
            format!("tile({x}, {y}, {xo}, {yo}, {xi}, {yi}, {x_factor}, {y_factor}{})", tail_suffix(*tail))
        }
        Directive::Vectorize { var, width: Some(w) } => format!("vectorize({var}, {w})"),
        Directive::Vectorize { var, width: None } => format!("vectorize({var})"),
        Directive::Unroll { var, factor: Some(f) } => format!("unroll({var}, {f})"),
        Directive::Unroll { var, factor: None } => format!("unroll({var})"),
        Directive::Parallel { var } => format!("parallel({var})"),
        Directive::Serial { var } => format!("serial({var})"),
        Directive::GpuBlocks { var } => format!("gpu_blocks({var})"),
        Directive::GpuThreads { var } => format!("gpu_threads({var})"),
    }
}
