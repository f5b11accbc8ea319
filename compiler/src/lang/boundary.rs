//! Boundary conditions: Funcs that extend a source — an input buffer or any
//! Func — beyond a box to the whole integer grid: clamp to the edge, a
//! constant outside, or a mirror image (edge repeated, or not). The box of
//! an input is its buffer's (`repeat_edge(&input)`) or one given
//! (`repeat_edge_within(&f, &[(min, extent), ...])`, as Halide's
//! `BoundaryConditions` take a region); a Func's box is always given. A
//! dimension may be left unbounded, inner ones too: bounds given as
//! `Option`s (`&[None, Some((min, extent))]`, Halide's undefined `Range`).
//! Every condition is one rule per dimension applied to the coordinates of
//! one read of the source, whatever the source.

use crate::error::LangError;
use crate::ir::expr::Expr;
use crate::ir::types::Type;
use crate::lang::handles::Made;
use crate::lang::ops::{clamp, select, CompareExt};
use crate::lang::{Func, ImageParam, Var};

/// What a boundary condition can extend: an input buffer or a Func.
pub trait Source {
    /// Its name (the boundary Func is named after it).
    fn source_name(&self) -> String;
    /// Its number of dimensions, or why it has none yet.
    fn source_dims(&self) -> Result<usize, LangError>;
    /// Its value at `coords`.
    fn read(&self, coords: Vec<Expr>) -> Expr;
}

impl Source for ImageParam {
    fn source_name(&self) -> String {
        self.name().to_string()
    }
    fn source_dims(&self) -> Result<usize, LangError> {
        Ok(self.dims())
    }
    fn read(&self, coords: Vec<Expr>) -> Expr {
        self.at(coords)
    }
}

impl Source for Func {
    fn source_name(&self) -> String {
        self.name().to_string()
    }
    fn source_dims(&self) -> Result<usize, LangError> {
        self.dims().ok_or_else(|| LangError::Invalid {
            func: self.name().to_string(),
            why: "a boundary condition of it is asked for before it is defined".into(),
        })
    }
    fn read(&self, coords: Vec<Expr>) -> Expr {
        self.at(coords)
    }
}

/// One dimension of the box: its first and last coordinates and extent.
struct Span {
    min: Expr,
    last: Expr,
    extent: Expr,
}

/// How a coordinate outside the box is brought back into it.
#[derive(Clone, Copy)]
enum Rule {
    /// The nearest edge.
    Clamp,
    /// Reflected, the edge repeated (..., 1, 0, 0, 1, ...).
    MirrorImage,
    /// Reflected about the edge (..., 2, 1, 0, 1, 2, ...).
    MirrorInterior,
}

impl Rule {
    fn apply(self, x: &Expr, s: &Span) -> Expr {
        // The offset into the box modulo the period of the reflection (never
        // negative), folded back where it lies past the box.
        let reflect = |period: Expr, back: i32| {
            let m = (x.clone() - s.min.clone()) % period.clone();
            select(m.lt(s.extent.clone()), m.clone(), period - back - m) + s.min.clone()
        };
        let inside = match self {
            Rule::Clamp => x.clone(),
            Rule::MirrorImage => reflect(s.extent.clone() * 2, 1),
            // An extent of 1 has a period of 0, and `m % 0` is 0.
            Rule::MirrorInterior => reflect(s.extent.clone() * 2 - 2, 0),
        };
        // The clamp keeps bounds inference tight; a reflection already lies inside.
        clamp(inside, s.min.clone(), s.last.clone())
    }
}

/// The box of `source`: `bounds` for its first dimensions (the others, and
/// those given `None`, are left unbounded), as `i32` expressions.
fn spans(source: &dyn Source, bounds: &[Option<(Expr, Expr)>]) -> Result<Vec<Option<Span>>, LangError> {
    let dims = source.source_dims()?;
    let err = |why: String| LangError::Invalid { func: source.source_name(), why };
    if bounds.len() > dims {
        return Err(err(format!("a boundary condition gives {} bounds, but it has {dims} dimensions", bounds.len())));
    }
    let coordinate = |e: &Expr, what: &str, d: usize| {
        if e.ty().is_int() {
            Ok(Expr::cast(Type::i32(), e.clone()))
        } else {
            Err(err(format!("the {what} of dimension {d} of a boundary condition is {e}, a {}, not an integer", e.ty())))
        }
    };
    let mut spans = vec![];
    for (d, bound) in bounds.iter().enumerate() {
        let span = match bound {
            Some((min, extent)) => {
                let (min, extent) = (coordinate(min, "min", d)?, coordinate(extent, "extent", d)?);
                Some(Span { last: min.clone() + extent.clone() - 1, min, extent })
            }
            None => None,
        };
        spans.push(span);
    }
    spans.resize_with(dims, || None);
    Ok(spans)
}

/// The buffer's own box.
fn input_bounds(input: &ImageParam) -> Vec<(Expr, Expr)> {
    (0..input.dims()).map(|d| (input.min(d), input.extent(d))).collect()
}

/// `{source}_{suffix}(c) = source(rule(c))`, or `outside` where `c` lies
/// outside the box when given; a mistake is recorded on the Func made.
fn extend<B>(source: &dyn Source, bounds: &[B], suffix: &str, rule: Rule, outside: Option<Expr>) -> Func
where
    B: Clone + Into<Option<(Expr, Expr)>>,
{
    // A source made by the library is named by its base until collected.
    let name = source.source_name();
    let base = name.rsplit_once('$').map_or(name.as_str(), |(base, _)| base);
    let f = Func::made_by(Made::Boundary, &format!("{base}_{suffix}"));
    let bounds: Vec<Option<(Expr, Expr)>> = bounds.iter().cloned().map(Into::into).collect();
    let spans = match spans(source, &bounds) {
        Ok(s) => s,
        Err(e) => {
            f.fail(e);
            return f;
        }
    };
    let vars: Vec<Var> = (0..spans.len()).map(|d| Var::new(&format!("_{d}"))).collect();
    let coords: Vec<Expr> = vars.iter().map(Var::expr).collect();
    let moved = coords.iter().zip(&spans).map(|(x, s)| s.as_ref().map_or_else(|| x.clone(), |s| rule.apply(x, s))).collect();
    let read = source.read(moved);
    let value = match outside {
        Some(value) => {
            let inside = coords
                .iter()
                .zip(&spans)
                .filter_map(|(x, s)| s.as_ref().map(|s| x.ge(s.min.clone()) & x.le(s.last.clone())))
                .reduce(|a, b| a & b)
                .unwrap_or(Expr::bool(true));
            let ty = read.ty();
            select(inside, read, Expr::cast(ty, value))
        }
        None => read,
    };
    f.define(&vars.iter().collect::<Vec<_>>(), value);
    f
}

/// Coordinates outside the buffer read its nearest edge.
pub fn repeat_edge(input: &ImageParam) -> Func {
    repeat_edge_within(input, &input_bounds(input))
}

/// Coordinates outside the buffer read `value`.
pub fn constant_exterior(input: &ImageParam, value: Expr) -> Func {
    constant_exterior_within(input, &input_bounds(input), value)
}

/// Coordinates outside the buffer reflect back into it, the edge repeated
/// (..., 1, 0, 0, 1, ...).
pub fn mirror_image(input: &ImageParam) -> Func {
    mirror_image_within(input, &input_bounds(input))
}

/// Coordinates outside the buffer reflect back into it about the edge
/// (..., 2, 1, 0, 1, 2, ...).
pub fn mirror_interior(input: &ImageParam) -> Func {
    mirror_interior_within(input, &input_bounds(input))
}

/// `source` where coordinates outside the box `bounds` (a min and an extent
/// for each of its first dimensions, `(min, extent)` or `Some((min,
/// extent))`; the others, and those given `None`, are left as they are)
/// read the box's nearest edge. A source not yet defined, more bounds than
/// dimensions or a bound that is not an integer is an error `Pipeline::new`
/// reports, naming the source.
pub fn repeat_edge_within<B: Clone + Into<Option<(Expr, Expr)>>>(source: &impl Source, bounds: &[B]) -> Func {
    extend(source, bounds, "repeat_edge", Rule::Clamp, None)
}

/// `source` where coordinates outside the box `bounds` read `value` (cast
/// to the source's type); see [`repeat_edge_within`] for the box.
pub fn constant_exterior_within<B: Clone + Into<Option<(Expr, Expr)>>>(source: &impl Source, bounds: &[B], value: Expr) -> Func {
    extend(source, bounds, "constant_exterior", Rule::Clamp, Some(value))
}

/// `source` where coordinates outside the box `bounds` reflect back into
/// it, the edge repeated; see [`repeat_edge_within`] for the box.
pub fn mirror_image_within<B: Clone + Into<Option<(Expr, Expr)>>>(source: &impl Source, bounds: &[B]) -> Func {
    extend(source, bounds, "mirror_image", Rule::MirrorImage, None)
}

/// `source` where coordinates outside the box `bounds` reflect back into
/// it about the edge; see [`repeat_edge_within`] for the box.
pub fn mirror_interior_within<B: Clone + Into<Option<(Expr, Expr)>>>(source: &impl Source, bounds: &[B]) -> Func {
    extend(source, bounds, "mirror_interior", Rule::MirrorInterior, None)
}
