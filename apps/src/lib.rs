//! Real pipelines written in our language, in two collections ([`Set`]):
//!
//! - the twelve *apps* the seed papers benchmark (Adams et al. 2019, section
//!   6 of the design facts), each with the sizes the papers use and a
//!   hand-written expert schedule: the corpus the autoscheduler was
//!   developed on;
//! - the *suite* ([`suite`]): pipelines ported from public sources (Halide's
//!   apps, the PolyMage benchmarks, vision kernels, DNN layers) as their
//!   users write them, with no expert schedule, split once by a rule fixed before any
//!   was run (see [`suite`]) into a development half and a held-out half
//!   that is only ever run to report.
//!
//! Each has a small size for tests against the reference evaluator. The
//! twelve apps also have GPU expert schedules ([`gpu::gpu_expert`]).
//!
//! One module per app. Each builds its algorithm for a [`Size`] (the
//! algorithm does not change with the size, except where a size is part of
//! the algorithm, such as an extent of a reduction or the length of a
//! chain), its expert schedule for the host's vector widths, and the
//! regions of its inputs and output. [`build`] then records the paper
//! size's regions as the pipeline's estimates, which is what an
//! autoscheduler plans for. The `benchmark` crate times them.
//!
//! # Example
//!
//! ```
//! use apps::Size;
//!
//! let harris = apps::build("harris", Size::Small, &compiler::Target::host()).expect("a listed app");
//! compiler::lower(&harris.pipeline, harris.expert.as_ref().expect("the apps have expert schedules"))?;
//! assert_eq!(apps::names().count(), 12);
//! assert!(apps::names_in(apps::Set::HeldOut).all(|n| apps::build(n, Size::Small, &compiler::Target::host()).is_some()));
//! # Ok::<(), compiler::LowerError>(())
//! ```

#![warn(missing_docs)]

mod idioms;

pub mod bilateral_grid;
pub mod blur;
pub mod camera_pipe;
pub mod conv_layer;
pub mod gpu;
pub mod harris;
pub mod hist_eq;
pub mod iir_blur;
pub mod interpolate;
pub mod local_laplacian;
pub mod matmul;
pub mod stencil_chain;
pub mod suite;
pub mod unsharp;

use compiler::lang::pipeline::{Estimate, PipelineDef};
use compiler::schedule::Schedule;
use compiler::target::Target;

/// Which size to build an app at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Size {
    /// The size the seed papers use (their generators' estimates).
    Paper,
    /// A size the reference evaluator checks in seconds.
    Small,
}

/// A size name that is neither `paper` nor `small`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown size `{0}` (expected `paper` or `small`)")]
pub struct UnknownSize(pub String);

impl std::str::FromStr for Size {
    type Err = UnknownSize;
    fn from_str(s: &str) -> Result<Size, UnknownSize> {
        match s {
            "paper" => Ok(Size::Paper),
            "small" => Ok(Size::Small),
            other => Err(UnknownSize(other.to_string())),
        }
    }
}

/// A half-open region: `(min, extent)` per dimension, dimension 0 first.
pub type Region = Vec<(i64, i64)>;

/// An app at one size: its algorithm, its expert schedule, and the regions
/// its inputs cover and its output is computed over.
#[derive(Clone, Debug)]
pub struct App {
    /// The app's name, as [`names`] lists it.
    pub name: &'static str,
    /// The algorithm.
    pub pipeline: PipelineDef,
    /// The hand-written expert schedule (the twelve apps have one; the
    /// suite's pipelines have none).
    pub expert: Option<Schedule>,
    /// The region of each input, by name, in the pipeline's input order.
    pub inputs: Vec<(String, Region)>,
    /// The region of the (single) output computed.
    pub output: Region,
    /// Algorithm parameters that depend on the size (a pyramid's levels),
    /// by name, for the benchmark's manifest.
    pub params: Vec<(&'static str, i64)>,
}

/// A pipeline without the estimates [`App::at_estimates`] needs.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MissingEstimate {
    /// An input's dimension has no estimate.
    #[error("input `{input}` has no estimate for dimension {dim}: its region is not known")]
    Input {
        /// The input's name.
        input: String,
        /// The dimension.
        dim: usize,
    },
    /// The output's dimension has no estimate.
    #[error("output `{output}` has no estimate for dimension {dim}: the region to compute is not known")]
    Output {
        /// The output Func's name.
        output: String,
        /// The dimension.
        dim: usize,
    },
    /// The pipeline has other than one output.
    #[error("a pipeline of {0} outputs: one is timed")]
    Outputs(usize),
}

impl App {
    /// Any pipeline as an app to time (a user's own, read from JSON; a
    /// random one): its inputs' regions and the output's region are its
    /// estimates, and it has no expert schedule.
    pub fn at_estimates(pipeline: PipelineDef) -> Result<App, MissingEstimate> {
        let [output] = &pipeline.outputs[..] else {
            return Err(MissingEstimate::Outputs(pipeline.outputs.len()));
        };
        let region = |estimates: &[Option<Estimate>], missing: &dyn Fn(usize) -> MissingEstimate| {
            estimates
                .iter()
                .enumerate()
                .map(|(dim, e)| e.map(|e| (e.min, e.extent)).ok_or_else(|| missing(dim)))
                .collect::<Result<Region, _>>()
        };
        let inputs = pipeline
            .inputs
            .iter()
            .map(|i| Ok((i.name.to_string(), region(&i.estimates, &|dim| MissingEstimate::Input { input: i.name.to_string(), dim })?)))
            .collect::<Result<Vec<_>, _>>()?;
        let out = pipeline.func(output).map(|f| f.estimates.clone()).unwrap_or_default();
        let output_region = region(&out, &|dim| MissingEstimate::Output { output: output.to_string(), dim })?;
        Ok(App { name: "pipeline", pipeline, expert: None, inputs, output: output_region, params: vec![] })
    }

    /// The app's inputs, filled with
    /// [`compiler::exec::buffer::salted_pattern_input`] over their regions,
    /// each salted with its position in the pipeline's inputs (so that two
    /// inputs over one region differ): the inputs every timing and check
    /// of the app uses, and Halide's benchmark too.
    pub fn pattern_inputs(
        &self,
    ) -> Result<std::collections::BTreeMap<String, compiler::exec::buffer::Buffer>, compiler::exec::buffer::BufferError> {
        let mut inputs = std::collections::BTreeMap::new();
        for (salt, i) in self.pipeline.inputs.iter().enumerate() {
            let empty = Region::new();
            let region = self.input_region(&i.name).unwrap_or(&empty);
            inputs.insert(i.name.to_string(), compiler::exec::buffer::salted_pattern_input(&i.name, i.ty, region, salt as u64)?);
        }
        Ok(inputs)
    }

    /// The output Func's name.
    pub fn output_name(&self) -> &str {
        &self.pipeline.outputs[0]
    }

    /// The region of input `name`.
    pub fn input_region(&self, name: &str) -> Option<&Region> {
        self.inputs.iter().find(|(n, _)| n == name).map(|(_, r)| r)
    }

    /// The pipeline with its estimates set to the regions this app runs
    /// at (for a small app, its small regions rather than the paper's).
    pub fn pipeline_estimated_as_run(&self) -> PipelineDef {
        let mut p = self.pipeline.clone();
        for i in &mut p.inputs {
            if let Some(r) = self.input_region(&i.name) {
                i.estimates = estimates(r);
            }
        }
        let output = self.output_name().to_string();
        if let Some(f) = p.funcs.iter_mut().find(|f| *f.name == *output) {
            f.estimates = estimates(&self.output);
        }
        p
    }
}

fn estimates(r: &[(i64, i64)]) -> Vec<Option<Estimate>> {
    r.iter().map(|&(min, extent)| Some(Estimate { min, extent })).collect()
}

type Builder = fn(Size, &Target) -> App;

/// The collections of the catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Set {
    /// The twelve apps of the seed papers, with expert schedules.
    Apps,
    /// The suite's development half: worked from.
    Development,
    /// The suite's held-out half: run only to report.
    HeldOut,
}

impl Set {
    /// Every set, in the order the catalog lists them.
    pub const ALL: [Set; 3] = [Set::Apps, Set::Development, Set::HeldOut];

    /// The set's name on command lines and in manifests.
    pub fn name(self) -> &'static str {
        match self {
            Set::Apps => "apps",
            Set::Development => "development",
            Set::HeldOut => "held-out",
        }
    }
}

/// A set name that is none of `apps`, `development`, `held-out`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown set `{0}` (expected `apps`, `development` or `held-out`)")]
pub struct UnknownSet(pub String);

impl std::str::FromStr for Set {
    type Err = UnknownSet;
    fn from_str(s: &str) -> Result<Set, UnknownSet> {
        Set::ALL.into_iter().find(|set| set.name() == s).ok_or_else(|| UnknownSet(s.to_string()))
    }
}

/// The twelve apps, in the order the benchmark table lists them.
const APPS: &[(&str, Builder)] = &[
    ("blur", blur::app),
    ("unsharp", unsharp::app),
    ("harris", harris::app),
    ("camera_pipe", camera_pipe::app),
    ("local_laplacian", local_laplacian::app),
    ("bilateral_grid", bilateral_grid::app),
    ("interpolate", interpolate::app),
    ("stencil_chain", stencil_chain::app),
    ("conv_layer", conv_layer::app),
    ("iir_blur", iir_blur::app),
    ("hist_eq", hist_eq::app),
    ("matmul", matmul::app),
];

/// Every pipeline of the catalog with its set and builder: the apps, then
/// the suite.
fn catalog() -> impl Iterator<Item = (&'static str, Set, Builder)> {
    APPS.iter().map(|&(n, b)| (n, Set::Apps, b)).chain(suite::PIPELINES.iter().copied())
}

/// The names of the twelve apps.
pub fn names() -> impl Iterator<Item = &'static str> {
    names_in(Set::Apps)
}

/// The names of the pipelines in `set`, in catalog order.
pub fn names_in(set: Set) -> impl Iterator<Item = &'static str> {
    catalog().filter(move |&(_, s, _)| s == set).map(|(n, _, _)| n)
}

/// The set pipeline `name` belongs to; `None` for an unknown name.
pub fn set_of(name: &str) -> Option<Set> {
    catalog().find(|&(n, _, _)| n == name).map(|(_, s, _)| s)
}

/// Builds app `name` at `size` for `host`, with the paper size's regions
/// as its estimates; `None` for an unknown name.
pub fn build(name: &str, size: Size, host: &Target) -> Option<App> {
    let (_, _, builder) = catalog().find(|&(n, _, _)| n == name)?;
    let mut app = builder(size, host);
    let paper = if size == Size::Paper { None } else { Some(builder(Size::Paper, host)) };
    let paper = paper.as_ref().unwrap_or(&app);
    let (input_estimates, output_estimates): (Vec<_>, _) =
        (paper.inputs.iter().map(|(n, r)| (n.clone(), estimates(r))).collect(), estimates(&paper.output));
    for input in &mut app.pipeline.inputs {
        if let Some((_, e)) = input_estimates.iter().find(|(n, _)| **n == *input.name) {
            input.estimates = e.clone();
        }
    }
    let output = app.pipeline.outputs[0].clone();
    if let Some(f) = app.pipeline.funcs.iter_mut().find(|f| f.name == output) {
        f.estimates = output_estimates;
    }
    Some(app)
}

/// The twelve apps at `size`.
pub fn all(size: Size, host: &Target) -> Vec<App> {
    names().map(|n| build(n, size, host).expect("a listed app")).collect()
}

/// Picks `paper` or `small`.
pub(crate) fn pick<T>(size: Size, paper: T, small: T) -> T {
    match size {
        Size::Paper => paper,
        Size::Small => small,
    }
}
