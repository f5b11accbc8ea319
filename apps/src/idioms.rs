//! Schedule idioms that several expert schedules share.

use compiler::schedule::Schedule;

/// Strips of `strip` rows of `output` in parallel, vectorized along x by
/// `lanes`; each of `producers` stored per strip and computed per row, so
/// that it slides down the strip (a line buffer).
pub(crate) fn line_buffered(s: &mut Schedule, output: &str, producers: &[&str], strip: i64, lanes: i64) {
    s.func(output).split("y", "yo", "yi", strip).parallel("yo").vectorize_by("x", lanes);
    for p in producers {
        s.func(p).store_at(output, "yo").compute_at(output, "yi").vectorize_by("x", lanes);
    }
}
