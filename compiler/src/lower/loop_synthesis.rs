//! Loop-nest synthesis: builds each realized Func's loop nest from its
//! resolved stages and injects it at its compute level, with a `Realize` at
//! its store level.
//!
//! Requires: inlined definitions (see [`super::inline`]) and a validated plan.
//! Guarantees: one `ProducerConsumer` node per realized Func, placed at the
//! start of the body of its compute loop (or at the root), producers before
//! their consumers; one empty-bounded `Realize` per non-output Func at its
//! store level (bounds inference fills the bounds). Loop bounds refer to the
//! symbolic names of [`super::names`], defined later by bounds inference.

use super::names::{loop_extent, loop_min, stage_max, stage_min, stage_var};
use super::validate::{FuncPlan, Plan};
use crate::ir::expr::{Expr, MathFn, Name};
use crate::ir::stmt::{Stmt, StmtNode};
use crate::ir::visit::{mutate_stmt_children, substitute_map, Mutator};
use crate::lang::ops::CompareExt;
use crate::lang::pipeline::FuncDef;
use crate::schedule::{LoopLevel, ResolvedStage, SplitRecord, TailStrategy};
use std::collections::{HashMap, HashSet};

fn v(name: &str) -> Expr {
    Expr::ivar(name)
}

fn min_of(symbol: &str) -> Expr {
    v(&loop_min(symbol))
}

fn extent_of(symbol: &str) -> Expr {
    v(&loop_extent(symbol))
}

/// A split or fuse record with every variable replaced by its symbol.
enum SymbolicSplit {
    Split { old: String, outer: String, inner: String, factor: i64, tail: TailStrategy },
    Fuse { inner: String, outer: String, fused: String },
}

impl SymbolicSplit {
    /// The symbols whose values stay inside their `[min, min + extent)`
    /// range wherever they are used, given those that do before it: loop
    /// variables do; a guarded split's variable does (uses are inside the
    /// guard); rounded-up and shifted splits may leave it; a fuse passes its
    /// fused variable's exactness to the two it recovers.
    fn mark_exact(&self, exact: &mut HashSet<String>, loops: &HashSet<String>) {
        let is_exact = |s: &String, exact: &HashSet<String>| loops.contains(s) || exact.contains(s);
        match self {
            SymbolicSplit::Split { old, tail, .. } => {
                if *tail == TailStrategy::GuardWithIf {
                    exact.insert(old.clone());
                }
            }
            SymbolicSplit::Fuse { inner, outer, fused } => {
                if is_exact(fused, exact) {
                    exact.insert(inner.clone());
                    exact.insert(outer.clone());
                }
            }
        }
    }
}

/// The symbols of one stage's variables. A split or fuse may give a new
/// variable the name of the one it consumed (`vectorize(x, 8)` splits `x`
/// into `x` and `x_vi`), so each *generation* of a name gets its own symbol:
/// the final loops keep the canonical [`stage_var`] names (which compute_at
/// levels refer to), and an earlier generation whose canonical name is taken
/// gets `f.s{s}.{v}.{k}`. Returns the symbol of each initial dimension and
/// the records in directive order.
fn stage_symbols(q: &dyn Fn(&str) -> String, r: &ResolvedStage) -> (HashMap<Name, String>, Vec<SymbolicSplit>) {
    let mut used: HashSet<String> = HashSet::new();
    let mut fresh = |name: &str| -> String {
        let base = q(name);
        if used.insert(base.clone()) {
            return base;
        }
        (1..).map(|k| format!("{base}.{k}")).find(|c| used.insert(c.clone())).unwrap_or(base)
    };
    let mut live: HashMap<Name, String> = r.dims.iter().map(|d| (d.name.clone(), fresh(&d.name))).collect();
    let take = |live: &mut HashMap<Name, String>, name: &Name| live.remove(name).unwrap_or_else(|| q(name));
    let mut records = vec![];
    for s in r.splits.iter().rev() {
        match s {
            SplitRecord::Split { old, outer, inner, factor, tail } => {
                let (outer, inner) = (take(&mut live, outer), take(&mut live, inner));
                let old_symbol = fresh(old);
                live.insert(old.clone(), old_symbol.clone());
                records.push(SymbolicSplit::Split { old: old_symbol, outer, inner, factor: *factor, tail: *tail });
            }
            SplitRecord::Fuse { inner, outer, fused } => {
                let fused_symbol = take(&mut live, fused);
                let (inner_symbol, outer_symbol) = (fresh(inner), fresh(outer));
                live.insert(inner.clone(), inner_symbol.clone());
                live.insert(outer.clone(), outer_symbol.clone());
                records.push(SymbolicSplit::Fuse { inner: inner_symbol, outer: outer_symbol, fused: fused_symbol });
            }
        }
    }
    records.reverse();
    (live, records)
}
/// The loop nest computing one stage of `f`.
fn stage_nest(f: &FuncDef, stage: usize, r: &ResolvedStage) -> Stmt {
    let name = &*f.name;
    let q = |var: &str| stage_var(name, stage, var);
    let (initial, splits) = stage_symbols(&q, r);
    let symbol = |var: &Name| initial.get(var).cloned().unwrap_or_else(|| q(var));

    // Definition variables become the stage's loop symbols.
    let rename: HashMap<Name, Expr> = r.initial.iter().map(|d| (d.name.clone(), v(&symbol(&d.name)))).collect();
    let (args, values, rdom) = if stage == 0 {
        (f.args.iter().map(|a| Expr::ivar(a.clone())).collect::<Vec<_>>(), f.values.clone(), None)
    } else {
        let u = &f.updates[stage - 1];
        (u.args.clone(), u.values.clone(), u.rdom.clone())
    };
    let args: Vec<Expr> = args.iter().map(|a| substitute_map(&rename, a)).collect();
    let values = values.iter().map(|v| substitute_map(&rename, v)).collect();
    let mut body = Stmt::provide(f.name.clone(), args, values);
    if let Some(pred) = rdom.as_ref().and_then(|r| r.predicate.as_ref()) {
        body = Stmt::if_then(substitute_map(&rename, pred), body);
    }
    // Values of split and fused variables from the loop variables: the
    // latest record outermost, since it defines what earlier ones consume.
    // A guard_with_if split guards right where its variable is defined, so
    // that bounds inference sees the guard before any use of the variable.
    let loops: HashSet<String> = r.dims.iter().map(|d| q(&d.name)).collect();
    let mut exact = HashSet::new();
    for s in splits.iter().rev() {
        s.mark_exact(&mut exact, &loops);
    }
    for s in &splits {
        body = match s {
            SymbolicSplit::Split { old, outer, inner, factor, tail } => {
                let f = Expr::i32(*factor);
                let base = match tail {
                    // The last iteration shifts back to end at the max; a
                    // region narrower than the factor is computed from its
                    // min instead (never before it), so what a split loop
                    // touches stays within `[min, max(max, min + factor - 1)]`.
                    TailStrategy::ShiftInwards => Expr::max(Expr::min(v(outer) * f.clone(), extent_of(old) - f), Expr::i32(0)),
                    _ => v(outer) * f,
                };
                if *tail == TailStrategy::GuardWithIf {
                    body = Stmt::if_then(v(old).lt(min_of(old) + extent_of(old)), body);
                }
                let mut start = min_of(old) + base;
                if *tail == TailStrategy::ShiftInwards {
                    // Over the outer loop the tile starts sweep `[min,
                    // max(max - factor + 1, min)]`. Bounds inference reads
                    // this where the outer loop ranges, so that a bound is
                    // the region's own ends rather than the sum of the
                    // bounds of the min and of the extent, which counts the
                    // variation of the min twice (level after level in a
                    // pyramid). The end is written with the loop's own min
                    // and extent, not the stage's max symbol: a sliding
                    // window moves the loop's min, and the two then disagree.
                    let last = Expr::max(min_of(old) + extent_of(old) - *factor as i32, min_of(old));
                    start = Expr::math(MathFn::PromiseClamped, vec![start, min_of(old), last]);
                }
                let value = start + v(inner);
                Stmt::let_stmt(old.clone(), value, body)
            }
            SymbolicSplit::Fuse { inner, outer, fused } => {
                let mut inner_val = min_of(inner) + v(fused) % extent_of(inner);
                let mut outer_val = min_of(outer) + v(fused) / extent_of(inner);
                if exact.contains(fused) || loops.contains(fused) {
                    // Bounds inference cannot see through division by a
                    // symbolic extent; the loop structure guarantees both.
                    let promise = |value: Expr, symbol: &str| {
                        let max = min_of(symbol) + extent_of(symbol) - 1;
                        Expr::math(MathFn::PromiseClamped, vec![value, min_of(symbol), max])
                    };
                    inner_val = promise(inner_val, inner);
                    outer_val = promise(outer_val, outer);
                }
                Stmt::let_stmt(inner.clone(), inner_val, Stmt::let_stmt(outer.clone(), outer_val, body))
            }
        };
    }
    for d in &r.dims {
        let s = q(&d.name);
        body = Stmt::for_loop(s.clone(), min_of(&s), extent_of(&s), d.kind, body);
    }
    // Loop bounds: initial dimensions from their min/max, derived ones from splits.
    let mut lets: Vec<(String, Expr)> = vec![];
    if let Some(rd) = &rdom {
        for d in &rd.dims {
            lets.push((stage_min(name, stage, &d.name), d.min.clone()));
            lets.push((stage_max(name, stage, &d.name), d.min.clone() + d.extent.clone() - 1));
        }
    }
    for d in &r.initial {
        let (lo, hi) = (v(&stage_min(name, stage, &d.name)), v(&stage_max(name, stage, &d.name)));
        let s = symbol(&d.name);
        lets.push((loop_min(&s), lo.clone()));
        lets.push((loop_extent(&s), hi - lo + 1));
    }
    for s in &splits {
        match s {
            SymbolicSplit::Split { old, outer, inner, factor, .. } => {
                lets.push((loop_min(outer), Expr::i32(0)));
                lets.push((loop_extent(outer), (extent_of(old) + (*factor - 1) as i32) / (*factor as i32)));
                lets.push((loop_min(inner), Expr::i32(0)));
                lets.push((loop_extent(inner), Expr::i32(*factor)));
            }
            SymbolicSplit::Fuse { inner, outer, fused } => {
                lets.push((loop_min(fused), Expr::i32(0)));
                // An empty dimension has a zero or negative extent (a
                // guarded tail iteration may need nothing): the product of
                // two negative extents must not become a positive trip count.
                let nonnegative = |symbol: &str| Expr::max(extent_of(symbol), Expr::i32(0));
                lets.push((loop_extent(fused), nonnegative(inner) * nonnegative(outer)));
            }
        }
    }
    for (n, e) in lets.into_iter().rev() {
        body = Stmt::let_stmt(n, e, body);
    }
    body
}

/// Every stage of `f`, in order.
pub fn produce_nest(f: &FuncDef, fp: &FuncPlan) -> Stmt {
    Stmt::block((0..f.stages()).map(|s| stage_nest(f, s, &fp.stages[s])).collect())
}

/// Wraps the body of the loop identified by `level` (or the whole statement
/// for root) with `wrap`.
fn wrap_at_level(s: &Stmt, level: &LoopLevel, wrap: &dyn Fn(Stmt) -> Stmt) -> Stmt {
    match level {
        LoopLevel::Inline | LoopLevel::Root => wrap(s.clone()),
        LoopLevel::At { func, stage, var } => {
            struct AtLoop<'a> {
                name: String,
                wrap: &'a dyn Fn(Stmt) -> Stmt,
            }
            impl Mutator for AtLoop<'_> {
                fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
                    match s.node() {
                        StmtNode::For { name, min, extent, kind, body } if **name == *self.name => {
                            Stmt::for_loop(name.clone(), min.clone(), extent.clone(), *kind, (self.wrap)(body.clone()))
                        }
                        _ => mutate_stmt_children(self, s),
                    }
                }
            }
            AtLoop { name: stage_var(func, *stage, var), wrap }.mutate_stmt(s)
        }
    }
}

/// The whole pipeline's loop nest. `funcs` are the realized Funcs,
/// producers first; `outputs` are computed in that order at the root.
pub fn synthesize(funcs: &[FuncDef], plan: &Plan, outputs: &[Name]) -> Stmt {
    let mut root = Stmt::block(
        funcs
            .iter()
            .filter(|f| outputs.contains(&f.name))
            .map(|f| {
                Stmt::new(StmtNode::ProducerConsumer {
                    func: f.name.clone(),
                    produce: produce_nest(f, plan.get(&f.name)),
                    consume: Stmt::no_op(),
                })
            })
            .collect(),
    );
    for f in funcs.iter().rev().filter(|f| !outputs.contains(&f.name)) {
        let fp = plan.get(&f.name);
        let produce = produce_nest(f, fp);
        let name = f.name.clone();
        root = wrap_at_level(&root, &fp.compute, &|body| {
            Stmt::new(StmtNode::ProducerConsumer { func: name.clone(), produce: produce.clone(), consume: body })
        });
        root = wrap_at_level(&root, &fp.store, &|body| {
            Stmt::new(StmtNode::Realize { func: name.clone(), types: f.types.clone(), bounds: vec![], body })
        });
    }
    root
}
