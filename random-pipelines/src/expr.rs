//! Random expressions (section 5.2): over the seven scalar types, with
//! casts, selects, comparisons, arithmetic, min/max and float math (the
//! fast approximations of `exp` and `log`, as Adams et al.'s generator
//! uses, with arguments kept where their values are finite), using every
//! input they are given.

use crate::gen::Gen;
use compiler::ir::expr::Expr;
use compiler::ir::types::Type;
use compiler::lang::fast_math::{fast_exp, fast_log};
use compiler::lang::ops::{abs, cast, clamp, max, min, select, sqrt, CompareExt};
use rand::Rng;

impl Gen {
    /// A random expression over `inputs` that uses each of them.
    pub(crate) fn random_expr(&mut self, inputs: &[Expr], depth: i32) -> Expr {
        for _ in 0..10 {
            let mut used = vec![false; inputs.len()];
            let e = self.expr_inner(inputs, depth, &mut used);
            if used.iter().all(|u| *u) && !e.ty().is_bool() {
                return e;
            }
        }
        inputs.iter().cloned().reduce(|a, b| a + b).expect("at least one input")
    }

    pub(crate) fn leaf(&mut self, inputs: &[Expr], used: &mut [bool]) -> Expr {
        let i = self.rng.random_range(0..inputs.len());
        used[i] = true;
        inputs[i].clone()
    }

    pub(crate) fn expr_inner(&mut self, inputs: &[Expr], depth: i32, used: &mut [bool]) -> Expr {
        if depth <= 0 {
            let e = self.leaf(inputs, used);
            if self.rng.random_bool(0.15) {
                let k = self.constant(e.ty());
                return e * k;
            }
            return e;
        }
        match self.rng.random_range(0..14) {
            0 | 1 => {
                let e = self.expr_inner(inputs, depth - 1, used);
                let t = self.random_type();
                cast(Type::scalar(t), e)
            }
            2 | 3 => {
                let cond = self.random_cond(inputs, depth - 1, used);
                let t = self.expr_inner(inputs, depth - 1, used);
                let f = self.expr_inner(inputs, depth - 2, used);
                select(cond, t.clone(), cast(t.ty(), f))
            }
            4 => {
                let e = cast(Type::f32(), self.expr_inner(inputs, depth - 1, used));
                sqrt(abs(e))
            }
            5 => {
                let e = cast(Type::f32(), self.expr_inner(inputs, depth - 1, used));
                fast_exp(clamp(e, -16.0f32, 16.0f32)).expect("an f32 argument")
            }
            6 => {
                let e = cast(Type::f32(), self.expr_inner(inputs, depth - 1, used));
                fast_log(abs(e) + 1.0f32).expect("an f32 argument")
            }
            _ => {
                let a = self.expr_inner(inputs, depth - 1, used);
                let b = self.expr_inner(inputs, depth - 1, used);
                match self.rng.random_range(0..7) {
                    0 => a + b,
                    1 => a - b,
                    2 => a * b,
                    3 => min(a, b),
                    4 => max(a, b),
                    5 => a / b,
                    _ => a % b,
                }
            }
        }
    }

    pub(crate) fn random_cond(&mut self, inputs: &[Expr], depth: i32, used: &mut [bool]) -> Expr {
        if depth >= 2 && self.rng.random_bool(0.3) {
            let a = self.random_cond(inputs, depth - 1, used);
            return match self.rng.random_range(0..3) {
                0 => !a,
                1 => a & self.random_cond(inputs, depth - 1, used),
                _ => a | self.random_cond(inputs, depth - 1, used),
            };
        }
        let a = self.expr_inner(inputs, depth - 1, used);
        let b = if self.coin() { self.expr_inner(inputs, depth - 1, used) } else { self.constant(a.ty()) };
        match self.rng.random_range(0..6) {
            0 => a.lt(b),
            1 => a.le(b),
            2 => a.gt(b),
            3 => a.ge(b),
            4 => a.eq_(b),
            _ => a.ne_(b),
        }
    }
}
