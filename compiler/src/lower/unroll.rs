//! Unrolling: a loop marked unrolled, of constant extent `n`, becomes `n`
//! copies of its body with the loop variable replaced by `min + i`.
//!
//! Requires: simplified IR (an unrolled extent is a constant when the
//! schedule or bounds inference makes it one). Guarantees: no unrolled
//! `For` remains; a loop whose extent is not a constant (or is above
//! [`MAX_UNROLL`]) is a [`UserError::UnrollExtent`] naming the Func, the
//! stage and the loop.

use crate::error::{LowerError, UserError};
use crate::ir::expr::Expr;
use crate::ir::stmt::{ForKind, Stmt, StmtNode};
use crate::ir::visit::{mutate_stmt_children, substitute_stmt, Mutator};
use crate::lower::names::parse_stage_var;
use crate::simplify::simplify;

/// The most copies an unrolled loop may make.
pub const MAX_UNROLL: i64 = 1 << 12;

#[derive(Default)]
struct Unroll {
    error: Option<UserError>,
}

impl Mutator for Unroll {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let s = mutate_stmt_children(self, s);
        let StmtNode::For { name, min, extent, kind: ForKind::Unrolled, body } = s.node() else {
            return s;
        };
        let extent = simplify(extent);
        match extent.as_int().filter(|&n| (0..=MAX_UNROLL).contains(&n)) {
            Some(n) => Stmt::block((0..n).map(|i| substitute_stmt(name, &(min.clone() + Expr::i32(i)), body)).collect()),
            None => {
                let (func, stage, var) = parse_stage_var(name).unwrap_or((name, 0, name));
                self.error.get_or_insert(UserError::UnrollExtent {
                    func: func.to_string(),
                    stage,
                    var: var.to_string(),
                    extent: extent.to_string(),
                    max: MAX_UNROLL,
                });
                s
            }
        }
    }
}

/// Unrolls every unrolled loop of `s`.
pub fn unroll(s: &Stmt) -> Result<Stmt, LowerError> {
    let mut u = Unroll::default();
    let out = u.mutate_stmt(s);
    match u.error {
        Some(e) => Err(e.into()),
        None => Ok(out),
    }
}
