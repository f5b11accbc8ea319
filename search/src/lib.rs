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
pub mod replay;
pub mod stage_features;
pub mod tiling;

pub use beam::{Abandon, BeamOptions, SearchStats};
pub use cost_model::{Analytical, CostModel, Machine, RandomModel};

use compiler::error::LowerError;
use compiler::schedule::legality::{check_at_estimates, Limits};
use compiler::{EstimateError, PipelineDef, Schedule, Target};
use featurizer::{Dag, DagError};
use std::time::Instant;
use thiserror::Error;

/// Why no schedule came out.
#[derive(Debug, Error)]
pub enum SearchError {
    #[error("the pipeline cannot be analysed: {0}")]
    Dag(#[from] DagError),
    #[error("no candidate schedule runs at the estimates; the best one failed with: {error}\n{schedule}")]
    NoLegalSchedule { error: EstimateError, schedule: Box<Schedule> },
    #[error("the search was abandoned by its caller")]
    Abandoned,
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

/// Shares of the budget, from the start of the call: the nested search
/// runs for the first [`NESTED_SEARCH_SHARE`], its candidates are checked
/// until [`NESTED_CHECKS_SHARE`]; when none passes, the flat search runs
/// for at most [`FLAT_SEARCH_SHARE`] of it and its candidates are checked
/// until the end of the budget.
const NESTED_SEARCH_SHARE: f64 = 0.6;
const NESTED_CHECKS_SHARE: f64 = 0.85;
const FLAT_SEARCH_SHARE: f64 = 0.1;

/// Searches a schedule for `pipeline` on `target` ranked by `model`.
///
/// The budget covers the search and the legality checks of its
/// candidates (each lowering stops at its deadline): the nested search
/// and its checks take the first [`NESTED_CHECKS_SHARE`] of it, the flat
/// fallback the rest. It is exceeded only by the time to complete one
/// candidate greedily and, when no check of the flat search finished in
/// time, by one last check of its best candidate without a deadline (an
/// answer must be legal), unless [`BeamOptions::strict_budget`] asks for
/// every Func at the root instead. It fails only if the pipeline cannot
/// be analysed, nothing runs at the estimates, or the caller raised
/// [`BeamOptions::abandon`]. When no candidate inlined or at the root runs
/// (a Func too large to allocate whole), a nested candidate turned down
/// before is the answer ([`last_resort`]), its fallback reason saying so.
pub fn autoschedule(
    pipeline: &PipelineDef,
    target: &Target,
    model: &mut dyn CostModel,
    options: &BeamOptions,
    top_k: usize,
) -> Result<AutoSchedule, SearchError> {
    let started = Instant::now();
    let end = started + options.budget;
    let dag = Dag::new(pipeline, target)?;
    model.set_pipeline(&dag);
    let failed = |rejection: Box<Rejection>| if options.abandoned() { SearchError::Abandoned } else { rejection.into_error() };
    if !options.nested {
        return checked_search(&dag, pipeline, model, options, end, true, top_k).map_err(failed);
    }
    let nested = BeamOptions { budget: options.budget.mul_f64(NESTED_SEARCH_SHARE), ..options.clone() };
    let mut rejection =
        match checked_search(&dag, pipeline, model, &nested, started + options.budget.mul_f64(NESTED_CHECKS_SHARE), false, top_k) {
            Ok(result) => return Ok(result),
            Err(rejection) => rejection,
        };
    if options.abandoned() {
        return Err(SearchError::Abandoned);
    }
    let left = end.saturating_duration_since(Instant::now());
    let flat = BeamOptions { nested: false, budget: left.min(options.budget.mul_f64(FLAT_SEARCH_SHARE)), ..options.clone() };
    let nested_reason = format!("no candidate with nested Funcs ran at the estimates as priced ({})", rejection.why());
    let (mut result, reason) = match checked_search(&dag, pipeline, model, &flat, end, true, top_k) {
        Ok(result) => (result, format!("{nested_reason}; Funcs are inlined or at the root")),
        // Nothing inlined or at the root runs (a Func too large to
        // allocate whole, say): a nested candidate that runs is still an
        // answer, though it was turned down before.
        Err(flat_rejection) => match last_resort(pipeline, &mut rejection, options) {
            Some((schedule, state, how)) => {
                let reason =
                    format!("{nested_reason}; none with Funcs inlined or at the root ran either ({}): {how}", flat_rejection.why());
                let result = AutoSchedule {
                    stats: flat_rejection.stats,
                    check_seconds: flat_rejection.check_seconds,
                    ..explained(&dag, model, schedule, &state)
                };
                (result, reason)
            }
            None => return Err(failed(flat_rejection)),
        },
    };
    result.stats.absorb(&rejection.stats);
    result.check_seconds += rejection.check_seconds;
    result.fallback = Some(match result.fallback.take() {
        Some(why) => format!("{reason}; then {why}"),
        None => reason,
    });
    Ok(result)
}

/// The nested search's answer when no candidate inlined or at the root
/// runs at the estimates, and how it was found: its first candidate that
/// runs there though mispriced, else (unless the budget is strict) its
/// first candidate whose check ran out of time, checked again without a
/// deadline (a failure is recorded in `nested`).
fn last_resort(pipeline: &PipelineDef, nested: &mut Rejection, options: &BeamOptions) -> Option<(Schedule, beam::State, &'static str)> {
    if options.abandoned() {
        return None;
    }
    if let Some(m) = &nested.mispriced {
        return Some((m.schedule.clone(), m.state.clone(), "the best nested candidate that runs at the estimates, though mispriced"));
    }
    if options.strict_budget {
        return None;
    }
    let unchecked = nested.unchecked.take()?;
    let (schedule, state) = checked_without_deadline(pipeline, unchecked, nested)?;
    Some((schedule, state, "the best nested candidate, its check finished past the budget"))
}

/// `candidate` if it runs at the estimates, checked without a deadline (an
/// answer must be legal); else `None`, its failure recorded in `rejection`.
fn checked_without_deadline(
    pipeline: &PipelineDef,
    candidate: (Schedule, beam::State),
    rejection: &mut Rejection,
) -> Option<(Schedule, beam::State)> {
    match check_at_estimates(pipeline, &candidate.0, &Limits::default()) {
        Ok(_) => Some(candidate),
        Err(e) => {
            rejection.failed.get_or_insert((e, candidate.0));
            None
        }
    }
}

/// The first nested candidate whose lowered code allocates far more than
/// priced, or does not slide what was priced as sliding. It runs at the
/// estimates: the answer of last resort when nothing else does.
struct Mispriced {
    why: String,
    schedule: Schedule,
    state: beam::State,
}

/// Why a search's candidates were all turned down, with what it cost.
struct Rejection {
    /// The first candidate that failed at the estimates, and how.
    failed: Option<(EstimateError, Schedule)>,
    /// The first candidate whose lowered code allocates far more than priced.
    mispriced: Option<Mispriced>,
    /// Candidates whose check did not finish before the deadline.
    timed_out: usize,
    /// The first of them.
    unchecked: Option<(Schedule, beam::State)>,
    stats: SearchStats,
    check_seconds: f64,
}

impl Rejection {
    fn why(&self) -> String {
        match (&self.failed, &self.mispriced) {
            (Some((error, _)), _) => format!("the best failed at the estimates: {error}"),
            (None, Some(mispriced)) => mispriced.why.clone(),
            (None, None) if self.timed_out > 0 => format!("{} checks did not finish within the budget", self.timed_out),
            (None, None) => "the search yielded none".to_string(),
        }
    }

    fn into_error(self) -> SearchError {
        let (error, rejected) = self.failed.expect("a flat search whose checks ran out of time checks one candidate without a deadline");
        SearchError::NoLegalSchedule { error, schedule: Box::new(rejected) }
    }
}

/// Runs the beam search and checks its best candidates at the estimates
/// until `check_deadline`, taking the first that runs there (and, for a
/// nested search, allocates what the model priced). With `must_answer`,
/// when every check ran out of time, the best candidate is checked once
/// more without a deadline.
fn checked_search(
    dag: &Dag,
    pipeline: &PipelineDef,
    model: &mut dyn CostModel,
    options: &BeamOptions,
    check_deadline: Instant,
    must_answer: bool,
    top_k: usize,
) -> Result<AutoSchedule, Box<Rejection>> {
    let outcome = beam::beam_search(dag, model, options);
    let checking = Instant::now();
    let limits = Limits { deadline: Some(check_deadline), ..Limits::default() };
    let mut chosen = None;
    let mut alternatives = vec![];
    let mut rejection =
        Rejection { failed: None, mispriced: None, timed_out: 0, unchecked: None, stats: SearchStats::default(), check_seconds: 0.0 };
    let mut checked = 0;
    for state in &outcome.complete {
        if options.abandoned() {
            break;
        }
        let schedule = apply::to_schedule(dag, &state.root);
        if chosen.is_none() {
            if checked == MAX_CHECKS {
                break;
            }
            checked += 1;
            match check_at_estimates(pipeline, &schedule, &limits) {
                Ok(at) => match options
                    .nested
                    .then(|| unpriced_allocation(dag, state, &at.allocations).or_else(|| unslid(&schedule, &at.lowered.sliding)))
                    .flatten()
                {
                    None => chosen = Some((schedule, state)),
                    Some(why) => {
                        tracing::debug!(%why, %schedule, "candidate rejected as mispriced");
                        rejection.mispriced.get_or_insert_with(|| Mispriced { why, schedule, state: state.clone() });
                    }
                },
                Err(EstimateError::Lower(LowerError::Deadline { .. })) => {
                    rejection.timed_out += 1;
                    rejection.unchecked.get_or_insert_with(|| (schedule, state.clone()));
                }
                Err(e) => {
                    tracing::debug!(error = %e, %schedule, "candidate rejected");
                    rejection.failed.get_or_insert((e, schedule));
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
    let mut chosen = chosen.map(|(schedule, state)| (schedule, state.clone()));
    let mut fallback = None;
    let answer_unchecked = chosen.is_none() && must_answer && !options.abandoned();
    if let Some((schedule, state)) = rejection.unchecked.take_if(|_| answer_unchecked) {
        if options.strict_budget {
            let roots = beam::all_at_root(dag, model);
            chosen = Some((apply::to_schedule(dag, &roots.root), roots));
            fallback = Some(format!(
                "no candidate's legality check finished within the budget ({} did not); every Func at the root, vectorized where a vector fits, which needs none",
                rejection.timed_out
            ));
        } else {
            chosen = checked_without_deadline(pipeline, (schedule, state), &mut rejection);
        }
    }
    let check_seconds = checking.elapsed().as_secs_f64();
    let Some((schedule, state)) = chosen else {
        return Err(Box::new(Rejection { stats: outcome.stats, check_seconds, ..rejection }));
    };
    Ok(AutoSchedule { alternatives, stats: outcome.stats, fallback, check_seconds, ..explained(dag, model, schedule, &state) })
}

/// The schedule a search answers with when it has no time at all: every
/// Func at the root, vectorized where a vector fits at the estimates, which
/// runs wherever the pipeline does and needs no legality check, priced by
/// `model`, with `why` as its fallback reason. It takes a small part of a
/// search's time (no candidate is expanded or lowered): a server computes
/// it before searching, so that it can answer at its deadline with it
/// should the search, slowed by the searches it shares the cores with,
/// overrun.
pub fn at_root(pipeline: &PipelineDef, target: &Target, model: &mut dyn CostModel, why: String) -> Result<AutoSchedule, SearchError> {
    let dag = Dag::new(pipeline, target)?;
    model.set_pipeline(&dag);
    let state = beam::all_at_root(&dag, model);
    let schedule = apply::to_schedule(&dag, &state.root);
    Ok(AutoSchedule { fallback: Some(why), ..explained(&dag, model, schedule, &state) })
}

/// Why a given schedule cannot be priced.
#[derive(Debug, Error)]
pub enum PriceError {
    #[error("the pipeline cannot be analysed: {0}")]
    Dag(#[from] DagError),
    #[error("the schedule cannot be parsed: {0}")]
    Parse(#[from] compiler::schedule::text::ParseError),
    #[error("the search's decisions, replayed along this schedule, make no loop nest that spells it, so the cost model has no features of it: {0}")]
    OutsideSearchSpace(#[from] replay::Miss),
}

/// Prices a schedule given as text (`Schedule`'s form) with `model`, as
/// the search would have: its loop nest is found again among the search's
/// candidates ([`replay::replay`], line buffers included), featurized and
/// costed, with each stage's share. What tells a user why the search
/// preferred its pick to theirs; a schedule the search cannot make is an
/// [`PriceError::OutsideSearchSpace`], which says where the replay lost it.
pub fn price(pipeline: &PipelineDef, target: &Target, model: &mut dyn CostModel, text: &str) -> Result<AutoSchedule, PriceError> {
    text.parse::<Schedule>()?;
    let dag = Dag::new(pipeline, target)?;
    model.set_pipeline(&dag);
    let root = replay::replay(&dag, text, expand::Placements::ALL)?;
    let state = beam::State::complete(&dag, model, root);
    Ok(explained(&dag, model, apply::to_schedule(&dag, &state.root), &state))
}

/// `schedule`, made from `state`, with its predicted runtime and each
/// stage's share (most expensive first); no alternatives, statistics or
/// fallback reason.
fn explained(dag: &Dag, model: &dyn CostModel, schedule: Schedule, state: &beam::State) -> AutoSchedule {
    let mut per_stage: Vec<StageCost> = state
        .cost
        .per_stage
        .iter()
        .map(|&(s, seconds)| {
            let stage = dag.stage(s);
            StageCost { func: dag.node(stage.node).name.to_string(), stage: stage.index, seconds }
        })
        .collect();
    per_stage.sort_by(|a, b| b.seconds.total_cmp(&a.seconds).then_with(|| (&a.func, a.stage).cmp(&(&b.func, b.stage))));
    AutoSchedule {
        schedule,
        predicted_seconds: state.cost.total,
        features: state.features.clone(),
        per_stage,
        alternatives: vec![],
        stats: SearchStats::default(),
        model: model.name(),
        fallback: None,
        check_seconds: 0.0,
    }
}

/// Why a checked candidate is mispriced: a Func it stores outside the loop
/// that computes it does not slide in the lowered code (the search offers
/// such placements where the compiler's conditions hold at the estimates,
/// but the compiler must also prove them), so the cost model priced it
/// computed once where the compiled code computes its whole region at
/// every iteration.
fn unslid(schedule: &Schedule, sliding: &[compiler::ir::expr::Name]) -> Option<String> {
    let (name, _) = schedule.funcs.iter().find(|(name, f)| f.stored_outside_compute() && !sliding.contains(name))?;
    Some(format!("Func {name} is stored outside the loop that computes it, but the lowered code does not slide it, where the cost model priced it computed once"))
}

/// Why a checked candidate is mispriced: some Func's largest allocation in
/// the lowered code is far larger than the allocation the cost model
/// priced for it.
fn unpriced_allocation(dag: &Dag, state: &beam::State, allocations: &[(compiler::ir::expr::Name, u64)]) -> Option<String> {
    let mispriced: Vec<String> = allocations
        .iter()
        .filter_map(|(func, bytes)| {
            let node = dag.node_by_name(func)?;
            let priced = node.stages.first().and_then(|s| state.features.get(s))?.bytes_at_realization;
            tracing::trace!(%func, bytes, priced, "allocation against its price");
            (*bytes as f64 > MAX_ALLOCATION_RATIO * priced + ALLOCATION_SLACK_BYTES)
                .then(|| format!("the lowered code allocates {bytes} bytes for Func {func}, where the cost model priced {priced:.0}"))
        })
        .collect();
    mispriced.into_iter().next()
}
