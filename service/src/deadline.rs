//! A call's deadline and the search budget it leaves.
//!
//! The deadline comes from the `grpc-timeout` header (at most 8 digits and
//! a unit: H, M, S, m, u, n), which tonic leaves in the request metadata.
//! A search's budget counts from the call's arrival and binds its answer
//! (the service runs it with `BeamOptions::strict_budget`), less a share
//! kept for completing the best state and replying ([`answer_reserve`]);
//! under a deadline, the budget is also at most half the time left after a
//! fixed reserve, since on a loaded machine what follows the search's own
//! deadline runs slower. tonic itself cancels a call at its deadline
//! (CANCELLED, "Timeout expired"): everything here aims to answer before
//! that.

use std::time::Duration;

/// Time kept back from a deadline for the conversion, the legality
/// checks and the reply.
pub const RESERVE: Duration = Duration::from_millis(50);

/// The least budget worth starting a search with.
pub const MIN_BUDGET: Duration = Duration::from_millis(5);

/// The part of a budget kept for what follows the search's own deadline:
/// completing the best state greedily, checking and converting it and
/// replying, while `sharing` searches (this one included) share each core.
/// On a loaded machine these run slower, so it is a share of the budget,
/// and at least [`ANSWER_CPU`] per search sharing the core, each of which
/// has that much to do at about the same time: under overload a search
/// gives up its time rather than its deadline.
pub fn answer_reserve(budget: Duration, sharing: f64) -> Duration {
    budget.mul_f64(ANSWER_RESERVE_SHARE).max(ANSWER_CPU.mul_f64(sharing.max(1.0)))
}

const ANSWER_RESERVE_SHARE: f64 = 0.2;

/// Core time one answer takes after its search's deadline. Measured on a
/// 2-core host (`service/tests/loopback.rs`: 4-stage random pipelines, 200
/// ms budgets, every search answering from its greedy completion): 16
/// searches at once answered 65 ms after their deadline, 64 about 190 ms
/// after, some 6-8 ms of core time each.
pub const ANSWER_CPU: Duration = Duration::from_millis(7);

/// Parses a `grpc-timeout` header value; `None` if malformed.
pub fn parse_grpc_timeout(value: &str) -> Option<Duration> {
    let (digits, unit) = value.split_at(value.len().checked_sub(1)?);
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n * 3600),
        "M" => Duration::from_secs(n * 60),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

/// The budget for a search that may take `requested` and must be answered
/// within `remaining` (if the call has a deadline); `None` when the time
/// left is too short to search at all.
pub fn search_budget(requested: Duration, remaining: Option<Duration>) -> Option<Duration> {
    let budget = match remaining {
        Some(left) => requested.min(left.saturating_sub(RESERVE) / 2),
        None => requested,
    };
    (budget >= MIN_BUDGET).then_some(budget)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeouts_parse_in_every_unit() {
        assert_eq!(parse_grpc_timeout("250m"), Some(Duration::from_millis(250)));
        assert_eq!(parse_grpc_timeout("2S"), Some(Duration::from_secs(2)));
        assert_eq!(parse_grpc_timeout("1H"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_grpc_timeout("99999999u"), Some(Duration::from_micros(99_999_999)));
        for bad in ["", "m", "123456789m", "12x", "-1S", "1.5S"] {
            assert_eq!(parse_grpc_timeout(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_budget_leaves_room_before_the_deadline() {
        let s = Duration::from_secs(1);
        assert_eq!(search_budget(s, None), Some(s));
        assert_eq!(search_budget(Duration::from_millis(100), Some(s)), Some(Duration::from_millis(100)));
        assert_eq!(search_budget(s, Some(Duration::from_millis(650))), Some(Duration::from_millis(300)));
        assert_eq!(search_budget(s, Some(Duration::from_millis(55))), None);
    }

    #[test]
    fn the_answer_reserve_grows_with_the_searches_sharing_a_core() {
        let budget = Duration::from_millis(200);
        assert_eq!(answer_reserve(budget, 0.5), Duration::from_millis(40));
        assert_eq!(answer_reserve(budget, 2.0), Duration::from_millis(40));
        assert_eq!(answer_reserve(budget, 32.0), ANSWER_CPU * 32);
        assert_eq!(answer_reserve(Duration::from_millis(1), 1.0), ANSWER_CPU);
    }
}
