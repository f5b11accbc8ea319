//! The generator's state: the RNG, the stages made so far, size
//! bookkeeping (section 5.3 of the design facts, scaled to the input) and
//! the small random choices (types, constants, casts, factors) every stage
//! draws from.

use crate::{GeneratorParams, StageInfo, TYPES};
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::ops::cast;
use compiler::lang::{Func, Var};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// A stage result: a 3-D Func and its meaningful size.
#[derive(Clone)]
pub(crate) struct Stage {
    pub(crate) func: Func,
    pub(crate) w: i64,
    pub(crate) h: i64,
    pub(crate) c: i64,
}

impl Stage {
    pub(crate) fn ty(&self) -> Type {
        self.func.ty().expect("stages are defined")
    }
    pub(crate) fn size(&self) -> i64 {
        self.w * self.h * self.c
    }
    pub(crate) fn at(&self, x: impl Into<Expr>, y: impl Into<Expr>, c: impl Into<Expr>) -> Expr {
        self.func.at([x.into(), y.into(), c.into()])
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dim {
    X,
    Y,
}

impl Dim {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Dim::X => "x",
            Dim::Y => "y",
        }
    }
}

pub(crate) struct Gen {
    pub(crate) rng: ChaCha8Rng,
    pub(crate) params: GeneratorParams,
    pub(crate) x: Var,
    pub(crate) y: Var,
    pub(crate) c: Var,
    pub(crate) stages: Vec<Stage>,
    pub(crate) info: Vec<StageInfo>,
    pub(crate) next_id: usize,
    pub(crate) weights: BTreeMap<ScalarType, Func>,
    /// Size bookkeeping, scaled to the input (section 5.3).
    pub(crate) min_size: i64,
    pub(crate) max_size: i64,
    pub(crate) max_wh: (i64, i64),
    pub(crate) max_c: i64,
    /// Largest kernel radius.
    pub(crate) max_radius: i64,
}

impl Gen {
    pub(crate) fn new(params: &GeneratorParams) -> Gen {
        let (w, h, c) = params.input_size;
        let size = w * h * c;
        // Adams et al.: 2000x2000x3 input, sizes in [100, 1e8], w, h <= 8000,
        // c <= 512. Keep the same spirit at any input size.
        let min_size = (size / 64).max(16).min(size);
        let max_size = size * 8;
        let big = w.max(h) >= 256;
        Gen {
            rng: ChaCha8Rng::seed_from_u64(params.seed),
            params: params.clone(),
            x: Var::new("x"),
            y: Var::new("y"),
            c: Var::new("c"),
            stages: vec![],
            info: vec![],
            next_id: 0,
            weights: BTreeMap::new(),
            min_size,
            max_size,
            max_wh: (w * 4, h * 4),
            max_c: if big { 64 } else { 16 },
            max_radius: if big { 5 } else { 2 },
        }
    }

    pub(crate) fn xyc(&self) -> (Expr, Expr, Expr) {
        (self.x.expr(), self.y.expr(), self.c.expr())
    }

    pub(crate) fn new_func(&mut self, kind: &str) -> Func {
        let id = self.next_id;
        self.next_id += 1;
        Func::new(&format!("s{id}_{kind}"))
    }

    pub(crate) fn define(&self, f: &Func, value: Expr) {
        f.define(&[&self.x, &self.y, &self.c], value);
    }

    pub(crate) fn push(&mut self, func: Func, kind: &'static str, w: i64, h: i64, c: i64) -> Stage {
        let s = Stage { func, w: w.max(1), h: h.max(1), c: c.max(1) };
        self.info.push(StageInfo { func: s.func.name().to_string(), kind, size: (s.w, s.h, s.c), ty: s.ty().scalar });
        self.stages.push(s.clone());
        s
    }

    // ---- randomness helpers ------------------------------------------

    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            lo
        } else {
            self.rng.random_range(lo..=hi)
        }
    }

    pub(crate) fn coin(&mut self) -> bool {
        self.rng.random_bool(0.5)
    }

    pub(crate) fn random_type(&mut self) -> ScalarType {
        TYPES[self.rng.random_range(0..TYPES.len())]
    }

    pub(crate) fn constant(&mut self, ty: Type) -> Expr {
        match ty.scalar {
            ScalarType::Bool => Expr::bool(self.coin()),
            s if s.is_float() => Expr::float(self.rng.random_range(0..256) as f64 / 256.0, ty),
            _ => Expr::int(self.range(1, 127), ty),
        }
    }

    /// The type sums (and, for ints half the time, products) accumulate in.
    pub(crate) fn upcast(&mut self, t: Type, times: u32) -> Type {
        if !t.is_int() || !self.coin() {
            return t;
        }
        let bits = (t.bits() << times).min(32);
        Type::scalar(int_type(t.is_signed_int(), bits))
    }

    pub(crate) fn downcast(&mut self, t: Type) -> Type {
        if !t.is_int() || !self.coin() {
            return t;
        }
        let bits = if self.coin() { t.bits() / 2 } else { t.bits() / 4 };
        Type::scalar(int_type(true, bits.max(8)))
    }

    /// Reduce factor per section 5.3, or None when the size may not shrink.
    pub(crate) fn reduce_factor(&mut self, size: i64) -> Option<i64> {
        if size <= self.min_size {
            return None;
        }
        let ratio = (size + self.min_size - 1) / self.min_size;
        let kmax = ceil_log2(ratio).max(1);
        Some((1i64 << self.range(1, kmax)).min(8))
    }

    pub(crate) fn increase_factor(&mut self, s: &Stage) -> Option<i64> {
        if s.size() >= self.max_size || s.w > self.max_wh.0 || s.h > self.max_wh.1 || s.c > self.max_c {
            return None;
        }
        let ratio = (self.max_size + s.size() - 1) / s.size();
        let l = ceil_log2(ratio).max(1);
        Some(1i64 << self.range((l - 3).max(1), l))
    }

    pub(crate) fn random_channels(&mut self, w: i64, h: i64) -> i64 {
        let lo = ((self.min_size + w * h - 1) / (w * h)).max(1);
        let hi = (self.max_size / (w * h)).min(self.max_c).max(lo);
        self.range(lo, hi)
    }
}

/// Funcs hold no bools: a condition becomes 0 or 1.
pub(crate) fn storable(e: Expr) -> Expr {
    if e.ty().is_bool() {
        cast(Type::u8(), e)
    } else {
        e
    }
}

pub(crate) fn int_type(signed: bool, bits: u32) -> ScalarType {
    match (signed, bits) {
        (true, 8) => ScalarType::I8,
        (true, 16) => ScalarType::I16,
        (true, _) => ScalarType::I32,
        (false, 8) => ScalarType::U8,
        (false, 16) => ScalarType::U16,
        (false, _) => ScalarType::U32,
    }
}

pub(crate) fn ceil_log2(v: i64) -> i64 {
    let mut k = 0;
    while (1i64 << k) < v {
        k += 1;
    }
    k
}
