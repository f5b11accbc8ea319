//! Bounds inference: defines, for each realized Func, the region its
//! consumers require and the loop bounds of each of its stages, and sizes
//! its realization; then asserts that inputs and outputs cover what the
//! pipeline touches.
//!
//! Requires: the output of loop synthesis. Run [`infer_func`] for every Func
//! consumers first (a Func's requirement is read off its consumers' loops).
//! Guarantees: every `{f}.{x}.min/max` and `{f}.s{s}.{x}.min/max` name is
//! defined by a `LetStmt` in front of `f`'s `ProducerConsumer` node (around
//! it, or moved out in front of its `Realize` and of the producers realized
//! around it at the same loop level); every
//! `Realize` has bounds covering all reads and writes inside it; the
//! statement starts with assertions that each input holds the region read
//! from it and each output buffer holds the region written to it.

use super::context::{rewrite_matching, Context};
use super::names::{required_max, required_min, stage_max, stage_min};
use super::validate::FuncPlan;
use crate::analysis::footprint::{box_touched, box_touched_naming, unbounded_access, Access};
use crate::analysis::interval::{with_lets, Interval, Scope};
use crate::error::{LowerError, UserError};
use crate::ir::expr::{CallTarget, Expr, ExprNode, Name};
use crate::ir::stmt::{Range, Stmt, StmtNode};
use crate::ir::visit::{expr_any_node, free_vars, names_bound, substitute_lets};
use crate::lang::ops::CompareExt;
use crate::lang::pipeline::{buffer_vars, FuncDef};
use crate::simplify::simplify;
use std::collections::HashSet;

fn unbounded(func: &str, dim: &str, what: &str) -> LowerError {
    UserError::Unbounded { func: func.to_string(), dim: dim.to_string(), what: what.to_string() }.into()
}

/// Interval bounds as expressions, or an error naming the dimension.
fn bounded(b: &[Interval], f: &FuncDef, what: &str) -> Result<Vec<(Expr, Expr)>, LowerError> {
    b.iter()
        .zip(&f.args)
        .map(|(i, arg)| match (&i.min, &i.max) {
            (Some(lo), Some(hi)) => Ok((lo.clone(), hi.clone())),
            _ => Err(unbounded(&f.name, arg, what)),
        })
        .collect()
}

/// Lets and assertions that precede a Func's computation.
struct Preamble {
    lets: Vec<(String, Expr)>,
    asserts: Vec<(Expr, String)>,
}

impl Preamble {
    fn around(self, body: Stmt) -> Stmt {
        let mut stmts: Vec<Stmt> = self.asserts.into_iter().map(|(c, m)| Stmt::assert(simplify(&c), m)).collect();
        stmts.push(body);
        self.lets.into_iter().rev().fold(Stmt::block(stmts), |b, (n, e)| Stmt::let_stmt(n, simplify(&e), b))
    }
}

/// Defines the required region and stage bounds of `f` around its
/// `ProducerConsumer` node.
///
/// The lets that open `f`'s consume side, through the realizations of
/// the consumers there (the bounds of consumers computed at the same loop
/// level, inferred before `f`), move out in front of `f`'s own, so that
/// `f`'s region refers to them by name. Expanding them instead would
/// double the expression at every level of a chain of sliding windows,
/// whose starts are `select`s over the consumer's start, and expand every
/// consumer's bounds again for each of its producers.
pub fn infer_func(s: &Stmt, f: &FuncDef, fp: &FuncPlan, is_output: bool) -> Result<Stmt, LowerError> {
    let name = f.name.clone();
    let is_pc = |n: &Stmt| matches!(n.node(), StmtNode::ProducerConsumer { func, .. } if *func == name);
    rewrite_matching(s, is_pc, |ctx, node| {
        let StmtNode::ProducerConsumer { func, produce, consume } = node.node() else { unreachable!() };
        let (hoisted, consume) = if is_output { (vec![], consume.clone()) } else { leading_lets(consume, |_| false) };
        let node = Stmt::new(StmtNode::ProducerConsumer { func: func.clone(), produce: produce.clone(), consume: consume.clone() });
        let inner = preamble(f, fp, is_output, produce, &consume, ctx, &hoisted)?.around(node);
        Ok::<_, LowerError>(hoisted.into_iter().rev().fold(inner, |body, (n, v)| Stmt::let_stmt(n, v, body)))
    })
}

/// Splits the lets `s` starts with, looking through the `Realize` nodes
/// among them, into those that can move out in front of it (outermost
/// first) and the statement that stays: the lets `keep` does not hold for
/// (a realization keeps its Func's own bounds, whose constant widths its
/// size is read through), not bound again inside
/// or twice on the way (a loop split reuses a stage's names), not read by
/// what stays in front of it (it would shadow a name there), not using a
/// let that stays, since a moved name must mean the same thing everywhere
/// below it, and reading no storage (a let inside a `Realize` may read the
/// Func stored there). The `Realize` nodes stay where they are.
///
/// Through the `Realize` nodes reach the bounds of the consumers computed
/// at the same loop level and realized inside one another: moved out, they
/// are names to a producer's walk, not definitions it expands again down
/// to the loops for every producer (quadratic in a chain's length).
fn leading_lets(s: &Stmt, keep: impl Fn(&Name) -> bool) -> (Vec<(Name, Expr)>, Stmt) {
    enum Head {
        Let(Name, Expr),
        Realize(Stmt),
    }
    let mut head = vec![];
    let mut at = s.clone();
    loop {
        let next = match at.node() {
            StmtNode::LetStmt { name, value, body } => {
                head.push(Head::Let(name.clone(), value.clone()));
                body.clone()
            }
            StmtNode::Realize { body, .. } => {
                head.push(Head::Realize(at.clone()));
                body.clone()
            }
            _ => break,
        };
        at = next;
    }
    let mut rebound = names_bound(&at);
    let mut seen = HashSet::new();
    for h in &head {
        if let Head::Let(name, _) = h {
            if !seen.insert(name.clone()) {
                rebound.insert(name.clone());
            }
        }
    }
    let reads_storage =
        |e: &Expr| expr_any_node(e, |n| matches!(n, ExprNode::Call { target: CallTarget::Func(_) | CallTarget::Input(_), .. }));
    let mut moved = vec![];
    let mut kept: Vec<Head> = vec![];
    let mut kept_names: HashSet<Name> = HashSet::new();
    // The names what stays in front of a let reads (a realization's bounds,
    // a kept let's value): moved in front of it, the let would shadow them.
    let mut read_before: HashSet<Name> = HashSet::new();
    for h in head {
        match h {
            Head::Let(name, value) => {
                let uses = free_vars(&value);
                let stays = keep(&name)
                    || rebound.contains(&name)
                    || read_before.contains(&name)
                    || reads_storage(&value)
                    || uses.iter().any(|u| kept_names.contains(u));
                if stays {
                    read_before.extend(uses);
                    kept_names.insert(name.clone());
                    kept.push(Head::Let(name, value));
                } else {
                    moved.push((name, value));
                }
            }
            Head::Realize(r) => {
                if let StmtNode::Realize { bounds, .. } = r.node() {
                    bounds.iter().for_each(|b| read_before.extend(free_vars(&b.min).into_iter().chain(free_vars(&b.extent))));
                }
                kept.push(Head::Realize(r));
            }
        }
    }
    let stays = kept.into_iter().rev().fold(at, |body, h| match h {
        Head::Let(n, v) => Stmt::let_stmt(n, v, body),
        Head::Realize(r) => {
            let StmtNode::Realize { func, types, bounds, .. } = r.node() else { unreachable!() };
            Stmt::new(StmtNode::Realize { func: func.clone(), types: types.clone(), bounds: bounds.clone(), body })
        }
    });
    (moved, stays)
}

/// Sizes the `Realize` of `f` to cover every read and write of it inside,
/// once its stage bounds are final (after the sliding window, whose
/// shifted start may make rounded-up splits write further). The lets that
/// open its body (`f`'s bounds, its consumers' moved out) move out in
/// front of it, and the box names them.
pub fn size_realization(s: &Stmt, f: &FuncDef) -> Result<Stmt, LowerError> {
    let name = f.name.clone();
    let is_realize = |n: &Stmt| matches!(n.node(), StmtNode::Realize { func, .. } if *func == name);
    rewrite_matching(s, is_realize, |_, node| {
        let StmtNode::Realize { func, types, body, .. } = node.node() else { unreachable!() };
        let own = format!("{name}.");
        let (hoisted, body) = leading_lets(body, |n| n.starts_with(&own));
        let (touched, named) = box_touched_naming(&body, Access::Func(&f.name), &mut Scope::default(), &format!("{}.stored", f.name));
        let bounds = match touched {
            Some(b) => bounded(&b, f, "the region it is stored over")?
                .into_iter()
                // A guarded tail iteration may need nothing: empty, not negative.
                .map(|(lo, hi)| Range { min: simplify(&lo), extent: simplify(&Expr::max(hi - lo + 1, Expr::i32(0))) })
                .collect(),
            None => f.args.iter().map(|_| Range { min: Expr::i32(0), extent: Expr::i32(0) }).collect(),
        };
        let realize = Stmt::new(StmtNode::Realize { func: func.clone(), types: types.clone(), bounds, body });
        let lets = hoisted.into_iter().chain(named);
        Ok::<_, LowerError>(lets.rev().fold(realize, |body, (n, v)| Stmt::let_stmt(n, v, body)))
    })
}

/// The lets and assertions in front of `f`'s `ProducerConsumer` node;
/// `outside` are the lets moved out in front of them (its consumers'
/// bounds), which its region names.
fn preamble(
    f: &FuncDef,
    fp: &FuncPlan,
    is_output: bool,
    produce: &Stmt,
    consume: &Stmt,
    ctx: &Context,
    outside: &[(Name, Expr)],
) -> Result<Preamble, LowerError> {
    let name = &*f.name;
    let mut lets = vec![];
    let mut asserts = vec![];
    // 1. The region consumers require.
    let required: Vec<(Expr, Expr)> = if is_output {
        (0..f.dims())
            .map(|d| {
                let min = Expr::ivar(buffer_vars::min(name, d));
                (min.clone(), min + Expr::ivar(buffer_vars::extent(name, d)) - 1)
            })
            .collect()
    } else {
        let (touched, named) = box_touched_naming(consume, Access::FuncReads(name), &mut Scope::default(), &format!("{name}.required"));
        lets.extend(named.into_iter().map(|(n, v)| (n.to_string(), v)));
        match touched {
            Some(b) => bounded(&b, f, "the region its consumers read").map_err(|e| {
                let Some(u) = unbounded_access(consume, Access::FuncReads(name), &mut Scope::default()) else {
                    return e;
                };
                UserError::UnboundedRead {
                    func: name.to_string(),
                    dim: f.args[u.dim].to_string(),
                    consumer: u.consumer.map_or_else(|| "a loop bound or condition".to_string(), |c| c.to_string()),
                    index: u.index.to_string(),
                }
                .into()
            })?,
            None => f.args.iter().map(|_| (Expr::i32(0), Expr::i32(-1))).collect(),
        }
    };
    for (arg, (lo, hi)) in f.args.iter().zip(&required) {
        match fp.bounds.iter().find(|b| b.var == *arg) {
            Some(b) => {
                let (bmin, bmax) = (Expr::i32(b.min), Expr::i32(b.min + b.extent - 1));
                asserts.push((
                    lo.clone().ge(bmin.clone()) & hi.clone().le(bmax.clone()),
                    format!("{name} is bound to [{}, {}] in dimension {arg}, but a larger region is required", b.min, b.min + b.extent - 1),
                ));
                lets.push((required_min(name, arg), bmin));
                lets.push((required_max(name, arg), bmax));
            }
            None => {
                lets.push((required_min(name, arg), lo.clone()));
                let in_scope: Vec<(Name, Expr)> =
                    outside.iter().cloned().chain(lets.iter().map(|(n, v)| (n.as_str().into(), v.clone()))).collect();
                lets.push((required_max(name, arg), max_from_min(name, arg, lo, hi, ctx, &in_scope)));
            }
        }
    }
    // 2. Updates run over the required region of their pure variables.
    for (s, u) in f.updates.iter().enumerate() {
        for var in u.pure_vars(&f.args) {
            lets.push((stage_min(name, s + 1, &var), Expr::ivar(required_min(name, &var))));
            lets.push((stage_max(name, s + 1, &var), Expr::ivar(required_max(name, &var))));
        }
    }
    // 3. The pure stage also covers whatever the updates read or write.
    let updates = match produce.node() {
        StmtNode::Block { stmts } if !f.updates.is_empty() => Some(Stmt::block(stmts[1..].to_vec())),
        _ => None,
    };
    let touched_by_updates = match &updates {
        Some(u) => box_touched(u, Access::Func(name), &mut Scope::default()),
        None => None,
    };
    for (d, arg) in f.args.iter().enumerate() {
        let (mut lo, mut hi) = (Expr::ivar(required_min(name, arg)), Expr::ivar(required_max(name, arg)));
        if let Some(t) = &touched_by_updates {
            let (Some(tlo), Some(thi)) = (&t[d].min, &t[d].max) else {
                return Err(unbounded(name, arg, "the region its update definitions touch"));
            };
            if fp.bounds.iter().any(|b| b.var == *arg) {
                asserts.push((
                    tlo.clone().ge(lo.clone()) & thi.clone().le(hi.clone()),
                    format!("the updates of {name} touch points outside its bound in dimension {arg}"),
                ));
            } else {
                lo = Expr::min(lo, tlo.clone());
                hi = Expr::max(hi, thi.clone());
            }
        }
        lets.push((stage_min(name, 0, arg), lo));
        lets.push((stage_max(name, 0, arg), hi));
    }
    Ok(Preamble { lets, asserts })
}

/// The end of a required region: `min + k` where its width is the constant
/// `k` (a Func computed per tile of a split: the split loops' extents are
/// constant lets around it), so that the loops over it get constant extents
/// once the simplifier inlines the shifted variable; else the bound as
/// inferred. The width is read through `lets` (the lets in scope in front
/// of the region: its consumers' bounds, which it names) and the constant
/// lets around it.
fn max_from_min(func: &str, arg: &str, lo: &Expr, hi: &Expr, ctx: &Context, lets: &[(Name, Expr)]) -> Expr {
    let width = hi.clone() - lo.clone();
    let width = substitute_lets(lets, &width, MAX_WIDTH_NODES).unwrap_or(width);
    match simplify(&ctx.expand_constant_lets(&width)).as_int() {
        Some(width) => Expr::ivar(required_min(func, arg)) + Expr::i32(width),
        None => hi.clone(),
    }
}

/// The most nodes a region's width may grow to with the lets in front of
/// it substituted, in [`max_from_min`].
const MAX_WIDTH_NODES: usize = 2_000;

/// The box of an input the pipeline reads, or of an output it writes, as
/// expressions in the pipeline's buffer fields and params (`[min, max]` per
/// dimension).
#[derive(Clone, Debug, PartialEq)]
pub struct Footprint {
    /// The input's or output's buffer name.
    pub buffer: Name,
    /// Whether it is an input (read) rather than an output (written).
    pub is_input: bool,
    /// The `[min, max]` touched in each dimension.
    pub region: Vec<(Expr, Expr)>,
}

/// Asserts at the top of `s` that each input buffer holds what the pipeline
/// reads and each output buffer holds what it writes; returns the statement
/// and those regions.
///
/// The lets at the top of `s` (the bounds of the Funcs computed at the
/// root) and the named interval ends of the boxes move out in front of the
/// assertions, which name them; a footprint carries the ones it uses as
/// `let` expressions. Written out instead, a chain of Funcs each reading
/// its producer at two clamped offsets would double the region at every
/// level.
pub fn check_buffers(s: &Stmt, inputs: &[(Name, usize)], outputs: &[FuncDef]) -> Result<(Stmt, Vec<Footprint>), LowerError> {
    let (mut lets, s) = leading_lets(s, |_| false);
    let mut boxes = vec![];
    for (name, dims) in inputs {
        let (b, named) = box_touched_naming(&s, Access::Input(name), &mut Scope::default(), &format!("{name}.read"));
        lets.extend(named);
        boxes.push((name.clone(), *dims, b, true));
    }
    for f in outputs {
        let (b, named) = box_touched_naming(&s, Access::Func(&f.name), &mut Scope::default(), &format!("{}.written", f.name));
        lets.extend(named);
        boxes.push((f.name.clone(), f.dims(), b, false));
    }
    let closed = |e: &Expr| with_lets(e.clone(), &lets);
    let mut asserts = vec![];
    let mut footprints = vec![];
    for (buffer, dims, b, is_input) in boxes {
        let Some(b) = b else { continue };
        let verb = if is_input { "reads" } else { "touches" };
        let mut region = vec![];
        for (d, i) in b.iter().enumerate().take(dims) {
            let (Some(lo), Some(hi)) = (&i.min, &i.max) else {
                return Err(unbounded(&buffer, &d.to_string(), &format!("the region of it the pipeline {verb}")));
            };
            let min = Expr::ivar(buffer_vars::min(&buffer, d));
            let max = min.clone() + Expr::ivar(buffer_vars::extent(&buffer, d)) - 1;
            let cond = simplify(&(min.le(lo.clone()) & hi.clone().le(max)));
            let msg = format!("buffer {buffer} is too small: the pipeline {verb} [{lo}, {hi}] in dimension {d}");
            asserts.push(Stmt::assert(cond, msg));
            region.push((closed(lo), closed(hi)));
        }
        footprints.push(Footprint { buffer, is_input, region });
    }
    asserts.push(s);
    let checked = lets.into_iter().rev().fold(Stmt::block(asserts), |body, (n, v)| Stmt::let_stmt(n, v, body));
    Ok((checked, footprints))
}
