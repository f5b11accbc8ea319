//! The rewrite rules for one expression node whose children are already
//! simplified. Every `make_*` function takes simplified operands and returns
//! a simplified expression, so rules may build new nodes through each other.

use super::bounds::{assumes_no_overflow, Interval};
use super::Simplifier;
use crate::analysis::linear::{linearize, node, Linear};
use crate::ir::expr::{BinOp, CallTarget, CmpOp, Expr, ExprNode};
use crate::ir::types::Type;
use crate::ir::value::{self, Scalar};

impl Simplifier {
    /// Applies the rules to `e`, whose children are simplified.
    pub(super) fn rewrite(&mut self, e: &Expr) -> Expr {
        match e.node() {
            ExprNode::Cast { ty, value } => self.make_cast(*ty, value),
            ExprNode::Reinterpret { ty, value } => make_reinterpret(*ty, value),
            ExprNode::Binary { op, a, b } => self.make_binary(*op, a, b),
            ExprNode::Cmp { op, a, b } => self.make_cmp(*op, a, b),
            ExprNode::And { a, b } => make_and(a, b),
            ExprNode::Or { a, b } => make_or(a, b),
            ExprNode::Not { a } => make_not(a),
            ExprNode::Select { cond, t, f } => make_select(cond, t, f),
            ExprNode::Call { target: CallTarget::Math(f), args, ty } => {
                match args.iter().map(value::const_value).collect::<Option<Vec<Scalar>>>() {
                    Some(vals) if !ty.is_vector() => value::const_expr(value::math(*f, ty.scalar, &vals), *ty),
                    _ => e.clone(),
                }
            }
            ExprNode::Ramp { base, stride, lanes } => make_ramp(base, stride, *lanes),
            _ => e.clone(),
        }
    }

    fn make_cast(&mut self, ty: Type, v: &Expr) -> Expr {
        if v.ty() == ty {
            return v.clone();
        }
        if let Some(c) = const_of(v) {
            return make_const(value::cast(v.ty().scalar, ty.scalar, c), ty);
        }
        if let ExprNode::Broadcast { value, lanes } = v.node() {
            return Expr::broadcast(self.make_cast(ty.element(), value), *lanes);
        }
        Expr::new(ExprNode::Cast { ty, value: v.clone() })
    }

    pub(super) fn make_binary(&mut self, op: BinOp, a: &Expr, b: &Expr) -> Expr {
        let ty = a.ty();
        if let (Some(x), Some(y)) = (const_of(a), const_of(b)) {
            return make_const(value::binary(op, ty.scalar, x, y), ty);
        }
        if ty.is_vector() {
            return self.vector_binary(op, a, b);
        }
        if !ty.is_int() {
            // Floats (and bools) only fold constants: reassociation is not exact.
            return match op {
                BinOp::Min | BinOp::Max if a == b => a.clone(),
                _ => node(op, a.clone(), b.clone()),
            };
        }
        match op {
            BinOp::Add => self.cancel_into_min_max(linearize(a).add(&linearize(b), 1)),
            BinOp::Sub => self.cancel_into_min_max(linearize(a).add(&linearize(b), -1)),
            BinOp::Mul => {
                let (la, lb) = (linearize(a), linearize(b));
                match (la.as_const(), lb.as_const()) {
                    (_, Some(k)) => la.scale(k).to_expr(),
                    (Some(k), None) => lb.scale(k).to_expr(),
                    (None, None) => node(op, a.clone(), b.clone()),
                }
            }
            BinOp::Div => self.make_div(a, b),
            BinOp::Mod => self.make_mod(a, b),
            BinOp::Min | BinOp::Max => self.make_min_max(op, a, b),
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => self.make_bitwise(op, a, b),
        }
    }

    /// Bitwise operators and shifts of integers: identities with zero and
    /// all-ones constants, `x op x`, and a mask that keeps every bit a
    /// value can have (`x & 255` for `x` in `[0, 255]`).
    fn make_bitwise(&mut self, op: BinOp, a: &Expr, b: &Expr) -> Expr {
        let ty = a.ty();
        let is = |e: &Expr, v: i128| const_of(e).is_some_and(|c| c == Scalar::from_i128(v, ty.scalar));
        let zero = make_const(Scalar::from_i128(0, ty.scalar), ty);
        match op {
            BinOp::BitAnd if is(a, 0) || is(b, 0) => zero,
            BinOp::BitAnd | BinOp::BitOr if a == b => a.clone(),
            BinOp::BitXor if a == b => zero,
            BinOp::BitAnd if is(b, -1) => a.clone(),
            BinOp::BitAnd if is(a, -1) => b.clone(),
            BinOp::BitOr | BinOp::BitXor if is(a, 0) => b.clone(),
            BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr if is(b, 0) => a.clone(),
            BinOp::Shl | BinOp::Shr if is(a, 0) => zero,
            BinOp::BitAnd => {
                let keeps_all = |m: &Expr, x: &Expr, s: &mut Self| {
                    let mask = const_of(m).map(Scalar::as_i128).filter(|m| *m >= 0 && (m + 1) & m == 0);
                    mask.is_some_and(|m| s.bounds(x).is_some_and(|r| r.within(Interval::new(0, m))))
                };
                if keeps_all(b, a, self) {
                    a.clone()
                } else if keeps_all(a, b, self) {
                    b.clone()
                } else {
                    node(op, a.clone(), b.clone())
                }
            }
            _ => node(op, a.clone(), b.clone()),
        }
    }

    /// Broadcast and ramp arithmetic; lane counts are kept.
    fn vector_binary(&mut self, op: BinOp, a: &Expr, b: &Expr) -> Expr {
        use ExprNode::{Broadcast, Ramp};
        let int = a.ty().is_int();
        match (a.node(), b.node(), op) {
            (Broadcast { value: x, lanes }, Broadcast { value: y, .. }, _) => {
                return Expr::broadcast(self.make_binary(op, x, y), *lanes);
            }
            (Ramp { base, stride, lanes }, Broadcast { value: c, .. }, BinOp::Add | BinOp::Sub) if int => {
                return make_ramp(&self.make_binary(op, base, c), stride, *lanes);
            }
            (Broadcast { value: c, .. }, Ramp { base, stride, lanes }, BinOp::Add) if int => {
                return make_ramp(&self.make_binary(op, c, base), stride, *lanes);
            }
            (Broadcast { value: c, .. }, Ramp { base, stride, lanes }, BinOp::Sub) if int => {
                let zero = Expr::int(0, stride.ty());
                let negated = self.make_binary(BinOp::Sub, &zero, stride);
                return make_ramp(&self.make_binary(op, c, base), &negated, *lanes);
            }
            (Ramp { base: b1, stride: s1, lanes }, Ramp { base: b2, stride: s2, .. }, BinOp::Add | BinOp::Sub) if int => {
                return make_ramp(&self.make_binary(op, b1, b2), &self.make_binary(op, s1, s2), *lanes);
            }
            (Ramp { base, stride, lanes }, Broadcast { value: c, .. }, BinOp::Mul)
            | (Broadcast { value: c, .. }, Ramp { base, stride, lanes }, BinOp::Mul)
                if int =>
            {
                return make_ramp(&self.make_binary(op, base, c), &self.make_binary(op, stride, c), *lanes);
            }
            _ => {}
        }
        if matches!(op, BinOp::Min | BinOp::Max) && a == b {
            return a.clone();
        }
        if int && matches!(op, BinOp::Min | BinOp::Max) {
            return self.make_min_max(op, a, b);
        }
        node(op, a.clone(), b.clone())
    }

    /// The expression of a linear form, with the rest of the sum moved into
    /// a `min`/`max` term when a term of the rest cancels against one of its
    /// operands: `min(x, y) - x` is `min(0, y - x)`, whose bounds no longer
    /// depend on how `x` and `y` correlate. Index types only (no overflow).
    fn cancel_into_min_max(&mut self, l: Linear) -> Expr {
        if !assumes_no_overflow(l.ty) {
            return l.to_expr();
        }
        let l = self.cancel_divisions(l);
        for (i, (term, c)) in l.terms.iter().enumerate() {
            let ExprNode::Binary { op: op @ (BinOp::Min | BinOp::Max), a: p, b: q } = term.node() else {
                continue;
            };
            if c.abs() != 1 || term.reads_memory() {
                continue;
            }
            let mut rest = l.clone();
            rest.terms.remove(i);
            let rest_size: usize = rest.terms.iter().map(|(t, _)| crate::ir::visit::node_count(t)).sum();
            if rest.terms.is_empty() || rest_size > MAX_DISTRIBUTED_SIZE || rest.terms.iter().any(|(t, _)| t.reads_memory()) {
                continue;
            }
            let with = |operand: &Expr| rest.clone().add(&linearize(operand), *c);
            let cancels = |sum: &Linear, operand: &Expr| sum.terms.len() < rest.terms.len() + linearize(operand).terms.len();
            let (lp, lq) = (with(p), with(q));
            if !(cancels(&lp, p) || cancels(&lq, q)) {
                continue;
            }
            let op = match (op, c) {
                (op, 1) => *op,
                (BinOp::Min, _) => BinOp::Max,
                _ => BinOp::Min,
            };
            let (p, q) = (self.cancel_into_min_max(lp), self.cancel_into_min_max(lq));
            return self.make_min_max(op, &p, &q);
        }
        l.to_expr()
    }

    /// `l` with each `min`/`max` term whose operands share terms (with the
    /// same coefficients) written as those terms plus the `min`/`max` of
    /// the rest: `max(m + e - 1, m + 7)` as `m + max(e - 1, 7)`, so that a
    /// strided tile's extent `max(m + e - 1, m + 7)/2 - m/2` pairs its
    /// quotients in [`Self::cancel_divisions`] whatever `m` is.
    fn factor_min_max_terms(&mut self, l: Linear) -> Linear {
        if !assumes_no_overflow(l.ty) {
            return l;
        }
        let ty = l.ty;
        let mut out = Linear { terms: vec![], constant: l.constant, ty };
        for (term, c) in &l.terms {
            let factored = match term.node() {
                ExprNode::Binary { op: op @ (BinOp::Min | BinOp::Max), .. } if !term.reads_memory() => {
                    let mut operands = vec![];
                    flatten_min_max(*op, term, &mut operands);
                    let forms: Vec<Linear> = operands.iter().map(linearize).collect();
                    let shared: Vec<(Expr, i128)> =
                        forms[0].terms.iter().filter(|t| forms[1..].iter().all(|f| f.terms.contains(t))).cloned().collect();
                    (!shared.is_empty()).then(|| {
                        let common = Linear { terms: shared, constant: 0, ty };
                        let rest = forms
                            .into_iter()
                            .map(|f| f.add(&common, -1).to_expr())
                            .reduce(|x, y| self.make_min_max(*op, &x, &y))
                            .expect("min/max has operands");
                        common.add(&linearize(&rest), 1)
                    })
                }
                _ => None,
            };
            out = match factored {
                Some(f) => out.add(&f.scale(*c), 1),
                None => out.add(&Linear { terms: vec![(term.clone(), *c)], constant: 0, ty }, 1),
            };
        }
        out
    }

    /// Pairs `c * (b + d)/k - c * b/k` (same positive constant `k`, the two
    /// numerators sharing terms) into `c * ((b % k) + d)/k`, exact for floor
    /// division and Euclidean modulo, so that the extent of a strided region
    /// no longer depends on where it starts: bounded by constants when `d`
    /// is one, and by the bounds of `d` alone when it is not (a tile's
    /// extent still named by a loop's extent).
    fn cancel_divisions(&mut self, mut l: Linear) -> Linear {
        let as_division = |t: &Expr| match t.node() {
            ExprNode::Binary { op: BinOp::Div, a, b } if !a.reads_memory() => {
                const_of(b).map(Scalar::as_i128).filter(|k| *k > 0).map(|k| (a.clone(), k))
            }
            _ => None,
        };
        loop {
            let mut pair = None;
            'search: for (i, (ti, ci)) in l.terms.iter().enumerate() {
                let Some((a, k)) = as_division(ti).filter(|_| *ci > 0) else {
                    continue;
                };
                for (j, (tj, cj)) in l.terms.iter().enumerate() {
                    let Some((b, k2)) = as_division(tj).filter(|_| *cj == -*ci) else {
                        continue;
                    };
                    if k2 != k {
                        continue;
                    }
                    let (la, lb) = (self.factor_min_max_terms(linearize(&a)), self.factor_min_max_terms(linearize(&b)));
                    let terms = la.terms.len() + lb.terms.len();
                    let d = la.add(&lb, -1);
                    let shares_terms = d.terms.len() < terms;
                    if shares_terms && d.terms.iter().all(|(t, _)| !t.reads_memory()) {
                        pair = Some((i, j, b, k, d, *ci));
                        break 'search;
                    }
                }
            }
            let Some((i, j, b, k, d, c)) = pair else {
                return l;
            };
            l.terms.remove(i.max(j));
            l.terms.remove(i.min(j));
            let ty = l.ty;
            let remainder = self.make_mod(&b, &Expr::int(k as i64, ty));
            let difference = self.cancel_into_min_max(d);
            let shifted = self.make_binary(BinOp::Add, &remainder, &difference);
            let quotient = self.make_div(&shifted, &Expr::int(k as i64, ty));
            l = l.add(&linearize(&quotient).scale(c), 1);
        }
    }

    fn make_div(&mut self, a: &Expr, b: &Expr) -> Expr {
        let ty = a.ty();
        let Some(c) = const_of(b).map(Scalar::as_i128) else {
            return node(BinOp::Div, a.clone(), b.clone());
        };
        match c {
            0 => return Expr::int(0, ty),
            1 => return a.clone(),
            _ => {}
        }
        if c > 0 {
            if let Some(q) = self.bounds(a).and_then(|r| single_quotient(r, c)) {
                return Expr::int(q as i64, ty);
            }
            if assumes_no_overflow(ty) {
                if let Some(nested) = self.merge_nested_division(a, c) {
                    return nested;
                }
                // (c*q + r) / c == q + r / c, for the part of `a` divisible by c.
                let l = linearize(a);
                let (multiples, rest) = l.partition(|k| k % c == 0);
                if !multiples.terms.is_empty() || l.constant.div_euclid(c) != 0 {
                    let rest = rest.with_constant(l.constant.rem_euclid(c)).to_expr();
                    let quotient = multiples.scale_down(c).with_constant(l.constant.div_euclid(c)).to_expr();
                    let rest_quotient = self.make_div(&rest, b);
                    return self.make_binary(BinOp::Add, &quotient, &rest_quotient);
                }
            }
        }
        node(BinOp::Div, a.clone(), b.clone())
    }

    /// `(u / k + d) / c` as `(u + k*d) / (k*c)` (positive constants `k`
    /// and `c`; `d` the rest of the sum, constant or not): exact for floor
    /// division (`u/k + d` and `(u + k*d)/k` are the same integer up to a
    /// fraction in `[0, 1)`), and one division instead of two, so that the
    /// ends of a region halved level after level (`((x/2 + 1)/2 + 1)/2` and
    /// `x/8`, or `(x/8 + r + 1)/2` and `x/16`) differ by a bounded remainder
    /// ([`Self::cancel_divisions`]) instead of by everything `x` can be.
    fn merge_nested_division(&mut self, a: &Expr, c: i128) -> Option<Expr> {
        let l = linearize(a);
        let (i, u, k) = l.terms.iter().enumerate().find_map(|(i, (term, coefficient))| {
            let ExprNode::Binary { op: BinOp::Div, a: u, b: k } = term.node() else { return None };
            let k = const_of(k).map(Scalar::as_i128).filter(|k| *k > 0 && *coefficient == 1)?;
            Some((i, u.clone(), k))
        })?;
        let divisor = k.checked_mul(c).filter(|d| *d <= MAX_MERGED_DIVISOR)?;
        let shift = k.checked_mul(l.constant).filter(|s| s.abs() <= MAX_MERGED_DIVISOR)?;
        let mut rest = l.clone().with_constant(0);
        rest.terms.remove(i);
        if rest.terms.iter().any(|(t, _)| t.reads_memory()) {
            return None;
        }
        let ty = l.ty;
        let numerator = linearize(&u).add(&rest.scale(k), 1).add(&Linear { terms: vec![], constant: shift, ty }, 1);
        let numerator = self.cancel_into_min_max(numerator);
        Some(self.make_div(&numerator, &Expr::int(divisor as i64, ty)))
    }

    fn make_mod(&mut self, a: &Expr, b: &Expr) -> Expr {
        let ty = a.ty();
        let Some(c) = const_of(b).map(Scalar::as_i128) else {
            return node(BinOp::Mod, a.clone(), b.clone());
        };
        if c == 0 || c.abs() == 1 {
            return Expr::int(0, ty);
        }
        let in_range = |s: &mut Self, e: &Expr| s.bounds(e).is_some_and(|r| r.within(Interval::new(0, c.abs() - 1)));
        if in_range(self, a) {
            return a.clone();
        }
        // Terms that are multiples of c vanish; this is exact under wrapping
        // when c divides 2^bits.
        if c > 0 && (assumes_no_overflow(ty) || (c as u128).is_power_of_two()) {
            let l = linearize(a);
            let (_, rest) = l.partition(|k| k % c == 0);
            let reduced = rest.with_constant(l.constant.rem_euclid(c)).to_expr();
            if reduced.is_const() || in_range(self, &reduced) {
                return reduced;
            }
            return node(BinOp::Mod, reduced, b.clone());
        }
        node(BinOp::Mod, a.clone(), b.clone())
    }

    /// `min`/`max` over the flattened operands of both sides (nested nodes of
    /// the same operator), dropping every operand another one makes
    /// redundant and folding the constants into one, placed last: a chain of
    /// bounds such as `max(x + 7, max(x + 9, y))` stays as short as the
    /// number of incomparable operands (`max(x + 9, y)`).
    fn make_min_max(&mut self, op: BinOp, a: &Expr, b: &Expr) -> Expr {
        let mut operands = vec![];
        flatten_min_max(op, a, &mut operands);
        flatten_min_max(op, b, &mut operands);
        let (constants, rest): (Vec<Expr>, Vec<Expr>) = operands.into_iter().partition(|e| const_of(e).is_some());
        let mut rest = self.merge_shared_bounds(op, rest);
        if let Some(c) = constants.into_iter().reduce(|x, y| self.make_binary(op, &x, &y)) {
            rest.push(c);
        }
        let mut kept: Vec<Expr> = vec![];
        for e in rest {
            if self.any_subsumes(op, &kept, &e) {
                continue;
            }
            let mut i = 0;
            while i < kept.len() {
                if self.subsumes(op, &e, &kept[i]) {
                    kept.remove(i);
                } else {
                    i += 1;
                }
            }
            kept.push(e);
        }
        kept.into_iter().reduce(|x, y| node(op, x, y)).expect("min/max has operands")
    }

    /// `operands` of `op` with those of the other operator (`max` under
    /// `min`, `min` under `max`) that share their last operand `k` merged
    /// into one, as the two distribute over each other:
    /// `min(max(a, k), max(b, k))` is `max(min(a, b), k)`. The union of a
    /// Func's clamped reads, `min(max(x - 1, 0), max(x + 1, 0), max(x, 0))`,
    /// becomes `max(x - 1, 0)`; kept apart, each bound that unions such
    /// reads tripled at every consumer (optical_flow's Funcs at the root
    /// made a statement of 2.5 MB in 14 s of bounds inference). The merged
    /// operand takes the place of the group's first.
    fn merge_shared_bounds(&mut self, op: BinOp, operands: Vec<Expr>) -> Vec<Expr> {
        let other = if op == BinOp::Min { BinOp::Max } else { BinOp::Min };
        let of_other = |e: &Expr| matches!(e.node(), ExprNode::Binary { op: o, .. } if *o == other);
        if operands.iter().filter(|e| of_other(e)).count() < 2 {
            return operands;
        }
        // Each group: where its first member stands in `out`, the shared
        // operand, and the members' other operands.
        let mut out: Vec<Expr> = vec![];
        let mut groups: Vec<(usize, Expr, Vec<Expr>)> = vec![];
        for e in operands {
            let mut inner = vec![];
            flatten_min_max(other, &e, &mut inner);
            let Some(k) = inner.pop().filter(|_| !inner.is_empty()) else {
                out.push(e);
                continue;
            };
            let rest = inner.into_iter().reduce(|x, y| node(other, x, y)).expect("an operand");
            match groups.iter_mut().find(|(_, shared, _)| *shared == k) {
                Some((_, _, members)) => members.push(rest),
                None => {
                    groups.push((out.len(), k, vec![rest]));
                    out.push(e);
                }
            }
        }
        for (at, k, members) in groups.into_iter().filter(|(_, _, m)| m.len() > 1) {
            let merged = members.into_iter().reduce(|x, y| self.make_min_max(op, &x, &y)).expect("a group has members");
            out[at] = self.make_min_max(other, &merged, &k);
        }
        out
    }

    fn any_subsumes(&mut self, op: BinOp, kept: &[Expr], e: &Expr) -> bool {
        kept.iter().any(|k| self.subsumes(op, k, e))
    }

    /// Whether operand `k` makes operand `e` redundant in `op(k, e)`.
    fn subsumes(&mut self, op: BinOp, k: &Expr, e: &Expr) -> bool {
        match self.difference(k, e) {
            Some(d) if op == BinOp::Min => d.hi <= 0,
            Some(d) => d.lo >= 0,
            None => false,
        }
    }

    fn make_cmp(&mut self, op: CmpOp, a: &Expr, b: &Expr) -> Expr {
        let ty = Type::bool().with_lanes(a.ty().lanes);
        if let (Some(x), Some(y)) = (const_of(a), const_of(b)) {
            return make_const(Scalar::from_bool(value::compare(op, a.ty().scalar, x, y)), ty);
        }
        if let (ExprNode::Broadcast { value: x, lanes }, ExprNode::Broadcast { value: y, .. }) = (a.node(), b.node()) {
            return Expr::broadcast(self.make_cmp(op, x, y), *lanes);
        }
        if let Some(result) = self.difference(a, b).and_then(|d| decide(op, d)) {
            return make_const(Scalar::from_bool(result), ty);
        }
        Expr::new(ExprNode::Cmp { op, a: a.clone(), b: b.clone() })
    }

    /// Bounds of `a - b` (as mathematical integers) for integer or bool
    /// operands. For i32/i64 without loads or calls this also cancels common
    /// terms, assuming (as Halide does) that index arithmetic never overflows.
    fn difference(&mut self, a: &Expr, b: &Expr) -> Option<Interval> {
        if a.ty().is_float() {
            return None;
        }
        if a == b {
            return Some(Interval::point(0));
        }
        let direct = match (self.bounds(a), self.bounds(b)) {
            (Some(x), Some(y)) => Some(Interval::new(x.lo - y.hi, x.hi - y.lo)),
            _ => None,
        };
        let symbolic = if assumes_no_overflow(a.ty()) && !a.reads_memory() && !b.reads_memory() {
            let diff = self.expand_rounded_multiples(linearize(a).add(&linearize(b), -1));
            match (self.bounds(&diff.to_expr()), quotient_difference(a, b)) {
                (Some(r), Some(q)) => Some(r.intersect(q)),
                (r, q) => r.or(q),
            }
        } else {
            None
        };
        match (direct, symbolic) {
            (Some(d), Some(r)) => Some(d.intersect(r)),
            (d, r) => d.or(r),
        }
    }
}

impl Simplifier {
    /// Rewrites each term `k * (u / c)` whose coefficient is a multiple of
    /// the positive constant `c` as `(k/c) * (u - u % c)` (exact for floor
    /// division and Euclidean modulo), so that a rounded multiple cancels
    /// against what it rounds: `((e + 15)/16)*16 - e` is `15 - (e + 15) % 16`,
    /// in `[0, 15]`.
    fn expand_rounded_multiples(&mut self, l: Linear) -> Linear {
        let ty = l.ty;
        let mut out = Linear { terms: vec![], constant: l.constant, ty };
        for (t, k) in &l.terms {
            let division = match t.node() {
                ExprNode::Binary { op: BinOp::Div, a: u, b: c } if !u.reads_memory() => {
                    const_of(c).map(Scalar::as_i128).filter(|c| *c > 0 && k % c == 0).map(|c| (u.clone(), c))
                }
                _ => None,
            };
            out = match division {
                Some((u, c)) => {
                    let remainder = self.make_mod(&u, &Expr::int(c as i64, ty));
                    out.add(&linearize(&u).add(&linearize(&remainder), -1).scale(k / c), 1)
                }
                None => out.add(&Linear { terms: vec![(t.clone(), *k)], constant: 0, ty }, 1),
            };
        }
        out
    }
}

impl Linear {
    /// Divides every coefficient by `c` (each must be a multiple of it).
    fn scale_down(mut self, c: i128) -> Linear {
        for (_, k) in &mut self.terms {
            *k /= c;
        }
        self
    }
}

/// The largest divisor, and constant shift, that
/// [`Simplifier::merge_nested_division`] makes (so that the merged
/// numerator stays as far from overflow as the original's).
const MAX_MERGED_DIVISOR: i128 = 1 << 16;

/// The largest rest of a sum (in expression nodes) that
/// [`Simplifier::cancel_into_min_max`] copies into both operands.
const MAX_DISTRIBUTED_SIZE: usize = 24;

/// Appends the operands of `e` under `op`, looking through nested `op` nodes.
fn flatten_min_max(op: BinOp, e: &Expr, out: &mut Vec<Expr>) {
    match e.node() {
        ExprNode::Binary { op: inner, a, b } if *inner == op => {
            flatten_min_max(op, a, out);
            flatten_min_max(op, b, out);
        }
        _ => out.push(e.clone()),
    }
}

/// The one quotient of `r / c` when it is the same over the whole interval.
fn single_quotient(r: Interval, c: i128) -> Option<i128> {
    let q = r.lo.div_euclid(c);
    (q == r.hi.div_euclid(c)).then_some(q)
}

/// The truth of `a op b` given the bounds `d` of `a - b`, when it is decided.
fn decide(op: CmpOp, d: Interval) -> Option<bool> {
    let (always, never) = match op {
        CmpOp::Lt => (d.hi < 0, d.lo >= 0),
        CmpOp::Le => (d.hi <= 0, d.lo > 0),
        CmpOp::Gt => (d.lo > 0, d.hi <= 0),
        CmpOp::Ge => (d.lo >= 0, d.hi < 0),
        CmpOp::Eq => (d.lo == 0 && d.hi == 0, d.lo > 0 || d.hi < 0),
        CmpOp::Ne => (d.lo > 0 || d.hi < 0, d.lo == 0 && d.hi == 0),
    };
    if always {
        Some(true)
    } else if never {
        Some(false)
    } else {
        None
    }
}

/// The value of a constant or of a broadcast constant.
/// `(p / k + c) - (q / k + e)` for a positive constant `k` and constants
/// `c`, `e`, where `p - q` is a constant `d`: with `r = q mod k` in
/// `[0, k)`, `p / k - q / k` is `(r + d) / k`, in `[floor(d / k),
/// floor((d + k - 1) / k)]` however large `p` and `q` are.
fn quotient_difference(a: &Expr, b: &Expr) -> Option<Interval> {
    let quotient = |e: &Expr| -> Option<(Expr, i64, i128)> {
        let l = linearize(e);
        let [(t, 1)] = l.terms.as_slice() else {
            return None;
        };
        let ExprNode::Binary { op: BinOp::Div, a: p, b: k } = t.node() else {
            return None;
        };
        Some((p.clone(), k.as_int().filter(|k| *k > 0)?, l.constant))
    };
    let ((p, k, c), (q, k2, e)) = (quotient(a)?, quotient(b)?);
    if k != k2 {
        return None;
    }
    let d = linearize(&p).add(&linearize(&q), -1).as_const()?;
    let k = k as i128;
    Some(Interval::new(d.div_euclid(k) + c - e, (d + k - 1).div_euclid(k) + c - e))
}

pub(super) fn const_of(e: &Expr) -> Option<Scalar> {
    match e.node() {
        ExprNode::Broadcast { value, .. } => value::const_value(value),
        _ => value::const_value(e),
    }
}

/// The truth value of a constant bool (scalar or broadcast).
pub(super) fn const_bool(e: &Expr) -> Option<bool> {
    if !e.ty().is_bool() {
        return None;
    }
    const_of(e).map(Scalar::as_bool)
}

/// A constant of type `ty` (broadcast when `ty` is a vector).
fn make_const(v: Scalar, ty: Type) -> Expr {
    Expr::broadcast(value::const_expr(v, ty.element()), ty.lanes)
}

fn bool_const(v: bool, ty: Type) -> Expr {
    make_const(Scalar::from_bool(v), ty)
}

/// Whether `a` is the negation of `b` (`!b`, or `x <= y` for `y < x`).
fn negates(a: &Expr, b: &Expr) -> bool {
    make_not(b) == *a || make_not(a) == *b
}

fn make_and(a: &Expr, b: &Expr) -> Expr {
    match (const_bool(a), const_bool(b)) {
        (Some(false), _) | (_, Some(false)) => bool_const(false, a.ty()),
        (Some(true), _) => b.clone(),
        (_, Some(true)) => a.clone(),
        _ if a == b => a.clone(),
        _ if negates(a, b) => bool_const(false, a.ty()),
        _ => Expr::new(ExprNode::And { a: a.clone(), b: b.clone() }),
    }
}

fn make_or(a: &Expr, b: &Expr) -> Expr {
    match (const_bool(a), const_bool(b)) {
        (Some(true), _) | (_, Some(true)) => bool_const(true, a.ty()),
        (Some(false), _) => b.clone(),
        (_, Some(false)) => a.clone(),
        _ if a == b => a.clone(),
        _ if negates(a, b) => bool_const(true, a.ty()),
        _ => Expr::new(ExprNode::Or { a: a.clone(), b: b.clone() }),
    }
}

/// `reinterpret<ty>(v)`: folded for a constant, moved inside a broadcast,
/// and a reinterpretation of a reinterpretation reads the original bits once.
fn make_reinterpret(ty: Type, v: &Expr) -> Expr {
    if let Some(c) = const_of(v) {
        return make_const(value::reinterpret(v.ty().scalar, ty.scalar, c), ty);
    }
    match v.node() {
        ExprNode::Broadcast { value, lanes } => Expr::broadcast(make_reinterpret(ty.element(), value), *lanes),
        ExprNode::Reinterpret { value, .. } => Expr::reinterpret(ty, value.clone()),
        _ => Expr::new(ExprNode::Reinterpret { ty, value: v.clone() }),
    }
}

fn make_not(a: &Expr) -> Expr {
    if let Some(v) = const_bool(a) {
        return bool_const(!v, a.ty());
    }
    match a.node() {
        ExprNode::Not { a: x } => x.clone(),
        ExprNode::Cmp { op, a: x, b: y } => {
            // Orderings are only complementary without NaN.
            let ordered = !x.ty().is_float();
            let negated = match op {
                CmpOp::Eq => Some((CmpOp::Ne, x, y)),
                CmpOp::Ne => Some((CmpOp::Eq, x, y)),
                CmpOp::Lt if ordered => Some((CmpOp::Ge, x, y)),
                CmpOp::Le if ordered => Some((CmpOp::Gt, x, y)),
                CmpOp::Gt if ordered => Some((CmpOp::Le, x, y)),
                CmpOp::Ge if ordered => Some((CmpOp::Lt, x, y)),
                _ => None,
            };
            match negated {
                Some((op, x, y)) => Expr::new(ExprNode::Cmp { op, a: x.clone(), b: y.clone() }),
                None => Expr::new(ExprNode::Not { a: a.clone() }),
            }
        }
        _ => Expr::new(ExprNode::Not { a: a.clone() }),
    }
}

fn make_select(cond: &Expr, t: &Expr, f: &Expr) -> Expr {
    if let Some(c) = const_bool(cond) {
        return if c { t.clone() } else { f.clone() };
    }
    if t == f {
        return t.clone();
    }
    if let ExprNode::Not { a } = cond.node() {
        return make_select(a, f, t);
    }
    if t.ty().is_bool() {
        match (const_bool(t), const_bool(f)) {
            (Some(true), Some(false)) => return cond.clone(),
            (Some(false), Some(true)) => return make_not(cond),
            _ => {}
        }
    }
    if let (ExprNode::Broadcast { value: c, lanes }, ExprNode::Broadcast { value: x, .. }, ExprNode::Broadcast { value: y, .. }) =
        (cond.node(), t.node(), f.node())
    {
        return Expr::broadcast(make_select(c, x, y), *lanes);
    }
    Expr::new(ExprNode::Select { cond: cond.clone(), t: t.clone(), f: f.clone() })
}

fn make_ramp(base: &Expr, stride: &Expr, lanes: u32) -> Expr {
    if stride.is_const_int(0) {
        return Expr::broadcast(base.clone(), lanes);
    }
    Expr::new(ExprNode::Ramp { base: base.clone(), stride: stride.clone(), lanes })
}
