//! The autoscheduler: given a pipeline with estimates and a target, a
//! schedule, found by coarse-to-fine beam search over loop nests ranked by
//! a cost model (after Adams et al. 2019).
//!
//! [`autoschedule`] analyses the pipeline ([`featurizer::Dag`]), searches
//! ([`beam`]) candidates made by [`expand`] and costed through the
//! [`cost_model::CostModel`] trait on their [`featurize`]d features, turns
//! the best loop nest into compiler directives ([`apply`]), checks that
//! they run at the estimates, and explains the choice: predicted runtime,
//! each stage's share, the next-best distinct alternatives.
//!
//! This crate knows neither LLVM, libtorch nor protobuf: models plug in
//! through the trait, and callers compile and run the schedule.

pub mod apply;
pub mod beam;
pub mod cost_model;
pub mod expand;
pub mod featurize;
pub mod loop_nest;
pub mod tiling;

pub use beam::{BeamOptions, SearchStats};
pub use cost_model::{Analytical, CostModel, Machine, RandomModel};

use compiler::schedule::legality::{check_at_estimates, Limits};
use compiler::{EstimateError, PipelineDef, Schedule, Target};
use featurizer::{Dag, DagError};
use thiserror::Error;

/// Why no schedule came out.
#[derive(Debug, Error)]
pub enum SearchError {
    #[error("the pipeline cannot be analysed: {0}")]
    Dag(#[from] DagError),
    #[error("no candidate schedule runs at the estimates; the best one failed with: {error}\n{schedule}")]
    NoLegalSchedule { error: EstimateError, schedule: Box<Schedule> },
}

/// Candidates checked at the estimates before falling back to the flat
/// search.
const MAX_CHECKS: usize = 3;

/// How many times the bytes the cost model priced for one allocation of a
/// Func the lowered code may allocate (plus [`ALLOCATION_SLACK_BYTES`])
/// before a nested candidate counts as mispriced: the compiler's bounds of
/// a deep nest can over-approximate what the model's exact regions assume
/// (tiles of a pyramid grown level after level), and the extra work is
/// then invisible to the ranking.
const MAX_ALLOCATION_RATIO: f64 = 4.0;
const ALLOCATION_SLACK_BYTES: f64 = 65536.0;

/// One stage's share of the predicted runtime.
#[derive(Clone, Debug, PartialEq)]
pub struct StageCost {
    pub func: String,
    pub stage: usize,
    pub seconds: f64,
}

/// A distinct alternative to the chosen schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Alternative {
    pub schedule: Schedule,
    pub predicted_seconds: f64,
}

/// The result of a search, with its explanation.
#[derive(Clone, Debug)]
pub struct AutoSchedule {
    pub schedule: Schedule,
    pub predicted_seconds: f64,
    /// The schedule features of the chosen loop nest, by stage (what a
    /// training sample of this schedule records).
    pub features: std::sync::Arc<featurize::StageFeatures>,
    /// Stages by descending predicted cost.
    pub per_stage: Vec<StageCost>,
    /// The next-best distinct schedules, cheapest first.
    pub alternatives: Vec<Alternative>,
    pub stats: SearchStats,
    /// The cost model's name.
    pub model: String,
    /// Why the schedule comes from the fallback search (every Func
    /// inlined or at the root), when it does.
    pub fallback: Option<String>,
    /// Seconds spent checking candidates at the estimates (lowering them),
    /// after the search.
    pub check_seconds: f64,
}

/// Searches a schedule for `pipeline` on `target` ranked by `model`.
/// Always answers within the budget (plus the time to complete one
/// candidate greedily and check it) unless the pipeline cannot be
/// analysed or nothing runs at the estimates.
pub fn autoschedule(
    pipeline: &PipelineDef,
    target: &Target,
    model: &mut dyn CostModel,
    options: &BeamOptions,
    top_k: usize,
) -> Result<AutoSchedule, SearchError> {
    let dag = Dag::new(pipeline, target)?;
    model.set_pipeline(&dag);
    let outcome = beam::beam_search(&dag, model, options);
    let checking = std::time::Instant::now();
    let limits = Limits::default();
    let mut chosen = None;
    let mut alternatives = vec![];
    let mut first_error: Option<(EstimateError, Schedule)> = None;
    let mut first_mispriced: Option<String> = None;
    let mut checked = 0;
    for state in &outcome.complete {
        let schedule = apply::to_schedule(&dag, &state.root);
        if chosen.is_none() {
            // Each check lowers the pipeline: after a few failures, the
            // flat search below is the better use of the time.
            if checked == MAX_CHECKS {
                break;
            }
            checked += 1;
            match check_at_estimates(pipeline, &schedule, &limits) {
                Ok(checked) => match options.nested.then(|| unpriced_allocation(&dag, state, &checked.allocations)).flatten() {
                    None => chosen = Some((schedule, state)),
                    Some(why) => {
                        first_mispriced.get_or_insert(why);
                    }
                },
                Err(e) => {
                    first_error.get_or_insert((e, schedule));
                }
            }
        } else if alternatives.len() < top_k {
            if alternatives.iter().all(|a: &Alternative| a.schedule != schedule) && chosen.as_ref().is_some_and(|(s, _)| *s != schedule) {
                alternatives.push(Alternative { schedule, predicted_seconds: state.cost.total });
            }
        } else {
            break;
        }
    }
    let Some((schedule, state)) = chosen else {
        if options.nested {
            // Nothing nested runs at the estimates as priced: search again
            // with every Func inlined or at the root (its regions are exact
            // there).
            let why = match (&first_error, &first_mispriced) {
                (Some((error, _)), _) => format!("the best failed at the estimates: {error}"),
                (None, Some(why)) => why.clone(),
                (None, None) => "the search yielded none".to_string(),
            };
            let flat = BeamOptions { nested: false, budget: options.budget / 4, ..options.clone() };
            let mut result = autoschedule(pipeline, target, model, &flat, top_k)?;
            result.fallback =
                Some(format!("no candidate with nested Funcs ran at the estimates as priced ({why}); Funcs are inlined or at the root"));
            return Ok(result);
        }
        let (error, rejected) = first_error.expect("a search yields at least one candidate");
        return Err(SearchError::NoLegalSchedule { error, schedule: Box::new(rejected) });
    };
    let mut per_stage: Vec<StageCost> = state
        .cost
        .per_stage
        .iter()
        .map(|(s, &seconds)| {
            let stage = dag.stage(*s);
            StageCost { func: dag.node(stage.node).name.to_string(), stage: stage.index, seconds }
        })
        .collect();
    per_stage.sort_by(|a, b| b.seconds.total_cmp(&a.seconds).then_with(|| (&a.func, a.stage).cmp(&(&b.func, b.stage))));
    Ok(AutoSchedule {
        schedule,
        predicted_seconds: state.cost.total,
        features: state.features.clone(),
        per_stage,
        alternatives,
        stats: outcome.stats,
        model: model.name(),
        fallback: None,
        check_seconds: checking.elapsed().as_secs_f64(),
    })
}

/// Why a checked candidate is mispriced: some Func's largest allocation in
/// the lowered code is far larger than the allocation the cost model
/// priced for it.
fn unpriced_allocation(dag: &Dag, state: &beam::State, allocations: &[(compiler::ir::expr::Name, u64)]) -> Option<String> {
    allocations.iter().find_map(|(func, bytes)| {
        let node = dag.node_by_name(func)?;
        let priced = node.stages.first().and_then(|s| state.features.get(s))?.bytes_at_realization;
        (*bytes as f64 > MAX_ALLOCATION_RATIO * priced + ALLOCATION_SLACK_BYTES)
            .then(|| format!("the lowered code allocates {bytes} bytes for Func {func}, where the cost model priced {priced:.0}"))
    })
}
