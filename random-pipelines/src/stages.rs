//! The stage vocabulary (section 5.4): each stage reads earlier stages
//! and appends a new Func; the driver chains random stages from the input
//! to the output.

use crate::gen::{storable, Dim, Gen, Stage};
use crate::StageInfo;
use compiler::ir::expr::Expr;
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::boundary::repeat_edge;
use compiler::lang::ops::{abs, cast, clamp, exp, log, max, select, sqrt, CompareExt};
use compiler::lang::reductions::sum;
use compiler::lang::{Func, ImageParam, RDom};
use rand::Rng;

impl Gen {
    pub(crate) fn build(&mut self) -> Func {
        let (w, h, c) = self.params.input_size;
        let input = ImageParam::new("input", ScalarType::F32, 3);
        let clamped = repeat_edge(&input);
        let first = self.new_func("input");
        let (x, y, cc) = self.xyc();
        self.define(&first, clamped.at([x, y, cc]));
        self.push(first, "input", w, h, c);
        for _ in 0..self.params.max_stages.saturating_sub(2) {
            self.random_stage();
        }
        let last = self.stages.last().expect("the input stage").clone();
        let last = self.resample_to(&last, w, h, c);
        let out = Func::new("output");
        let (x, y, cc) = self.xyc();
        self.define(&out, cast(Type::f32(), last.at(x, y, cc)));
        self.info.push(StageInfo { func: "output".into(), kind: "output", size: (w, h, c), ty: ScalarType::F32 });
        out
    }

    pub(crate) fn random_stage(&mut self) {
        let n = self.stages.len();
        for _attempt in 0..20 {
            // f is usually recent; g any stage no later than f.
            let i1 = if self.rng.random_bool(0.7) { n - 1 } else { self.rng.random_range(0..n) };
            let i2 = self.rng.random_range(0..=i1);
            let (f, g) = (self.stages[i1].clone(), self.stages[i2].clone());
            let kind = self.rng.random_range(0..18);
            let made = match kind {
                0 => self.convolve(&f),
                1 => self.convolve_r(&f, false),
                2 => self.convolve_r(&f, true),
                3 => self.convolve2d(&f),
                4 => self.pool2d(&f),
                5 => self.activation(&f),
                6 => self.padding(&f),
                7 => self.upsample(&f),
                8 => self.downsample(&f),
                9 => self.all_to_all(&f, None, 0),
                10 => self.all_to_all(&f, None, 1),
                11 => self.all_to_all(&f, None, 2),
                12 => self.scan(&f),
                13 => self.unary_op(&f),
                14 => self.tiled_histogram(&f),
                15 => self.slice(&f, &g),
                16 | 17 if self.params.vocabulary >= 2 => self.matrix_product(&f, &g, kind == 17),
                _ => None,
            };
            if made.is_some() {
                return;
            }
            if i1 != i2 {
                self.binary_op(&f, &g);
                return;
            }
        }
        let f = self.stages[n - 1].clone();
        self.activation(&f);
    }

    // ---- the vocabulary (section 5.4) ----------------------------------

    pub(crate) fn shifted(&self, f: &Stage, dim: Dim, d: Expr) -> Expr {
        let (x, y, c) = self.xyc();
        match dim {
            Dim::X => f.at(x + d, y, c),
            Dim::Y => f.at(x, y + d, c),
        }
    }

    pub(crate) fn random_dim(&mut self) -> Dim {
        if self.coin() {
            Dim::X
        } else {
            Dim::Y
        }
    }

    /// An unrolled 1-D stencil: a random expression over the taps.
    pub(crate) fn convolve(&mut self, f: &Stage) -> Option<Stage> {
        let dim = self.random_dim();
        let lo = self.range(-3, 0);
        let hi = self.range(0, 3);
        let taps: Vec<Expr> = (lo..=hi).map(|d| self.shifted(f, dim, Expr::i32(d))).collect();
        let depth = ((taps.len() as f64).ln().floor() as i32 + self.range(0, 1) as i32).max(1);
        let e = self.random_expr(&taps, depth);
        let e = storable(e);
        let func = self.new_func(&format!("conv_{}", dim.name()));
        self.define(&func, e);
        Some(self.push(func, "convolve", f.w, f.h, f.c))
    }

    /// A 1-D stencil as a reduction: an RDom update or an inline `sum`.
    pub(crate) fn convolve_r(&mut self, f: &Stage, with_sum: bool) -> Option<Stage> {
        let dim = self.random_dim();
        let lo = self.range(-self.max_radius * 2, 0);
        let hi = self.range(0, self.max_radius * 2);
        let t = self.upcast(f.ty(), 2);
        let k = self.constant(t);
        let func = self.new_func(&format!("conv_{}_{}", if with_sum { "w" } else { "r" }, dim.name()));
        let r = RDom::new(&format!("{}_r", func.name()), &[(Expr::i32(lo), Expr::i32(hi - lo + 1))]);
        let tap = cast(t, self.shifted(f, dim, r.x().expr()));
        let (x, y, c) = self.xyc();
        if with_sum {
            self.define(&func, sum(k * tap));
        } else {
            self.define(&func, Expr::int(0, t));
            func.update([x.clone(), y.clone(), c.clone()], func.at([x, y, c]) + k * tap);
        }
        Some(self.push(func, if with_sum { "convolve_w" } else { "convolve_r" }, f.w, f.h, f.c))
    }

    pub(crate) fn weights(&mut self, ty: ScalarType) -> Func {
        if let Some(w) = self.weights.get(&ty) {
            return w.clone();
        }
        let p = ImageParam::new(&format!("{}_weights", ty.name()), ty, 4);
        let f = repeat_edge(&p);
        self.weights.insert(ty, f.clone());
        f
    }

    /// A 2-D convolution over every input channel with typed weights.
    pub(crate) fn convolve2d(&mut self, f: &Stage) -> Option<Stage> {
        let radius = self.range(1, self.max_radius);
        let kernel = 2 * radius + 1;
        let mut stride = self.reduce_factor(f.size()).unwrap_or(1);
        if stride > kernel || f.w / stride < 1 || f.h / stride < 1 {
            stride = 1;
        }
        let (w, h) = ((f.w / stride).max(1), (f.h / stride).max(1));
        let co = self.random_channels(w, h);
        let (x, y, c) = self.xyc();
        let variant = if f.c < 4 && kernel <= 3 { self.range(0, 2) } else { self.range(1, 2) };
        if variant == 0 {
            // Unrolled: a random expression over taps times channels.
            let mut taps = vec![];
            for ci in 0..f.c {
                for dy in -radius..=radius {
                    for dx in -radius..=radius {
                        taps.push(f.at(&x * stride as i32 + dx as i32, &y * stride as i32 + dy as i32, Expr::i32(ci)));
                    }
                }
            }
            let depth = ((taps.len() as f64).ln().floor() as i32).clamp(1, 4);
            let e = storable(self.random_expr(&taps, depth));
            // Output channels still differ: mix in c.
            let e = e.clone() + cast(e.ty(), c.clone());
            let func = self.new_func("conv2d_u");
            self.define(&func, e);
            return Some(self.push(func, "convolve2D", w, h, co));
        }
        let ty = f.ty().scalar;
        let weights = self.weights(ty);
        let t = self.upcast(f.ty(), 2);
        let func = self.new_func(if variant == 1 { "conv2d_r" } else { "conv2d_w" });
        let r = RDom::new(
            &format!("{}_r", func.name()),
            &[(Expr::i32(-radius), Expr::i32(kernel)), (Expr::i32(-radius), Expr::i32(kernel)), (Expr::i32(0), Expr::i32(f.c))],
        );
        let (kx, ky, ci) = (r.x().expr(), r.y().expr(), r.z().expr());
        let term = cast(t, f.at(&x * stride as i32 + kx.clone(), &y * stride as i32 + ky.clone(), ci.clone()))
            * cast(t, weights.at([ci, kx, ky, c.clone()]));
        if variant == 1 {
            self.define(&func, Expr::int(0, t));
            func.update([x.clone(), y.clone(), c.clone()], func.at([x, y, c]) + term);
        } else {
            self.define(&func, sum(term));
        }
        Some(self.push(func, "convolve2D", w, h, co))
    }

    /// 2-D pooling with a stride of the reduce factor.
    pub(crate) fn pool2d(&mut self, f: &Stage) -> Option<Stage> {
        let min_wh = (self.params.input_size.0.min(self.params.input_size.1) / 4).max(4);
        if f.w < min_wh || f.h < min_wh {
            return None;
        }
        let stride = self.reduce_factor(f.size())?;
        let radius = self.range(0, self.max_radius);
        let kernel = (2 * radius + 1).max(stride);
        let (w, h) = ((f.w / stride).max(1), (f.h / stride).max(1));
        let (x, y, c) = self.xyc();
        let area = (kernel * kernel) as i32;
        let variant = if kernel < 4 { self.range(0, 2) } else { self.range(1, 2) };
        let t = self.upcast(f.ty(), 2);
        let func;
        match variant {
            0 => {
                func = self.new_func("pool_u");
                let mut acc: Option<Expr> = None;
                for dy in 0..kernel {
                    for dx in 0..kernel {
                        let v = cast(t, f.at(&x * stride as i32 + dx as i32, &y * stride as i32 + dy as i32, c.clone()));
                        acc = Some(match acc {
                            None => v,
                            Some(a) => a + v,
                        });
                    }
                }
                let e = acc.expect("a tap");
                let e = if t.is_float() { e / (area as f32) } else { e / Expr::int(area as i64, t) };
                self.define(&func, e);
            }
            1 => {
                func = self.new_func("pool_r");
                let r = window_rdom(&func, kernel);
                let v = cast(t, f.at(&x * stride as i32 + r.x().expr(), &y * stride as i32 + r.y().expr(), c.clone()));
                self.define(&func, Expr::int(0, t));
                func.update([x.clone(), y.clone(), c.clone()], func.at([x, y, c]) + v);
            }
            _ => {
                func = self.new_func("pool_w");
                let r = window_rdom(&func, kernel);
                let v = cast(Type::f32(), f.at(&x * stride as i32 + r.x().expr(), &y * stride as i32 + r.y().expr(), c.clone()));
                self.define(&func, sum(v) / (area as f32));
            }
        }
        Some(self.push(func, "pool2D", w, h, f.c))
    }

    /// ReLU with an optional downcast.
    pub(crate) fn activation(&mut self, f: &Stage) -> Option<Stage> {
        let (x, y, c) = self.xyc();
        let v = f.at(x, y, c);
        let zero = Expr::int(0, f.ty());
        let relu = if f.ty().is_float() { max(v, 0.0f32) } else { max(v, zero) };
        let t = self.downcast(f.ty());
        let func = self.new_func("relu");
        self.define(&func, cast(t, relu));
        Some(self.push(func, "activation", f.w, f.h, f.c))
    }

    /// Zero outside [0, w) x [0, h) x [0, c).
    pub(crate) fn padding(&mut self, f: &Stage) -> Option<Stage> {
        let (x, y, c) = self.xyc();
        let inside = x.ge(0) & x.lt(f.w as i32) & y.ge(0) & y.lt(f.h as i32) & c.ge(0) & c.lt(f.c as i32);
        let v = f.at(clamp(x, 0, f.w as i32 - 1), clamp(y, 0, f.h as i32 - 1), clamp(c, 0, f.c as i32 - 1));
        let zero = Expr::int(0, f.ty());
        let func = self.new_func("pad");
        self.define(&func, select(inside, v, zero));
        Some(self.push(func, "padding", f.w, f.h, f.c))
    }

    /// Nearest or linear upsampling along x or y.
    pub(crate) fn upsample(&mut self, f: &Stage) -> Option<Stage> {
        let k = self.increase_factor(f)?.min(8);
        let dim = self.random_dim();
        let (x, y, c) = self.xyc();
        let v = match dim {
            Dim::X => x.clone(),
            Dim::Y => y.clone(),
        };
        let at = |p: Expr| match dim {
            Dim::X => f.at(p, y.clone(), c.clone()),
            Dim::Y => f.at(x.clone(), p, c.clone()),
        };
        let func;
        if self.coin() {
            func = self.new_func(&format!("up_{}", dim.name()));
            self.define(&func, at(v / k as i32));
        } else {
            func = self.new_func(&format!("up_lerp_{}", dim.name()));
            let t = self.upcast(f.ty(), 1);
            let frac = v.clone() % k as i32;
            let a = cast(t, at(v.clone() / k as i32));
            let b = cast(t, at(v / k as i32 + 1));
            let e = a * cast(t, Expr::i32(k) - frac.clone()) + b * cast(t, frac);
            let e = if t.is_float() { e / (k as f32) } else { e / Expr::int(k, t) };
            self.define(&func, e);
        }
        let (w, h) = match dim {
            Dim::X => (f.w * k, f.h),
            Dim::Y => (f.w, f.h * k),
        };
        Some(self.push(func, "upsample", w, h, f.c))
    }

    /// Nearest or box downsampling along x or y.
    pub(crate) fn downsample(&mut self, f: &Stage) -> Option<Stage> {
        let k = self.reduce_factor(f.size())?;
        let dim = self.random_dim();
        let len = if dim == Dim::X { f.w } else { f.h };
        if len < 2 * k {
            return None;
        }
        let (x, y, c) = self.xyc();
        let at = |p: Expr| match dim {
            Dim::X => f.at(p, y.clone(), c.clone()),
            Dim::Y => f.at(x.clone(), p, c.clone()),
        };
        let v = if dim == Dim::X { x.clone() } else { y.clone() };
        let func;
        if self.coin() {
            func = self.new_func(&format!("down_{}", dim.name()));
            self.define(&func, at(v * k as i32));
        } else {
            func = self.new_func(&format!("down_box_{}", dim.name()));
            let t = self.upcast(f.ty(), 1);
            let e = (0..k).map(|i| cast(t, at(v.clone() * k as i32 + i as i32))).reduce(|a, b| a + b).expect("k >= 2");
            self.define(&func, e);
        }
        let (w, h) = match dim {
            Dim::X => (f.w / k, f.h),
            Dim::Y => (f.w, f.h / k),
        };
        Some(self.push(func, "downsample", w, h, f.c))
    }

    /// Mixes channels: out(x, y, co) = sum_i f(x, y, i) * ((i + 1) * c + co + 1).
    /// `how`: 0 unrolled (falls back to an RDom past 16 channels), 1 RDom, 2 `sum`.
    pub(crate) fn all_to_all(&mut self, f: &Stage, out_c: Option<i64>, how: u32) -> Option<Stage> {
        let co = out_c.unwrap_or_else(|| self.random_channels(f.w, f.h));
        let how = if how == 0 && f.c > 16 { 1 } else { how };
        let t = self.upcast(f.ty(), 2);
        let (x, y, c) = self.xyc();
        let n = f.c as i32;
        let coef = |i: Expr| cast(t, (i + 1) * n + c.clone() + 1);
        let func;
        match how {
            0 => {
                func = self.new_func("mix_u");
                let e = (0..f.c)
                    .map(|i| cast(t, f.at(x.clone(), y.clone(), Expr::i32(i))) * coef(Expr::i32(i)))
                    .reduce(|a, b| a + b)
                    .expect("a channel");
                self.define(&func, e);
            }
            1 => {
                func = self.new_func("mix_r");
                let r = RDom::new(&format!("{}_r", func.name()), &[(Expr::i32(0), Expr::i32(f.c))]);
                self.define(&func, Expr::int(0, t));
                let term = cast(t, f.at(x.clone(), y.clone(), r.x().expr())) * coef(r.x().expr());
                func.update([x.clone(), y.clone(), c.clone()], func.at([x, y, c]) + term);
            }
            _ => {
                func = self.new_func("mix_w");
                let r = RDom::new(&format!("{}_r", func.name()), &[(Expr::i32(0), Expr::i32(f.c))]);
                let term = cast(t, f.at(x, y, r.x().expr())) * coef(r.x().expr());
                self.define(&func, sum(term));
            }
        }
        Some(self.push(func, "all_to_all", f.w, f.h, co))
    }

    /// A matrix product of each channel: out(x, y, c) = sum over k of
    /// f(k, y, c) * g'(x, k, c), with g' g resampled to f's width and `depth`
    /// rows. The depth is drawn up to f's width and the vocabulary's limits
    /// ([`ProductLimits`]): a reduction long enough that how many
    /// accumulators a schedule keeps in flight, and how often it walks down
    /// g', decide its speed. `with_sum`: an inline `sum`, else an RDom update.
    pub(crate) fn matrix_product(&mut self, f: &Stage, g: &Stage, with_sum: bool) -> Option<Stage> {
        let limits = ProductLimits::of(self.params.vocabulary);
        let longest = (limits.macs / f.size()).min(f.w).min(limits.depth);
        if longest < 8 {
            return None;
        }
        let depth = self.range((longest / 2).max(8), longest);
        let g = self.resample_to(g, f.w, depth, f.c);
        let t = self.upcast(f.ty(), 2);
        let func = self.new_func(if with_sum { "matmul_w" } else { "matmul_r" });
        let r = RDom::new(&format!("{}_r", func.name()), &[(Expr::i32(0), Expr::i32(depth))]);
        let (x, y, c) = self.xyc();
        let k = r.x().expr();
        let term = cast(t, f.at(k.clone(), y.clone(), c.clone())) * cast(t, g.at(x.clone(), k, c.clone()));
        if with_sum {
            self.define(&func, sum(term));
        } else {
            self.define(&func, Expr::int(0, t));
            func.update([x.clone(), y.clone(), c.clone()], func.at([x, y, c]) + term);
        }
        Some(self.push(func, "matrix_product", f.w, f.h, f.c))
    }

    /// A forward then a backward cumulative sum along x, y or c.
    pub(crate) fn scan(&mut self, f: &Stage) -> Option<Stage> {
        let axis = self.range(0, 2);
        let extent = [f.w, f.h, f.c][axis as usize];
        if extent < 2 {
            return None;
        }
        let name = ["x", "y", "c"][axis as usize];
        let func = self.new_func(&format!("scan_{name}"));
        let (x, y, c) = self.xyc();
        self.define(&func, f.at(x.clone(), y.clone(), c.clone()));
        let r = RDom::new(&format!("{}_r", func.name()), &[(Expr::i32(1), Expr::i32(extent - 1))]);
        let place = |p: Expr| -> [Expr; 3] {
            match axis {
                0 => [p, y.clone(), c.clone()],
                1 => [x.clone(), p, c.clone()],
                _ => [x.clone(), y.clone(), p],
            }
        };
        let rx = r.x().expr();
        func.update(place(rx.clone()), func.at(place(rx.clone())) + func.at(place(rx.clone() - 1)));
        let back = Expr::i32(extent - 1) - rx;
        func.update(place(back.clone() - 1), func.at(place(back.clone() - 1)) + func.at(place(back)));
        Some(self.push(func, "scan", f.w, f.h, f.c))
    }

    /// exp, log or sqrt, through f32.
    pub(crate) fn unary_op(&mut self, f: &Stage) -> Option<Stage> {
        let (x, y, c) = self.xyc();
        let v = cast(Type::f32(), f.at(x, y, c));
        let (name, e) = match self.range(0, 2) {
            0 => ("exp", exp(clamp(v, -16.0f32, 16.0f32))),
            1 => ("log", log(abs(v) + 1.0f32)),
            _ => ("sqrt", sqrt(abs(v))),
        };
        let func = self.new_func(name);
        self.define(&func, e);
        Some(self.push(func, "unary_op", f.w, f.h, f.c))
    }

    /// Per box x box tile, a histogram of f's values over the tile and all
    /// channels, with buckets as output channels.
    pub(crate) fn tiled_histogram(&mut self, f: &Stage) -> Option<Stage> {
        let min_wh = (self.params.input_size.0.min(self.params.input_size.1) / 4).max(4);
        let b = 1i64 << self.range(1, 3);
        if f.w < min_wh.max(2 * b) || f.h < min_wh.max(2 * b) {
            return None;
        }
        let buckets = (b * b * f.c).min(self.max_c.max(4));
        let func = self.new_func("hist");
        let (x, y, c) = self.xyc();
        self.define(&func, Expr::i32(0));
        let r = RDom::new(
            &format!("{}_r", func.name()),
            &[(Expr::i32(0), Expr::i32(b)), (Expr::i32(0), Expr::i32(b)), (Expr::i32(0), Expr::i32(f.c))],
        );
        let v = f.at(&x * b as i32 + r.x().expr(), &y * b as i32 + r.y().expr(), r.z().expr());
        let idx = if v.ty().is_float() { cast(Type::i32(), v * (buckets as f32)) } else { cast(Type::i32(), v) };
        let bucket = clamp(idx, 0, buckets as i32 - 1);
        func.update([x.clone(), y.clone(), bucket.clone()], func.at([x.clone(), y.clone(), bucket]) + 1);
        let _ = c;
        Some(self.push(func, "tiled_histogram", f.w / b, f.h / b, buckets))
    }

    /// Gathers g's channels at an index given by f's (clamped) value.
    pub(crate) fn slice(&mut self, f: &Stage, g: &Stage) -> Option<Stage> {
        if g.c < 2 {
            return None;
        }
        let f1 = self.resample_to(f, g.w, g.h, 1);
        let (x, y, _) = self.xyc();
        let v = f1.at(x.clone(), y.clone(), Expr::i32(0));
        let idx = if v.ty().is_float() { cast(Type::i32(), v * (g.c as f32)) } else { cast(Type::i32(), v) };
        let idx = clamp(idx, 0, g.c as i32 - 1);
        let func = self.new_func("slice");
        self.define(&func, g.at(x, y, idx));
        Some(self.push(func, "slice", g.w, g.h, 1))
    }

    /// A random pointwise expression over f and g (resampled to f's shape).
    pub(crate) fn binary_op(&mut self, f: &Stage, g: &Stage) -> Option<Stage> {
        let g = self.resample_to(g, f.w, f.h, f.c);
        let (x, y, c) = self.xyc();
        let inputs = [f.at(x.clone(), y.clone(), c.clone()), g.at(x, y, c)];
        let depth = self.range(1, 3) as i32;
        let e = storable(self.random_expr(&inputs, depth));
        let func = self.new_func("binop");
        self.define(&func, e);
        Some(self.push(func, "binary_op", f.w, f.h, f.c))
    }

    /// `f` with its channels adapted (all_to_all) and then resampled
    /// (nearest) to w x h.
    pub(crate) fn resample_to(&mut self, f: &Stage, w: i64, h: i64, c: i64) -> Stage {
        let mut s = f.clone();
        if s.c != c {
            s = self.all_to_all(&s, Some(c), 1).expect("all_to_all always applies");
        }
        if s.w != w || s.h != h {
            let (x, y, cc) = self.xyc();
            let func = self.new_func("resample");
            self.define(&func, s.at(&x * s.w as i32 / w as i32, &y * s.h as i32 / h as i32, cc));
            s = self.push(func, "resample", w, h, c);
        }
        s
    }
}

/// How large a matrix product may be: the most multiply-adds it makes
/// over its meaningful region, and its longest reduction.
struct ProductLimits {
    macs: i64,
    depth: i64,
}

impl ProductLimits {
    /// Version 2: 2^27 multiply-adds and 512 steps. At the training sizes a
    /// well scheduled product takes milliseconds and a scalar one a
    /// fraction of a second, but the reduction of a product over a whole
    /// image is then at most a hundred-odd steps, so one vector
    /// accumulator's walk down g' (a cache line a step) stays in L1.
    /// Version 3: 2^29 and as deep as f is wide (up to 640 steps), so
    /// that walk outgrows L1 and g' outgrows L2, as in products of
    /// 1024-square matrices.
    fn of(vocabulary: u32) -> ProductLimits {
        if vocabulary >= 3 {
            ProductLimits { macs: 1 << 29, depth: i64::MAX }
        } else {
            ProductLimits { macs: 1 << 27, depth: 512 }
        }
    }
}

/// A `kernel x kernel` reduction domain named after `func`.
fn window_rdom(func: &Func, kernel: i64) -> RDom {
    let side = (Expr::i32(0), Expr::i32(kernel));
    RDom::new(&format!("{}_r", func.name()), &[side.clone(), side])
}
