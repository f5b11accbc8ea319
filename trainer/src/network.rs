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
//!    the hand-designed terms ([`crate::terms::term_values`]) of the
//!    network's terms version (weights trained before a term existed leave
//!    it out).
//!
//! An ensemble (ours, not the paper's): a network holds one or more
//! *members*, each a whole set of the parameters above, and predicts
//! the mean of its members' costs. Every parameter has a leading member
//! dimension, so all members run as one batched pass. The loss is the sum
//! of the members' own losses, so each member trains as if alone; they
//! differ by their random starting weights, and the members of several
//! training runs joined into one network ([`CostNetwork::joined`]) by the
//! runs' seeds too. A mean of costs is still a sum over stages, as the
//! search needs.
//!
//! Inputs are batched: the pipeline features are `[stages, 280]` (shared
//! by every candidate), the schedule features `[batch, stages, 39]` and
//! the term values `[batch, stages, 32]`.

use crate::terms::{in_version, TERMS_VERSION};
pub use crate::terms::{ANALYTICAL_TERM, CONV1_CHANNELS};
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
/// The most members a network may have (a bound for weights files).
pub const MAX_MEMBERS: usize = 64;

// The pipeline features are exactly the grid head1 reads.
const _: () = assert!(PIPELINE_ROWS * PIPELINE_TYPES == PIPELINE_FEATURES);

/// Every coefficient but the analytical term's in
/// [`CostNetwork::starting_from_analytical`]: a thousandth of a nanosecond
/// per unit of its term.
const STARTING_COEFFICIENT: f32 = 1e-3;

/// Initial weights are uniform in `[-INIT_RANGE, INIT_RANGE)`.
const INIT_RANGE: f32 = 0.5;

/// The sizes that decide whether a set of weights fits the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetworkShape {
    /// Pipeline features per stage (the grid `head1` reads).
    pub pipeline_features: u32,
    /// Width of the pipeline-feature embedding.
    pub head1_channels: u32,
    /// Schedule features per stage.
    pub schedule_features: u32,
    /// Width of the schedule-feature embedding.
    pub head2_channels: u32,
    /// Coefficients per stage.
    pub conv1_channels: u32,
    /// Members of the ensemble (any count from 1 to [`MAX_MEMBERS`] fits).
    pub members: u32,
}

impl NetworkShape {
    /// The shape this crate builds, with one member.
    pub const CURRENT: NetworkShape = NetworkShape {
        pipeline_features: (PIPELINE_ROWS * PIPELINE_TYPES) as u32,
        head1_channels: HEAD1_CHANNELS as u32,
        schedule_features: SCHEDULE_FEATURES as u32,
        head2_channels: HEAD2_CHANNELS as u32,
        conv1_channels: CONV1_CHANNELS as u32,
        members: 1,
    };

    /// The sizes in a fixed order (for the weights header).
    pub fn to_array(self) -> [u32; 6] {
        [self.pipeline_features, self.head1_channels, self.schedule_features, self.head2_channels, self.conv1_channels, self.members]
    }

    /// The shape of sizes in [`NetworkShape::to_array`]'s order.
    pub fn from_array(a: [u32; 6]) -> NetworkShape {
        NetworkShape {
            pipeline_features: a[0],
            head1_channels: a[1],
            schedule_features: a[2],
            head2_channels: a[3],
            conv1_channels: a[4],
            members: a[5],
        }
    }

    /// Whether this build can run a network of this shape: its sizes are
    /// [`NetworkShape::CURRENT`]'s, whatever its (valid) member count.
    pub fn fits(self) -> bool {
        (1..=MAX_MEMBERS as u32).contains(&self.members) && NetworkShape { members: 1, ..self } == NetworkShape::CURRENT
    }
}

impl std::fmt::Display for NetworkShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pipeline {} → head1 {}, schedule {} → head2 {}, conv1 {}, {} member{}",
            self.pipeline_features,
            self.head1_channels,
            self.schedule_features,
            self.head2_channels,
            self.conv1_channels,
            self.members,
            if self.members == 1 { "" } else { "s" }
        )
    }
}

/// The name and shape of every parameter of one member, in the weights
/// file's order (a network's tensors add a leading member dimension).
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
    /// `[batch, stages]` predicted seconds per stage (the members' mean).
    pub per_stage: Tensor,
    /// `[batch]` predicted seconds (the members' mean).
    pub total: Tensor,
    /// `[members, batch]` each member's predicted seconds (what the loss
    /// trains).
    pub member_totals: Tensor,
    /// `[members, batch, stages]` each member's predicted seconds per stage.
    pub member_per_stage: Tensor,
    /// `[members, batch, stages, 32]` the coefficients before their ReLU
    /// (the loss keeps them from going negative for good).
    pub conv1_preactivation: Tensor,
}

/// Starts the coefficient channels that `channels` selects, in every
/// member of flat parameter `values` (as [`CostNetwork::values`] gives
/// them): a zero filter row, so the coefficient is the same whatever the
/// features, and the bias [`STARTING_COEFFICIENT`], alive under its ReLU.
fn start_coefficients(values: &mut [Vec<f32>; 6], members: usize, channels: impl Fn(usize) -> bool) {
    let row = HEAD1_CHANNELS + HEAD2_CHANNELS;
    for channel in (0..CONV1_CHANNELS).filter(|&c| channels(c)) {
        for member in 0..members {
            let filter = (member * CONV1_CHANNELS + channel) * row;
            values[4][filter..filter + row].fill(0.0);
            values[5][member * CONV1_CHANNELS + channel] = STARTING_COEFFICIENT;
        }
    }
}

/// The network's parameters, held in a `VarStore` for the optimizer.
pub struct CostNetwork {
    store: VarStore,
    members: usize,
    /// The version of the hand-designed terms the coefficients weight.
    terms_version: u32,
    head1_filter: Tensor,
    head1_bias: Tensor,
    head2_filter: Tensor,
    head2_bias: Tensor,
    conv1_filter: Tensor,
    conv1_bias: Tensor,
}

impl Clone for CostNetwork {
    /// A network of the same values with parameters of its own (and no
    /// optimizer state).
    fn clone(&self) -> CostNetwork {
        // The values are this network's, so they have the parameters' sizes.
        Self::from_values(self.members, &self.values())
            .expect("a network's own values fit its shape")
            .with_terms_version(self.terms_version)
    }
}

impl CostNetwork {
    /// A network of `members` members (clamped to 1 to [`MAX_MEMBERS`])
    /// with weights uniform in `[-0.5, 0.5)` drawn from `seed`.
    pub fn random(members: usize, seed: u64) -> CostNetwork {
        let members = members.clamp(1, MAX_MEMBERS);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let values = PARAMETERS.map(|(_, shape)| {
            let len = members * shape.iter().product::<i64>() as usize;
            (0..len).map(|_| rng.random_range(-INIT_RANGE..INIT_RANGE)).collect::<Vec<f32>>()
        });
        // The values have the parameters' sizes by construction.
        Self::from_values(members, &values).expect("random values of the parameters' sizes")
    }

    /// A network whose every member starts as the analytical model: the
    /// coefficient of its term ([`ANALYTICAL_TERM`]) is 1 and every other
    /// coefficient a small positive constant (`STARTING_COEFFICIENT`,
    /// alive under its ReLU), whatever the features (the coefficients'
    /// filter starts at zero; the embeddings start random from `seed`, and
    /// differ between members), so training starts from the analytical
    /// model's ranking and learns how this machine differs.
    pub fn starting_from_analytical(members: usize, seed: u64) -> CostNetwork {
        let network = Self::random(members, seed);
        let mut values = network.values();
        start_coefficients(&mut values, network.members, |_| true);
        for bias in values[5].chunks_exact_mut(CONV1_CHANNELS) {
            bias[ANALYTICAL_TERM] = 1.0;
        }
        Self::from_values(network.members, &values).expect("the values of a network")
    }

    /// A network of `members` members from each parameter's values, flat
    /// (member-major, then row-major), in [`PARAMETERS`] order, weighting
    /// this build's terms ([`TERMS_VERSION`]); `None` when the count is not
    /// 1 to [`MAX_MEMBERS`] or a length does not match.
    pub fn from_values(members: usize, values: &[Vec<f32>; 6]) -> Option<CostNetwork> {
        if !(1..=MAX_MEMBERS).contains(&members) {
            return None;
        }
        let store = VarStore::new(Device::Cpu);
        let root = store.root();
        let vars: Option<Vec<Tensor>> = PARAMETERS
            .iter()
            .zip(values)
            .map(|((name, shape), data)| {
                let extents: Vec<i64> = std::iter::once(members as i64).chain(shape.iter().copied()).collect();
                let len = extents.iter().product::<i64>() as usize;
                (data.len() == len).then(|| root.var_copy(name, &Tensor::from_slice(data).reshape(&extents)))
            })
            .collect();
        let [head1_filter, head1_bias, head2_filter, head2_bias, conv1_filter, conv1_bias]: [Tensor; 6] = vars?.try_into().ok()?;
        Some(CostNetwork {
            store,
            members,
            terms_version: TERMS_VERSION,
            head1_filter,
            head1_bias,
            head2_filter,
            head2_bias,
            conv1_filter,
            conv1_bias,
        })
    }

    /// The same network weighting the terms of `version` (1 to
    /// [`TERMS_VERSION`]): for weights trained before a term existed.
    pub fn with_terms_version(mut self, version: u32) -> CostNetwork {
        self.terms_version = version;
        self
    }

    /// The same network weighting this build's terms ([`TERMS_VERSION`]):
    /// every coefficient of a term newer than its version starts as
    /// [`CostNetwork::starting_from_analytical`] starts it (a zero filter
    /// row, the bias `STARTING_COEFFICIENT`), every other keeps its
    /// values, so that fine-tuning weights trained before a term existed
    /// learns the term from where training from scratch would.
    pub fn with_current_terms(&self) -> CostNetwork {
        let mut values = self.values();
        start_coefficients(&mut values, self.members, |c| !in_version(c, self.terms_version));
        Self::from_values(self.members, &values).expect("the values of a network")
    }

    /// The version of the hand-designed terms this network weights.
    pub fn terms_version(&self) -> u32 {
        self.terms_version
    }

    /// The same network with every prediction multiplied by `factor` (> 0):
    /// the coefficients are a ReLU of an affine map, so scaling that map's
    /// filter and bias scales them, and the costs, exactly.
    pub fn with_output_scaled(&self, factor: f32) -> CostNetwork {
        let mut values = self.values();
        for v in &mut values[4..6] {
            v.iter_mut().for_each(|x| *x *= factor);
        }
        Self::from_values(self.members, &values).expect("the values of a network").with_terms_version(self.terms_version)
    }

    /// Members of the ensemble.
    pub fn members(&self) -> usize {
        self.members
    }

    /// One ensemble of the members of `networks`, in order: what several
    /// trainings learned, averaged as one network. `None` when there are
    /// none, when they weight different terms versions, or when they have
    /// more than [`MAX_MEMBERS`] members together.
    pub fn joined<'a>(networks: impl IntoIterator<Item = &'a CostNetwork>) -> Option<CostNetwork> {
        let networks: Vec<&CostNetwork> = networks.into_iter().collect();
        let terms_version = networks.first()?.terms_version;
        if networks.iter().any(|n| n.terms_version != terms_version) {
            return None;
        }
        let parts: Vec<[Vec<f32>; 6]> = networks.iter().map(|n| n.values()).collect();
        let values: [Vec<f32>; 6] = std::array::from_fn(|i| parts.iter().flat_map(|p| p[i].iter().copied()).collect());
        Self::from_values(networks.iter().map(|n| n.members).sum(), &values).map(|n| n.with_terms_version(terms_version))
    }

    /// Member `index` as a network of its own (`None` past the last).
    pub fn member(&self, index: usize) -> Option<CostNetwork> {
        if index >= self.members {
            return None;
        }
        let values = self.values().map(|v| {
            let len = v.len() / self.members;
            v[index * len..(index + 1) * len].to_vec()
        });
        Self::from_values(1, &values).map(|m| m.with_terms_version(self.terms_version))
    }

    /// The shape of this network.
    pub fn shape(&self) -> NetworkShape {
        NetworkShape { members: self.members as u32, ..NetworkShape::CURRENT }
    }

    /// Each parameter's values, flat (member-major, then row-major), in
    /// [`PARAMETERS`] order.
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

    /// The forward pass: every member at once (batched matrix products
    /// over the leading member dimension), then the members' mean.
    pub fn forward(&self, input: &NetworkInput) -> NetworkOutput {
        let members = self.members as i64;
        let batch = input.schedule.size()[0];
        let stages = input.pipeline.size()[0];
        let (h1, h2, c1) = (HEAD1_CHANNELS as i64, HEAD2_CHANNELS as i64, CONV1_CHANNELS as i64);
        // [stages, 280] × [members, 280, h1] → [members, stages, h1]
        let head1_weights = self.head1_filter.sigmoid().reshape([members, h1, -1]);
        let head1 = input.pipeline.matmul(&head1_weights.transpose(1, 2)) + self.head1_bias.unsqueeze(1);
        // [1, batch, stages, 39] × [members, 1, 39, h2] → [members, batch, stages, h2]
        let logged = input.schedule.relu().log1p().unsqueeze(0);
        let head2 = (logged.matmul(&self.head2_filter.transpose(1, 2).unsqueeze(1)) + self.head2_bias.reshape([members, 1, 1, h2])).relu();
        let head1 = head1.unsqueeze(1).expand([members, batch, stages, h1], false);
        let embedding = Tensor::cat(&[head1, head2], 3);
        let conv1_preactivation =
            embedding.matmul(&self.conv1_filter.transpose(1, 2).unsqueeze(1)) + self.conv1_bias.reshape([members, 1, 1, c1]);
        let coefficients = conv1_preactivation.relu();
        let terms = if self.terms_version == TERMS_VERSION {
            input.terms.shallow_clone()
        } else {
            let kept: Vec<f32> = (0..CONV1_CHANNELS).map(|c| f32::from(u8::from(in_version(c, self.terms_version)))).collect();
            &input.terms * Tensor::from_slice(&kept)
        };
        let member_per_stage = (coefficients * terms).sum_dim_intlist(3, false, Kind::Float);
        let member_totals = member_per_stage.sum_dim_intlist(2, false, Kind::Float);
        let per_stage = member_per_stage.mean_dim(0, false, Kind::Float);
        let total = member_totals.mean_dim(0, false, Kind::Float);
        NetworkOutput { per_stage, total, member_totals, member_per_stage, conv1_preactivation }
    }
}
