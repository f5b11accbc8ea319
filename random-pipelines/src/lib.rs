//! A deterministic random pipeline generator in the spirit of the one Adams
//! et al. (2019) trained their cost model on: a chain of randomly chosen
//! image-processing stages (stencils, reductions, resampling, pooling,
//! channel mixing, scans, histograms, gathers, matrix products and random
//! pointwise arithmetic over seven scalar types) from a 3-D f32 `input` to
//! a 3-D f32 output.
//!
//! Every input is read through a boundary condition (repeat-edge), so any
//! output region is computable from inputs of the sizes in
//! [`RandomPipeline::inputs`]. The same [`GeneratorParams`] always give the
//! same pipeline: a seeded ChaCha RNG drives every choice, and the
//! anonymous Funcs of inline reductions are renamed deterministically.
//! The vocabulary is versioned ([`VOCABULARY`]): a new stage kind never
//! changes the pipelines stored parameters of an older version name.
//!
//! Modules: `gen` (the generator's state, size bookkeeping and small random
//! choices), `expr` (random expressions), `stages` (the stage vocabulary and
//! the driver); this file holds the parameters, the result and its text.
//! [`cases`] holds the differential suites' cases: a seed's parameters and
//! output window, and its random GPU schedules.
//!
//! # Example
//!
//! A seed determines the pipeline.
//!
//! ```
//! use random_pipelines::{generate, pipeline_text, GeneratorParams};
//!
//! let params = GeneratorParams { seed: 7, max_stages: 4, ..Default::default() };
//! let a = generate(&params)?;
//! let b = generate(&params)?;
//! assert_eq!(pipeline_text(&a.pipeline), pipeline_text(&b.pipeline));
//! # Ok::<(), random_pipelines::GenError>(())
//! ```

#![warn(missing_docs)]

use compiler::exec::buffer::Buffer;
use compiler::ir::types::ScalarType;
use compiler::ir::value::Scalar;
use compiler::lang::pipeline::{values_text, Estimate, PipelineDef};
use compiler::lang::Pipeline;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::fmt::Write as _;

pub mod cases;
mod expr;
mod gen;
mod stages;

use gen::Gen;

/// The seven value types of the generator (section 5.2).
pub const TYPES: [ScalarType; 7] =
    [ScalarType::U8, ScalarType::U16, ScalarType::U32, ScalarType::I8, ScalarType::I16, ScalarType::I32, ScalarType::F32];

/// The region every typed weights input is allocated over:
/// (input channel, kernel x, kernel y, output channel). Reads are clamped
/// to it, so its size only changes the values seen.
pub const WEIGHTS_REGION: [(i64, i64); 4] = [(0, 16), (-4, 9), (-4, 9), (0, 16)];

/// The newest stage vocabulary ([`GeneratorParams::vocabulary`]).
pub const VOCABULARY: u32 = 3;

/// The vocabulary of parameters stored before it had a version.
fn original_vocabulary() -> u32 {
    1
}

/// What to generate (serializable, so a stored sample can name how to
/// rebuild its pipeline).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GeneratorParams {
    /// Seed of every random choice: equal parameters give equal pipelines.
    pub seed: u64,
    /// Stages including the first (the input read) and the last (the
    /// resample and cast to the output); at least 2.
    pub max_stages: usize,
    /// Width, height and channels of `input`, and of the output.
    pub input_size: (i64, i64, i64),
    /// The stages to draw from: 1, the original vocabulary (section 5.4);
    /// 2 adds matrix products (reductions hundreds of steps long, whose
    /// chains of dependent multiply-adds only a schedule that keeps several
    /// accumulators apart overlaps); 3 lets those products grow four times
    /// larger and as deep as their input is wide (working sets beyond L1
    /// and L2; otherwise the same draws). Parameters stored without it are
    /// version 1, so they keep rebuilding the pipelines they named.
    #[serde(default = "original_vocabulary")]
    pub vocabulary: u32,
}

impl Default for GeneratorParams {
    fn default() -> Self {
        GeneratorParams { seed: 1, max_stages: 20, input_size: (2000, 2000, 3), vocabulary: VOCABULARY }
    }
}

impl GeneratorParams {
    /// The parameters of `seed` sized for training the cost model: 3 to 14
    /// stages over an image of 96 to 640 pixels a side (so that one
    /// schedule compiles and runs in well under a second), drawn from the
    /// seed, in the newest vocabulary.
    pub fn for_training(seed: u64) -> GeneratorParams {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xA6E7_5EED);
        let side = |rng: &mut ChaCha8Rng| 32 * rng.random_range(3..=20);
        GeneratorParams {
            seed,
            max_stages: rng.random_range(3..=14),
            input_size: (side(&mut rng), side(&mut rng), 3),
            vocabulary: VOCABULARY,
        }
    }
}

/// Why no pipeline came out.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    /// The parameters are out of range (the message says which).
    #[error("invalid generator parameters: {0}")]
    Params(String),
    /// The generated pipeline fails the language's checks (a bug of the
    /// generator).
    #[error("seed {seed}: the generated pipeline does not check: {error}")]
    Lang {
        /// The seed that generated it.
        seed: u64,
        /// The language's error message.
        error: String,
    },
}

/// An input buffer the caller allocates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputSpec {
    /// The input's name: `input`, or `<type>_weights` for the weights of a
    /// type.
    pub name: String,
    /// Its element type.
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
    /// The stage's value type.
    pub ty: ScalarType,
}

/// A generated pipeline with what it takes to run it.
#[derive(Clone, Debug)]
pub struct RandomPipeline {
    /// The parameters it was generated from.
    pub params: GeneratorParams,
    /// The pipeline, with estimates on its inputs and output.
    pub pipeline: PipelineDef,
    /// The inputs the pipeline reads (only the weights it uses).
    pub inputs: Vec<InputSpec>,
    /// The output Func's name.
    pub output: String,
    /// The output's natural region: the input size, from 0.
    pub output_region: Vec<(i64, i64)>,
    /// The generated stages the pipeline keeps, in generation order.
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
        let _ = writeln!(
            s,
            "# random pipeline: seed {}, max_stages {}, input {}x{}x{}, vocabulary {}",
            p.seed, p.max_stages, p.input_size.0, p.input_size.1, p.input_size.2, p.vocabulary
        );
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
        let types: Vec<String> = f.types.iter().map(|t| t.to_string()).collect();
        let _ = writeln!(s, "{}  : {}", f.definition_text(), types.join(" x "));
        for u in &f.updates {
            let args: Vec<String> = u.args.iter().map(|a| a.to_string()).collect();
            let _ = write!(s, "{}({}) = {}", f.name, args.join(", "), values_text(&u.values));
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
    if !(1..=VOCABULARY).contains(&params.vocabulary) {
        return Err(GenError::Params(format!("vocabulary {} is unknown (1 to {VOCABULARY})", params.vocabulary)));
    }
    let mut g = Gen::new(params);
    let out = g.build();
    // Inline reductions' Funcs are named after their callers (`s4_conv_w_sum`).
    let def = Pipeline::new(&[&out]).map_err(|e| GenError::Lang { seed: params.seed, error: e.to_string() })?;
    let mut stages = g.info;
    stages.retain(|s| def.func(&s.func).is_some());
    let mut def = def;
    let mut inputs = vec![];
    let estimates = |r: &[(i64, i64)]| r.iter().map(|&(min, extent)| Some(Estimate { min, extent })).collect::<Vec<_>>();
    for i in &mut def.inputs {
        let region = if &*i.name == "input" { vec![(0, w), (0, h), (0, c)] } else { WEIGHTS_REGION.to_vec() };
        // Inputs are read through boundary conditions, so these are the
        // sizes callers give, not bounds the pipeline needs.
        i.estimates = estimates(&region);
        inputs.push(InputSpec { name: i.name.to_string(), ty: i.ty, region });
    }
    // The output is estimated at its natural region, for autoschedulers.
    let output_region = vec![(0, w), (0, h), (0, c)];
    if let Some(f) = def.funcs.iter_mut().find(|f| *f.name == *out.name()) {
        f.estimates = estimates(&output_region);
    }
    Ok(RandomPipeline { params: params.clone(), output: out.name().to_string(), pipeline: def, inputs, output_region, stages })
}
