//! Deep recursion on a thread of its own: the reference evaluator and the
//! passes of lowering recurse over expression trees (and the evaluator over
//! Func-to-Func calls), which a long pipeline makes deeper than a default
//! thread's stack holds.

/// Stack size of the threads [`on_large_stack`] starts: room for the
/// reference evaluator's default depth ([`crate::exec::reference::Limits`])
/// with a wide margin (a nested evaluation uses well under 1 KiB of stack;
/// see its `deep_nesting_*` tests).
pub const STACK_BYTES: usize = 256 << 20;

/// Runs `f` on a scoped thread with a [`STACK_BYTES`] stack, for callers
/// that recurse over deep pipelines (lowering, or driving a reference
/// `Evaluator` themselves); a panic of `f` resumes in the caller.
pub fn on_large_stack<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .name("large-stack".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(s, f)
            .unwrap_or_else(|e| panic!("cannot start a thread with a large stack: {e}"));
        worker.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}
