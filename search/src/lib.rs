//! The autoscheduler: given a pipeline with estimates and a target, a
//! schedule, found by coarse-to-fine beam search over loop nests ranked by
//! a cost model (after Adams et al. 2019).
//!
//! [`autoschedule`] analyses the pipeline ([`featurizer::Dag`]), searches
//! ([`beam`]) candidates made by [`expand`] and costed through the
//! [`cost_model::CostModel`] trait on their [`featurize`]d features, turns
//! the best loop nest into compiler directives ([`apply`]), checks that
//! they run at the estimates, and explains the choice: predicted runtime,
//! each stage's share, the next-best distinct alternatives, and why the
//! answer is that schedule ([`Reason`], as data). A search its caller
//! abandons ([`BeamOptions::abandon`]) comes to [`Searched::Abandoned`],
//! not to an error.
//!
//! This crate knows neither LLVM, libtorch nor protobuf: models plug in
//! through the trait, and callers compile and run the schedule.
//!
//! # Example
//!
//! A schedule for the blur within 200 ms, ranked by the analytical model,
//! with its explanation.
//!
//! ```
//! use search::{autoschedule, Analytical, BeamOptions, Machine};
//! use std::time::Duration;
//!
//! let target = compiler::Target::host();
//! let mut model = Analytical::new(Machine::typical(target.threads));
//! let options = BeamOptions { budget: Duration::from_millis(200), ..BeamOptions::default() };
//! let answer = autoschedule(&compiler::examples::blur(), &target, &mut model, &options, 1)?.answer().expect("not abandoned");
//! println!("{}", answer.reason); // why this schedule: here, the search's best
//! println!("{}\npredicted {:.3} ms", answer.schedule, answer.predicted_seconds * 1e3);
//! assert!(answer.predicted_seconds > 0.0);
//! # Ok::<(), search::SearchError>(())
//! ```

#![warn(missing_docs)]

pub mod apply;
pub mod beam;
pub mod cost_model;
pub mod expand;
pub mod featurize;
pub mod loop_nest;
pub mod reason;
pub mod replay;
pub mod stage_features;
pub mod tiling;

pub use beam::{Abandon, BeamOptions, SearchStats};
pub use cost_model::{Analytical, CostModel, Machine, RandomModel};
pub use reason::{LastResortPick, Mispricing, Reason, Rejection};

use compiler::error::LowerError;
use compiler::schedule::legality::{check_at_estimates, Limits};
use compiler::{EstimateError, PipelineDef, Schedule, Target};
use featurizer::{Dag, DagError};
use std::time::Instant;
use thiserror::Error;

/// Why no schedule came out.
#[derive(Debug, Error)]
pub enum SearchError {
    /// The pipeline cannot be analysed.
    #[error("the pipeline cannot be analysed: {0}")]
    Dag(#[from] DagError),
    /// No candidate checked runs at the estimates.
    #[error("no candidate schedule runs at the estimates; the best one failed with: {error}\n{schedule}")]
    NoLegalSchedule {
        /// How the best candidate checked failed.
        error: EstimateError,
        /// That candidate.
        schedule: Box<Schedule>,
    },
}

/// What a search that did not fail came to.
#[derive(Clone, Debug)]
pub enum Searched {
    /// Its answer, with why it is that schedule ([`AutoSchedule::reason`]).
    Answered(Box<AutoSchedule>),
    /// The caller raised [`BeamOptions::abandon`] before it answered: no
    /// one waits for an answer any more.
    Abandoned,
}

impl Searched {
    /// The answer; `None` if the search was abandoned.
    pub fn answer(self) -> Option<AutoSchedule> {
        match self {
            Searched::Answered(answer) => Some(*answer),
            Searched::Abandoned => None,
        }
    }
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
    /// The Func.
    pub func: String,
    /// Its stage: 0 for the pure definition, `k` for the `k`-th update.
    pub stage: usize,
    /// The stage's predicted runtime, in seconds.
    pub seconds: f64,
}

/// A distinct alternative to the chosen schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Alternative {
    /// The schedule, not checked at the estimates.
    pub schedule: Schedule,
    /// Its runtime as the cost model predicts it, in seconds.
    pub predicted_seconds: f64,
}

/// The result of a search, with its explanation.
#[derive(Clone, Debug)]
pub struct AutoSchedule {
    /// The schedule found.
    pub schedule: Schedule,
    /// Its runtime as the cost model predicts it, in seconds.
    pub predicted_seconds: f64,
    /// How far an ensemble's members disagree on that prediction
    /// ([`cost_model::Cost::disagreement`]); `None` for a model that is not one.
    pub disagreement: Option<f64>,
    /// The schedule features of the chosen loop nest, by stage (what a
    /// training sample of this schedule records).
    pub features: std::sync::Arc<featurize::StageFeatures>,
    /// Stages by descending predicted cost.
    pub per_stage: Vec<StageCost>,
    /// The next-best distinct schedules, cheapest first.
    pub alternatives: Vec<Alternative>,
    /// The search's counters (of both searches when the flat one followed the
    /// nested one).
    pub stats: SearchStats,
    /// The cost model's name.
    pub model: String,
    /// Why the answer is this schedule: the search's best, or a fallback
    /// and what forced it.
    pub reason: Reason,
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
/// and its checks take the first `NESTED_CHECKS_SHARE` (85%) of it, the flat
/// fallback the rest. It is exceeded only by the time to complete one
/// candidate greedily and, when no check of the flat search finished in
/// time, by one last check of its best candidate with one more budget's
/// time, at least [`BeamOptions::past_budget_check`] (an answer must be legal),
/// unless [`BeamOptions::strict_budget`] asks for every Func at the root at
/// once; when that check runs out of time too, every Func at the root is
/// the answer. It fails only if the pipeline cannot
/// be analysed or nothing runs at the estimates; a caller that raised
/// [`BeamOptions::abandon`] gets [`Searched::Abandoned`]. When no candidate
/// inlined or at the root runs (a Func too large to allocate whole), a
/// nested candidate turned down before is the answer (`last_resort`),
/// its reason saying so ([`Reason::LastResort`]).
pub fn autoschedule(
    pipeline: &PipelineDef,
    target: &Target,
    model: &mut dyn CostModel,
    options: &BeamOptions,
    top_k: usize,
) -> Result<Searched, SearchError> {
    let started = Instant::now();
    let end = started + options.budget;
    let dag = Dag::new(pipeline, target)?;
    model.set_pipeline(&dag);
    let answered = |result: AutoSchedule| Ok(Searched::Answered(Box::new(result)));
    let failed = |rejected: Box<Rejected>| if options.abandoned() { Ok(Searched::Abandoned) } else { Err(rejected.into_error()) };
    if !options.nested {
        return checked_search(&dag, pipeline, model, options, end, true, top_k).map_or_else(failed, answered);
    }
    let nested = BeamOptions { budget: options.budget.mul_f64(NESTED_SEARCH_SHARE), ..options.clone() };
    let mut rejected =
        match checked_search(&dag, pipeline, model, &nested, started + options.budget.mul_f64(NESTED_CHECKS_SHARE), false, top_k) {
            Ok(result) => return answered(result),
            Err(rejected) => rejected,
        };
    if options.abandoned() {
        return Ok(Searched::Abandoned);
    }
    let left = end.saturating_duration_since(Instant::now());
    // Its check past the budget gets the whole budget's time, not its share.
    let flat = BeamOptions {
        nested: false,
        budget: left.min(options.budget.mul_f64(FLAT_SEARCH_SHARE)),
        past_budget_check: options.past_budget_check.max(options.budget),
        ..options.clone()
    };
    let mut result = match checked_search(&dag, pipeline, model, &flat, end, true, top_k) {
        Ok(mut result) => {
            result.reason = match result.reason {
                Reason::RootUnchecked { timed_out, .. } => Reason::RootUnchecked { nested: Some(rejected.rejection()), timed_out },
                Reason::RootAfterFailures { flat, checked, .. } => {
                    Reason::RootAfterFailures { nested: Some(rejected.rejection()), flat, checked }
                }
                _ => Reason::FlatFallback { nested: rejected.rejection() },
            };
            result
        }
        // Nothing inlined or at the root runs (a Func too large to
        // allocate whole, say): a nested candidate that runs is still an
        // answer, though it was turned down before.
        Err(flat_rejected) => match last_resort(pipeline, &mut rejected, options) {
            Some((schedule, state, pick)) => AutoSchedule {
                reason: Reason::LastResort { nested: rejected.rejection(), flat: flat_rejected.rejection(), pick },
                stats: flat_rejected.stats,
                check_seconds: flat_rejected.check_seconds,
                ..explained(&dag, model, schedule, &state)
            },
            None => return failed(flat_rejected),
        },
    };
    result.stats.absorb(&rejected.stats);
    result.check_seconds += rejected.check_seconds;
    answered(result)
}

/// The nested search's answer when no candidate inlined or at the root
/// runs at the estimates, and how it was found: its first candidate that
/// runs there though mispriced, else (unless the budget is strict) its
/// first candidate whose check ran out of time, checked again without a
/// deadline (a failure is recorded in `nested`).
fn last_resort(pipeline: &PipelineDef, nested: &mut Rejected, options: &BeamOptions) -> Option<(Schedule, beam::State, LastResortPick)> {
    if options.abandoned() {
        return None;
    }
    if let Some(m) = &nested.mispriced {
        return Some((m.schedule.clone(), m.state.clone(), LastResortPick::Mispriced(m.why.clone())));
    }
    if options.strict_budget {
        return None;
    }
    let unchecked = nested.unchecked.take()?;
    let (schedule, state) = checked_past_budget(pipeline, unchecked, options, nested).ok()?;
    Some((schedule, state, LastResortPick::CheckedPastBudget))
}

/// `candidate` if it runs at the estimates, checked once more with one
/// more budget's time, and at least [`BeamOptions::past_budget_check`] (an
/// answer must be legal, and some candidates lower for minutes); else why not,
/// the failure recorded in `rejected` and a check out of time counted
/// there.
fn checked_past_budget(
    pipeline: &PipelineDef,
    candidate: (Schedule, beam::State),
    options: &BeamOptions,
    rejected: &mut Rejected,
) -> Result<(Schedule, beam::State), PastBudget> {
    let limits = Limits { deadline: Some(past_budget_deadline(options)), ..Limits::default() };
    match check_at_estimates(pipeline, &candidate.0, &limits) {
        Ok(_) => Ok(candidate),
        Err(EstimateError::Lower(LowerError::Deadline { .. })) => {
            rejected.timed_out += 1;
            Err(PastBudget::TimedOut)
        }
        Err(e) => {
            rejected.failed.get_or_insert((e, candidate.0));
            Err(PastBudget::Failed)
        }
    }
}

/// Every Func at the root, when the best candidates failed at the
/// estimates (inlining past the compiler's limit, say, which no Func at
/// the root does) and it is not one of them: checked with one more
/// budget's time (under a strict budget, until `check_deadline`, and
/// answered unchecked, as [`Reason::RootUnchecked`] is, when that check
/// runs out of time), with whether the check finished; `None` where it
/// fails at the estimates too.
fn root_after_failures(
    dag: &Dag,
    pipeline: &PipelineDef,
    model: &dyn CostModel,
    options: &BeamOptions,
    check_deadline: Instant,
    rejected: &Rejected,
) -> Option<((Schedule, beam::State), bool)> {
    let (schedule, state) = every_func_at_root(dag, model);
    if rejected.failed.as_ref().is_some_and(|(_, failed)| *failed == schedule) {
        return None;
    }
    let deadline = if options.strict_budget { check_deadline } else { past_budget_deadline(options) };
    match check_at_estimates(pipeline, &schedule, &Limits { deadline: Some(deadline), ..Limits::default() }) {
        Ok(_) => Some(((schedule, state), true)),
        Err(EstimateError::Lower(LowerError::Deadline { .. })) if options.strict_budget => Some(((schedule, state), false)),
        Err(e) => {
            tracing::debug!(error = %e, %schedule, "every Func at the root rejected");
            None
        }
    }
}

/// When a check past the budget must end: one more budget's time, and at
/// least [`BeamOptions::past_budget_check`].
fn past_budget_deadline(options: &BeamOptions) -> Instant {
    Instant::now() + options.budget.max(options.past_budget_check)
}

/// Every Func at the root ([`beam::all_at_root`]) as a schedule, with its
/// search state.
fn every_func_at_root(dag: &Dag, model: &dyn CostModel) -> (Schedule, beam::State) {
    let state = beam::all_at_root(dag, model);
    (apply::to_schedule(dag, &state.root), state)
}

/// Why a check past the budget gave no answer.
enum PastBudget {
    /// It ran out of its time too.
    TimedOut,
    /// The candidate does not run at the estimates.
    Failed,
}

/// The first nested candidate whose lowered code allocates far more than
/// priced, or does not slide what was priced as sliding. It runs at the
/// estimates: the answer of last resort when nothing else does.
struct Mispriced {
    why: Mispricing,
    schedule: Schedule,
    state: beam::State,
}

/// A search whose candidates were all turned down: the first of each
/// kind, and what it cost.
struct Rejected {
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

impl Rejected {
    /// Why, by precedence: a failure at the estimates, a mispricing, checks
    /// out of time.
    fn rejection(&self) -> Rejection {
        match (&self.failed, &self.mispriced) {
            (Some((error, _)), _) => Rejection::Failed(error.clone()),
            (None, Some(mispriced)) => Rejection::Mispriced(mispriced.why.clone()),
            (None, None) if self.timed_out > 0 => Rejection::TimedOut { checks: self.timed_out },
            (None, None) => Rejection::NoCandidate,
        }
    }

    fn into_error(self) -> SearchError {
        let (error, rejected) = self.failed.expect("a flat search whose checks all ran out of time answers every Func at the root or records the failure of its check past the budget");
        SearchError::NoLegalSchedule { error, schedule: Box::new(rejected) }
    }
}

/// Runs the beam search and checks its best candidates at the estimates
/// until `check_deadline`, taking the first that runs there (and, for a
/// nested search, allocates what the model priced). With `must_answer`,
/// when every check ran out of time, the best candidate is checked once
/// more past the budget (`checked_past_budget`), and when that runs out of
/// time too (or, under a strict budget, at once), every Func at the root is
/// the answer: [`Reason::RootUnchecked`]; when candidates failed at the
/// estimates and none ran, every Func at the root, checked:
/// [`Reason::RootAfterFailures`].
fn checked_search(
    dag: &Dag,
    pipeline: &PipelineDef,
    model: &mut dyn CostModel,
    options: &BeamOptions,
    check_deadline: Instant,
    must_answer: bool,
    top_k: usize,
) -> Result<AutoSchedule, Box<Rejected>> {
    let outcome = beam::beam_search(dag, model, options);
    let checking = Instant::now();
    let limits = Limits { deadline: Some(check_deadline), ..Limits::default() };
    let mut chosen = None;
    let mut alternatives = vec![];
    let mut rejected =
        Rejected { failed: None, mispriced: None, timed_out: 0, unchecked: None, stats: SearchStats::default(), check_seconds: 0.0 };
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
                        rejected.mispriced.get_or_insert_with(|| Mispriced { why, schedule, state: state.clone() });
                    }
                },
                Err(EstimateError::Lower(LowerError::Deadline { .. })) => {
                    tracing::debug!(%schedule, "candidate's check ran out of time");
                    rejected.timed_out += 1;
                    rejected.unchecked.get_or_insert_with(|| (schedule, state.clone()));
                }
                Err(e) => {
                    tracing::debug!(error = %e, %schedule, "candidate rejected");
                    rejected.failed.get_or_insert((e, schedule));
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
    let mut reason = Reason::Searched;
    let answer_unchecked = chosen.is_none() && must_answer && !options.abandoned();
    if let Some((schedule, state)) = rejected.unchecked.take_if(|_| answer_unchecked) {
        let past_budget = if options.strict_budget {
            Err(PastBudget::TimedOut)
        } else {
            checked_past_budget(pipeline, (schedule, state), options, &mut rejected)
        };
        match past_budget {
            Ok(candidate) => chosen = Some(candidate),
            Err(PastBudget::TimedOut) => {
                chosen = Some(every_func_at_root(dag, model));
                reason = Reason::RootUnchecked { nested: None, timed_out: rejected.timed_out };
            }
            Err(PastBudget::Failed) => {}
        }
    }
    if chosen.is_none() && must_answer && !options.abandoned() && rejected.failed.is_some() {
        if let Some((root, checked)) = root_after_failures(dag, pipeline, model, options, check_deadline, &rejected) {
            reason = Reason::RootAfterFailures { nested: None, flat: rejected.rejection(), checked };
            chosen = Some(root);
        }
    }
    let check_seconds = checking.elapsed().as_secs_f64();
    let Some((schedule, state)) = chosen else {
        return Err(Box::new(Rejected { stats: outcome.stats, check_seconds, ..rejected }));
    };
    Ok(AutoSchedule { alternatives, stats: outcome.stats, reason, check_seconds, ..explained(dag, model, schedule, &state) })
}

/// The schedule a search answers with when it has no time at all: every
/// Func at the root, vectorized where a vector fits at the estimates, which
/// runs wherever the pipeline does and needs no legality check, priced by
/// `model`, with `reason` as its reason (why it was not searched:
/// [`Reason::EarlyAnswerAtDeadline`] or [`Reason::NoSearchSlot`]). It
/// takes a small part of a search's time (no candidate is expanded or
/// lowered): a server computes it before searching, so that it can answer
/// at its deadline with it should the search, slowed by the searches it
/// shares the cores with, overrun.
pub fn at_root(pipeline: &PipelineDef, target: &Target, model: &mut dyn CostModel, reason: Reason) -> Result<AutoSchedule, SearchError> {
    let dag = Dag::new(pipeline, target)?;
    model.set_pipeline(&dag);
    let (schedule, state) = every_func_at_root(&dag, model);
    Ok(AutoSchedule { reason, ..explained(&dag, model, schedule, &state) })
}

/// Why a given schedule cannot be priced.
#[derive(Debug, Error)]
pub enum PriceError {
    /// The pipeline cannot be analysed.
    #[error("the pipeline cannot be analysed: {0}")]
    Dag(#[from] DagError),
    /// The text is not a schedule.
    #[error("the schedule cannot be parsed: {0}")]
    Parse(#[from] compiler::schedule::text::ParseError),
    /// The replay of the search's decisions lost the schedule (`replay::Miss`
    /// says where).
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
/// stage's share (most expensive first); no alternatives or statistics,
/// and the reason of a search's best ([`Reason::Searched`]).
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
        disagreement: state.cost.disagreement,
        features: state.features.clone(),
        per_stage,
        alternatives: vec![],
        stats: SearchStats::default(),
        model: model.name(),
        reason: Reason::Searched,
        check_seconds: 0.0,
    }
}

/// Why a checked candidate is mispriced: a Func it stores outside the loop
/// that computes it does not slide in the lowered code (the search offers
/// such placements where the compiler's conditions hold at the estimates,
/// but the compiler must also prove them), so the cost model priced it
/// computed once where the compiled code computes its whole region at
/// every iteration.
fn unslid(schedule: &Schedule, sliding: &[compiler::ir::expr::Name]) -> Option<Mispricing> {
    let (name, _) = schedule.funcs.iter().find(|(name, f)| f.stored_outside_compute() && !sliding.contains(name))?;
    Some(Mispricing::Unslid { func: name.to_string() })
}

/// Why a checked candidate is mispriced: some Func's largest allocation in
/// the lowered code is far larger than the allocation the cost model
/// priced for it.
fn unpriced_allocation(dag: &Dag, state: &beam::State, allocations: &[(compiler::ir::expr::Name, u64)]) -> Option<Mispricing> {
    allocations.iter().find_map(|(func, bytes)| {
        let node = dag.node_by_name(func)?;
        let priced = node.stages.first().and_then(|s| state.features.get(s))?.bytes_at_realization;
        tracing::trace!(%func, bytes, priced, "allocation against its price");
        (*bytes as f64 > MAX_ALLOCATION_RATIO * priced + ALLOCATION_SLACK_BYTES).then(|| Mispricing::Allocation {
            func: func.to_string(),
            bytes: *bytes,
            priced,
        })
    })
}
