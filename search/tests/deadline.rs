//! The same search gives the same answer however loaded the machine is,
//! when its budget cuts every full pass short (issue 64's defect 4: the
//! answer was the best state of the cut pass, completed greedily, so it
//! depended on how far the pass got). The quick pass (a beam of one)
//! finishes, the cut pass is dropped, and the answer is the quick pass's.
//!
//! Whether the legality check of that answer finishes within its share of
//! the budget still depends on the load: where it does not, the answer is
//! the fallback for lack of time, and says so (issue 64's bar of no
//! fallback for lack of time at the default budget, not this test's). So
//! answers are compared between runs that answered the same way: from the
//! search, or from the same fallback.

use apps::Size;
use compiler::Target;
use search::{autoschedule, Analytical, BeamOptions, Machine};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Busy threads that load every core until dropped.
struct Load(Arc<AtomicBool>, Vec<std::thread::JoinHandle<()>>);

impl Load {
    fn start() -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let handles = (0..threads)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 1u64;
                    while !stop.load(Ordering::Relaxed) {
                        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                    }
                })
            })
            .collect();
        Load(stop, handles)
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
        self.1.drain(..).for_each(|h| h.join().expect("a load thread"));
    }
}

#[test]
fn a_budget_that_cuts_every_full_pass_gives_one_answer_under_any_load() {
    let target = Target::host();
    // The largest app: one full pass at beam 32 takes seconds, the quick
    // pass a small share of that.
    let p = apps::build("local_laplacian", Size::Paper, &target).unwrap().pipeline;
    let search = |budget_ms: u64| {
        let options = BeamOptions { budget: Duration::from_millis(budget_ms), ..BeamOptions::default() };
        let mut model = Analytical::new(Machine::typical(target.threads));
        autoschedule(&p, &target, &mut model, &options, 0).unwrap().answer().expect("not abandoned")
    };
    let mut answers = vec![];
    for (budget_ms, loaded) in [(1000, false), (1000, true), (1500, false), (1500, true)] {
        let _load = loaded.then(Load::start);
        let a = search(budget_ms);
        eprintln!(
            "{budget_ms} ms, loaded {loaded}: quick pass {}, {} full passes, {:.0} ms",
            a.stats.quick_pass_completed,
            a.stats.passes_completed,
            a.stats.wall_seconds * 1e3
        );
        // A run that finished a full pass answers from it, and one that did
        // not finish the quick pass from a cut one: not this test's case.
        if a.stats.quick_pass_completed && a.stats.passes_completed == 0 {
            answers.push((budget_ms, loaded, std::mem::discriminant(&a.reason), a.schedule));
        }
    }
    let compared: Vec<_> = answers.iter().filter(|a| answers.iter().filter(|b| b.2 == a.2).count() >= 2).collect();
    assert!(compared.len() >= 2, "too few runs finished only the quick pass and answered alike to compare ({} of 4)", compared.len());
    for (budget_ms, loaded, how, schedule) in &compared {
        let first = compared.iter().find(|c| c.2 == *how).expect("itself");
        assert_eq!(
            schedule, &first.3,
            "{budget_ms} ms, loaded {loaded}: another answer than the first run that answered alike ({} ms, loaded {})",
            first.0, first.1
        );
    }
}

/// A full pass that cannot finish in the time left is not started: it
/// would be cut and dropped. With a beam so wide that one full pass would
/// take thousands of quick passes, the search answers from the quick pass
/// long before its budget, where it used to run the full pass into the
/// deadline.
#[test]
fn a_pass_that_cannot_finish_is_not_started() {
    let target = Target::host();
    let p = apps::build("blur", Size::Paper, &target).unwrap().pipeline;
    let dag = featurizer::Dag::new(&p, &target).unwrap();
    let mut model = Analytical::new(Machine::typical(target.threads));
    search::CostModel::set_pipeline(&mut model, &dag);
    let budget = Duration::from_secs(4);
    let options = BeamOptions { beam: 100_000, budget, ..BeamOptions::default() };
    let outcome = search::beam::beam_search(&dag, &model, &options);
    let st = &outcome.stats;
    assert!(st.quick_pass_completed && st.passes_completed == 0 && st.hit_deadline, "{st:?}");
    assert!(st.wall_seconds < budget.as_secs_f64() / 2.0, "the search ran into its deadline: {st:?}");
}
