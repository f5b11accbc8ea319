//! The loop nest a schedule was made from, found again from its text.
//!
//! The training store keeps a sampled schedule as its directives, but its
//! features come from the search's loop nest, which the directives do not
//! spell out (the regions at each level, levels at which no loop
//! iterates). To featurize stored schedules again under a new feature
//! layout, [`replay`] makes the search's decisions once more, as a beam
//! search steered by the stored text:
//!
//! - a candidate must agree with the text on what its decision settles for
//!   good (`Fixed`): where the Func is computed and stored (phase 0), its
//!   innermost loops and whether it runs parallel (phase 1);
//! - candidates are ranked by how many of their directives the text has,
//!   first with level numbers and split chains left out (a later decision
//!   that tiles an outer level renumbers every level below it, and splits
//!   a loop's chain further), then exactly; ties keep the search's order;
//! - the answer is the first complete nest whose directives are the text
//!   exactly, so a nest found is always the right one's equal.
//!
//! The beam may lose the nest (measured: 23 of 24 sampled schedules of the
//! tests' random pipelines found, 210 of 224 stored ones). A schedule no
//! nest of today's search spells (one made before the search changed its
//! choices) has none either: the caller skips both. Either way the replay
//! says where it lost the text ([`Miss`]): the first decision no candidate
//! agreed with, or the directives in which the nearest complete nest
//! differs from the text, which is what tells a user why the search could
//! not have made their schedule.

use crate::apply::to_schedule;
use crate::expand::{children, decision_order, Placements};
use crate::loop_nest::{structural_hash, LoopNest};
use compiler::ir::expr::Name;
use compiler::schedule::{Directive, LoopLevel, Schedule, StageSchedule};
use featurizer::Dag;
use fnv::{FnvHashMap as HashMap, FnvHashSet as HashSet};
use std::sync::Arc;
use thiserror::Error;

/// Candidates kept per decision.
pub const REPLAY_BEAM: usize = 32;

/// Why the replay found no nest that spells a schedule's text. The beam
/// may lose a nest the search can make, so a miss says where the replay
/// lost the text, not that no search could make it.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum Miss {
    /// The text does not parse as a schedule.
    #[error("the text is not a schedule")]
    NotASchedule,
    /// At one decision no candidate agreed with what the text settles.
    #[error("no candidate {} `{func}` as the schedule does", .phase.doing())]
    Decision {
        /// The Func decided about.
        func: String,
        /// Which of its two decisions.
        phase: Phase,
    },
    /// Every decision agreed, but the nearest complete nest's directives
    /// differ from the text's: those only the text has, and those only the
    /// nest has.
    #[error("the nearest nest the search makes differs in these directives: the schedule has {}, the nest has {}", listed(.only_wanted), listed(.only_found))]
    Directives {
        /// Directives of the text the nest lacks.
        only_wanted: Vec<String>,
        /// Directives of the nest the text lacks.
        only_found: Vec<String>,
    },
    /// The nearest nest has the text's directives, in another order.
    #[error("the nearest nest the search makes has the same directives in another order")]
    Order,
}

/// The two decisions about a Func.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Where it is computed and stored.
    Placement,
    /// Its stages' vectorized, unrolled and parallel loops.
    Tiles,
}

impl Phase {
    fn doing(self) -> &'static str {
        match self {
            Phase::Placement => "computes and stores",
            Phase::Tiles => "vectorizes, unrolls and parallelizes the stages of",
        }
    }
}

/// Directives as a message lists them: the first few, then how many more.
fn listed(lines: &[String]) -> String {
    const SHOWN: usize = 4;
    if lines.is_empty() {
        return "none".into();
    }
    let shown: Vec<String> = lines.iter().take(SHOWN).map(|l| format!("`{l}`")).collect();
    match lines.len().saturating_sub(SHOWN) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// The nest, among `placements`, whose schedule's text is `text`, or where
/// the replay lost the text when the search keeps none. A greedy pass (a
/// beam of one) goes first: when it ends at the text exactly, that nest is
/// the answer at a fraction of the cost; otherwise the full beam decides.
pub fn replay(dag: &Dag, text: &str, placements: Placements) -> Result<Arc<LoopNest>, Miss> {
    replay_in_beam(dag, text, placements, 1).or_else(|_| replay_in_beam(dag, text, placements, REPLAY_BEAM))
}

/// [`replay`] keeping `width` candidates per decision.
fn replay_in_beam(dag: &Dag, text: &str, placements: Placements, width: usize) -> Result<Arc<LoopNest>, Miss> {
    let wanted_schedule: Schedule = text.parse().map_err(|_| Miss::NotASchedule)?;
    // Compared in the schedule's own form (Funcs in order, one directive a
    // line), so that a text written by hand matches however it is laid out.
    let text = &wanted_schedule.to_string();
    let mut wanted = Wanted::new(text);
    let order = decision_order(dag);
    let mut beam = vec![Arc::new(LoopNest::root())];
    for d in 0..2 * order.len() {
        let func = &dag.node(order[d / 2]).name;
        let fixed = |s: &Schedule| if d % 2 == 0 { Fixed::placement(s, func) } else { Fixed::tiles(s, func) };
        let goal = fixed(&wanted_schedule);
        let mut seen = HashSet::default();
        let mut scored: Vec<((i64, i64), Arc<LoopNest>)> = beam
            .iter()
            .flat_map(|state| children(dag, state, &order, d, placements))
            .filter(|c| seen.insert(structural_hash(c, usize::MAX)))
            .filter_map(|c| {
                let schedule = to_schedule(dag, &c);
                (fixed(&schedule) == goal).then(|| (wanted.agreement(&schedule.to_string()), c))
            })
            .collect();
        if scored.is_empty() {
            let phase = if d % 2 == 0 { Phase::Placement } else { Phase::Tiles };
            return Err(Miss::Decision { func: func.to_string(), phase });
        }
        // Stable: among equals, the search's own order.
        scored.sort_by_key(|(score, _)| std::cmp::Reverse(*score));
        beam = scored.into_iter().take(width).map(|(_, c)| c).collect();
    }
    let texts: Vec<String> = beam.iter().map(|nest| to_schedule(dag, nest).to_string()).collect();
    match texts.iter().position(|t| t == text) {
        Some(i) => Ok(beam.swap_remove(i)),
        None => {
            // The beam is ranked by agreement: its first nest is the nearest.
            let nearest = texts.first().map_or("", |t| t.as_str());
            let (only_wanted, only_found) = (lines_missing(text, nearest), lines_missing(nearest, text));
            if only_wanted.is_empty() && only_found.is_empty() {
                return Err(Miss::Order);
            }
            Err(Miss::Directives { only_wanted, only_found })
        }
    }
}

/// The lines of `a` that `b` lacks (as many times as `a` has them more).
fn lines_missing(a: &str, b: &str) -> Vec<String> {
    let mut left: HashMap<&str, usize> = HashMap::default();
    for line in b.lines() {
        *left.entry(line).or_insert(0) += 1;
    }
    a.lines()
        .filter(|line| match left.get_mut(line) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .map(str::to_string)
        .collect()
}

/// What one decision about a Func settles for good, as its directives show
/// it: a later decision may tile the loops around it (renaming them), but
/// never moves it or changes its innermost loops.
#[derive(Debug, PartialEq, Eq)]
enum Fixed {
    /// Phase 0: inlined, at the root, or inside a stage of another Func
    /// (the loop left out), and whether stored further out (sliding).
    Placement { compute: Option<(Name, usize)>, inlined: bool, stored_outside: bool },
    /// Phase 1: per stage, the vectorized loop and the unrolled ones (the
    /// Func dimension each runs over and its extent), and whether the
    /// stage runs parallel.
    Tiles(Vec<StageTile>),
}

#[derive(Debug, PartialEq, Eq)]
struct StageTile {
    vectorized: Option<(String, Option<i64>)>,
    unrolled: Vec<(String, Option<i64>)>,
    parallel: bool,
}

impl Fixed {
    fn placement(s: &Schedule, func: &Name) -> Fixed {
        let (compute, inlined, stored_outside) = match s.funcs.get(func) {
            None => (None, true, false),
            Some(f) => match &f.compute {
                LoopLevel::Inline => (None, true, f.store.is_some()),
                LoopLevel::Root => (None, false, f.store.is_some()),
                LoopLevel::At { func, stage, .. } => (Some((func.clone(), *stage)), false, f.store.is_some()),
            },
        };
        Fixed::Placement { compute, inlined, stored_outside }
    }

    fn tiles(s: &Schedule, func: &Name) -> Fixed {
        let stages = s.funcs.get(func).map(|f| f.stages.values().map(StageTile::of).collect()).unwrap_or_default();
        Fixed::Tiles(stages)
    }
}

impl StageTile {
    fn of(stage: &StageSchedule) -> StageTile {
        let mut extent_of: HashMap<&str, i64> = HashMap::default();
        for d in &stage.directives {
            if let Directive::Split { inner, factor, .. } = d {
                extent_of.insert(inner, *factor);
            }
        }
        let described = |var: &Name| (loop_dimension(var), extent_of.get(&**var).copied());
        let mut tile = StageTile { vectorized: None, unrolled: vec![], parallel: false };
        for d in &stage.directives {
            match d {
                Directive::Vectorize { var, .. } => tile.vectorized = Some(described(var)),
                Directive::Unroll { var, .. } => tile.unrolled.push(described(var)),
                Directive::Parallel { .. } => tile.parallel = true,
                _ => {}
            }
        }
        tile.unrolled.sort();
        tile
    }
}

/// The loop a split name comes from (`x_r2` -> `x`).
fn loop_dimension(var: &str) -> String {
    let stripped = strip_level(var);
    stripped.strip_suffix("_l").or_else(|| stripped.strip_suffix("_r")).unwrap_or(stripped).to_string()
}

/// The lines of a wanted schedule, and the shapes of the lines seen (many
/// candidates share most of their lines).
struct Wanted {
    exact: HashMap<String, i64>,
    shapes: HashMap<String, i64>,
    shape_of: HashMap<String, String>,
}

impl Wanted {
    fn new(text: &str) -> Wanted {
        let mut wanted = Wanted { exact: HashMap::default(), shapes: HashMap::default(), shape_of: HashMap::default() };
        for line in text.lines() {
            *wanted.exact.entry(line.to_string()).or_insert(0) += 1;
            *wanted.shapes.entry(shape_of(line)).or_insert(0) += 1;
        }
        wanted
    }

    /// How well a candidate's lines agree with the wanted ones: first by
    /// their shapes found less those not found, then by the lines found
    /// exactly less those not found.
    fn agreement(&mut self, candidate: &str) -> (i64, i64) {
        for line in candidate.lines() {
            if !self.shape_of.contains_key(line) {
                self.shape_of.insert(line.to_string(), shape_of(line));
            }
        }
        let mut exact: HashMap<&str, i64> = HashMap::default();
        let mut shapes: HashMap<&str, i64> = HashMap::default();
        for line in candidate.lines() {
            *exact.entry(line).or_insert(0) += 1;
            *shapes.entry(&self.shape_of[line]).or_insert(0) += 1;
        }
        (score(&self.shapes, &shapes), score(&self.exact, &exact))
    }
}

/// Lines of `have` found in `wanted` less those not found.
fn score(wanted: &HashMap<String, i64>, have: &HashMap<&str, i64>) -> i64 {
    have.iter()
        .map(|(line, &n)| {
            let found = n.min(wanted.get(*line).copied().unwrap_or(0));
            found - (n - found)
        })
        .sum()
}

/// A directive as level-free as can be: a split as the loop dimension it
/// splits and its factor (the chain of names it continues changes as
/// levels are added above it), any other line [`without_levels`].
fn shape_of(line: &str) -> String {
    if let Some((func, args)) = line.split_once(".split(") {
        let mut args = args.split(", ");
        if let (Some(var), _, _, Some(factor)) = (args.next(), args.next(), args.next(), args.next()) {
            return format!("{func}.split({}, {factor})", loop_dimension(var));
        }
    }
    without_levels(line)
}

/// `line` with the level of each loop name left out (`x_l2` as `x_l`,
/// `output_par1_2` as `output_par`): a level's number shifts when a later
/// decision tiles an outer level, its loop's role does not.
fn without_levels(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        out.push_str(strip_level(word));
        word.clear();
    };
    for ch in line.chars() {
        if ch.is_ascii_alphanumeric() || ch == '_' {
            word.push(ch);
        } else {
            flush(&mut word, &mut out);
            out.push(ch);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// A loop name without its level number: `x_l2` -> `x_l`, `c_r10` -> `c_r`,
/// `f_par1_2` -> `f_par`; other words as they are.
fn strip_level(word: &str) -> &str {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(at) = word.rfind("_par") {
        let rest = &word[at + 4..];
        if rest.split_once('_').is_some_and(|(a, b)| digits(a) && digits(b)) {
            return &word[..at + 4];
        }
    }
    match word.rfind(['l', 'r']) {
        Some(at) if at > 0 && word.as_bytes()[at - 1] == b'_' && digits(&word[at + 1..]) => &word[..at + 1],
        _ => word,
    }
}
