//! The cost-model network (Adams et al. 2019, section 3.3 and figure 3):
//! a small per-stage network that predicts 32 non-negative coefficients,
//! which weight hand-designed cost terms of the raw schedule features
//! ([`crate::terms`]); the stages' costs add up to the predicted runtime.
//!
//! Per (candidate, stage):
//! 1. the pipeline features (40 rows × 7 types, raw counts) are embedded
//!    by `head1`: its filter goes through a sigmoid, so every weight is
//!    positive and bounded, and there is no nonlinearity after it;
//! 2. the schedule features, compressed by `log(1 + x)`, go through
//!    `head2`, a linear layer with a ReLU;
//! 3. the two embeddings, concatenated, go through `conv1`, a linear layer
//!    with a ReLU: the coefficients;
//! 4. the stage's cost is the coefficients' dot product with the values of
//!    the hand-designed terms ([`crate::terms::term_values`]).
//!
//! Inputs are batched: the pipeline features are `[stages, 280]` (shared
//! by every candidate), the schedule features `[batch, stages, 39]` and
//! the term values `[batch, stages, 32]`.

use featurizer::pipeline_features::PIPELINE_FEATURES;
use featurizer::schedule_features::SCHEDULE_FEATURES;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tch::nn::VarStore;
use tch::{Device, Kind, Tensor};

/// Rows of the pipeline-feature grid (24 operations, then 4 access
/// patterns × 4 access kinds).
pub const PIPELINE_ROWS: usize = 40;
/// Columns of the pipeline-feature grid (the type buckets).
pub const PIPELINE_TYPES: usize = 7;
/// Width of the pipeline-feature embedding.
pub const HEAD1_CHANNELS: usize = 8;
/// Width of the schedule-feature embedding.
pub const HEAD2_CHANNELS: usize = 24;
/// Coefficients per stage (the hand-designed terms use 27 of them).
pub const CONV1_CHANNELS: usize = 32;

// The pipeline features are exactly the grid head1 reads.
const _: () = assert!(PIPELINE_ROWS * PIPELINE_TYPES == PIPELINE_FEATURES);

/// The coefficient channel of the analytical model's price of a stage
/// (see [`crate::terms`]).
pub const ANALYTICAL_TERM: usize = 28;

/// Every coefficient but the analytical term's in
/// [`CostNetwork::starting_from_analytical`]: a thousandth of a nanosecond
/// per unit of its term.
const STARTING_COEFFICIENT: f32 = 1e-3;

/// Initial weights are uniform in `[-INIT_RANGE, INIT_RANGE)`.
const INIT_RANGE: f32 = 0.5;

/// The sizes that decide whether a set of weights fits the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetworkShape {
    pub pipeline_features: u32,
    pub head1_channels: u32,
    pub schedule_features: u32,
    pub head2_channels: u32,
    pub conv1_channels: u32,
}

impl NetworkShape {
    /// The shape this crate builds.
    pub const CURRENT: NetworkShape = NetworkShape {
        pipeline_features: (PIPELINE_ROWS * PIPELINE_TYPES) as u32,
        head1_channels: HEAD1_CHANNELS as u32,
        schedule_features: SCHEDULE_FEATURES as u32,
        head2_channels: HEAD2_CHANNELS as u32,
        conv1_channels: CONV1_CHANNELS as u32,
    };

    /// The sizes in a fixed order (for the weights header).
    pub fn to_array(self) -> [u32; 5] {
        [self.pipeline_features, self.head1_channels, self.schedule_features, self.head2_channels, self.conv1_channels]
    }

    pub fn from_array(a: [u32; 5]) -> NetworkShape {
        NetworkShape { pipeline_features: a[0], head1_channels: a[1], schedule_features: a[2], head2_channels: a[3], conv1_channels: a[4] }
    }
}

impl std::fmt::Display for NetworkShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pipeline {} → head1 {}, schedule {} → head2 {}, conv1 {}",
            self.pipeline_features, self.head1_channels, self.schedule_features, self.head2_channels, self.conv1_channels
        )
    }
}

/// The name and shape of every parameter, in the weights file's order.
pub const PARAMETERS: [(&str, &[i64]); 6] = [
    ("head1_filter", &[HEAD1_CHANNELS as i64, PIPELINE_ROWS as i64, PIPELINE_TYPES as i64]),
    ("head1_bias", &[HEAD1_CHANNELS as i64]),
    ("head2_filter", &[HEAD2_CHANNELS as i64, SCHEDULE_FEATURES as i64]),
    ("head2_bias", &[HEAD2_CHANNELS as i64]),
    ("conv1_filter", &[CONV1_CHANNELS as i64, (HEAD1_CHANNELS + HEAD2_CHANNELS) as i64]),
    ("conv1_bias", &[CONV1_CHANNELS as i64]),
];

/// A batch for the network.
pub struct NetworkInput {
    /// `[stages, 280]` raw pipeline features.
    pub pipeline: Tensor,
    /// `[batch, stages, 39]` raw schedule features (zero for a stage a
    /// candidate has not placed).
    pub schedule: Tensor,
    /// `[batch, stages, 32]` the hand-designed terms' values (zero for a
    /// stage a candidate has not placed: it costs nothing).
    pub terms: Tensor,
}

/// What a forward pass gives.
pub struct NetworkOutput {
    /// `[batch, stages]` predicted seconds per stage.
    pub per_stage: Tensor,
    /// `[batch]` predicted seconds.
    pub total: Tensor,
    /// `[batch, stages, 32]` the coefficients before their ReLU (the loss
    /// keeps them from going negative for good).
    pub conv1_preactivation: Tensor,
}

/// The network's parameters, held in a `VarStore` for the optimizer.
pub struct CostNetwork {
    store: VarStore,
    head1_filter: Tensor,
    head1_bias: Tensor,
    head2_filter: Tensor,
    head2_bias: Tensor,
    conv1_filter: Tensor,
    conv1_bias: Tensor,
}

impl CostNetwork {
    /// A network with weights uniform in `[-0.5, 0.5)` drawn from `seed`.
    pub fn random(seed: u64) -> CostNetwork {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let values = PARAMETERS.map(|(_, shape)| {
            let len = shape.iter().product::<i64>() as usize;
            (0..len).map(|_| rng.random_range(-INIT_RANGE..INIT_RANGE)).collect::<Vec<f32>>()
        });
        // The values have the parameters' sizes by construction.
        Self::from_values(&values).expect("random values of the parameters' sizes")
    }

    /// A network that starts as the analytical model: the coefficient of
    /// its term ([`ANALYTICAL_TERM`]) is 1 and every other coefficient a
    /// small positive constant ([`STARTING_COEFFICIENT`], alive under its
    /// ReLU), whatever the features (the coefficients' filter starts at
    /// zero; the embeddings start random from `seed`), so training starts
    /// from the analytical model's ranking and learns how this machine
    /// differs.
    pub fn starting_from_analytical(seed: u64) -> CostNetwork {
        let mut values = Self::random(seed).values();
        values[4].fill(0.0);
        values[5].fill(STARTING_COEFFICIENT);
        values[5][ANALYTICAL_TERM] = 1.0;
        Self::from_values(&values).expect("the values of a network")
    }

    /// A network from each parameter's values, flat (row-major), in
    /// [`PARAMETERS`] order; `None` when a length does not match.
    pub fn from_values(values: &[Vec<f32>; 6]) -> Option<CostNetwork> {
        let store = VarStore::new(Device::Cpu);
        let root = store.root();
        let vars: Option<Vec<Tensor>> = PARAMETERS
            .iter()
            .zip(values)
            .map(|((name, shape), data)| {
                let len = shape.iter().product::<i64>() as usize;
                (data.len() == len).then(|| root.var_copy(name, &Tensor::from_slice(data).reshape(*shape)))
            })
            .collect();
        let [head1_filter, head1_bias, head2_filter, head2_bias, conv1_filter, conv1_bias]: [Tensor; 6] = vars?.try_into().ok()?;
        Some(CostNetwork { store, head1_filter, head1_bias, head2_filter, head2_bias, conv1_filter, conv1_bias })
    }

    /// The same network with every prediction multiplied by `factor` (> 0):
    /// the coefficients are a ReLU of an affine map, so scaling that map's
    /// filter and bias scales them, and the costs, exactly.
    pub fn with_output_scaled(&self, factor: f32) -> CostNetwork {
        let mut values = self.values();
        for v in &mut values[4..6] {
            v.iter_mut().for_each(|x| *x *= factor);
        }
        Self::from_values(&values).expect("the values of a network")
    }

    /// Each parameter's values, flat (row-major), in [`PARAMETERS`] order.
    pub fn values(&self) -> [Vec<f32>; 6] {
        self.parameters().map(|t| {
            // The parameters are contiguous f32 tensors.
            Vec::<f32>::try_from(&t.detach().flatten(0, -1)).expect("an f32 parameter")
        })
    }

    fn parameters(&self) -> [&Tensor; 6] {
        [&self.head1_filter, &self.head1_bias, &self.head2_filter, &self.head2_bias, &self.conv1_filter, &self.conv1_bias]
    }

    /// The variables, for an optimizer.
    pub fn store(&self) -> &VarStore {
        &self.store
    }

    /// The forward pass.
    pub fn forward(&self, input: &NetworkInput) -> NetworkOutput {
        let batch = input.schedule.size()[0];
        let stages = input.pipeline.size()[0];
        let head1_weights = self.head1_filter.sigmoid().reshape([HEAD1_CHANNELS as i64, -1]);
        let head1 = input.pipeline.matmul(&head1_weights.tr()) + &self.head1_bias;
        let logged = input.schedule.relu().log1p();
        let head2 = (logged.matmul(&self.head2_filter.tr()) + &self.head2_bias).relu();
        let head1 = head1.unsqueeze(0).expand([batch, stages, HEAD1_CHANNELS as i64], false);
        let embedding = Tensor::cat(&[head1, head2], 2);
        let conv1_preactivation = embedding.matmul(&self.conv1_filter.tr()) + &self.conv1_bias;
        let coefficients = conv1_preactivation.relu();
        let per_stage = (coefficients * &input.terms).sum_dim_intlist(2, false, Kind::Float);
        let total = per_stage.sum_dim_intlist(1, false, Kind::Float);
        NetworkOutput { per_stage, total, conv1_preactivation }
    }
}
