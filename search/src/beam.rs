//! Coarse-to-fine beam search over loop nests (Adams et al. 2019, section
//! 4.1), under a hard deadline.
//!
//! A pass starts from the empty nest and makes every decision in turn
//! (two per Func, consumers first). Each round expands every state of the
//! beam, featurizes the children, prunes those that recompute too much,
//! costs the rest in one batch, and keeps the `beam` cheapest (a random
//! dropout may skip some when sampling). Later passes penalize states
//! structurally equal, to a depth that grows with the pass, to states
//! earlier passes already expanded, so they explore elsewhere; the best
//! complete state over all passes wins.
//!
//! A quick pass (a beam of one) runs first, unless the search samples
//! (with dropout) or its beam is one already: it costs about
//! 1/beam of a pass, so it finishes within nearly any budget, and it gives
//! an answer that does not depend on how loaded the machine is.
//!
//! Determinism: children are generated and featurized in parallel but
//! collected in a fixed order, ties are broken by a structural hash, and
//! the only randomness is a ChaCha generator seeded from the options. A
//! pass the deadline cuts short is dropped, so the answer is the best of
//! the passes that finished: the same for the same number of finished
//! passes, however far the cut one got. Only when no pass finished (not
//! even the quick one) is the cheapest state of the cut pass completed
//! greedily. A pass that cannot finish in the time left (less time is left
//! than a lower bound that the pass before it gives) is not started: it would
//! be cut and dropped, so the answer is the same, sooner, and the caller's
//! legality checks get the time. When the caller abandons the search
//! ([`Abandon`]), it stops as at its deadline.

use crate::cost_model::{Cost, CostModel};
use crate::expand::{children, decision_order, Placements};
use crate::featurize::{featurize, featurize_reusing, ChainCache, StageFeatures};
use crate::loop_nest::{structural_hash, LoopNest};
use featurizer::{Dag, NodeId};
use fnv::FnvHashMap as HashMap;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Settings of one search.
#[derive(Clone, Debug, PartialEq)]
pub struct BeamOptions {
    /// States kept per decision (the beam width).
    pub beam: usize,
    /// Coarse-to-fine passes (at least one runs).
    pub passes: usize,
    /// Percent chance that a state survives the dropout at each decision,
    /// compounded to this over a whole pass (100: no dropout).
    pub random_dropout: u32,
    /// Seed of the random dropout.
    pub seed: u64,
    /// Wall-clock budget.
    pub budget: Duration,
    /// Whether Funcs may be computed inside other Funcs' loops (else only
    /// inlined or at the root).
    pub nested: bool,
    /// Whether a Func may also be stored one level out and computed
    /// sliding inside (a line buffer). Off by default: the shipped learned
    /// weights were trained on no such schedule (README, "Line buffers").
    pub sliding: bool,
    /// Whether the budget binds the answer too: a search step the deadline
    /// overtakes is abandoned, and when no candidate's
    /// legality check finishes in time, answer every Func at the root,
    /// untiled ([`all_at_root`], legal without a check), rather than check the best
    /// candidate past the budget. A server answering under a deadline sets
    /// it; a user at the command line would rather wait for the better
    /// schedule.
    pub strict_budget: bool,
    /// Not under a strict budget: the least time the one check past the
    /// budget gets (it gets one more budget's time, and at least this), so
    /// that a budget too small for any check still gets a checked answer
    /// when one lowers in seconds, and a candidate that lowers for minutes
    /// gives way to every Func at the root.
    pub past_budget_check: Duration,
    /// Raised by the caller when it no longer wants the answer (a server
    /// that answered otherwise): the search stops at its next step, as at
    /// its deadline, and checks no more candidates.
    pub abandon: Option<Abandon>,
}

/// A flag shared between a search and its caller, raised once the caller
/// no longer wants the search's answer. Two are equal when they are the
/// same flag.
#[derive(Clone, Debug, Default)]
pub struct Abandon(Arc<AtomicBool>);

impl Abandon {
    /// A flag not raised.
    pub fn new() -> Abandon {
        Abandon::default()
    }

    /// Raises the flag, for the search and every clone.
    pub fn raise(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether the flag was raised.
    pub fn is_raised(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

impl PartialEq for Abandon {
    fn eq(&self, other: &Abandon) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl BeamOptions {
    /// Whether the caller abandoned the search.
    pub fn abandoned(&self) -> bool {
        self.abandon.as_ref().is_some_and(Abandon::is_raised)
    }
}

impl Default for BeamOptions {
    fn default() -> Self {
        BeamOptions {
            beam: 32,
            passes: 5,
            random_dropout: 100,
            seed: 0,
            budget: Duration::from_secs(10),
            nested: true,
            sliding: false,
            strict_budget: false,
            past_budget_check: Duration::from_secs(10),
            abandon: None,
        }
    }
}

/// A candidate: a loop nest, the decisions made, its cost.
#[derive(Clone, Debug)]
pub struct State {
    /// The loop nest, complete or not.
    pub root: Arc<LoopNest>,
    /// Decisions made so far: the nest is complete after two per Func.
    pub decisions: usize,
    /// The cost model's prediction for the nest, as ranked (raised in a later
    /// pass for nests near those that earlier passes expanded).
    pub cost: Cost,
    /// The schedule features of the stages the nest places.
    pub features: Arc<StageFeatures>,
    /// The chains featurized for `features`, for successors to reuse (keyed
    /// by nodes of `root`, so never kept with another root).
    pub chains: Arc<ChainCache>,
    /// Structural hash of the whole nest (dedup and tie-breaks).
    pub hash: u64,
}

/// Counters of a search.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchStats {
    /// Children made by expanding states.
    pub states_generated: usize,
    /// States costed by the model.
    pub states_evaluated: usize,
    /// Children dropped for recomputing too much.
    pub states_pruned: usize,
    /// Passes at the full beam that ran to the end before the deadline.
    pub passes_completed: usize,
    /// The quick pass (a beam of one) ran to the end.
    pub quick_pass_completed: bool,
    /// The deadline passed before every pass finished (the cut pass was
    /// dropped, or, if no pass finished, its best state completed
    /// greedily).
    pub hit_deadline: bool,
    /// Seconds spent featurizing and costing.
    pub evaluation_seconds: f64,
    /// Seconds the whole search took.
    pub wall_seconds: f64,
}

impl SearchStats {
    /// Adds the counters and times of an earlier search of the same call
    /// (the nested search before a flat fallback); the pass count and the
    /// deadline flag stay this search's.
    pub fn absorb(&mut self, earlier: &SearchStats) {
        self.states_generated += earlier.states_generated;
        self.states_evaluated += earlier.states_evaluated;
        self.states_pruned += earlier.states_pruned;
        self.evaluation_seconds += earlier.evaluation_seconds;
        self.wall_seconds += earlier.wall_seconds;
    }
}

/// The complete states found, cheapest first, and the counters.
pub struct BeamOutcome {
    /// Complete states of every pass, cheapest first, without duplicates.
    pub complete: Vec<State>,
    /// The search's counters.
    pub stats: SearchStats,
}

struct Searcher<'a> {
    dag: &'a Dag,
    model: &'a dyn CostModel,
    order: Vec<NodeId>,
    options: &'a BeamOptions,
    deadline: Instant,
    stats: SearchStats,
}

/// How a pass ended.
enum PassEnd {
    /// It made every decision: its final beam.
    Finished(Vec<State>),
    /// The deadline cut it: the cheapest state of its last whole beam (to
    /// be completed greedily if no pass finished).
    Cut(State),
    /// No state survived a decision.
    Empty,
}

/// Which pass runs: the quick one (a beam of one, no dropout, no record for
/// the coarse-to-fine penalty), or the `n`th at the full beam.
#[derive(Clone, Copy)]
enum PassKind {
    Quick,
    Full(usize),
}

/// Runs the search.
pub fn beam_search(dag: &Dag, model: &dyn CostModel, options: &BeamOptions) -> BeamOutcome {
    let start = Instant::now();
    let mut s =
        Searcher { dag, model, order: decision_order(dag), options, deadline: start + options.budget, stats: SearchStats::default() };
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    let mut complete: Vec<State> = vec![];
    let mut cut = None;
    let mut expanded: Vec<HashMap<u64, u32>> = vec![];
    // Sampling (with dropout) wants its own passes' states only.
    let quick = (options.beam > 1 && options.random_dropout >= 100).then_some(PassKind::Quick);
    let mut last: Option<(PassKind, Duration)> = None;
    for kind in quick.into_iter().chain((0..options.passes.max(1)).map(PassKind::Full)) {
        if let Some(at_least) = last.map(|(k, took)| at_least_as_long(k, took, options.beam)) {
            if s.deadline.saturating_duration_since(Instant::now()) < at_least {
                // It would be cut and dropped: the same answer, sooner, and
                // the time left goes to the legality checks.
                tracing::debug!(?at_least, "a pass that cannot finish in the time left is not started");
                s.stats.hit_deadline = true;
                break;
            }
        }
        let began = Instant::now();
        match s.pass(kind, &mut rng, &mut expanded) {
            PassEnd::Finished(states) => {
                complete.extend(states);
                match kind {
                    PassKind::Quick => s.stats.quick_pass_completed = true,
                    PassKind::Full(_) => s.stats.passes_completed += 1,
                }
                let took = began.elapsed();
                tracing::debug!(?took, "search pass");
                last = Some((kind, took));
            }
            PassEnd::Cut(state) => {
                s.stats.hit_deadline = true;
                cut = Some(state);
                break;
            }
            PassEnd::Empty => break,
        }
    }
    if complete.is_empty() {
        s.stats.hit_deadline = true;
        let state = cut.unwrap_or_else(|| s.initial());
        complete.push(if state.decisions < s.decisions() { s.greedy(state) } else { state });
    }
    complete.sort_by(|a, b| a.cost.total.total_cmp(&b.cost.total).then(a.hash.cmp(&b.hash)));
    let mut seen = HashSet::new();
    complete.retain(|st| seen.insert(st.hash));
    s.stats.wall_seconds = start.elapsed().as_secs_f64();
    BeamOutcome { complete, stats: s.stats }
}

/// A lower bound on the time of the full pass after a pass of `kind` that
/// took `took`: a quarter of what the quick pass predicts (a beam of one
/// costs about 1/`beam` of a full pass; full passes of optical_flow took
/// 15 to 20 quick ones at a beam of 32) or half of the last full pass
/// (later passes expand as many states, and took longer there).
fn at_least_as_long(kind: PassKind, took: Duration, beam: usize) -> Duration {
    match kind {
        PassKind::Quick => took.saturating_mul(beam.try_into().unwrap_or(u32::MAX)) / 4,
        PassKind::Full(_) => took / 2,
    }
}

impl Searcher<'_> {
    /// The deadline has passed or the caller abandoned the search.
    fn out_of_time(&self) -> bool {
        Instant::now() >= self.deadline || self.options.abandoned()
    }

    fn decisions(&self) -> usize {
        2 * self.order.len()
    }

    fn initial(&self) -> State {
        let root = Arc::new(LoopNest::root());
        let hash = structural_hash(&root, usize::MAX);
        State { root, decisions: 0, cost: Cost::of_stages(vec![]), features: Default::default(), chains: Default::default(), hash }
    }

    /// One pass of `kind`.
    fn pass(&mut self, kind: PassKind, rng: &mut ChaCha8Rng, expanded: &mut Vec<HashMap<u64, u32>>) -> PassEnd {
        let (width, pass) = match kind {
            PassKind::Quick => (1, None),
            PassKind::Full(n) => (self.options.beam, Some(n)),
        };
        let mut beam = vec![self.initial()];
        for _ in 0..self.decisions() {
            if self.out_of_time() {
                return self.cut(beam);
            }
            let mut next = self.expand(&beam);
            if self.options.strict_budget && self.out_of_time() {
                // The step may have stopped featurizing part way: complete
                // the best state of the last whole beam instead.
                return self.cut(beam);
            }
            if next.is_empty() {
                return PassEnd::Empty;
            }
            // Coarse-to-fine: states close to what earlier passes expanded
            // cost more, so this pass looks elsewhere.
            if let Some(pass @ 1..) = pass.filter(|_| width > 1 && self.options.passes > 1) {
                let depth = pass + 1;
                for st in &mut next {
                    let key = structural_hash(&st.root, depth);
                    let seen: u32 = expanded.iter().map(|m| m.get(&key).copied().unwrap_or(0)).sum();
                    if seen > 0 {
                        st.cost.total *= 1.0 + seen as f64;
                    }
                }
            }
            next.sort_by(|a, b| a.cost.total.total_cmp(&b.cost.total).then(a.hash.cmp(&b.hash)));
            let mut kept = vec![];
            let survive = if pass.is_some() { dropout_threshold(self.options.random_dropout, self.decisions()) } else { 100 };
            // As Adams's: every candidate but the last one left may drop
            // out (so with a beam of one the best is kept only by chance).
            let candidates = next.len();
            let mut ranked = next.into_iter().enumerate();
            for (i, st) in ranked.by_ref() {
                if i + 1 < candidates && survive < 100 && rng.random_range(0..100) >= survive {
                    continue;
                }
                kept.push(st);
                if kept.len() >= width {
                    break;
                }
            }
            // The rest (most of a step's states) let go on every thread.
            ranked.collect::<Vec<_>>().into_par_iter().for_each(drop);
            if let Some(pass) = pass {
                let record = expanded_map(expanded, pass);
                for st in &kept {
                    *record.entry(structural_hash(&st.root, pass + 1)).or_default() += 1;
                }
            }
            beam = kept;
        }
        PassEnd::Finished(beam)
    }

    /// The deadline has passed: the best state of `beam`.
    fn cut(&self, beam: Vec<State>) -> PassEnd {
        beam.into_iter().next().map_or(PassEnd::Empty, PassEnd::Cut)
    }

    /// Every child of every state, featurized, pruned and costed.
    fn expand(&mut self, beam: &[State]) -> Vec<State> {
        let t = Instant::now();
        let dag = self.dag;
        let order = &self.order;
        let placements = Placements { nested: self.options.nested, sliding: self.options.sliding };
        let generated: Vec<(Arc<LoopNest>, &State)> = beam
            .par_iter()
            .flat_map_iter(|st| children(dag, &st.root, order, st.decisions, placements).into_iter().map(move |c| (c, st)))
            .collect();
        self.stats.states_generated += generated.len();
        let mut seen = HashSet::new();
        // Under a strict budget, the rest of a step the deadline overtakes
        // is skipped (the caller then discards it): a step of a large
        // pipeline, or one sharing the cores with many others, may take
        // long. Otherwise the step finishes, and its best state is the one
        // completed.
        let cutoff = self.options.strict_budget.then_some(self.deadline);
        let options = self.options;
        let featurized: Vec<(Arc<LoopNest>, usize, StageFeatures, ChainCache, u64)> = generated
            .into_par_iter()
            .filter(|_| cutoff.is_none_or(|d| Instant::now() < d) && !options.abandoned())
            .map(|(root, parent)| {
                let (features, chains) = featurize_reusing(dag, &root, Some((&parent.features, &parent.chains)));
                let hash = structural_hash(&root, usize::MAX);
                (root, parent.decisions + 1, features, chains, hash)
            })
            .collect::<Vec<_>>()
            .into_iter()
            .filter(|(_, _, _, _, h)| seen.insert(*h))
            .collect();
        // Prune recomputation, unless that would leave nothing.
        let (kept_states, pruned): (Vec<_>, Vec<_>) = featurized.into_iter().partition(|(_, _, f, _, _)| !recomputes_too_much(f));
        self.stats.states_pruned += pruned.len();
        let featurized = if kept_states.is_empty() { pruned } else { kept_states };
        let kept = featurized.len();
        let batch: Vec<&StageFeatures> = featurized.iter().map(|(_, _, f, _, _)| f).collect();
        let costs = self.model.evaluate(&batch);
        self.stats.states_evaluated += kept;
        self.stats.evaluation_seconds += t.elapsed().as_secs_f64();
        featurized
            .into_iter()
            .zip(costs)
            .map(|((root, decisions, features, chains, hash), cost)| State {
                root,
                decisions,
                cost,
                features: Arc::new(features),
                chains: Arc::new(chains),
                hash,
            })
            .collect()
    }

    /// Completes `state` without evaluating anything (the deadline has
    /// passed): every remaining Func at the root, with its first parallel
    /// tiling (the one that wastes the fewest cores).
    fn greedy(&mut self, mut state: State) -> State {
        while state.decisions < self.decisions() {
            let options = children(self.dag, &state.root, &self.order, state.decisions, Placements::FLAT);
            let phase = state.decisions % 2;
            // Phase 0 lists inlining first when it is allowed; the root is last.
            let root = if phase == 0 { options.last() } else { options.first() };
            let root = root.expect("a decision has a successor").clone();
            self.stats.states_generated += options.len();
            state = State {
                hash: structural_hash(&root, usize::MAX),
                root,
                decisions: state.decisions + 1,
                chains: Default::default(),
                ..state
            };
        }
        let features = featurize(self.dag, &state.root);
        state.cost = self.model.evaluate(&[&features]).remove(0);
        state.features = Arc::new(features);
        self.stats.states_evaluated += 1;
        state
    }
}

/// Every Func of `dag` at the root, untiled but vectorized along its
/// innermost storage dimension where that is at least a vector wide at the
/// estimates (so no vector reaches past the region), costed by `model`:
/// a schedule that runs at the estimates wherever the pipeline does, with
/// no legality check.
pub fn all_at_root(dag: &Dag, model: &dyn CostModel) -> State {
    let order = decision_order(dag);
    let mut root = Arc::new(LoopNest::root());
    for d in (0..2 * order.len()).step_by(2) {
        // Phase 0 lists the root placement last; phase 1 (tiling) is skipped.
        root = children(dag, &root, &order, d, Placements::FLAT).pop().expect("a Func can always be computed at the root");
    }
    State::complete(dag, model, root)
}

impl State {
    /// The state of a complete loop nest, featurized and priced by `model`
    /// (whose pipeline is `dag`'s).
    pub fn complete(dag: &Dag, model: &dyn CostModel, root: Arc<LoopNest>) -> State {
        let features = featurize(dag, &root);
        let cost = model.evaluate(&[&features]).remove(0);
        State {
            hash: structural_hash(&root, usize::MAX),
            root,
            decisions: 2 * decision_order(dag).len(),
            cost,
            features: Arc::new(features),
            chains: Default::default(),
        }
    }
}

fn expanded_map(expanded: &mut Vec<HashMap<u64, u32>>, pass: usize) -> &mut HashMap<u64, u32> {
    while expanded.len() <= pass {
        expanded.push(HashMap::default());
    }
    &mut expanded[pass]
}

/// The per-decision survival percentage that compounds to `percent` over
/// `decisions` decisions.
fn dropout_threshold(percent: u32, decisions: usize) -> u32 {
    if percent >= 100 {
        return 100;
    }
    (100.0 * (percent as f64 / 100.0).powf(1.0 / decisions.max(1) as f64)) as u32
}

/// Adams's pruning: a stage that computes (or, inlined, is evaluated) more
/// than 8 times the points it must.
fn recomputes_too_much(features: &StageFeatures) -> bool {
    features.shared().any(|(_, f)| f.points_computed_total + f.inlined_calls > 8.0 * f.points_computed_minimum.max(1.0))
}
