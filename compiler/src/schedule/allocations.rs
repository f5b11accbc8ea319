//! The most bytes each allocation of a lowered statement takes, with every
//! buffer field and param already set to a constant (the estimates): what
//! the legality check at the estimates compares with its limits and the
//! search with what its cost model priced.
//!
//! By running through the loops enclosing an allocation that its size
//! depends on (their bounds and the lets on the way evaluated at each
//! iteration) and taking the largest size: every iteration of a short loop,
//! the ends and middle of a long one (see [`iterations`]). A size whose
//! loops take more than [`MAX_EVALUATIONS`] evaluations, or that reads
//! memory, is bounded by interval arithmetic instead, which can be far too
//! large: the extent of a tile of a Func read through a clamp (a boundary
//! condition) is `clamp(y + 362) - clamp(y - 3) + 7`, whose ends, bounded
//! apart over every tile's `y`, span the whole image.

use crate::analysis::interval::{bounds_of, Interval, Scope};
use crate::exec::eval::{self, EvalContext, EvalError, Val};
use crate::ir::expr::{BinOp, Expr, ExprNode, Name};
use crate::ir::stmt::{Stmt, StmtNode};
use crate::ir::types::ScalarType;
use crate::ir::value::Scalar;
use crate::ir::visit::{free_vars, node_count, substitute_map};
use crate::simplify::simplify;
use std::collections::{HashMap, HashSet};

/// The most evaluations (of a let, a loop bound or the size) spent running
/// through the loops around one allocation before bounding it by
/// intervals instead. A size names the bounds of the Funcs that consume
/// the one allocated (bounds inference defines them in front of it), so a
/// Func read by many consumers in a deep nest of tiles needs each of their
/// lets at every iteration run through: hundreds of lets over tens of
/// iterations.
pub const MAX_EVALUATIONS: usize = 200_000;

/// Loops of at most this many iterations are run through whole; longer
/// ones at their ends and middle (see [`iterations`]).
pub const MAX_RUN_ITERATIONS: i64 = 16;

/// Let values that expand to more than this many nodes stay behind their
/// name, which then ranges over the value's interval.
const MAX_EXPANDED_NODES: usize = 400;

/// Each `Allocate` of `s` (whose buffer fields and params are constants),
/// in statement order, with the most bytes it can take (`None`: unbounded).
/// The walk recurses once per nested statement (a long pipeline lowers to
/// thousands of nested lets), so it runs on a large stack.
pub fn largest_allocations(s: &Stmt) -> Vec<(Name, Option<u64>)> {
    crate::stack::on_large_stack(|| {
        let mut w = Walk { scope: Scope::default(), lets: HashMap::new(), path: vec![], out: vec![] };
        w.stmt(s);
        w.out
    })
}

/// A loop or let between the root and an allocation, outermost first.
#[derive(Clone)]
enum Enclosing {
    Loop { name: Name, min: Expr, extent: Expr },
    Let { name: Name, value: Expr },
}

struct Walk {
    /// Enclosing loop variables (and lets too large to expand) over their
    /// intervals.
    scope: Scope,
    /// Enclosing lets, expanded (up to [`MAX_EXPANDED_NODES`]) and
    /// simplified, so that the bounds of a region cancel in its extent.
    lets: HashMap<Name, Expr>,
    path: Vec<Enclosing>,
    out: Vec<(Name, Option<u64>)>,
}

impl Walk {
    fn stmt(&mut self, s: &Stmt) {
        match s.node() {
            StmtNode::For { name, min, extent, body, .. } => {
                let (lo, hi) = {
                    let (min, extent) = (expanded(min, &self.lets), expanded(extent, &self.lets));
                    (bounds_of(&min, &self.scope), bounds_of(&(min + extent - 1), &self.scope))
                };
                let shadowed = self.lets.remove(name);
                self.scope.push(name.clone(), Interval { min: lo.min, max: hi.max });
                self.path.push(Enclosing::Loop { name: name.clone(), min: min.clone(), extent: extent.clone() });
                self.stmt(body);
                self.path.pop();
                self.scope.pop(name);
                if let Some(v) = shadowed {
                    self.lets.insert(name.clone(), v);
                }
            }
            StmtNode::LetStmt { name, value, body } => {
                let expansion = expanded(value, &self.lets);
                self.path.push(Enclosing::Let { name: name.clone(), value: value.clone() });
                if node_count(&expansion) <= MAX_EXPANDED_NODES {
                    let shadowed = self.lets.insert(name.clone(), expansion);
                    self.stmt(body);
                    match shadowed {
                        Some(v) => self.lets.insert(name.clone(), v),
                        None => self.lets.remove(name),
                    };
                } else {
                    let shadowed = self.lets.remove(name);
                    self.scope.push(name.clone(), bounds_of(&expansion, &self.scope));
                    self.stmt(body);
                    self.scope.pop(name);
                    if let Some(v) = shadowed {
                        self.lets.insert(name.clone(), v);
                    }
                }
                self.path.pop();
            }
            StmtNode::Allocate { buffer, ty, size, body } => {
                let elements = match largest_by_running(&self.path, size) {
                    Some(n) => Some(n.max(0) as u64),
                    None => largest_elements(size, &self.scope, &self.lets),
                };
                self.out.push((buffer.clone(), elements.map(|n| n.saturating_mul(ty.scalar.bytes() as u64))));
                self.stmt(body);
            }
            _ => {
                for child in crate::ir::visit::stmt_children(s).1 {
                    self.stmt(&child);
                }
            }
        }
    }
}

/// `e` with the lets' values in place of their names, simplified.
fn expanded(e: &Expr, lets: &HashMap<Name, Expr>) -> Expr {
    simplify(&substitute_map(lets, e))
}

/// The largest value of an allocation's `size`, a product of extents:
/// each factor bounded on its own and the bounds multiplied in 64 bits
/// (saturating), as folding the product in the 32-bit index type would
/// wrap past 2^31 elements; `None` when a factor has no bound.
fn largest_elements(size: &Expr, scope: &Scope, lets: &HashMap<Name, Expr>) -> Option<u64> {
    if let ExprNode::Binary { op: BinOp::Mul, a, b } = size.node() {
        return Some(largest_elements(a, scope, lets)?.saturating_mul(largest_elements(b, scope, lets)?));
    }
    bounds_of(&expanded(size, lets), scope).max.and_then(|m| simplify(&m).as_int()).map(|n| n.max(0) as u64)
}

/// The largest value `size` takes over the iterations of the loops of
/// `path` it depends on, each factor of the product evaluated in 64 bits;
/// `None` if a value it needs is not a constant there (a load, a param) or
/// running through them takes more than [`MAX_EVALUATIONS`] evaluations.
fn largest_by_running(path: &[Enclosing], size: &Expr) -> Option<i64> {
    // Keep only what the size depends on, innermost first.
    let mut needed: HashSet<Name> = free_vars(size);
    let mut kept = vec![];
    for item in path.iter().rev() {
        match item {
            Enclosing::Let { name, value } if needed.contains(name) => {
                needed.remove(name);
                needed.extend(free_vars(value));
                kept.push(item.clone());
            }
            Enclosing::Loop { name, min, extent } if needed.contains(name) => {
                needed.remove(name);
                needed.extend(free_vars(min));
                needed.extend(free_vars(extent));
                kept.push(item.clone());
            }
            _ => {}
        }
    }
    kept.reverse();
    let mut run = Run { cx: Constants::default(), evaluations: 0 };
    run.largest(&kept, &factors(size))
}

/// The factors of a product, each evaluated apart and multiplied in 64 bits.
fn factors(size: &Expr) -> Vec<Expr> {
    match size.node() {
        ExprNode::Binary { op: BinOp::Mul, a, b } => factors(a).into_iter().chain(factors(b)).collect(),
        _ => vec![size.clone()],
    }
}

struct Run {
    cx: Constants,
    evaluations: usize,
}

impl Run {
    fn value(&mut self, e: &Expr) -> Option<(ScalarType, Scalar)> {
        self.evaluations += 1;
        if self.evaluations > MAX_EVALUATIONS {
            return None;
        }
        let (ty, v) = eval::eval(&mut self.cx, e).ok()?;
        match v {
            Val::Scalar(s) => Some((ty, s)),
            Val::Vector(_) => None,
        }
    }

    fn int(&mut self, e: &Expr) -> Option<i64> {
        match self.value(e)?.1 {
            Scalar::Int(n) => Some(n),
            Scalar::UInt(n) => i64::try_from(n).ok(),
            Scalar::Float(_) => None,
        }
    }

    /// The largest product of `factors` over the iterations of `path`.
    fn largest(&mut self, path: &[Enclosing], factors: &[Expr]) -> Option<i64> {
        let Some((first, rest)) = path.split_first() else {
            return factors.iter().try_fold(1i64, |p, f| Some(p.saturating_mul(self.int(f)?.max(0))));
        };
        match first {
            Enclosing::Let { name, value } => {
                let (ty, v) = self.value(value)?;
                let slot = self.cx.scope.push(name.clone(), ty, Val::Scalar(v));
                let r = self.largest(rest, factors);
                self.cx.scope.truncate(slot);
                r
            }
            Enclosing::Loop { name, min, extent } => {
                let (min, extent) = (self.int(min)?, self.int(extent)?);
                let slot = self.cx.scope.push(name.clone(), ScalarType::I32, Val::Scalar(Scalar::Int(min)));
                let mut largest = 0i64;
                for v in iterations(min, extent) {
                    self.cx.scope.set(slot, Val::Scalar(Scalar::Int(v)));
                    match self.largest(rest, factors) {
                        Some(n) => largest = largest.max(n),
                        None => {
                            self.cx.scope.truncate(slot);
                            return None;
                        }
                    }
                }
                self.cx.scope.truncate(slot);
                Some(largest)
            }
        }
    }
}

/// The iterations of a loop from `min` over `extent` that are run through:
/// all of them up to [`MAX_RUN_ITERATIONS`], else the first two, the two in
/// the middle and the last two. A tile's region is the same wherever the
/// tile lies but near the ends of the image (where a clamp or a
/// shift-inwards tail changes it) and may alternate with the parity of the
/// tile's index (a pyramid's rounding).
fn iterations(min: i64, extent: i64) -> Vec<i64> {
    if extent <= MAX_RUN_ITERATIONS {
        return (min..min.saturating_add(extent.max(0))).collect();
    }
    let (mid, last) = (min + extent / 2, min + extent - 1);
    vec![min, min + 1, mid, mid + 1, last - 1, last]
}

/// An evaluation context of constants and loop variables only: a param, a
/// Func, an input or a buffer is not a constant here.
#[derive(Default)]
struct Constants {
    scope: eval::Scope,
}

impl EvalContext for Constants {
    type Error = ();

    fn scope(&mut self) -> &mut eval::Scope {
        &mut self.scope
    }

    fn error(&self, _: EvalError) {}

    fn param(&mut self, _: &Name, _: ScalarType) -> Result<Scalar, ()> {
        Err(())
    }

    fn call_func(&mut self, _: &Name, _: usize, _: &[i64]) -> Result<Scalar, ()> {
        Err(())
    }

    fn read_input(&mut self, _: &Name, _: &[i64]) -> Result<Scalar, ()> {
        Err(())
    }

    fn load(&mut self, _: &Name, _: Val, _: ScalarType) -> Result<Val, ()> {
        Err(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::stmt::ForKind;
    use crate::ir::types::Type;

    /// A long pipeline lowers to thousands of nested lets; the walk must
    /// not run out of a test thread's (default, small) stack on them.
    #[test]
    fn an_allocation_under_thousands_of_nested_lets_is_sized() {
        let size = Expr::var("x", Type::i32()) + 2;
        let mut s = Stmt::new(StmtNode::Allocate { buffer: "tile".into(), ty: Type::f32(), size, body: Stmt::no_op() });
        s = Stmt::for_loop("x", Expr::i32(0), Expr::i32(10), ForKind::Serial, s);
        for i in 0..20_000 {
            s = Stmt::let_stmt(format!("t{i}"), Expr::i32(i), s);
        }
        assert_eq!(largest_allocations(&s), vec![(Name::from("tile"), Some(11 * 4))]);
    }
}
