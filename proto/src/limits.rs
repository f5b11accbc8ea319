//! What one wire message may cost, checked before anything is built from
//! it: every name at most [`MAX_NAME_BYTES`], a pipeline of at most
//! [`MAX_FUNCS`] Funcs and [`MAX_EXPR_NODES`] expression nodes in all, and
//! user strings quoted in errors and logs at most [`QUOTE_BYTES`] long
//! ([`quote`]).
//!
//! [`check_pipeline`] walks the message once, without recursion (an
//! explicit stack) and without allocating per node, so a hostile message
//! costs time linear in its encoded size and is refused before the
//! conversion allocates compiler values for it. Conversion itself is then
//! linear too: a wire expression is a tree (nothing is shared on the wire),
//! so the compiler value built from it has as many nodes as were sent.

use crate::error::FromWireError;
use crate::v1;
use crate::v1::expr::Node;
use std::borrow::Cow;

/// The longest name (of a Func, variable, input, param, let, reduction
/// domain or host key) a message may carry.
pub const MAX_NAME_BYTES: usize = 256;

/// The most Funcs a pipeline may have.
pub const MAX_FUNCS: usize = 4096;

/// The most expression nodes a pipeline may have in all its definitions,
/// bounds and predicates (ten times the largest app's: stencil_chain has
/// 6,432, local Laplacian 2,383).
pub const MAX_EXPR_NODES: usize = 1 << 16;

/// The longest agent name or work id.
pub const MAX_ID_BYTES: usize = 128;

/// The most samples one report may carry.
pub const MAX_REPORT_SAMPLES: usize = 4096;

/// The longest schedule text a report may carry.
pub const MAX_SCHEDULE_TEXT_BYTES: usize = 64 << 10;

/// The most work ids one heartbeat may list (an agent holds one lease at
/// a time; a few are tolerated).
pub const MAX_HEARTBEAT_IDS: usize = 64;

/// The longest run a timing or compile time may report (an hour): longer
/// is a broken clock or a hostile agent, not a measurement.
pub const MAX_REPORTED_SECONDS: f64 = 3600.0;

/// The shortest run a timing may report (a nanosecond).
pub const MIN_REPORTED_SECONDS: f64 = 1e-9;

/// The most timing samples one measurement may summarize.
pub const MAX_TIMING_SAMPLES: u32 = 100_000;

/// The largest magnitude a stored feature may have (features are counts,
/// bytes and ratios of real pipelines, far below it).
pub const MAX_FEATURE_MAGNITUDE: f32 = 1e30;

/// The longest piece of a user's string an error message or log line
/// quotes.
pub const QUOTE_BYTES: usize = 64;

/// `s` as errors and logs quote it: whole if at most [`QUOTE_BYTES`] long,
/// else its first bytes (cut at a character boundary) and its length.
pub fn quote(s: &str) -> Cow<'_, str> {
    if s.len() <= QUOTE_BYTES {
        return Cow::Borrowed(s);
    }
    let mut end = QUOTE_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}... ({} bytes)", &s[..end], s.len()))
}

/// `text`, which is `what` at `at`, checked to be non-empty and at most
/// `max` bytes long.
fn check_length(text: &str, what: &str, at: &str, max: usize) -> Result<(), FromWireError> {
    if text.is_empty() {
        return Err(FromWireError::Invalid { at: quote(at).into_owned(), why: format!("{what} is empty") });
    }
    if text.len() > max {
        return Err(FromWireError::TooLong { at: quote(at).into_owned(), what: what.to_string(), text: quote(text).into_owned(), max });
    }
    Ok(())
}

/// The name of `what` at `at`: 1 to [`MAX_NAME_BYTES`] bytes.
pub fn check_name(name: &str, what: &str, at: &str) -> Result<(), FromWireError> {
    check_length(name, &format!("the name of {what}"), at, MAX_NAME_BYTES)
}

/// An identifier (work id, schedule hash) `what`: 1 to [`MAX_ID_BYTES`]
/// bytes without control characters.
pub fn check_id(id: &str, what: &str, at: &str) -> Result<(), FromWireError> {
    check_length(id, what, at, MAX_ID_BYTES)?;
    if id.chars().any(char::is_control) {
        return Err(FromWireError::Invalid { at: quote(at).into_owned(), why: format!("{what} {:?} holds control characters", quote(id)) });
    }
    Ok(())
}

/// Counts expression nodes against [`MAX_EXPR_NODES`] and checks the names
/// they carry.
struct Budget {
    nodes: usize,
}

impl Budget {
    fn expr<'a>(&mut self, root: &'a v1::Expr, at: &str) -> Result<(), FromWireError> {
        let mut stack: Vec<&'a v1::Expr> = vec![root];
        while let Some(e) = stack.pop() {
            self.nodes += 1;
            if self.nodes > MAX_EXPR_NODES {
                return Err(FromWireError::TooLarge { what: "expression nodes", max: MAX_EXPR_NODES });
            }
            match &e.node {
                None | Some(Node::IntImm(_) | Node::UintImm(_) | Node::FloatImm(_)) => {}
                Some(Node::Var(v)) => check_name(&v.name, "a variable", at)?,
                Some(Node::Param(p)) => check_name(&p.name, "a param", at)?,
                Some(Node::Cast(c)) => stack.extend(c.value.as_deref()),
                Some(Node::Reinterpret(r)) => stack.extend(r.value.as_deref()),
                Some(Node::Binary(b)) => {
                    stack.extend(b.a.as_deref());
                    stack.extend(b.b.as_deref());
                }
                Some(Node::Compare(c)) => {
                    stack.extend(c.a.as_deref());
                    stack.extend(c.b.as_deref());
                }
                Some(Node::LogicalAnd(l)) => {
                    stack.extend(l.a.as_deref());
                    stack.extend(l.b.as_deref());
                }
                Some(Node::LogicalOr(l)) => {
                    stack.extend(l.a.as_deref());
                    stack.extend(l.b.as_deref());
                }
                Some(Node::LogicalNot(l)) => stack.extend(l.a.as_deref()),
                Some(Node::Select(s)) => {
                    stack.extend(s.condition.as_deref());
                    stack.extend(s.if_true.as_deref());
                    stack.extend(s.if_false.as_deref());
                }
                Some(Node::LetIn(l)) => {
                    check_name(&l.name, "a let", at)?;
                    stack.extend(l.value.as_deref());
                    stack.extend(l.body.as_deref());
                }
                Some(Node::Call(c)) => {
                    match &c.target {
                        Some(v1::call::Target::Func(name)) => check_name(name, "a called Func", at)?,
                        Some(v1::call::Target::Input(name)) => check_name(name, "a read input", at)?,
                        Some(v1::call::Target::Math(_)) | None => {}
                    }
                    stack.extend(c.args.iter());
                }
            }
        }
        Ok(())
    }

    fn exprs<'a>(&mut self, es: impl IntoIterator<Item = &'a v1::Expr>, at: &str) -> Result<(), FromWireError> {
        es.into_iter().try_for_each(|e| self.expr(e, at))
    }
}

/// Checks that `p` is within the limits above: its names, its Funcs and
/// its expression nodes. Time linear in the message, no allocation per
/// node; errors quote names cut to [`QUOTE_BYTES`].
pub fn check_pipeline(p: &v1::Pipeline) -> Result<(), FromWireError> {
    if p.funcs.len() > MAX_FUNCS {
        return Err(FromWireError::TooLarge { what: "Funcs", max: MAX_FUNCS });
    }
    let mut budget = Budget { nodes: 0 };
    for f in &p.funcs {
        check_name(&f.name, "a Func", "pipeline")?;
        let at = format!("Func {}", f.name);
        for a in &f.args {
            check_name(a, "a variable", &at)?;
        }
        budget.exprs(f.value.iter().chain(&f.tuple_values), &at)?;
        for u in &f.updates {
            budget.exprs(u.args.iter().chain(&u.value).chain(&u.tuple_values), &at)?;
            if let Some(r) = &u.rdom {
                check_name(&r.name, "a reduction domain", &at)?;
                for d in &r.dims {
                    check_name(&d.name, "a reduction variable", &at)?;
                    budget.exprs(d.min.iter().chain(&d.extent), &at)?;
                }
                budget.exprs(&r.predicate, &at)?;
            }
        }
    }
    for i in &p.inputs {
        check_name(&i.name, "an input", "pipeline")?;
    }
    for q in &p.params {
        check_name(&q.name, "a param", "pipeline")?;
    }
    for o in &p.outputs {
        check_name(o, "an output", "pipeline")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_are_cut_at_a_character_boundary_and_say_how_long_the_string_was() {
        assert_eq!(quote("short"), "short");
        let long = "é".repeat(100);
        let q = quote(&long);
        assert!(q.len() < QUOTE_BYTES + 20 && q.ends_with("... (200 bytes)"), "{q}");
    }

    #[test]
    fn a_long_name_is_refused_with_its_length_and_a_short_quote() {
        let name = "f".repeat(20_000);
        let p = v1::Pipeline { funcs: vec![v1::FuncDef { name: name.clone(), ..Default::default() }], ..Default::default() };
        let err = check_pipeline(&p).unwrap_err().to_string();
        assert!(err.len() < 300 && err.contains("20000 bytes") && err.contains(&MAX_NAME_BYTES.to_string()), "{err}");
    }

    #[test]
    fn too_many_expression_nodes_are_refused_before_conversion() {
        let leaf = v1::Expr { node: Some(Node::IntImm(v1::IntImm { value: 1, r#type: 0 })) };
        let call = v1::Expr { node: Some(Node::Call(v1::Call { args: vec![leaf; MAX_EXPR_NODES], ..Default::default() })) };
        let p =
            v1::Pipeline { funcs: vec![v1::FuncDef { name: "f".into(), value: Some(call), ..Default::default() }], ..Default::default() };
        let err = check_pipeline(&p).unwrap_err();
        assert!(matches!(err, FromWireError::TooLarge { what: "expression nodes", .. }), "{err}");
    }
}
