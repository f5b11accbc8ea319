//! Structural sharing (hash-consing): every structurally equal subexpression
//! of what one [`Sharer`] is given becomes one node.
//!
//! Analyses that count each node once (the featurizer's operation and
//! access counts, its call sites) would otherwise count what happens to be
//! shared in memory: a pipeline built in Rust shares the nodes its author
//! reused, the same pipeline read from JSON or decoded from the wire shares
//! none. After sharing, a walk that visits each node once (by
//! [`Expr::address`]) counts each distinct value once, as the code after
//! common-subexpression elimination computes it, however the expression was
//! built or transported.
//!
//! Guarantees: the result is structurally equal to its input (same nodes,
//! same types), and two structurally equal inputs given to one sharer come
//! back as the same node. Linear in the distinct nodes of the input (each is
//! rebuilt once, memoized by address). A float constant that is NaN equals
//! no constant, itself included, so each stays its own node whatever path
//! built it.

use crate::ir::expr::Expr;
use crate::ir::visit::{for_each_child, mutate_expr_children, Mutator};
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

/// Shares structurally equal subexpressions of every expression given to
/// it (across calls, too).
#[derive(Default)]
pub struct Sharer {
    /// What each node met became, by its address; the node is held, so its
    /// address is not reused while it is a key.
    done: HashMap<usize, (Expr, Expr)>,
    /// The shared nodes, by [`shallow_hash`].
    nodes: HashMap<u64, Vec<Expr>>,
}

impl Sharer {
    /// `e` with every subexpression replaced by the one shared node of its
    /// structure.
    pub fn share(&mut self, e: &Expr) -> Expr {
        self.mutate_expr(e)
    }
}

impl Mutator for Sharer {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        if let Some((_, out)) = self.done.get(&e.address()) {
            return out.clone();
        }
        // Children first: they are shared nodes, so two nodes are equal when
        // their own fields are and their children are the same nodes.
        let rebuilt = mutate_expr_children(self, e);
        let bucket = self.nodes.entry(shallow_hash(&rebuilt)).or_default();
        let out = match bucket.iter().find(|n| **n == rebuilt) {
            Some(n) => n.clone(),
            None => {
                bucket.push(rebuilt.clone());
                rebuilt
            }
        };
        self.done.insert(e.address(), (e.clone(), out.clone()));
        out
    }
}

/// A hash of `e`'s kind, type and children (by address: they are shared
/// already), and of a leaf's printed form. Nodes that differ only in an
/// operator or a callee collide and are told apart by equality.
fn shallow_hash(e: &Expr) -> u64 {
    let mut h = DefaultHasher::new();
    std::mem::discriminant(e.node()).hash(&mut h);
    e.ty().hash(&mut h);
    let mut leaf = true;
    for_each_child(e.node(), |c| {
        leaf = false;
        c.address().hash(&mut h);
    });
    if leaf {
        e.to_string().hash(&mut h);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::types::Type;

    fn distinct_nodes(e: &Expr) -> usize {
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![e.clone()];
        while let Some(e) = stack.pop() {
            if seen.insert(e.address()) {
                for_each_child(e.node(), |c| stack.push(c.clone()));
            }
        }
        seen.len()
    }

    #[test]
    fn equal_subexpressions_become_one_node() {
        let x = || Expr::ivar("x");
        let one = || Expr::int(1, Type::i32());
        // (x + 1) * (x + 1), built twice over: 7 nodes unshared, 3 shared.
        let e = (x() + one()) * (x() + one());
        assert_eq!(distinct_nodes(&e), 7);
        let shared = Sharer::default().share(&e);
        assert_eq!(shared, e);
        assert_eq!(distinct_nodes(&shared), 4);
    }

    #[test]
    fn nodes_differing_only_in_their_operator_stay_apart() {
        let (x, y) = (Expr::ivar("x"), Expr::ivar("y"));
        let e = (x.clone() + y.clone()) * (x.clone() - y.clone()) + Expr::max(x.clone(), y.clone()) * Expr::min(x, y);
        let shared = Sharer::default().share(&e);
        assert_eq!(shared, e);
        assert_eq!(distinct_nodes(&shared), 9);
    }

    #[test]
    fn a_sharer_shares_across_expressions() {
        let mut sharer = Sharer::default();
        let a = sharer.share(&(Expr::ivar("x") * 2));
        let b = sharer.share(&(Expr::ivar("x") * 2));
        assert!(a.same_as(&b));
    }
}
