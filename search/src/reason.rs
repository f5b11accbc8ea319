//! Why a search answered as it did, as data: the [`Reason`] of every
//! [`crate::AutoSchedule`], with the [`Rejection`] of each search whose
//! candidates were all turned down and the Func at fault when one is. The
//! `Display` of each is the explanation a person reads (the `autoschedule`
//! command prints it, and the service sends it beside the data).

use compiler::EstimateError;
use std::fmt;

/// The answer of a search at no time at all: every Func at the root,
/// vectorized where a vector fits, which runs wherever the pipeline does.
const EVERY_FUNC_AT_THE_ROOT: &str = "every Func at the root, vectorized where a vector fits, which needs no legality check";

/// How the answer's schedule was found.
#[derive(Clone, Debug, PartialEq)]
pub enum Reason {
    /// The search's best candidate that runs at the estimates (with nested
    /// Funcs where the search offered them).
    Searched,
    /// No candidate with nested Funcs ran at the estimates as priced
    /// (`nested` says why): the flat search's best candidate (every Func
    /// inlined or at the root) that runs there.
    FlatFallback {
        /// Why the nested search's candidates were turned down.
        nested: Rejection,
    },
    /// No legality check of the flat search finished in time (`timed_out`
    /// ran out of it; under a strict budget,
    /// [`crate::BeamOptions::strict_budget`], the best candidate is not
    /// checked again past the budget, else it ran out of one more budget's
    /// time too): every Func at the root, vectorized where a vector fits,
    /// which runs unchecked. `nested`: why the nested search's candidates
    /// were turned down before, when it ran.
    RootUnchecked {
        /// Why the nested search's candidates were turned down, when it ran.
        nested: Option<Rejection>,
        /// Checks of the flat search that ran out of time.
        timed_out: usize,
    },
    /// The flat search's best candidates failed at the estimates (`flat`:
    /// inlined Funcs past the compiler's limit on a definition's size,
    /// say): every Func at the root, vectorized where a vector fits,
    /// checked to run there (`checked`; under a strict budget, when that
    /// check ran out of time, it runs unchecked). `nested`: why the nested
    /// search's candidates were turned down before, when it ran.
    RootAfterFailures {
        /// Why the nested search's candidates were turned down, when it ran.
        nested: Option<Rejection>,
        /// Why the flat search's best candidates were turned down.
        flat: Rejection,
        /// Whether every Func at the root was checked to run at the estimates.
        checked: bool,
    },
    /// No candidate with nested Funcs ran as priced (`nested`), nor any
    /// inlined or at the root (`flat`: a Func too large to allocate whole,
    /// say): a nested candidate turned down before is the answer, as
    /// `pick` says.
    LastResort {
        /// Why the nested search's candidates were turned down.
        nested: Rejection,
        /// Why the flat search's candidates were turned down.
        flat: Rejection,
        /// Which nested candidate is the answer.
        pick: LastResortPick,
    },
    /// Every Func at the root ([`crate::at_root`]), which a server keeps
    /// ready: the search had not answered by the end of its budget (it
    /// shares the cores with other searches).
    EarlyAnswerAtDeadline,
    /// Every Func at the root ([`crate::at_root`]): every search slot of a
    /// server was busy until too little of the budget was left to search
    /// (more calls than slots).
    NoSearchSlot,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nested_rejected = |f: &mut fmt::Formatter<'_>, nested: &Rejection| {
            write!(f, "no candidate with nested Funcs ran at the estimates as priced ({nested})")
        };
        match self {
            Reason::Searched => write!(f, "the search's best candidate that runs at the estimates"),
            Reason::FlatFallback { nested } => {
                nested_rejected(f, nested)?;
                write!(f, "; Funcs are inlined or at the root")
            }
            Reason::RootUnchecked { nested, timed_out } => {
                if let Some(nested) = nested {
                    nested_rejected(f, nested)?;
                    write!(f, "; Funcs are inlined or at the root; then ")?;
                }
                write!(f, "no candidate's legality check finished within the budget ({timed_out} did not); {EVERY_FUNC_AT_THE_ROOT}")
            }
            Reason::RootAfterFailures { nested, flat, checked } => {
                if let Some(nested) = nested {
                    nested_rejected(f, nested)?;
                    write!(f, "; then ")?;
                }
                write!(f, "no candidate the search ranked best with Funcs inlined or at the root ran at the estimates ({flat}); {EVERY_FUNC_AT_THE_ROOT}")?;
                if *checked {
                    write!(f, ", checked to run at the estimates")
                } else {
                    write!(f, " (its check did not finish within the budget)")
                }
            }
            Reason::LastResort { nested, flat, pick } => {
                nested_rejected(f, nested)?;
                write!(f, "; none with Funcs inlined or at the root ran either ({flat}): {pick}")
            }
            Reason::EarlyAnswerAtDeadline => write!(
                f,
                "the search had not answered by the end of its budget (it shares the cores with other searches); {EVERY_FUNC_AT_THE_ROOT}"
            ),
            Reason::NoSearchSlot => write!(
                f,
                "every search slot was busy until too little of the budget was left to search (more calls than slots); {EVERY_FUNC_AT_THE_ROOT}"
            ),
        }
    }
}

/// Why all of a search's candidates were turned down: the first cause
/// found, in this order of precedence.
#[derive(Clone, Debug, PartialEq)]
pub enum Rejection {
    /// The first candidate checked that failed at the estimates, and how.
    Failed(EstimateError),
    /// None failed, but the first that ran is mispriced.
    Mispriced(Mispricing),
    /// None was checked to the end: `checks` ran out of time.
    TimedOut {
        /// Checks that ran out of time.
        checks: usize,
    },
    /// The search yielded no candidate.
    NoCandidate,
}

impl Rejection {
    /// The Func at fault, when the rejection names one.
    pub fn func(&self) -> Option<&str> {
        match self {
            Rejection::Failed(e) => e.func(),
            Rejection::Mispriced(m) => Some(m.func()),
            Rejection::TimedOut { .. } | Rejection::NoCandidate => None,
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::Failed(e) => write!(f, "the best failed at the estimates: {e}"),
            Rejection::Mispriced(m) => write!(f, "{m}"),
            Rejection::TimedOut { checks } => write!(f, "{checks} checks did not finish within the budget"),
            Rejection::NoCandidate => write!(f, "the search yielded none"),
        }
    }
}

/// How a nested candidate that runs at the estimates is mispriced: the
/// cost model's ranking did not see the work its lowered code does.
#[derive(Clone, Debug, PartialEq)]
pub enum Mispricing {
    /// `func` is stored outside the loop that computes it, but the lowered
    /// code does not slide it (the search offers such placements where the
    /// compiler's conditions hold at the estimates, but the compiler must
    /// also prove them): priced computed once, it is computed whole at
    /// every iteration.
    Unslid {
        /// The Func stored outside the loop that computes it, priced as sliding.
        func: String,
    },
    /// The lowered code allocates `bytes` for `func`, far more than the
    /// `priced` bytes of the cost model (the compiler's bounds of a deep
    /// nest over-approximate the model's exact regions).
    Allocation {
        /// The Func allocated.
        func: String,
        /// Bytes of its largest allocation in the lowered code.
        bytes: u64,
        /// Bytes of one allocation as the cost model priced it.
        priced: f64,
    },
}

impl Mispricing {
    /// The mispriced Func.
    pub fn func(&self) -> &str {
        match self {
            Mispricing::Unslid { func } | Mispricing::Allocation { func, .. } => func,
        }
    }
}

impl fmt::Display for Mispricing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mispricing::Unslid { func } => write!(
                f,
                "Func {func} is stored outside the loop that computes it, but the lowered code does not slide it, where the cost model priced it computed once"
            ),
            Mispricing::Allocation { func, bytes, priced } => {
                write!(f, "the lowered code allocates {bytes} bytes for Func {func}, where the cost model priced {priced:.0}")
            }
        }
    }
}

/// Which nested candidate turned down before is the answer of last resort.
#[derive(Clone, Debug, PartialEq)]
pub enum LastResortPick {
    /// The best that runs at the estimates, though mispriced as it says.
    Mispriced(Mispricing),
    /// The best whose check ran out of time, checked again with one more
    /// budget's time (an answer must be legal).
    CheckedPastBudget,
}

impl fmt::Display for LastResortPick {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LastResortPick::Mispriced(m) => write!(f, "the best nested candidate that runs at the estimates, though mispriced ({m})"),
            LastResortPick::CheckedPastBudget => write!(f, "the best nested candidate, its check finished past the budget"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_answer_after_a_nested_search_says_both_why_and_what() {
        let nested = Rejection::Mispriced(Mispricing::Allocation { func: "f".into(), bytes: 1 << 20, priced: 4096.0 });
        let reason = Reason::RootUnchecked { nested: Some(nested), timed_out: 3 };
        let why = reason.to_string();
        for part in [
            "no candidate with nested Funcs ran at the estimates as priced (the lowered code allocates 1048576 bytes for Func f, where the cost model priced 4096)",
            "; then no candidate's legality check finished within the budget (3 did not)",
            "every Func at the root",
        ] {
            assert!(why.contains(part), "{part:?} missing from: {why}");
        }
        let alone = Reason::RootUnchecked { nested: None, timed_out: 2 }.to_string();
        assert!(alone.starts_with("no candidate's legality check finished within the budget (2 did not)"), "{alone}");
    }
}
