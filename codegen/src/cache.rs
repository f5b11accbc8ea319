//! An in-memory cache of compiled pipelines, keyed by what determines the
//! machine code: the lowered statement (which reflects the pipeline and its
//! schedule), the argument signature and the host target.

use super::jit::{compile, signature_key, CompiledPipeline, HostTarget};
use super::CodegenError;
use compiler::lower::Lowered;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Compiled pipelines by key.
pub struct JitCache {
    target: HostTarget,
    entries: Mutex<HashMap<String, Arc<CompiledPipeline>>>,
}

impl JitCache {
    /// The process-wide cache.
    pub fn global() -> &'static JitCache {
        static CACHE: OnceLock<JitCache> = OnceLock::new();
        CACHE.get_or_init(|| JitCache { target: HostTarget::detect(), entries: Mutex::new(HashMap::new()) })
    }

    fn key(&self, lowered: &Lowered) -> String {
        format!("{} {}\n{}\n{:?}", self.target.cpu, self.target.features, signature_key(&lowered.pipeline), lowered.stmt)
    }

    /// The compiled form of `lowered`, compiling it on a miss.
    pub fn get_or_compile(&self, lowered: &Lowered) -> Result<Arc<CompiledPipeline>, CodegenError> {
        let key = self.key(lowered);
        if let Some(hit) = self.entries.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(hit.clone());
        }
        let compiled = Arc::new(compile(lowered)?);
        self.entries.lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_insert_with(|| compiled.clone());
        Ok(compiled)
    }

    /// How many pipelines are cached.
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_lowered_pipeline_compiles_once() {
        let p = crate::demo::blur_pipeline();
        let lower = |s: &compiler::schedule::Schedule| compiler::lower::lower(&p, s).expect("the demo schedules are legal");
        let cache = JitCache::global();
        let first = cache.get_or_compile(&lower(&crate::demo::blur_schedule())).unwrap();
        let again = cache.get_or_compile(&lower(&crate::demo::blur_schedule())).unwrap();
        assert!(Arc::ptr_eq(&first, &again), "a hit returns the compiled pipeline");
        let other = cache.get_or_compile(&lower(&compiler::schedule::Schedule::new())).unwrap();
        assert!(!Arc::ptr_eq(&first, &other), "another schedule is another entry");
        assert!(cache.len() >= 2);
    }
}
