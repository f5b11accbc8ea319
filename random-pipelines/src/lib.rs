//! A deterministic random pipeline generator in the spirit of the one Adams
//! et al. (2019) trained their cost model on: a chain of randomly chosen
//! image-processing stages (stencils, reductions, resampling, pooling,
//! channel mixing, scans, histograms, gathers and random pointwise
//! arithmetic over seven scalar types) from a 3-D f32 `input` to a 3-D f32
//! output.
//!
//! Every input is read through a boundary condition (repeat-edge), so any
//! output region is computable from inputs of the sizes in
//! [`RandomPipeline::inputs`]. The same [`GeneratorParams`] always give the
//! same pipeline: a seeded ChaCha RNG drives every choice, and the
//! anonymous Funcs of inline reductions are renamed deterministically.

use compiler::boundary::repeat_edge;
use compiler::buffer::Buffer;
use compiler::expr::{CallTarget, DefRef, Expr, ExprNode, Name};
use compiler::lang::{Func, ImageParam, Pipeline, RDom, Var};
use compiler::ops::{cast, clamp, exp, log, max, min, select, sqrt, abs, CompareExt};
use compiler::pipeline::PipelineDef;
use compiler::reductions::sum;
use compiler::types::{ScalarType, Type};
use compiler::value::Scalar;
use compiler::visit::{mutate_expr_children, Mutator};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The seven value types of the generator (section 5.2).
pub const TYPES: [ScalarType; 7] =
    [ScalarType::U8, ScalarType::U16, ScalarType::U32, ScalarType::I8, ScalarType::I16, ScalarType::I32, ScalarType::F32];

/// The region every typed weights input is allocated over:
/// (input channel, kernel x, kernel y, output channel). Reads are clamped
/// to it, so its size only changes the values seen.
pub const WEIGHTS_REGION: [(i64, i64); 4] = [(0, 16), (-4, 9), (-4, 9), (0, 16)];

/// What to generate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratorParams {
    pub seed: u64,
    /// Stages including the first (the input read) and the last (the
    /// resample and cast to the output); at least 2.
    pub max_stages: usize,
    /// Width, height and channels of `input`, and of the output.
    pub input_size: (i64, i64, i64),
}

impl Default for GeneratorParams {
    fn default() -> Self {
        GeneratorParams { seed: 1, max_stages: 20, input_size: (2000, 2000, 3) }
    }
}

/// Why no pipeline came out.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    #[error("invalid generator parameters: {0}")]
    Params(String),
    #[error("seed {seed}: the generated pipeline does not check: {error}")]
    Lang { seed: u64, error: String },
}

/// An input buffer the caller allocates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputSpec {
    pub name: String,
    pub ty: ScalarType,
    /// (min, extent) per dimension.
    pub region: Vec<(i64, i64)>,
}

/// One generated stage, for reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageInfo {
    /// The Func that holds the stage's result.
    pub func: String,
    /// The vocabulary entry (`convolve`, `pool2D`, ...).
    pub kind: &'static str,
    /// Width, height, channels of the stage's meaningful region.
    pub size: (i64, i64, i64),
    pub ty: ScalarType,
}

/// A generated pipeline with what it takes to run it.
#[derive(Clone, Debug)]
pub struct RandomPipeline {
    pub params: GeneratorParams,
    pub pipeline: PipelineDef,
    /// The inputs the pipeline reads (only the weights it uses).
    pub inputs: Vec<InputSpec>,
    pub output: String,
    /// The output's natural region: the input size, from 0.
    pub output_region: Vec<(i64, i64)>,
    pub stages: Vec<StageInfo>,
}

impl RandomPipeline {
    /// Deterministic input buffers: `input` in [0, 1), weights small
    /// (integers in [-3, 3] clipped to the type, floats in [-1, 1)).
    pub fn make_inputs(&self) -> BTreeMap<String, Buffer> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.params.seed ^ 0x5EED_1A7A);
        let mut out = BTreeMap::new();
        for spec in &self.inputs {
            let mut b = Buffer::new(&spec.name, spec.ty, &spec.region).expect("valid input region");
            let ty = spec.ty;
            let is_input = spec.name == "input";
            b.fill(|_| {
                if ty.is_float() {
                    if is_input {
                        Scalar::Float(rng.random_range(0..1024) as f64 / 1024.0)
                    } else {
                        Scalar::Float(rng.random_range(-512..512) as f64 / 512.0)
                    }
                } else if ty.is_signed_int() {
                    Scalar::Int(rng.random_range(-3..=3))
                } else {
                    Scalar::UInt(rng.random_range(0..=3))
                }
            });
            out.insert(spec.name.clone(), b);
        }
        out
    }

    /// The pipeline as text: inputs, then every Func producers first, with
    /// its updates and their reduction domains.
    pub fn text(&self) -> String {
        let p = &self.params;
        let mut s = String::new();
        let _ = writeln!(s, "# random pipeline: seed {}, max_stages {}, input {}x{}x{}", p.seed, p.max_stages, p.input_size.0, p.input_size.1, p.input_size.2);
        for st in &self.stages {
            let _ = writeln!(s, "# stage {:<24} {:<16} {}x{}x{} {}", st.func, st.kind, st.size.0, st.size.1, st.size.2, st.ty);
        }
        for i in &self.inputs {
            let region: Vec<String> = i.region.iter().map(|(m, e)| format!("[{m}, {})", m + e)).collect();
            let _ = writeln!(s, "input {}: {} {}", i.name, i.ty, region.join(" x "));
        }
        s.push_str(&pipeline_text(&self.pipeline));
        let region: Vec<String> = self.output_region.iter().map(|(m, e)| format!("[{m}, {})", m + e)).collect();
        let _ = writeln!(s, "output {}: {}", self.output, region.join(" x "));
        s
    }
}

/// Readable text of a pipeline's Funcs, producers first.
pub fn pipeline_text(p: &PipelineDef) -> String {
    let mut s = String::new();
    for f in &p.funcs {
        let args: Vec<&str> = f.args.iter().map(|a| &**a).collect();
        let _ = writeln!(s, "{}({}) = {}  : {}", f.name, args.join(", "), f.value, f.ty);
        for u in &f.updates {
            let args: Vec<String> = u.args.iter().map(|a| a.to_string()).collect();
            let _ = write!(s, "{}({}) = {}", f.name, args.join(", "), u.value);
            if let Some(r) = &u.rdom {
                let dims: Vec<String> = r.dims.iter().map(|d| format!("{} in [{}, {} + {})", d.name, d.min, d.min, d.extent)).collect();
                let _ = write!(s, "  over {}", dims.join(", "));
                if let Some(pred) = &r.predicate {
                    let _ = write!(s, " where {pred}");
                }
            }
            s.push('\n');
        }
    }
    s
}

/// Generates the pipeline for `params`.
pub fn generate(params: &GeneratorParams) -> Result<RandomPipeline, GenError> {
    let (w, h, c) = params.input_size;
    if params.max_stages < 2 {
        return Err(GenError::Params(format!("max_stages must be at least 2, got {}", params.max_stages)));
    }
    if w < 1 || h < 1 || c < 1 || w * h * c > 1 << 40 {
        return Err(GenError::Params(format!("input size {w}x{h}x{c} is out of range")));
    }
    let mut g = Gen::new(params);
    let out = g.build();
    let def = Pipeline::new(&[&out]).map_err(|e| GenError::Lang { seed: params.seed, error: e.to_string() })?;
    let def = rename_anonymous(def);
    let mut stages = g.info;
    stages.retain(|s| def.func(&s.func).is_some());
    let mut inputs = vec![];
    for i in &def.inputs {
        let region = if &*i.name == "input" { vec![(0, w), (0, h), (0, c)] } else { WEIGHTS_REGION.to_vec() };
        inputs.push(InputSpec { name: i.name.to_string(), ty: i.ty, region });
    }
    Ok(RandomPipeline {
        params: params.clone(),
        output: out.name().to_string(),
        pipeline: def,
        inputs,
        output_region: vec![(0, w), (0, h), (0, c)],
        stages,
    })
}

/// Renames the Funcs inline reductions made (`sum$17`) after the Func that
/// calls them (`s4_conv_w_sum`), so equal seeds print equal pipelines
/// whatever else the process generated before.
fn rename_anonymous(mut def: PipelineDef) -> PipelineDef {
    let mut map: BTreeMap<Name, Name> = BTreeMap::new();
    let mut taken: Vec<String> = def.funcs.iter().map(|f| f.name.to_string()).collect();
    // Consumers come after producers: name each anonymous Func after its first consumer.
    for f in def.funcs.iter().rev() {
        let mut calls = vec![];
        compiler::lang::for_each_expr(f, |e| collect_calls(e, &mut calls));
        for callee in calls {
            if callee.contains('$') && !map.contains_key(&callee) {
                let owner = map.get(&f.name).map(|n| n.to_string()).unwrap_or_else(|| f.name.to_string());
                let base = format!("{owner}_{}", callee.split('$').next().unwrap_or("anon"));
                let mut name = base.clone();
                let mut k = 1;
                while taken.contains(&name) {
                    name = format!("{base}{k}");
                    k += 1;
                }
                taken.push(name.clone());
                map.insert(callee, name.into());
            }
        }
    }
    struct Renamer<'a>(&'a BTreeMap<Name, Name>);
    impl Mutator for Renamer<'_> {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            if let ExprNode::Call { target: CallTarget::Func(r), args, ty } = e.node() {
                if let Some(new) = self.0.get(&r.name) {
                    let args = args.iter().map(|a| self.mutate_expr(a)).collect();
                    return Expr::call(CallTarget::Func(DefRef { name: new.clone(), link: r.link.clone() }), args, *ty);
                }
            }
            mutate_expr_children(self, e)
        }
    }
    let mut m = Renamer(&map);
    for f in &mut def.funcs {
        if let Some(new) = map.get(&f.name) {
            f.name = new.clone();
        }
        f.value = m.mutate_expr(&f.value);
        for u in &mut f.updates {
            u.args = u.args.iter().map(|a| m.mutate_expr(a)).collect();
            u.value = m.mutate_expr(&u.value);
        }
    }
    for o in &mut def.outputs {
        if let Some(new) = map.get(o) {
            *o = new.clone();
        }
    }
    def
}

fn collect_calls(e: &Expr, out: &mut Vec<Name>) {
    struct Calls<'a>(&'a mut Vec<Name>);
    impl compiler::visit::Visitor for Calls<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprNode::Call { target: CallTarget::Func(r), .. } = e.node() {
                if !self.0.contains(&r.name) {
                    self.0.push(r.name.clone());
                }
            }
            compiler::visit::walk_expr(self, e);
        }
    }
    compiler::visit::Visitor::visit_expr(&mut Calls(out), e);
}

/// A stage result: a 3-D Func and its meaningful size.
#[derive(Clone)]
struct Stage {
    func: Func,
    w: i64,
    h: i64,
    c: i64,
}

impl Stage {
    fn ty(&self) -> Type {
        self.func.ty().expect("stages are defined")
    }
    fn size(&self) -> i64 {
        self.w * self.h * self.c
    }
    fn at(&self, x: impl Into<Expr>, y: impl Into<Expr>, c: impl Into<Expr>) -> Expr {
        self.func.at([x.into(), y.into(), c.into()])
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dim {
    X,
    Y,
}

impl Dim {
    fn name(self) -> &'static str {
        match self {
            Dim::X => "x",
            Dim::Y => "y",
        }
    }
}

struct Gen {
    rng: ChaCha8Rng,
    params: GeneratorParams,
    x: Var,
    y: Var,
    c: Var,
    stages: Vec<Stage>,
    info: Vec<StageInfo>,
    next_id: usize,
    weights: BTreeMap<ScalarType, Func>,
    /// Size bookkeeping, scaled to the input (section 5.3).
    min_size: i64,
    max_size: i64,
    max_wh: (i64, i64),
    max_c: i64,
    /// Largest kernel radius.
    max_radius: i64,
}

impl Gen {
    fn new(params: &GeneratorParams) -> Gen {
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

    fn xyc(&self) -> (Expr, Expr, Expr) {
        (self.x.expr(), self.y.expr(), self.c.expr())
    }

    fn new_func(&mut self, kind: &str) -> Func {
        let id = self.next_id;
        self.next_id += 1;
        Func::new(&format!("s{id}_{kind}"))
    }

    fn define(&self, f: &Func, value: Expr) {
        f.define(&[&self.x, &self.y, &self.c], value);
    }

    fn push(&mut self, func: Func, kind: &'static str, w: i64, h: i64, c: i64) -> Stage {
        let s = Stage { func, w: w.max(1), h: h.max(1), c: c.max(1) };
        self.info.push(StageInfo { func: s.func.name().to_string(), kind, size: (s.w, s.h, s.c), ty: s.ty().scalar });
        self.stages.push(s.clone());
        s
    }

    // ---- randomness helpers ------------------------------------------

    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            lo
        } else {
            self.rng.random_range(lo..=hi)
        }
    }

    fn coin(&mut self) -> bool {
        self.rng.random_bool(0.5)
    }

    fn random_type(&mut self) -> ScalarType {
        TYPES[self.rng.random_range(0..TYPES.len())]
    }

    fn constant(&mut self, ty: Type) -> Expr {
        match ty.scalar {
            ScalarType::Bool => Expr::bool(self.coin()),
            s if s.is_float() => Expr::float(self.rng.random_range(0..256) as f64 / 256.0, ty),
            _ => Expr::int(self.range(1, 127), ty),
        }
    }

    /// The type sums (and, for ints half the time, products) accumulate in.
    fn upcast(&mut self, t: Type, times: u32) -> Type {
        if !t.is_int() || !self.coin() {
            return t;
        }
        let bits = (t.bits() << times).min(32);
        Type::scalar(int_type(t.is_signed_int(), bits))
    }

    fn downcast(&mut self, t: Type) -> Type {
        if !t.is_int() || !self.coin() {
            return t;
        }
        let bits = if self.coin() { t.bits() / 2 } else { t.bits() / 4 };
        Type::scalar(int_type(true, bits.max(8)))
    }

    /// Reduce factor per section 5.3, or None when the size may not shrink.
    fn reduce_factor(&mut self, size: i64) -> Option<i64> {
        if size <= self.min_size {
            return None;
        }
        let ratio = (size + self.min_size - 1) / self.min_size;
        let kmax = ceil_log2(ratio).max(1);
        Some((1i64 << self.range(1, kmax)).min(8))
    }

    fn increase_factor(&mut self, s: &Stage) -> Option<i64> {
        if s.size() >= self.max_size || s.w > self.max_wh.0 || s.h > self.max_wh.1 || s.c > self.max_c {
            return None;
        }
        let ratio = (self.max_size + s.size() - 1) / s.size();
        let l = ceil_log2(ratio).max(1);
        Some(1i64 << self.range((l - 3).max(1), l))
    }

    fn random_channels(&mut self, w: i64, h: i64) -> i64 {
        let lo = ((self.min_size + w * h - 1) / (w * h)).max(1);
        let hi = (self.max_size / (w * h)).min(self.max_c).max(lo);
        self.range(lo, hi)
    }

    // ---- random expressions (section 5.2) -----------------------------

    /// A random expression over `inputs` that uses each of them.
    fn random_expr(&mut self, inputs: &[Expr], depth: i32) -> Expr {
        for _ in 0..10 {
            let mut used = vec![false; inputs.len()];
            let e = self.expr_inner(inputs, depth, &mut used);
            if used.iter().all(|u| *u) && !e.ty().is_bool() {
                return e;
            }
        }
        inputs.iter().cloned().reduce(|a, b| a + b).expect("at least one input")
    }

    fn leaf(&mut self, inputs: &[Expr], used: &mut [bool]) -> Expr {
        let i = self.rng.random_range(0..inputs.len());
        used[i] = true;
        inputs[i].clone()
    }

    fn expr_inner(&mut self, inputs: &[Expr], depth: i32, used: &mut [bool]) -> Expr {
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
                exp(clamp(e, -16.0f32, 16.0f32))
            }
            6 => {
                let e = cast(Type::f32(), self.expr_inner(inputs, depth - 1, used));
                log(abs(e) + 1.0f32)
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

    fn random_cond(&mut self, inputs: &[Expr], depth: i32, used: &mut [bool]) -> Expr {
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

    // ---- the driver ---------------------------------------------------

    fn build(&mut self) -> Func {
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

    fn random_stage(&mut self) {
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

    fn shifted(&self, f: &Stage, dim: Dim, d: Expr) -> Expr {
        let (x, y, c) = self.xyc();
        match dim {
            Dim::X => f.at(x + d, y, c),
            Dim::Y => f.at(x, y + d, c),
        }
    }

    fn random_dim(&mut self) -> Dim {
        if self.coin() {
            Dim::X
        } else {
            Dim::Y
        }
    }

    /// An unrolled 1-D stencil: a random expression over the taps.
    fn convolve(&mut self, f: &Stage) -> Option<Stage> {
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
    fn convolve_r(&mut self, f: &Stage, with_sum: bool) -> Option<Stage> {
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

    fn weights(&mut self, ty: ScalarType) -> Func {
        if let Some(w) = self.weights.get(&ty) {
            return w.clone();
        }
        let p = ImageParam::new(&format!("{}_weights", ty.name()), ty, 4);
        let f = repeat_edge(&p);
        self.weights.insert(ty, f.clone());
        f
    }

    /// A 2-D convolution over every input channel with typed weights.
    fn convolve2d(&mut self, f: &Stage) -> Option<Stage> {
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
    fn pool2d(&mut self, f: &Stage) -> Option<Stage> {
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
                let r = RDom::new(&format!("{}_r", func.name()), &[(Expr::i32(0), Expr::i32(kernel)), (Expr::i32(0), Expr::i32(kernel))]);
                let v = cast(t, f.at(&x * stride as i32 + r.x().expr(), &y * stride as i32 + r.y().expr(), c.clone()));
                self.define(&func, Expr::int(0, t));
                func.update([x.clone(), y.clone(), c.clone()], func.at([x, y, c]) + v);
            }
            _ => {
                func = self.new_func("pool_w");
                let r = RDom::new(&format!("{}_r", func.name()), &[(Expr::i32(0), Expr::i32(kernel)), (Expr::i32(0), Expr::i32(kernel))]);
                let v = cast(Type::f32(), f.at(&x * stride as i32 + r.x().expr(), &y * stride as i32 + r.y().expr(), c.clone()));
                self.define(&func, sum(v) / (area as f32));
            }
        }
        Some(self.push(func, "pool2D", w, h, f.c))
    }

    /// ReLU with an optional downcast.
    fn activation(&mut self, f: &Stage) -> Option<Stage> {
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
    fn padding(&mut self, f: &Stage) -> Option<Stage> {
        let (x, y, c) = self.xyc();
        let inside = x.ge(0) & x.lt(f.w as i32) & y.ge(0) & y.lt(f.h as i32) & c.ge(0) & c.lt(f.c as i32);
        let v = f.at(clamp(x, 0, f.w as i32 - 1), clamp(y, 0, f.h as i32 - 1), clamp(c, 0, f.c as i32 - 1));
        let zero = Expr::int(0, f.ty());
        let func = self.new_func("pad");
        self.define(&func, select(inside, v, zero));
        Some(self.push(func, "padding", f.w, f.h, f.c))
    }

    /// Nearest or linear upsampling along x or y.
    fn upsample(&mut self, f: &Stage) -> Option<Stage> {
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
    fn downsample(&mut self, f: &Stage) -> Option<Stage> {
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
    fn all_to_all(&mut self, f: &Stage, out_c: Option<i64>, how: u32) -> Option<Stage> {
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

    /// A forward then a backward cumulative sum along x, y or c.
    fn scan(&mut self, f: &Stage) -> Option<Stage> {
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
    fn unary_op(&mut self, f: &Stage) -> Option<Stage> {
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
    fn tiled_histogram(&mut self, f: &Stage) -> Option<Stage> {
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
    fn slice(&mut self, f: &Stage, g: &Stage) -> Option<Stage> {
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
    fn binary_op(&mut self, f: &Stage, g: &Stage) -> Option<Stage> {
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
    fn resample_to(&mut self, f: &Stage, w: i64, h: i64, c: i64) -> Stage {
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

/// Funcs hold no bools: a condition becomes 0 or 1.
fn storable(e: Expr) -> Expr {
    if e.ty().is_bool() {
        cast(Type::u8(), e)
    } else {
        e
    }
}

fn int_type(signed: bool, bits: u32) -> ScalarType {
    match (signed, bits) {
        (true, 8) => ScalarType::I8,
        (true, 16) => ScalarType::I16,
        (true, _) => ScalarType::I32,
        (false, 8) => ScalarType::U8,
        (false, 16) => ScalarType::U16,
        (false, _) => ScalarType::U32,
    }
}

fn ceil_log2(v: i64) -> i64 {
    let mut k = 0;
    while (1i64 << k) < v {
        k += 1;
    }
    k
}
