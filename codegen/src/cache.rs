//! An in-memory cache of compiled pipelines, bounded (least recently used
//! entries go first), keyed by a hash of what determines the machine code:
//! the pipeline, the schedule, the lowering options, the host target and
//! the compiler version. Hashing the definitions, not the lowered statement,
//! keeps a lookup cheap for the large statements of long pipelines.

use super::jit::{compile, CompiledPipeline, HostTarget};
use super::CodegenError;
use compiler::lower::Lowered;
use lru::LruCache;
use std::hash::{Hash, Hasher};
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, OnceLock};

/// Entries the process-wide cache keeps.
pub const DEFAULT_CAPACITY: usize = 256;

/// Compiled pipelines by key, at most `capacity` of them.
pub struct JitCache {
    target: HostTarget,
    entries: Mutex<LruCache<u64, Arc<CompiledPipeline>>>,
}

impl JitCache {
    /// A cache of at most `capacity` compiled pipelines (at least one).
    pub fn new(capacity: usize) -> JitCache {
        let capacity = NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN);
        JitCache { target: HostTarget::detect(), entries: Mutex::new(LruCache::new(capacity)) }
    }

    /// The process-wide cache, of [`DEFAULT_CAPACITY`] entries.
    pub fn global() -> &'static JitCache {
        static CACHE: OnceLock<JitCache> = OnceLock::new();
        CACHE.get_or_init(|| JitCache::new(DEFAULT_CAPACITY))
    }

    fn key(&self, lowered: &Lowered) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        encoded(&lowered.pipeline).hash(&mut h);
        encoded(&lowered.schedule).hash(&mut h);
        lowered.options.check_accesses.hash(&mut h);
        self.target.hash(&mut h);
        env!("CARGO_PKG_VERSION").hash(&mut h);
        h.finish()
    }

    /// The compiled form of `lowered`, compiling it on a miss.
    pub fn get_or_compile(&self, lowered: &Lowered) -> Result<Arc<CompiledPipeline>, CodegenError> {
        let key = self.key(lowered);
        if let Some(hit) = self.lock().get(&key) {
            return Ok(hit.clone());
        }
        let compiled = Arc::new(compile(lowered)?);
        Ok(self.lock().get_or_insert(key, || compiled.clone()).clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LruCache<u64, Arc<CompiledPipeline>>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many pipelines are cached.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no pipeline is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The bytes of a key's part: an exact encoding (floats by their bits,
/// NaN and infinities included).
fn encoded<T: serde::Serialize>(v: &T) -> Vec<u8> {
    bincode::serialize(v).unwrap_or_else(|e| format!("unencodable: {e}").into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lower(s: &compiler::schedule::Schedule) -> Lowered {
        compiler::lower::lower(&compiler::examples::blur(), s).expect("the demo schedules are legal")
    }

    #[test]
    fn the_same_lowered_pipeline_compiles_once() {
        let cache = JitCache::new(4);
        let first = cache.get_or_compile(&lower(&crate::demo::blur_schedule())).unwrap();
        let again = cache.get_or_compile(&lower(&crate::demo::blur_schedule())).unwrap();
        assert!(Arc::ptr_eq(&first, &again), "a hit returns the compiled pipeline");
        let other = cache.get_or_compile(&lower(&compiler::schedule::Schedule::new())).unwrap();
        assert!(!Arc::ptr_eq(&first, &other), "another schedule is another entry");
        assert_eq!(cache.len(), 2);
    }

    /// Pipelines that differ only in a float constant (infinities and
    /// neighbouring floats included) are different entries.
    #[test]
    fn float_constants_are_keyed_exactly() {
        use compiler::{Func, ImageParam, Pipeline, ScalarType, Var};
        let scaled = |c: f32| {
            let x = Var::new("x");
            let input = ImageParam::new("input", ScalarType::F32, 1);
            let f = Func::new("f");
            f.define(&[&x], input.at([x.expr()]) * c);
            compiler::lower::lower(&Pipeline::new(&[&f]).unwrap(), &compiler::schedule::Schedule::new()).unwrap()
        };
        let cache = JitCache::new(8);
        let constants = [1.0f32, f32::from_bits(1.0f32.to_bits() + 1), f32::INFINITY, f32::NEG_INFINITY];
        let keys: std::collections::HashSet<u64> = constants.iter().map(|&c| cache.key(&scaled(c))).collect();
        assert_eq!(keys.len(), constants.len());
    }

    #[test]
    fn the_least_recently_used_entry_is_evicted() {
        let cache = JitCache::new(2);
        let schedules: Vec<compiler::schedule::Schedule> = [4, 8, 16]
            .iter()
            .map(|&rows| {
                let mut s = compiler::schedule::Schedule::new();
                s.func("blur_y").split("y", "yo", "yi", rows);
                s
            })
            .collect();
        let a = cache.get_or_compile(&lower(&schedules[0])).unwrap();
        cache.get_or_compile(&lower(&schedules[1])).unwrap();
        assert!(Arc::ptr_eq(&a, &cache.get_or_compile(&lower(&schedules[0])).unwrap()), "a is recent again");
        cache.get_or_compile(&lower(&schedules[2])).unwrap();
        assert_eq!(cache.len(), 2, "bounded");
        assert!(Arc::ptr_eq(&a, &cache.get_or_compile(&lower(&schedules[0])).unwrap()), "a survived; b was evicted");
    }
}
