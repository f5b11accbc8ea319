//! Unit tests of the simplifier: constant folding, the linear form, min/max
//! and comparison decisions, division rules, statements, and a randomized
//! check of rewrites against the value semantics.

use super::*;
use crate::ir::expr::{BinOp, CmpOp, MathFn};
use crate::ir::stmt::ForKind;
use crate::ir::types::{ScalarType, Type};
use crate::ir::value::{self, Scalar};
use crate::ir::visit::substitute;
use crate::lang::ops::{max, min, select, CompareExt};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn v(name: &str) -> Expr {
    Expr::ivar(name)
}

fn i(n: i64) -> Expr {
    Expr::i32(n)
}

fn u8v(name: &str) -> Expr {
    Expr::var(name, Type::u8())
}

fn f32v(name: &str) -> Expr {
    Expr::var(name, Type::f32())
}

fn load(index: Expr) -> Expr {
    Expr::load("buf", index, Type::i32())
}

fn ranged(e: &Expr, ranges: &[(&str, i64, i64)]) -> Expr {
    let map = ranges.iter().map(|(n, lo, hi)| (Name::from(*n), (*lo, *hi))).collect();
    simplify_with(e, &map)
}

// ---- constant folding ----------------------------------------------------

#[test]
fn folds_constants_with_value_semantics() {
    assert_eq!(simplify(&(i(3) + 4)), i(7));
    assert_eq!(simplify(&(i(-7) / 2)), i(-4));
    assert_eq!(simplify(&(i(-7) % 2)), i(1));
    assert_eq!(simplify(&(i(7) / 0)), i(0));
    assert_eq!(simplify(&(i(7) % 0)), i(0));
    let u = |n| Expr::int(n, Type::u8());
    assert_eq!(simplify(&(u(250) + u(10))), u(4));
    assert_eq!(simplify(&(u(3) - u(5))), u(254));
    let big = Expr::float(16777216.0, Type::f32());
    assert_eq!(simplify(&(big.clone() + Expr::float(1.0, Type::f32()))), big);
    assert_eq!(simplify(&Expr::cast(Type::u8(), Expr::float(300.7, Type::f32()))), u(255));
    assert_eq!(simplify(&Expr::cast(Type::u8(), i(-1))), u(255));
    assert_eq!(simplify(&i(3).lt(i(4))), Expr::bool(true));
    assert_eq!(simplify(&min(i(3), i(-2))), i(-2));
    assert_eq!(simplify(&Expr::math(MathFn::Sqrt, vec![Expr::float(4.0, Type::f32())])), Expr::float(2.0, Type::f32()));
    assert_eq!(simplify(&(Expr::bool(true) & Expr::bool(false))), Expr::bool(false));
    assert_eq!(simplify(&select(i(1).gt(i(0)), v("x"), v("y"))), v("x"));
}

#[test]
fn floats_only_fold_constants() {
    let f = f32v("f");
    let one = Expr::float(1.0, Type::f32());
    let e = (f.clone() + one.clone()) - one;
    assert_eq!(simplify(&e), e);
    let plus_zero = f.clone() + Expr::float(0.0, Type::f32());
    assert_eq!(simplify(&plus_zero), plus_zero);
    let x_eq_x = f.eq_(f.clone());
    assert_eq!(simplify(&x_eq_x), x_eq_x);
    let not_lt = !f.lt(f32v("g"));
    assert_eq!(simplify(&not_lt), not_lt);
}

// ---- linear form ---------------------------------------------------------

#[test]
fn linear_form_cancels_and_collects_terms() {
    let (x, y) = (v("x"), v("y"));
    assert_eq!(simplify(&((x.clone() + 8) - x.clone())), i(8));
    assert_eq!(simplify(&((v("a") * 8 + 3) - v("a") * 8)), i(3));
    assert_eq!(simplify(&(x.clone() * 2 + x.clone())), x.clone() * 3);
    let (xo, xi) = (v("x_o"), v("x_i"));
    assert_eq!(simplify(&(((xo.clone() * 8 + xi.clone()) + 1) - xo * 8)), xi + 1);
    assert_eq!(simplify(&(x.clone() - y.clone() + y.clone())), x.clone());
    assert_eq!(simplify(&(i(3) - x.clone() + 2)), i(5) - x.clone());
    assert_eq!(simplify(&(y.clone() - x.clone() * 2 + 4 - y.clone() * 2)), i(4) - y.clone() - x.clone() * 2);
    assert_eq!(simplify(&((x.clone() + 1) * 4)), x.clone() * 4 + 4);
    assert_eq!(simplify(&(x.clone() - 5)), x.clone() - 5);
    assert_eq!(simplify(&(x.clone() * y.clone() - y.clone() * x.clone())), x.clone() * y.clone() - y.clone() * x.clone());
    assert_eq!(simplify(&(x.clone() * y.clone() - x.clone() * y.clone())), i(0));
}

#[test]
fn linear_form_wraps_for_narrow_types() {
    let a = u8v("a");
    let u = |n| Expr::int(n, Type::u8());
    assert_eq!(simplify(&((a.clone() + u(200)) - a.clone())), u(200));
    assert_eq!(simplify(&((a.clone() + u(200)) + u(100))), a.clone() + u(44));
    assert_eq!(simplify(&(a.clone() * u(128) + a.clone() * u(128))), u(0));
}

// ---- division and modulo -------------------------------------------------

#[test]
fn division_and_modulo_by_constants() {
    let (x, y) = (v("x"), v("y"));
    assert_eq!(simplify(&((x.clone() * 8 + y.clone()) / 8)), x.clone() + y.clone() / 8);
    assert_eq!(simplify(&((x.clone() * 8 + 9) / 8)), x.clone() + 1);
    assert_eq!(simplify(&((x.clone() + 9) / 8)), (x.clone() + 1) / 8 + 1);
    assert_eq!(simplify(&((x.clone() * 8) % 8)), i(0));
    assert_eq!(simplify(&((x.clone() * 8 + 3) % 8)), i(3));
    assert_eq!(simplify(&((x.clone() * 8 + y.clone() + 10) % 8)), (y.clone() + 2) % 8);
    assert_eq!(simplify(&Expr::binary(BinOp::Div, x.clone(), i(1))), x.clone());
    assert_eq!(simplify(&Expr::binary(BinOp::Mod, x.clone(), i(1))), i(0));
    assert_eq!(simplify(&(x.clone() % 4 / 4)), i(0));
    assert_eq!(simplify(&(x.clone() % 4 % 8)), x.clone() % 4);
    let (xo, xi) = (v("x_o"), v("x_i"));
    let split = xo.clone() * 8 + xi.clone();
    let r = [("x_i", 0, 7)];
    assert_eq!(ranged(&(split.clone() / 8), &r), xo.clone());
    assert_eq!(ranged(&(split % 8), &r), xi);
    // Division of wrapping types is not split (8*a may wrap), only folded.
    let a = u8v("a");
    let u = |n| Expr::int(n, Type::u8());
    let e = (a.clone() * u(8) + u8v("b")) / u(8);
    assert_eq!(simplify(&e), e);
    // But multiples of a power of two vanish under modulo.
    assert_eq!(simplify(&((a.clone() * u(8) + u(3)) % u(8))), u(3));
}

// ---- decisions -----------------------------------------------------------

#[test]
fn min_max_chains_keep_only_incomparable_operands() {
    let (x, y) = (v("x"), v("y"));
    let chain = max(max(max(x.clone() + 7, y.clone() + 7), x.clone() + 9), max(y.clone() + 8, x.clone() + 8));
    assert_eq!(simplify(&chain), max(x.clone() + 9, y.clone() + 8));
    assert_eq!(simplify(&min(min(x.clone(), 3), min(y.clone() - 1, 1))), min(min(x.clone(), y.clone() - 1), 1));
    let shrinking = min(min(x.clone() - 1, y.clone() - 16), y.clone() - 14);
    assert_eq!(simplify(&shrinking), min(x.clone() - 1, y.clone() - 16));
}

/// `min` and `max` distribute over each other: operands that share their
/// last operand merge, so the union of clamped reads is one clamp.
#[test]
fn operands_sharing_a_bound_merge() {
    let (x, y, n) = (v("x"), v("y"), v("n"));
    let union = min(min(max(x.clone() - 1, 0), max(x.clone() + 1, 0)), max(x.clone(), 0));
    assert_eq!(simplify(&union), max(x.clone() - 1, 0));
    let clamped = |e: Expr| min(max(e, 0), n.clone());
    let highest = max(max(clamped(x.clone() + 1), clamped(x.clone() - 1)), clamped(x.clone()));
    assert_eq!(simplify(&highest), min(max(x.clone() + 1, 0), n.clone()));
    // Different bounds stay apart; a merged group takes its first member's place.
    let mixed = min(min(max(x.clone(), 1), y.clone()), min(max(x.clone() + 2, 0), max(x.clone() + 1, 0)));
    assert_eq!(simplify(&mixed), min(min(max(x.clone(), 1), y.clone()), max(x.clone() + 1, 0)));
}

#[test]
fn rounded_up_multiples_compare_with_what_they_round() {
    // ((e + 15)/16)*16 lies in [e, e + 15].
    let e = v("e");
    let rounded = ((e.clone() + 15) / 16) * 16;
    assert_eq!(simplify(&min(rounded.clone() - 16, e.clone() - 16)), e.clone() - 16);
    assert_eq!(simplify(&rounded.clone().ge(e.clone())), Expr::bool(true));
    assert_eq!(simplify(&rounded.clone().le(e.clone() + 15)), Expr::bool(true));
    assert_ne!(simplify(&rounded.lt(e.clone() + 15)), Expr::bool(true));
}

#[test]
fn min_max_and_comparisons_of_index_types() {
    let x = v("x");
    assert_eq!(simplify(&min(x.clone() + 8, x.clone() + 3)), x.clone() + 3);
    assert_eq!(simplify(&max(x.clone() + 8, x.clone() + 3)), x.clone() + 8);
    assert_eq!(simplify(&(x.clone() + 1).gt(x.clone())), Expr::bool(true));
    assert_eq!(simplify(&(x.clone() + 1).le(x.clone())), Expr::bool(false));
    assert_eq!(simplify(&x.eq_(x.clone())), Expr::bool(true));
    assert_eq!(simplify(&min(min(x.clone(), 8), 10)), min(x.clone(), 8));
    assert_eq!(simplify(&min(min(x.clone(), 10), 8)), min(x.clone(), 8));
    assert_eq!(simplify(&max(max(x.clone(), 2), 5)), max(x.clone(), 5));
    assert_eq!(simplify(&min(i(3), x.clone())), min(x.clone(), 3));
    let (y, z) = (v("y"), v("z"));
    assert_eq!(simplify(&min(min(min(x.clone(), y.clone()), z.clone()), z.clone())), min(min(x.clone(), y.clone()), z.clone()));
    assert_eq!(simplify(&max(y.clone(), max(x.clone(), y.clone()))), max(y.clone(), x.clone()));
    assert_eq!(simplify(&(x.clone() % 4).lt(4)), Expr::bool(true));
    assert_eq!(simplify(&select(v("c").gt(0), i(3), i(1)).ge(1)), Expr::bool(true));
    let clamped = Expr::clamp(x.clone(), i(0), i(9));
    assert_eq!(simplify(&min(clamped.clone(), 20)), clamped);
    assert_eq!(ranged(&min(x.clone(), 100), &[("x", 0, 9)]), x.clone());
    assert_eq!(ranged(&x.lt(10), &[("x", 0, 9)]), Expr::bool(true));
    // Index arithmetic does not overflow: m + min(e - 8, 0) <= m.
    assert!(can_prove(&v("m").ge(v("m") + min(v("e") - 8, 0))));
    assert_eq!(const_bounds(&(i(0) - min(v("e"), 0))), (Some(0), None));
    // Undecidable stays.
    let e = min(x.clone(), v("y"));
    assert_eq!(simplify(&e), e);
}

#[test]
fn sums_move_into_min_max_when_a_term_cancels() {
    let (x, y) = (v("x"), v("y"));
    // min(x, y) - x has bounds that do not depend on how x and y correlate.
    assert_eq!(simplify(&(min(x.clone(), y.clone()) - x.clone())), min(y.clone() - x.clone(), i(0)));
    let e = simplify(&(x.clone() - max(x.clone(), y.clone()) + 3));
    assert_eq!(const_bounds(&e).1, Some(3), "{e}");
    assert_eq!(const_bounds(&(min(x.clone() + 4, y.clone()) - x.clone())), (None, Some(4)));
    // Nothing cancels: the sum stays a sum.
    let e = min(x.clone(), y.clone()) + v("z");
    assert_eq!(simplify(&e), e);
    // Narrow types wrap: no distribution.
    let (a, b) = (u8v("a"), u8v("b"));
    let e = Expr::min(a.clone(), b.clone()) - a.clone();
    assert_eq!(simplify(&e), e);
}

#[test]
fn nested_quotients_merge_into_one() {
    let x = v("x");
    assert_eq!(simplify(&((x.clone() / 2 + 1) / 2)), (x.clone() + 2) / 4);
    assert_eq!(simplify(&((x.clone() / 2) / 2 / 2)), x.clone() / 8);
    // The ends of a region halved three times differ by a bounded amount,
    // whatever x is: ((x/2 + 1)/2 + 1)/2 - x/8 is (x + 6)/8 - x/8.
    let halved = ((x.clone() / 2 + 1) / 2 + 1) / 2;
    assert_eq!(const_bounds(&simplify(&(halved - x.clone() / 8 + 17))), (Some(17), Some(18)));
    // Floor division: the merged form agrees on negative numerators too.
    for n in -40..40 {
        let nested = simplify(&((i(n) / 3 - 2) / 4));
        assert_eq!(nested, i((n.div_euclid(3) - 2).div_euclid(4)), "n = {n}");
        let merged = simplify(&((x.clone() / 3 - 2) / 4));
        assert_eq!(simplify(&substitute("x", &i(n), &merged)), nested, "n = {n}: {merged}");
    }
    // A quotient with a coefficient stays nested.
    assert!(!simplify(&((x.clone() / 2 * 3 + 1) / 2)).to_string().contains("/ 4"));
    // Beside other terms it merges, exactly: (x/3 + y - 2)/4 is (x + 3y - 6)/12.
    let merged = simplify(&((x.clone() / 3 + v("y") - 2) / 4));
    assert!(merged.to_string().contains("/ 12"), "{merged}");
    for n in -30i64..30 {
        for m in -7i64..7 {
            let nested = i((n.div_euclid(3) + m - 2).div_euclid(4));
            let at = simplify(&substitute("y", &i(m), &substitute("x", &i(n), &merged)));
            assert_eq!(at, nested, "x = {n}, y = {m}: {merged}");
        }
    }
    // The rows of a level upsampled from a tile and of the level below it
    // differ by a bounded amount: (x/8 + (x % 8 + 4)/8 + 1)/2 - x/16.
    let rows = (x.clone() / 8 + (x.clone() % 8 + 4) / 8 + 1) / 2 - x.clone() / 16;
    assert_eq!(const_bounds(&simplify(&rows)), (Some(0), Some(1)));
}

#[test]
fn differences_of_quotients_become_bounded_remainders() {
    let x = v("x");
    // (x + 5)/2 - x/2 is ((x % 2) + 5)/2, in [2, 3] whatever x is.
    let d = simplify(&((x.clone() + 5) / 2 - x.clone() / 2));
    assert_eq!(d, ((x.clone() % 2) + 1) / 2 + 2);
    assert_eq!(const_bounds(&d), (Some(2), Some(3)));
    // Equal numerators up to a multiple of the divisor cancel completely.
    assert_eq!(simplify(&((x.clone() + 8) / 4 - x.clone() / 4)), i(2));
    // A difference that is not constant stays beside the remainder, where
    // it no longer correlates with x: (x + n + 7)/8 - x/8 is in
    // [(n + 7)/8, (n + 14)/8] whatever x is.
    let n = v("n");
    let d = simplify(&((x.clone() + n.clone() + 7) / 8 - x.clone() / 8));
    assert_eq!(d, ((x.clone() % 8) + n.clone() + 7) / 8);
    // Numerators that share no term are left alone.
    let e = simplify(&((x.clone() + 1) / 8 - n.clone() / 8));
    assert!(!e.to_string().contains('%'), "{e}");
    // Different divisors are left alone.
    let e = simplify(&((x.clone() + 1) / 2 - x.clone() / 3));
    assert!(!e.to_string().contains('%'), "{e}");
}

#[test]
fn narrow_types_decide_only_what_wrapping_allows() {
    let a = u8v("a");
    let u = |n| Expr::int(n, Type::u8());
    // a + 1 wraps to 0 for a = 255, so neither is decided.
    let e = min(a.clone() + u(1), a.clone());
    assert_eq!(simplify(&e), e);
    let gt = (a.clone() + u(1)).gt(a.clone());
    assert_eq!(simplify(&gt), gt);
    // Bounds of the type itself are sound.
    assert_eq!(simplify(&min(a.clone(), u(255))), a.clone());
    assert_eq!(simplify(&a.ge(u(0))), Expr::bool(true));
    assert_eq!(simplify(&u(3).lt(u(4))), Expr::bool(true));
}

#[test]
fn loads_and_calls_are_not_reasoned_about() {
    let l = load(v("x"));
    let e = min(l.clone() + 1, l.clone());
    assert_eq!(simplify(&e), e);
    let gt = (l.clone() + 1).gt(l.clone());
    assert_eq!(simplify(&gt), gt);
    assert_eq!(simplify(&l.eq_(l.clone())), Expr::bool(true));
    let near_limit = (l.clone() + 1).ge(Expr::i32(i32::MIN as i64 + 1));
    assert_eq!(simplify(&near_limit), near_limit);
    assert_eq!(simplify(&(l.clone() + 1 - l.clone())), i(1));
}

// ---- booleans ------------------------------------------------------------

#[test]
fn boolean_rules() {
    let c = v("x").lt(v("y"));
    let d = v("z").gt(0);
    assert_eq!(simplify(&(c.clone() & Expr::bool(true))), c.clone());
    assert_eq!(simplify(&(c.clone() | Expr::bool(true))), Expr::bool(true));
    assert_eq!(simplify(&(c.clone() & Expr::bool(false))), Expr::bool(false));
    assert_eq!(simplify(&(c.clone() | Expr::bool(false))), c.clone());
    assert_eq!(simplify(&(c.clone() & c.clone())), c.clone());
    assert_eq!(simplify(&(Expr::not(d.clone()) & d.clone())), Expr::bool(false));
    assert_eq!(simplify(&(v("z").le(0) | d.clone())), Expr::bool(true));
    assert_eq!(simplify(&Expr::not(Expr::not(d.clone()))), d.clone());
    assert_eq!(simplify(&Expr::not(c.clone())), v("x").ge(v("y")));
    assert_eq!(simplify(&Expr::not(v("x").eq_(1))), v("x").ne_(1));
    assert_eq!(simplify(&select(c.clone(), v("z"), v("z"))), v("z"));
    let b = Expr::var("b", Type::bool());
    assert_eq!(simplify(&select(Expr::not(b.clone()), v("x"), v("y"))), select(b, v("y"), v("x")));
    assert_eq!(simplify(&select(Expr::not(d.clone()), v("x"), v("y"))), select(v("z").le(0), v("x"), v("y")));
    assert_eq!(simplify(&select(d.clone(), Expr::bool(true), Expr::bool(false))), d.clone());
}

// ---- vectors -------------------------------------------------------------

#[test]
fn ramps_and_broadcasts_fold() {
    let x = v("x");
    let bc = |e: Expr| Expr::broadcast(e, 4);
    assert_eq!(simplify(&(bc(x.clone()) + bc(i(2)))), bc(x.clone() + 2));
    assert_eq!(simplify(&(bc(i(3)) * bc(i(2)))), bc(i(6)));
    let ramp = Expr::ramp(x.clone(), i(1), 4);
    assert_eq!(simplify(&(ramp.clone() + bc(i(5)))), Expr::ramp(x.clone() + 5, i(1), 4));
    assert_eq!(simplify(&(bc(i(5)) + ramp.clone())), Expr::ramp(x.clone() + 5, i(1), 4));
    assert_eq!(simplify(&(ramp.clone() * bc(i(2)))), Expr::ramp(x.clone() * 2, i(2), 4));
    assert_eq!(simplify(&(bc(i(5)) - ramp.clone())), Expr::ramp(i(5) - x.clone(), i(-1), 4));
    assert_eq!(simplify(&(ramp.clone() - ramp.clone())), bc(i(0)));
    let cmp = simplify(&Expr::cmp(CmpOp::Lt, bc(i(1)), bc(i(2))));
    assert_eq!(cmp, bc(Expr::bool(true)));
    assert_eq!(cmp.ty(), Type::bool().with_lanes(4));
    let s = simplify(&(ramp.clone() + bc(v("y"))));
    assert_eq!(s.ty().lanes, 4);
    // Float ramps are not reassociated.
    let fr = Expr::ramp(f32v("f"), Expr::float(1.0, Type::f32()), 4);
    let fe = fr + Expr::broadcast(Expr::float(2.0, Type::f32()), 4);
    assert_eq!(simplify(&fe), fe);
}

// ---- lets ----------------------------------------------------------------

#[test]
fn lets_are_inlined_or_dropped() {
    let (x, t) = (v("x"), v("t"));
    assert_eq!(simplify(&Expr::let_in("t", i(3), t.clone() + x.clone())), x.clone() + 3);
    assert_eq!(simplify(&Expr::let_in("t", v("y"), t.clone() + x.clone())), v("y") + x.clone());
    assert_eq!(simplify(&Expr::let_in("t", x.clone() * x.clone(), x.clone() + 1)), x.clone() + 1);
    let kept = simplify(&Expr::let_in("t", x.clone() % 4, min(t.clone(), 10)));
    assert_eq!(kept, Expr::let_in("t", x.clone() % 4, t.clone()));
    // Substituting `y` under a let that rebinds `y` would capture it.
    let capture = Expr::let_in("t", v("y"), Expr::let_in("y", x.clone() * x.clone(), t.clone() + v("y")));
    assert_eq!(simplify(&capture), capture);
}

// ---- statements ----------------------------------------------------------

fn store(index: Expr, value: Expr) -> Stmt {
    Stmt::store("out", index, value)
}

#[test]
fn loops_of_constant_extent() {
    let x = v("x");
    let body = store(x.clone(), x.clone() * 2);
    assert_eq!(simplify_stmt(&Stmt::for_loop("x", i(0), i(0), ForKind::Serial, body.clone())), Stmt::no_op());
    assert_eq!(simplify_stmt(&Stmt::for_loop("x", i(5), i(1), ForKind::Serial, body.clone())), store(i(5), i(10)));
    let single = simplify_stmt(&Stmt::for_loop("x", v("m") * 2, i(1), ForKind::Vectorized, body.clone()));
    assert_eq!(single, Stmt::let_stmt("x", v("m") * 2, body.clone()));
    let ranged_body = store(min(x.clone(), 100), select(x.lt(10), i(1), i(2)));
    let looped = simplify_stmt(&Stmt::for_loop("x", i(0), i(10), ForKind::Serial, ranged_body));
    assert_eq!(looped, Stmt::for_loop("x", i(0), i(10), ForKind::Serial, store(x.clone(), i(1))));
    // A symbolic extent bounded by a constant still bounds the variable.
    let bounded = Stmt::for_loop("x", i(0), min(v("n"), 4), ForKind::Serial, store(x.clone(), min(x.clone(), 3)));
    assert_eq!(simplify_stmt(&bounded), Stmt::for_loop("x", i(0), min(v("n"), 4), ForKind::Serial, store(x.clone(), x.clone())));
    let from_zero = Stmt::for_loop("x", i(0), v("n"), ForKind::Serial, store(x.clone(), max(x.clone(), -1)));
    assert_eq!(simplify_stmt(&from_zero), Stmt::for_loop("x", i(0), v("n"), ForKind::Serial, store(x.clone(), x.clone())));
    // The range ends with the loop.
    let after =
        Stmt::block(vec![Stmt::for_loop("x", i(0), i(10), ForKind::Serial, store(x.clone(), i(0))), store(min(x.clone(), 100), i(0))]);
    assert_eq!(simplify_stmt(&after), after);
}

#[test]
fn branches_asserts_lets_and_blocks() {
    let x = v("x");
    let a = store(x.clone(), i(1));
    let b = store(x.clone(), i(2));
    assert_eq!(simplify_stmt(&Stmt::if_then_else(i(1).lt(2), a.clone(), b.clone())), a.clone());
    assert_eq!(simplify_stmt(&Stmt::if_then_else(i(3).lt(2), a.clone(), b.clone())), b.clone());
    assert_eq!(simplify_stmt(&Stmt::if_then(i(3).lt(2), a.clone())), Stmt::no_op());
    assert_eq!(simplify_stmt(&Stmt::assert(x.clone().le(x.clone() + 1), "ok")), Stmt::no_op());
    let failing = Stmt::assert(Expr::bool(false), "must fail");
    assert_eq!(simplify_stmt(&failing), failing);
    let block = Stmt::new(StmtNode::Block { stmts: vec![Stmt::assert(Expr::bool(true), "t"), a.clone(), Stmt::no_op(), b.clone()] });
    assert_eq!(simplify_stmt(&block), Stmt::block(vec![a.clone(), b.clone()]));
    let let_const = Stmt::let_stmt("k", i(4), store(v("k") + 1, x.clone()));
    assert_eq!(simplify_stmt(&let_const), store(i(5), x.clone()));
    let let_ranged = Stmt::let_stmt("k", x.clone() % 8, store(v("k"), min(v("k"), 7)));
    assert_eq!(simplify_stmt(&let_ranged), Stmt::let_stmt("k", x.clone() % 8, store(v("k"), v("k"))));
    let unused = Stmt::let_stmt("k", x.clone() * x.clone(), a.clone());
    assert_eq!(simplify_stmt(&unused), a.clone());
}

// ---- public queries ------------------------------------------------------

#[test]
fn const_bounds_and_can_prove() {
    let x = v("x");
    assert_eq!(const_bounds(&select(v("c").gt(0), i(3), i(1))), (Some(1), Some(3)));
    assert_eq!(const_bounds(&min(x.clone(), 8)), (None, Some(8)));
    assert_eq!(const_bounds(&max(x.clone(), 8)), (Some(8), None));
    assert_eq!(const_bounds(&(x.clone() % 4)), (Some(0), Some(3)));
    assert_eq!(const_bounds(&(Expr::clamp(x.clone(), i(0), i(9)) + 1)), (Some(1), Some(10)));
    assert_eq!(const_bounds(&x), (None, None));
    assert_eq!(const_bounds(&Expr::cast(Type::i32(), u8v("a"))), (Some(0), Some(255)));
    assert_eq!(const_bounds(&f32v("f")), (None, None));
    assert!(can_prove(&(x.clone() + 2).gt(x.clone())));
    assert!(!can_prove(&x.gt(0)));
    assert!(!can_prove(&i(1)));
}

// ---- randomized differential tests ----------------------------------------

/// Evaluates a scalar expression with the exact semantics; records whether an
/// i32 add/sub/mul overflowed (the simplifier assumes that never happens).
struct Eval {
    env: HashMap<Name, Scalar>,
    overflow: bool,
}

impl Eval {
    fn eval(&mut self, e: &Expr) -> Scalar {
        match e.node() {
            ExprNode::Var { name, .. } => self.env[name],
            ExprNode::Cast { ty, value } => {
                let x = self.eval(value);
                value::cast(value.ty().scalar, ty.scalar, x)
            }
            ExprNode::Binary { op, a, b } => {
                let (x, y) = (self.eval(a), self.eval(b));
                let t = a.ty().scalar;
                if t == ScalarType::I32 {
                    let exact = match op {
                        BinOp::Add => Some(x.as_i128() + y.as_i128()),
                        BinOp::Sub => Some(x.as_i128() - y.as_i128()),
                        BinOp::Mul => Some(x.as_i128() * y.as_i128()),
                        _ => None,
                    };
                    self.overflow |= exact.is_some_and(|v| i32::try_from(v).is_err());
                }
                value::binary(*op, t, x, y)
            }
            ExprNode::Cmp { op, a, b } => {
                let (x, y) = (self.eval(a), self.eval(b));
                Scalar::from_bool(value::compare(*op, a.ty().scalar, x, y))
            }
            ExprNode::And { a, b } => {
                let (x, y) = (self.eval(a), self.eval(b));
                Scalar::from_bool(x.as_bool() && y.as_bool())
            }
            ExprNode::Or { a, b } => {
                let (x, y) = (self.eval(a), self.eval(b));
                Scalar::from_bool(x.as_bool() || y.as_bool())
            }
            ExprNode::Not { a } => Scalar::from_bool(!self.eval(a).as_bool()),
            ExprNode::Select { cond, t, f } => {
                let (c, x, y) = (self.eval(cond), self.eval(t), self.eval(f));
                if c.as_bool() {
                    x
                } else {
                    y
                }
            }
            ExprNode::Let { name, value, body } => {
                let x = self.eval(value);
                let old = self.env.insert(name.clone(), x);
                let r = self.eval(body);
                match old {
                    Some(o) => self.env.insert(name.clone(), o),
                    None => self.env.remove(name),
                };
                r
            }
            _ => value::const_value(e).unwrap_or_else(|| panic!("the test evaluator does not handle {e}")),
        }
    }
}

const TYPES: [ScalarType; 3] = [ScalarType::I32, ScalarType::U8, ScalarType::I16];

fn var_names(t: ScalarType) -> [&'static str; 3] {
    match t {
        ScalarType::I32 => ["x", "y", "z"],
        ScalarType::U8 => ["a", "b", "c"],
        _ => ["p", "q", "r"],
    }
}

/// Random integer and bool expressions over the variables of [`var_names`].
struct Gen {
    rng: ChaCha8Rng,
    lets: Vec<(Name, ScalarType)>,
    next_let: usize,
}

impl Gen {
    fn new(seed: u64) -> Gen {
        Gen { rng: ChaCha8Rng::seed_from_u64(seed), lets: vec![], next_let: 0 }
    }

    fn constant(&mut self, t: ScalarType) -> Expr {
        let v = if t == ScalarType::I32 || self.rng.random_bool(0.6) {
            self.rng.random_range(-20..=20)
        } else {
            self.rng.random_range(t.int_min() as i64..=t.int_max() as i64)
        };
        Expr::int(v, Type::scalar(t))
    }

    fn leaf(&mut self, t: ScalarType) -> Expr {
        if self.rng.random_bool(0.35) {
            return self.constant(t);
        }
        let mut names: Vec<Name> = var_names(t).iter().map(|n| Name::from(*n)).collect();
        names.extend(self.lets.iter().filter(|(_, lt)| *lt == t).map(|(n, _)| n.clone()));
        let n = names[self.rng.random_range(0..names.len())].clone();
        Expr::var(n, Type::scalar(t))
    }

    fn divisor(&mut self, t: ScalarType, depth: u32) -> Expr {
        match self.rng.random_range(0..10) {
            0..=3 => Expr::int([2, 4, 8, 16][self.rng.random_range(0..4)], Type::scalar(t)),
            4..=5 => Expr::int(self.rng.random_range(-9..=9), Type::scalar(t)),
            6 => Expr::int(1, Type::scalar(t)),
            _ => self.int(t, depth),
        }
    }

    fn int(&mut self, t: ScalarType, depth: u32) -> Expr {
        if depth == 0 || self.rng.random_bool(0.15) {
            return self.leaf(t);
        }
        let d = depth - 1;
        match self.rng.random_range(0..13) {
            0 | 1 => Expr::binary(BinOp::Add, self.int(t, d), self.int(t, d)),
            2 | 3 => Expr::binary(BinOp::Sub, self.int(t, d), self.int(t, d)),
            4 => {
                let a = self.int(t, d);
                let b = if self.rng.random_bool(0.7) { self.constant(t) } else { self.int(t, d) };
                Expr::binary(BinOp::Mul, a, b)
            }
            5 => Expr::binary(BinOp::Div, self.int(t, d), self.divisor(t, d)),
            6 => Expr::binary(BinOp::Mod, self.int(t, d), self.divisor(t, d)),
            7 => Expr::min(self.int(t, d), self.int(t, d)),
            8 => Expr::max(self.int(t, d), self.int(t, d)),
            9 => Expr::select(self.boolean(d), self.int(t, d), self.int(t, d)),
            10 => {
                let from = TYPES[self.rng.random_range(0..TYPES.len())];
                Expr::cast(Type::scalar(t), self.int(from, d))
            }
            11 => {
                let vt = TYPES[self.rng.random_range(0..TYPES.len())];
                let value = if self.rng.random_bool(0.3) { self.leaf(vt) } else { self.int(vt, d) };
                let name = Name::from(format!("t{}", self.next_let));
                self.next_let += 1;
                self.lets.push((name.clone(), vt));
                let body = self.int(t, d);
                self.lets.pop();
                Expr::let_in(name, value, body)
            }
            _ => self.leaf(t),
        }
    }

    fn boolean(&mut self, depth: u32) -> Expr {
        let d = depth.saturating_sub(1);
        match self.rng.random_range(0..8) {
            0..=3 => {
                let t = TYPES[self.rng.random_range(0..TYPES.len())];
                let op = [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge][self.rng.random_range(0..6)];
                Expr::cmp(op, self.int(t, d), self.int(t, d))
            }
            4 => Expr::and(self.boolean(d), self.boolean(d)),
            5 => Expr::or(self.boolean(d), self.boolean(d)),
            6 => Expr::not(self.boolean(d)),
            _ => Expr::bool(self.rng.random_bool(0.5)),
        }
    }

    /// One expression of a random type (bool included).
    fn expr(&mut self) -> Expr {
        let depth = self.rng.random_range(1..=5);
        if self.rng.random_bool(0.2) {
            return self.boolean(depth);
        }
        let t = TYPES[self.rng.random_range(0..TYPES.len())];
        self.int(t, depth)
    }

    /// Values for every base variable: i32 in `i32_range`, narrow types over
    /// their whole range (edges included).
    fn bindings(&mut self, i32_range: &HashMap<&str, (i64, i64)>) -> HashMap<Name, Scalar> {
        let mut env = HashMap::new();
        for t in TYPES {
            for n in var_names(t) {
                let (lo, hi) = match t {
                    ScalarType::I32 => i32_range.get(n).copied().unwrap_or((-1000, 1000)),
                    _ => (t.int_min() as i64, t.int_max() as i64),
                };
                let v = match self.rng.random_range(0..8) {
                    0 => lo,
                    1 => hi,
                    2 => 0.clamp(lo, hi),
                    _ => self.rng.random_range(lo..=hi),
                };
                env.insert(Name::from(n), Scalar::from_i128(v as i128, t));
            }
        }
        env
    }
}

fn corpus(seed: u64, n: usize) -> Vec<Expr> {
    let mut g = Gen::new(seed);
    (0..n).map(|_| g.expr()).collect()
}

/// Checks `simplified` against `original` under random bindings; returns how
/// many evaluations were compared.
fn check_equivalent(g: &mut Gen, original: &Expr, simplified: &Expr, ranges: &HashMap<&str, (i64, i64)>) -> usize {
    let mut compared = 0;
    for _ in 0..12 {
        let env = g.bindings(ranges);
        let mut ev = Eval { env: env.clone(), overflow: false };
        let want = ev.eval(original);
        if ev.overflow {
            continue;
        }
        let got = Eval { env: env.clone(), overflow: false }.eval(simplified);
        assert!(want.bit_eq(got), "{original}\n  simplified to {simplified}\n  gives {got:?} instead of {want:?} under {env:?}");
        compared += 1;
    }
    compared
}

#[test]
fn random_expressions_keep_their_values() {
    let exprs = corpus(7, 4000);
    let mut g = Gen::new(99);
    let no_ranges = HashMap::new();
    let mut compared = 0;
    let mut changed = 0;
    for e in &exprs {
        let s = simplify(e);
        assert_eq!(s.ty(), e.ty(), "{e} changed type to {s}");
        changed += usize::from(&s != e);
        compared += check_equivalent(&mut g, e, &s, &no_ranges);
    }
    assert!(compared > exprs.len() * 8, "too many overflowing samples: {compared}");
    assert!(changed > exprs.len() / 2, "the simplifier changed only {changed} expressions");
}

#[test]
fn random_expressions_with_known_ranges_keep_their_values() {
    let exprs = corpus(11, 2000);
    let mut g = Gen::new(5);
    let ranges: HashMap<&str, (i64, i64)> = [("x", (0, 10)), ("y", (-5, 5)), ("z", (3, 3))].into_iter().collect();
    let map: HashMap<Name, (i64, i64)> = ranges.iter().map(|(n, r)| (Name::from(*n), *r)).collect();
    for e in &exprs {
        let s = simplify_with(e, &map);
        check_equivalent(&mut g, e, &s, &ranges);
    }
}

#[test]
fn simplification_is_idempotent_and_deterministic() {
    let exprs = corpus(3, 3000);
    let again = corpus(3, 3000);
    for (e, f) in exprs.iter().zip(&again) {
        let s = simplify(e);
        assert_eq!(simplify(f), s, "not deterministic on {e}");
        assert_eq!(simplify(&s), s, "not idempotent on {e}");
    }
}
