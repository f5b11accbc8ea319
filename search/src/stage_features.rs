//! The schedule features of one candidate, by stage, stored so that a
//! successor shares them with its parent.
//!
//! A successor changes one Func's placement or tiling; every chain it
//! shares with its parent keeps its features. So each stage's features live
//! behind an `Arc`, and copying a candidate's features copies pointers.
//! One feature is not a stage's own: `working_set_at_root`, the bytes at
//! the root of every stage the candidate computes, which changes whenever
//! a Func is placed. It is kept once per candidate and written into each
//! computed stage's features as they are read ([`StageFeatures::get`],
//! [`StageFeatures::iter`]); [`StageFeatures::shared`] reads them as
//! stored, without it, for the search's inner loop.

use featurizer::{ScheduleFeatures, StageIdx};
use std::sync::Arc;

/// One stage's features.
#[derive(Clone, Debug)]
struct Entry {
    features: Arc<ScheduleFeatures>,
    /// The stage is computed (not inlined) by a featurized loop nest, so
    /// its `working_set_at_root` is the candidate's (stored as 0).
    computed: bool,
}

/// The features of every stage a candidate places, by stage.
#[derive(Clone, Debug, Default)]
pub struct StageFeatures {
    /// By stage index; `None` for a stage not placed.
    entries: Vec<Option<Entry>>,
    working_set_at_root: f64,
}

impl StageFeatures {
    /// Features of a featurized loop nest of a pipeline of `stages`
    /// stages: `computed` stages (stored with
    /// `working_set_at_root` 0) and `inlined` ones (stored complete); the
    /// working set at the root is the sum of the computed stages' bytes at
    /// the root.
    pub(crate) fn from_parts(
        stages: usize,
        computed: impl IntoIterator<Item = (StageIdx, Arc<ScheduleFeatures>)>,
        inlined: impl IntoIterator<Item = (StageIdx, ScheduleFeatures)>,
    ) -> StageFeatures {
        let mut out = StageFeatures { entries: vec![None; stages], working_set_at_root: 0.0 };
        for (s, features) in computed {
            debug_assert_eq!(features.working_set_at_root, 0.0);
            out.put(s, Entry { features, computed: true });
        }
        // Summed in stage order, so the same candidate sums the same way.
        out.working_set_at_root = out.shared_entries().map(|(_, e)| e.features.bytes_at_root).sum();
        for (s, features) in inlined {
            out.put(s, Entry { features: Arc::new(features), computed: false });
        }
        out
    }

    fn put(&mut self, s: StageIdx, entry: Entry) {
        let i = s.index();
        if self.entries.len() <= i {
            self.entries.resize(i + 1, None);
        }
        self.entries[i] = Some(entry);
    }

    fn complete(&self, entry: &Entry) -> ScheduleFeatures {
        let mut f = (*entry.features).clone();
        if entry.computed {
            f.working_set_at_root = self.working_set_at_root;
        }
        f
    }

    /// The features of stage `s`, if the candidate places it.
    pub fn get(&self, s: &StageIdx) -> Option<ScheduleFeatures> {
        self.entries.get(s.index())?.as_ref().map(|e| self.complete(e))
    }

    /// Whether the candidate places stage `s`.
    pub fn contains_key(&self, s: &StageIdx) -> bool {
        self.entries.get(s.index()).is_some_and(Option::is_some)
    }

    /// Every placed stage's features, by stage.
    pub fn iter(&self) -> impl Iterator<Item = (StageIdx, ScheduleFeatures)> + '_ {
        self.shared_entries().map(|(s, e)| (s, self.complete(e)))
    }

    /// The placed stages, in order.
    pub fn keys(&self) -> impl Iterator<Item = StageIdx> + '_ {
        self.shared_entries().map(|(s, _)| s)
    }

    /// Every placed stage's features as stored, without copying them: a
    /// computed stage's `working_set_at_root` reads 0 here (it is
    /// [`StageFeatures::working_set_at_root`]).
    pub fn shared(&self) -> impl Iterator<Item = (StageIdx, &ScheduleFeatures)> + '_ {
        self.shared_entries().map(|(s, e)| (s, &*e.features))
    }

    fn shared_entries(&self) -> impl Iterator<Item = (StageIdx, &Entry)> + '_ {
        self.entries.iter().enumerate().filter_map(|(i, e)| e.as_ref().map(|e| (StageIdx(i as u32), e)))
    }

    /// The bytes at the root of every stage the candidate computes.
    pub fn working_set_at_root(&self) -> f64 {
        self.working_set_at_root
    }

    /// The number of placed stages.
    pub fn len(&self) -> usize {
        self.entries.iter().filter(|e| e.is_some()).count()
    }

    /// Whether no stage is placed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Complete rows, as read back from a training store.
impl FromIterator<(StageIdx, ScheduleFeatures)> for StageFeatures {
    fn from_iter<I: IntoIterator<Item = (StageIdx, ScheduleFeatures)>>(rows: I) -> StageFeatures {
        let mut out = StageFeatures::default();
        for (s, features) in rows {
            out.put(s, Entry { features: Arc::new(features), computed: false });
        }
        out
    }
}

/// Equal when every stage reads the same (however it is stored).
impl PartialEq for StageFeatures {
    fn eq(&self, other: &StageFeatures) -> bool {
        self.iter().eq(other.iter())
    }
}
