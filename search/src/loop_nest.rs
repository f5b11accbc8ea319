//! A candidate schedule as a tree of loop nests, shared between candidates
//! and never changed in place: a successor copies the path it changes and
//! shares every other subtree (`Arc`).
//!
//! The root stands for "outside every loop". Each stage a candidate
//! computes is a chain of nodes from its compute site down to its innermost
//! node: every node of the chain holds, per loop of the stage (innermost
//! first), how many iterations run at that level (`size`) and the span the
//! loop covers per iteration of the node's parent (`whole`). One
//! iteration of a node covers `ceil(whole / size)` of each loop; its
//! children (the next node of the chain and the Funcs computed there) see
//! that much. The innermost node holds the vectorized loop and the
//! reduction loops, and the Funcs inlined into the stage.
//!
//! Regions are concrete (spans at the estimates). A Func's region at a
//! node is what its consumers inside the node need per iteration, through
//! the DAG's compiled bounds.

use featurizer::{Dag, NodeId, Span, StageIdx};
use fnv::FnvHashMap as HashMap;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One level of a loop nest.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LoopNest {
    /// The stage whose loops these are (`None` for the root).
    pub stage: Option<StageIdx>,
    /// Iterations of each of the stage's loops at this level.
    pub size: Vec<i64>,
    /// The span of each loop over all iterations of this level.
    pub whole: Vec<Span>,
    /// The nodes one level in: the next node of this stage's chain and the
    /// chains of the Funcs computed at this level.
    pub children: Vec<Arc<LoopNest>>,
    /// Funcs inlined into this innermost node, with their call counts.
    pub inlined: BTreeMap<NodeId, i64>,
    /// Funcs whose storage is allocated at this level.
    pub store_at: Vec<NodeId>,
    /// The innermost node of the stage's chain.
    pub innermost: bool,
    /// This level's loops run in parallel.
    pub parallel: bool,
    /// The vectorized loop of an innermost node.
    pub vector_loop: Option<usize>,
    /// [`structural_hash`] of the whole subtree, once asked (nodes never
    /// change once shared; a clone starts without it).
    pub full_hash: Memo<u64>,
    /// [`LoopNest::level_regions`], once asked.
    pub regions: Memo<Arc<LevelRegions>>,
    /// The regions of the level this one is a copy of, when it was made
    /// by [`LoopNest::copy_to_change_children`].
    pub inherited: Memo<Arc<LevelRegions>>,
}

/// A value worked out from a node once it is shared (and so never changes
/// again), kept with it; not part of the node's value: equal, hashed and
/// cloned as nothing, so a copy made to be changed starts without it.
#[derive(Debug)]
pub struct Memo<T>(std::sync::OnceLock<T>);

impl<T> Default for Memo<T> {
    fn default() -> Memo<T> {
        Memo(std::sync::OnceLock::new())
    }
}

impl<T> Clone for Memo<T> {
    fn clone(&self) -> Memo<T> {
        Memo::default()
    }
}

impl<T> PartialEq for Memo<T> {
    fn eq(&self, _: &Memo<T>) -> bool {
        true
    }
}

impl<T> Eq for Memo<T> {}

impl<T> std::hash::Hash for Memo<T> {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

/// The region one iteration of a level needs of each Func computed or
/// stored at it.
pub type LevelRegions = HashMap<NodeId, Arc<[Span]>>;

impl LoopNest {
    /// The empty root.
    pub fn root() -> LoopNest {
        LoopNest {
            stage: None,
            size: vec![],
            whole: vec![],
            children: vec![],
            inlined: BTreeMap::new(),
            store_at: vec![],
            innermost: false,
            parallel: false,
            vector_loop: None,
            full_hash: Memo::default(),
            regions: Memo::default(),
            inherited: Memo::default(),
        }
    }

    /// Whether this is the root (outside every loop).
    pub fn is_root(&self) -> bool {
        self.stage.is_none()
    }

    /// The span of each loop in one iteration of this level.
    pub fn inner(&self) -> Vec<Span> {
        self.whole
            .iter()
            .zip(&self.size)
            .map(|(w, &n)| {
                let e = (w.extent() + n - 1) / n.max(1);
                Span::new(w.min, w.min + e - 1)
            })
            .collect()
    }

    /// Iterations of this level: the product of its sizes.
    pub fn iterations(&self) -> i64 {
        self.size.iter().product()
    }

    /// The child that continues `stage`'s chain below this level.
    pub fn stage_child(&self, stage: StageIdx) -> Option<&Arc<LoopNest>> {
        self.children.iter().find(|c| c.stage == Some(stage))
    }

    /// The chain of this node's stage, from this node (its top) down to its
    /// innermost node.
    pub fn chain(&self) -> Vec<&LoopNest> {
        let stage = self.stage.expect("a chain has a stage");
        let mut chain = vec![self];
        while let Some(next) = chain.last().unwrap().stage_child(stage) {
            chain.push(next);
        }
        chain
    }

    /// Whether this subtree computes or inlines any stage of `node`.
    pub fn computes(&self, dag: &Dag, node: NodeId) -> bool {
        self.stage.is_some_and(|s| dag.stage(s).node == node)
            || self.inlined.contains_key(&node)
            || self.children.iter().any(|c| c.computes(dag, node))
    }

    /// Whether this subtree calls `node`: computes a consumer of it (or
    /// inlines one).
    pub fn calls(&self, dag: &Dag, node: NodeId) -> bool {
        dag.node(node).outgoing.iter().any(|&e| self.computes(dag, dag.stage(dag.edge(e).consumer).node))
    }

    /// Marks in `out` (by node index) every node this subtree computes or
    /// inlines a stage of.
    fn mark_computed(&self, dag: &Dag, out: &mut [bool]) {
        if let Some(s) = self.stage {
            out[dag.stage(s).node.index()] = true;
        }
        for g in self.inlined.keys() {
            out[g.index()] = true;
        }
        for c in &self.children {
            c.mark_computed(dag, out);
        }
    }

    /// The region one iteration of this level needs of each Func whose
    /// chain starts here or that is stored here: worked out once per node
    /// (successors share most nodes with their parent). At the root, where
    /// it is the region at the estimates, callers read the DAG instead: the
    /// root is new with every candidate, so a map there would be built for
    /// one use.
    pub fn level_regions(&self, dag: &Dag) -> &LevelRegions {
        self.regions.0.get_or_init(|| {
            let mut memo = RegionMemo::default();
            let chains = self.children.iter().filter(|c| c.stage != self.stage).filter_map(|c| c.stage.map(|s| dag.stage(s).node));
            let mut out = self.inherited.0.get().map(|r| (**r).clone()).unwrap_or_default();
            for node in chains.chain(self.store_at.iter().copied()) {
                if let std::collections::hash_map::Entry::Vacant(slot) = out.entry(node) {
                    slot.insert(self.region_required(dag, node, &mut memo).into());
                }
            }
            Arc::new(out)
        })
    }

    /// A copy of this level for the search to change its children while
    /// deciding a Func: placing it here or inside, inlining it, or tiling
    /// its own chain, never changing this level's loops. The copy keeps
    /// the regions worked out for this level (or inherited by it), and
    /// works out only those of Funcs they lack: a Func decided earlier is
    /// never a producer of the Func being decided (decisions go consumers
    /// first), so nothing the change adds reads it, and its region here
    /// stays what it was.
    pub fn copy_to_change_children(&self) -> LoopNest {
        let copy = self.clone();
        if let Some(regions) = self.regions.0.get().or(self.inherited.0.get()) {
            copy.inherited.0.set(regions.clone()).expect("a fresh copy has inherited nothing");
        }
        copy
    }

    /// The region of `node` that one iteration of `self` needs, given
    /// that every consumer of it this subtree computes lies inside.
    pub fn region_required(&self, dag: &Dag, node: NodeId, memo: &mut RegionMemo) -> Vec<Span> {
        if self.is_root() {
            return dag.node(node).region_required.clone();
        }
        if let Some(r) = memo.regions.get(&node) {
            return r.clone();
        }
        let n = dag.node(node);
        let mut region = vec![Span::EMPTY; n.dims.len()];
        let inner = self.inner();
        for &e in &n.outgoing {
            let edge = dag.edge(e);
            let consumer = dag.stage(edge.consumer);
            let loops = if self.stage == Some(edge.consumer) {
                inner.clone()
            } else if memo.computed(self, dag)[consumer.node.index()] {
                let required = self.region_required(dag, consumer.node, memo);
                consumer.loop_spans(&dag.node(consumer.node).region_computed_for(&required))
            } else {
                continue;
            };
            for (have, want) in region.iter_mut().zip(edge.region_read(&loops)) {
                *have = have.union(want);
            }
        }
        memo.regions.insert(node, region.clone());
        region
    }
}

/// What [`LoopNest::region_required`] has worked out at one level: the
/// regions so far, and which nodes the level's subtree computes (one walk
/// of the subtree, the first time it is asked).
#[derive(Debug, Default)]
pub struct RegionMemo {
    regions: HashMap<NodeId, Vec<Span>>,
    computed: Option<Vec<bool>>,
}

impl RegionMemo {
    fn computed(&mut self, level: &LoopNest, dag: &Dag) -> &[bool] {
        self.computed.get_or_insert_with(|| {
            let mut out = vec![false; dag.nodes.len()];
            level.mark_computed(dag, &mut out);
            out
        })
    }
}

/// The chains that compute every stage of `node` over `region` (its
/// required region at the site), pure definition first: the top node runs
/// every pure loop whole, except that the vector loop runs in vectors of
/// `vector` lanes in an innermost child, which also runs the reduction
/// loops.
pub fn compute_here(dag: &Dag, node: NodeId, region: &[Span]) -> Vec<LoopNest> {
    let n = dag.node(node);
    let computed = n.region_computed_for(region);
    n.stages
        .iter()
        .map(|&s| {
            let stage = dag.stage(s);
            let whole = stage.loop_spans(&computed);
            let vector_loop = vector_loop(dag, s, &whole);
            let lanes = stage.vector_size;
            let mut top_size = vec![1; whole.len()];
            let mut leaf_size = vec![1; whole.len()];
            for (i, l) in stage.loops.iter().enumerate() {
                if l.is_rvar {
                    leaf_size[i] = whole[i].extent().max(1);
                } else if Some(i) == vector_loop {
                    top_size[i] = (whole[i].extent() + lanes - 1) / lanes;
                    leaf_size[i] = lanes.min(whole[i].extent()).max(1);
                } else {
                    top_size[i] = whole[i].extent().max(1);
                }
            }
            let mut top = LoopNest { stage: Some(s), size: top_size, whole, ..LoopNest::root() };
            let leaf = LoopNest { stage: Some(s), size: leaf_size, whole: top.inner(), innermost: true, vector_loop, ..LoopNest::root() };
            top.children.push(Arc::new(leaf));
            top
        })
        .collect()
}

/// The loop to vectorize: the one over the innermost storage dimension
/// when it is a pure loop at least a vector wide.
fn vector_loop(dag: &Dag, s: StageIdx, whole: &[Span]) -> Option<usize> {
    let stage = dag.stage(s);
    let i = stage.loops.iter().position(|l| l.pure_dim == Some(0))?;
    (whole[i].extent() >= stage.vector_size && stage.vector_size > 1).then_some(i)
}

/// A hash of the nest's structure down to `depth` levels below the root
/// (which Funcs are where, how each level is tiled, what is parallel or
/// vectorized): candidates equal to that depth are "close" in the
/// coarse-to-fine search.
pub fn structural_hash(node: &LoopNest, depth: usize) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = fnv::FnvHasher::default();
    node.stage.hash(&mut h);
    node.size.hash(&mut h);
    node.parallel.hash(&mut h);
    node.vector_loop.hash(&mut h);
    node.store_at.hash(&mut h);
    node.inlined.hash(&mut h);
    if depth > 0 {
        node.children.len().hash(&mut h);
        for c in &node.children {
            child_hash(c, depth - 1).hash(&mut h);
        }
    }
    h.finish()
}

/// A child's [`structural_hash`]: a whole subtree's is computed once per
/// node and kept, since the search hashes every candidate whole and
/// candidates share most of their nodes.
fn child_hash(node: &LoopNest, depth: usize) -> u64 {
    if depth >= usize::MAX / 2 {
        *node.full_hash.0.get_or_init(|| structural_hash(node, depth))
    } else {
        structural_hash(node, depth)
    }
}
