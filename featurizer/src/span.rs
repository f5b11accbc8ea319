//! Closed integer intervals `[min, max]` of concrete coordinates: loop
//! spans and regions at concrete sizes.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The coordinates `min..=max`; empty when `max < min`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Span {
    /// The first coordinate.
    pub min: i64,
    /// The last coordinate (inclusive).
    pub max: i64,
}

impl Span {
    /// The empty span: the identity of [`Span::union`].
    pub const EMPTY: Span = Span { min: i64::MAX, max: i64::MIN };

    /// The span `min..=max`.
    pub fn new(min: i64, max: i64) -> Span {
        Span { min, max }
    }

    /// Whether the span holds no coordinate (`max < min`).
    pub fn is_empty(self) -> bool {
        self.max < self.min
    }

    /// The number of coordinates (0 when empty).
    pub fn extent(self) -> i64 {
        if self.is_empty() {
            0
        } else {
            self.max - self.min + 1
        }
    }

    /// The smallest span holding both.
    pub fn union(self, other: Span) -> Span {
        Span { min: self.min.min(other.min), max: self.max.max(other.max) }
    }

    /// The slot values of `spans` for a compiled bound: min, max of each.
    pub fn slots(spans: &[Span]) -> Vec<i64> {
        spans.iter().flat_map(|s| [s.min, s.max]).collect()
    }

    /// The product of the extents of a region.
    pub fn volume(region: &[Span]) -> i64 {
        region.iter().map(|s| s.extent()).product()
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            write!(f, "[]")
        } else {
            write!(f, "[{}, {}]", self.min, self.max)
        }
    }
}
