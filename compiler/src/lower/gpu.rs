//! GPU kernels: the loop nests of a GPU schedule checked against a GPU
//! target and put in the form a kernel runs in.
//!
//! Requires: the final statement of lowering under a schedule with
//! `gpu_blocks` and `gpu_threads` loops. Guarantees, or a [`GpuError`]
//! naming the Func and loop at fault:
//!
//! - every store is inside a kernel: an outermost `gpu_blocks` loop, with
//!   at most two more block loops directly inside it (lets between them),
//!   each of whose extents the host can evaluate at launch;
//! - inside a kernel, the code outside thread loops (lets, conditions,
//!   serial loops, shared allocations of constant size) is the same for
//!   every thread of a block; each nest of `gpu_threads` loops (at most
//!   three, directly nested, constant extents) is rewritten over the
//!   kernel's one thread index space — loops named [`THREAD_IDS`] from 0
//!   to the block's extent in that dimension, the original loop variables
//!   bound inside a guard — so that every nest is a complete nest over
//!   the block's threads, and a store outside every nest runs in thread
//!   `(0, 0, 0)` alone. A barrier follows each nest (the code generator
//!   places it); run in order, as the IR interpreter runs them, the nests
//!   compute what the GPU does;
//! - threads per block and shared memory per block are within the
//!   target's limits; storage inside a thread nest (local memory) has a
//!   constant size.
//!
//! Block loops keep their names, mins and extents: the code generator
//! binds the innermost to the block index in x, the next to y, then z;
//! thread loops likewise (innermost x).

use crate::analysis::const_range::const_range;
use crate::error::GpuError;
use crate::ir::expr::{CmpOp, Expr, Name};
use crate::ir::stmt::{ForKind, Stmt, StmtNode};
use crate::ir::types::{ScalarType, Type};
use crate::ir::visit::{free_vars, mutate_stmt_children, substitute_map, Mutator, Visitor};
use crate::lower::names::parse_stage_var;
use crate::simplify::simplify;
use crate::target::GpuTarget;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// The loop variables of a kernel's thread index space, x first.
pub const THREAD_IDS: [&str; 3] = ["gpu.thread.x", "gpu.thread.y", "gpu.thread.z"];

/// The largest storage a kernel allocates, in bytes: the local memory one
/// thread may have (512 KiB on every architecture since sm_20), more than
/// any block's shared memory.
pub const MAX_STORAGE_BYTES: i64 = 512 * 1024;

/// One dimension of a kernel's grid: a block loop.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlockDim {
    /// The block loop's variable.
    pub var: Name,
    /// Its number of iterations: blocks in this dimension (evaluable on
    /// the host, before the launch).
    pub extent: Expr,
}

/// A buffer in a kernel's shared memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SharedBuffer {
    /// The buffer (the Func stored).
    pub name: Name,
    /// Its element type.
    pub elem: ScalarType,
    /// Its number of elements.
    pub elems: i64,
}

/// A kernel of a GPU-scheduled statement: an outermost block loop nest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Kernel {
    /// The name of the outermost block loop, which identifies the kernel in
    /// the statement.
    pub name: Name,
    /// The grid, x first (the innermost block loop).
    pub blocks: Vec<BlockDim>,
    /// Threads per block in each dimension, x first (empty: one thread).
    pub threads: Vec<i64>,
    /// The buffers in shared memory.
    pub shared: Vec<SharedBuffer>,
}

impl Kernel {
    /// Threads per block.
    pub fn threads_per_block(&self) -> i64 {
        self.threads.iter().product()
    }

    /// Bytes of shared memory per block.
    pub fn shared_bytes(&self) -> i64 {
        self.shared.iter().map(|b| b.elems * b.elem.bytes() as i64).sum()
    }
}

/// Checks the kernels of `stmt` against `target` and rewrites their
/// thread loops (see the module doc); returns the statement and the
/// kernels, in the order they run.
pub(crate) fn outline(stmt: &Stmt, target: &GpuTarget) -> Result<(Stmt, Vec<Kernel>), GpuError> {
    let mut host = Host { target, kernels: vec![], error: None };
    let out = host.mutate_stmt(stmt);
    match host.error {
        Some(e) => Err(e),
        None => Ok((out, host.kernels)),
    }
}

/// The Func and loop a loop variable belongs to, for messages.
fn func_and_loop(var: &str) -> (String, String) {
    match parse_stage_var(var) {
        Some((f, _, v)) => (f.to_string(), v.to_string()),
        None => (var.to_string(), var.to_string()),
    }
}

/// The Func a buffer stores (a Tuple Func's buffers are `f.0`, `f.1`).
fn func_of_buffer(buffer: &str) -> String {
    match buffer.rsplit_once('.') {
        Some((f, i)) if i.chars().all(|c| c.is_ascii_digit()) => f.to_string(),
        _ => buffer.to_string(),
    }
}

/// The walk outside kernels: finds each kernel, refuses stores and thread
/// loops outside them.
struct Host<'t> {
    target: &'t GpuTarget,
    kernels: Vec<Kernel>,
    error: Option<GpuError>,
}

impl Mutator for Host<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        e.clone()
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if self.error.is_some() {
            return s.clone();
        }
        match s.node() {
            StmtNode::For { kind: ForKind::GpuBlock, .. } => match kernel(s, self.target) {
                Ok((out, k)) => {
                    self.kernels.push(k);
                    out
                }
                Err(e) => {
                    self.error = Some(e);
                    s.clone()
                }
            },
            StmtNode::For { name, kind: ForKind::GpuThread, .. } => {
                let (func, var) = func_and_loop(name);
                self.error = Some(GpuError::ThreadsOutsideBlocks { func, var });
                s.clone()
            }
            StmtNode::Store { buffer, .. } => {
                self.error = Some(GpuError::HostComputation { func: func_of_buffer(buffer) });
                s.clone()
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}

/// One kernel: its block loops, then its body rewritten.
fn kernel(s: &Stmt, target: &GpuTarget) -> Result<(Stmt, Kernel), GpuError> {
    let name = match s.node() {
        StmtNode::For { name, .. } => name.clone(),
        _ => unreachable!("a kernel starts at a block loop"),
    };
    // The block loops, outermost first, and the names bound in the kernel
    // before each (outer block loops and the lets between them).
    let mut blocks = vec![];
    let mut bound: HashSet<Name> = HashSet::new();
    let mut spine = vec![];
    let mut cur = s.clone();
    loop {
        match cur.node() {
            StmtNode::For { name: var, min, extent, kind: ForKind::GpuBlock, body } => {
                let (func, loop_name) = func_and_loop(var);
                if blocks.len() == 3 {
                    return Err(GpuError::TooManyDimensions { func, var: loop_name, what: "block" });
                }
                if free_vars(extent).iter().any(|v| bound.contains(v)) {
                    return Err(GpuError::BlockExtentVaries { func, var: loop_name, extent: extent.to_string() });
                }
                blocks.push(BlockDim { var: var.clone(), extent: extent.clone() });
                bound.insert(var.clone());
                spine.push(Spine::Loop(var.clone(), min.clone(), extent.clone()));
                cur = body.clone();
            }
            StmtNode::LetStmt { name: n, value, body } => {
                bound.insert(n.clone());
                spine.push(Spine::Let(n.clone(), value.clone()));
                cur = body.clone();
            }
            _ => break,
        }
    }
    blocks.reverse();
    // First the shape of the thread space, then the nests over it.
    let mut lets = Lets::default();
    for part in &spine {
        if let Spine::Let(n, v) = part {
            lets.bind(n, v);
        }
    }
    let mut sizes = Sizes { lets, loops: HashMap::new(), in_threads: false, error: None };
    let cur = sizes.mutate_stmt(&cur);
    if let Some(e) = sizes.error {
        return Err(e);
    }
    let mut shape = Shape { kernel: name.clone(), threads: vec![], shared: vec![] };
    shape.body(&cur)?;
    let threads = shape.threads.clone();
    let per_block: i64 = threads.iter().product();
    if per_block > target.max_threads_per_block as i64 {
        let dims = threads.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(" * ");
        return Err(GpuError::TooManyThreads { kernel: name.to_string(), threads: per_block, dims, limit: target.max_threads_per_block });
    }
    let k = Kernel { name: name.clone(), blocks, threads, shared: shape.shared };
    if k.shared_bytes() > target.shared_bytes_per_block as i64 {
        let bytes = |b: &SharedBuffer| b.elems * b.elem.bytes() as i64;
        let funcs = k.shared.iter().map(|b| format!("{} {} bytes", b.name, bytes(b))).collect::<Vec<_>>().join(", ");
        let largest = k.shared.iter().max_by_key(|b| bytes(b)).map_or(String::new(), |b| func_of_buffer(&b.name));
        return Err(GpuError::SharedMemoryExceeded {
            kernel: name.to_string(),
            bytes: k.shared_bytes(),
            funcs,
            largest,
            limit: target.shared_bytes_per_block,
        });
    }
    let body = Nests { threads: &k.threads }.body(&cur);
    let out = spine.into_iter().rev().fold(body, |inner, part| match part {
        Spine::Loop(var, min, extent) => Stmt::for_loop(var, min, extent, ForKind::GpuBlock, inner),
        Spine::Let(n, value) => Stmt::let_stmt(n, value, inner),
    });
    Ok((out, k))
}

/// A block loop or a let of a kernel's outer spine.
enum Spine {
    Loop(Name, Expr, Expr),
    Let(Name, Expr),
}

/// A nest of thread loops: its loops (outermost first) and the lets
/// between them, in order, and the statement inside.
struct Nest {
    parts: Vec<NestPart>,
    body: Stmt,
}

enum NestPart {
    /// A thread loop: its variable, min and constant extent.
    Loop(Name, Expr, i64),
    Let(Name, Expr),
}

impl Nest {
    /// The thread loops of the nest starting at `s` (a thread loop),
    /// checked: constant extents, at most three.
    fn of(s: &Stmt) -> Result<Nest, GpuError> {
        let mut parts = vec![];
        let mut loops = 0;
        let mut cur = s.clone();
        loop {
            match cur.node() {
                StmtNode::For { name, min, extent, kind: ForKind::GpuThread, body } => {
                    let (func, var) = func_and_loop(name);
                    if loops == 3 {
                        return Err(GpuError::TooManyDimensions { func, var, what: "thread" });
                    }
                    let Some(n) = simplify(extent).as_int() else {
                        return Err(GpuError::ThreadExtentNotConstant { func, var, extent: extent.to_string() });
                    };
                    parts.push(NestPart::Loop(name.clone(), min.clone(), n.max(0)));
                    loops += 1;
                    cur = body.clone();
                }
                StmtNode::LetStmt { name, value, body } => {
                    parts.push(NestPart::Let(name.clone(), value.clone()));
                    cur = body.clone();
                }
                _ => break,
            }
        }
        Ok(Nest { parts, body: cur })
    }

    /// The extents of the nest's loops, x (innermost) first.
    fn extents(&self) -> Vec<i64> {
        self.parts
            .iter()
            .rev()
            .filter_map(|p| match p {
                NestPart::Loop(_, _, n) => Some(*n),
                NestPart::Let(..) => None,
            })
            .collect()
    }

    /// The innermost thread loop's variable.
    fn innermost(&self) -> Name {
        self.parts
            .iter()
            .rev()
            .find_map(|p| match p {
                NestPart::Loop(n, ..) => Some(n.clone()),
                NestPart::Let(..) => None,
            })
            .expect("a nest has a loop")
    }
}

/// The first pass over a kernel's body: the thread space (the largest
/// extent of any nest in each dimension), the shared buffers, and the
/// errors.
struct Shape {
    kernel: Name,
    threads: Vec<i64>,
    shared: Vec<SharedBuffer>,
}

/// Let-bound names and their values with every let in scope substituted.
#[derive(Clone, Default)]
struct Lets(HashMap<Name, Expr>);

impl Lets {
    fn bind(&mut self, name: &Name, value: &Expr) -> Option<Expr> {
        let v = simplify(&substitute_map(&self.0, value));
        self.0.insert(name.clone(), v)
    }

    fn unbind(&mut self, name: &Name, shadowed: Option<Expr>) {
        match shadowed {
            Some(v) => self.0.insert(name.clone(), v),
            None => self.0.remove(name),
        };
    }

    /// The largest value `size` can take, if a constant bounds it once the
    /// lets are substituted (a region read through a clamp or at a
    /// fraction of the consumer's is smaller at some blocks than at
    /// others, never larger than its bound).
    fn constant_bound(&self, size: &Expr, loops: &HashMap<Name, (i64, i64)>) -> Option<i64> {
        const_range(&substitute_map(&self.0, size), loops).1
    }
}

/// Gives every allocation of a kernel its constant upper bound as its
/// size (the realization's indexing keeps its own extents): shared memory
/// and local arrays are sized when the kernel is compiled.
struct Sizes {
    lets: Lets,
    /// The ranges of the loop variables in scope whose bounds are
    /// constants.
    loops: HashMap<Name, (i64, i64)>,
    in_threads: bool,
    error: Option<GpuError>,
}

impl Mutator for Sizes {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        e.clone()
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if self.error.is_some() {
            return s.clone();
        }
        match s.node() {
            StmtNode::LetStmt { name, value, .. } => {
                let shadowed = self.lets.bind(name, value);
                let out = mutate_stmt_children(self, s);
                self.lets.unbind(name, shadowed);
                out
            }
            StmtNode::For { name, min, extent, kind, .. } => {
                let inside = self.in_threads || *kind == ForKind::GpuThread;
                let outer = std::mem::replace(&mut self.in_threads, inside);
                let (min, extent) = (simplify(&substitute_map(&self.lets.0, min)), simplify(&substitute_map(&self.lets.0, extent)));
                let shadowed = match (min.as_int(), extent.as_int()) {
                    (Some(m), Some(e)) if e > 0 => self.loops.insert(name.clone(), (m, m + e - 1)),
                    _ => self.loops.remove(name),
                };
                let out = mutate_stmt_children(self, s);
                match shadowed {
                    Some(r) => self.loops.insert(name.clone(), r),
                    None => self.loops.remove(name),
                };
                self.in_threads = outer;
                out
            }
            StmtNode::Allocate { buffer, ty, size, body } => {
                let bytes = ty.scalar.bytes() as i64;
                let fits = |n: &i64| n.checked_mul(bytes).is_some_and(|b| b <= MAX_STORAGE_BYTES);
                let Some(elems) = self.lets.constant_bound(size, &self.loops).filter(fits) else {
                    let shared = !self.in_threads && (has_thread_loop(body) || !has_store(body));
                    let memory = if shared { "shared" } else { "local" };
                    self.error = Some(GpuError::StorageNotConstant {
                        func: func_of_buffer(buffer),
                        memory,
                        size: size.to_string(),
                        max_bytes: MAX_STORAGE_BYTES,
                    });
                    return s.clone();
                };
                let body = self.mutate_stmt(body);
                Stmt::new(StmtNode::Allocate { buffer: buffer.clone(), ty: *ty, size: Expr::i32(elems.max(1)), body })
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}

impl Shape {
    fn body(&mut self, s: &Stmt) -> Result<(), GpuError> {
        match s.node() {
            StmtNode::For { kind: ForKind::GpuThread, .. } => {
                let nest = Nest::of(s)?;
                for (d, n) in nest.extents().into_iter().enumerate() {
                    if self.threads.len() <= d {
                        self.threads.push(1);
                    }
                    self.threads[d] = self.threads[d].max(n);
                }
                check_thread_body(&nest.body, &nest.innermost(), &self.kernel)
            }
            StmtNode::For { name, kind, body, .. } => {
                let (func, var) = func_and_loop(name);
                match kind {
                    ForKind::GpuBlock => Err(GpuError::BlocksInsideKernel { func, var, kernel: self.kernel.to_string() }),
                    ForKind::Parallel => Err(GpuError::ParallelInsideKernel { func, var }),
                    _ => self.body(body),
                }
            }
            StmtNode::Allocate { buffer, ty, size, body } => {
                // Storage around thread nests (or around no store) stays
                // outside them, in shared memory; storage of code that only
                // thread 0 runs goes with that code, into local memory.
                if has_thread_loop(body) || !has_store(body) {
                    let elems = size.as_int().expect("sized by Sizes");
                    self.shared.push(SharedBuffer { name: buffer.clone(), elem: ty.scalar, elems });
                }
                self.body(body)
            }
            StmtNode::Store { .. } => Ok(()),
            _ => {
                let (_, children) = crate::ir::visit::stmt_children(s);
                children.iter().try_for_each(|c| self.body(c))
            }
        }
    }
}

/// Checks the statement inside a thread nest: no block, thread or
/// parallel loops, storage of constant size.
fn check_thread_body(s: &Stmt, outer: &Name, kernel: &Name) -> Result<(), GpuError> {
    struct Check<'a> {
        outer: &'a Name,
        kernel: &'a Name,
        error: Option<GpuError>,
    }
    impl Visitor for Check<'_> {
        fn visit_expr(&mut self, _: &Expr) {}
        fn visit_stmt(&mut self, s: &Stmt) {
            if self.error.is_some() {
                return;
            }
            if let StmtNode::For { name, kind: kind @ (ForKind::GpuBlock | ForKind::GpuThread | ForKind::Parallel), .. } = s.node() {
                let (func, var) = func_and_loop(name);
                self.error = Some(match kind {
                    ForKind::GpuThread => GpuError::ThreadsInsideThreads { func, var, outer: self.outer.to_string() },
                    ForKind::GpuBlock => GpuError::BlocksInsideKernel { func, var, kernel: self.kernel.to_string() },
                    _ => GpuError::ParallelInsideKernel { func, var },
                });
                return;
            }
            crate::ir::visit::walk_stmt(self, s)
        }
    }
    let mut c = Check { outer, kernel, error: None };
    c.visit_stmt(s);
    c.error.map_or(Ok(()), Err)
}

/// The second pass over a kernel's body: every thread nest over the
/// whole thread space, and every store outside a nest in thread 0.
struct Nests<'a> {
    threads: &'a [i64],
}

impl Nests<'_> {
    fn body(&self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::For { kind: ForKind::GpuThread, .. } => {
                let nest = Nest::of(s).expect("checked by Shape");
                self.over_threads(&nest)
            }
            _ if !has_store(s) => s.clone(),
            _ if !has_thread_loop(s) => self.single_thread(s),
            StmtNode::Block { stmts } => Stmt::block(stmts.iter().map(|x| self.body(x)).collect()),
            StmtNode::For { name, min, extent, kind, body } => {
                Stmt::for_loop(name.clone(), min.clone(), extent.clone(), *kind, self.body(body))
            }
            StmtNode::LetStmt { name, value, body } => Stmt::let_stmt(name.clone(), value.clone(), self.body(body)),
            StmtNode::ProducerConsumer { func, produce, consume } => {
                Stmt::new(StmtNode::ProducerConsumer { func: func.clone(), produce: self.body(produce), consume: self.body(consume) })
            }
            StmtNode::Allocate { buffer, ty, size, body } => {
                Stmt::new(StmtNode::Allocate { buffer: buffer.clone(), ty: *ty, size: size.clone(), body: self.body(body) })
            }
            StmtNode::IfThenElse { cond, then_case, else_case } => Stmt::new(StmtNode::IfThenElse {
                cond: cond.clone(),
                then_case: self.body(then_case),
                else_case: else_case.as_ref().map(|e| self.body(e)),
            }),
            _ => s.clone(),
        }
    }

    /// `body` over the whole thread space, guarded by `conds`.
    fn over_space(&self, conds: Vec<Expr>, body: Stmt) -> Stmt {
        let guarded = match conds.into_iter().reduce(Expr::and) {
            Some(c) => Stmt::if_then(c, body),
            None => body,
        };
        self.threads
            .iter()
            .enumerate()
            .fold(guarded, |inner, (d, n)| Stmt::for_loop(THREAD_IDS[d], Expr::i32(0), Expr::i32(*n), ForKind::GpuThread, inner))
    }

    /// A statement with stores but no thread loop, run by thread 0 alone.
    fn single_thread(&self, s: &Stmt) -> Stmt {
        let conds = (0..self.threads.len()).map(|d| thread_id(d).eq_to(0)).collect();
        self.over_space(conds, s.clone())
    }

    /// A nest over the whole thread space: the nest's loop in dimension
    /// `d` becomes a guard `thread_id < extent` and a let of its variable.
    fn over_threads(&self, nest: &Nest) -> Stmt {
        let loops = nest.parts.iter().filter(|p| matches!(p, NestPart::Loop(..))).count();
        let mut conds = vec![];
        let mut d = loops;
        let mut lets = vec![];
        for part in &nest.parts {
            match part {
                NestPart::Loop(var, min, n) => {
                    d -= 1;
                    if *n < self.threads[d] {
                        conds.push(Expr::cmp(CmpOp::Lt, thread_id(d), Expr::i32(*n)));
                    }
                    lets.push((var.clone(), simplify(&(min.clone() + thread_id(d)))));
                }
                NestPart::Let(n, v) => lets.push((n.clone(), v.clone())),
            }
        }
        // Dimensions the nest does not use run it in their thread 0 only.
        conds.extend((loops..self.threads.len()).map(|d| thread_id(d).eq_to(0)));
        let body = lets.into_iter().rev().fold(nest.body.clone(), |inner, (n, v)| Stmt::let_stmt(n, v, inner));
        self.over_space(conds, body)
    }
}

/// The thread index in dimension `d`.
fn thread_id(d: usize) -> Expr {
    Expr::var(THREAD_IDS[d], Type::i32())
}

trait EqTo {
    fn eq_to(self, v: i64) -> Expr;
}

impl EqTo for Expr {
    fn eq_to(self, v: i64) -> Expr {
        Expr::cmp(CmpOp::Eq, self, Expr::i32(v))
    }
}

/// Whether `s` stores anywhere.
fn has_store(s: &Stmt) -> bool {
    any_stmt(s, |n| matches!(n, StmtNode::Store { .. }))
}

/// Whether `s` holds a thread loop.
fn has_thread_loop(s: &Stmt) -> bool {
    any_stmt(s, |n| matches!(n, StmtNode::For { kind: ForKind::GpuThread, .. }))
}

fn any_stmt(s: &Stmt, pred: impl Fn(&StmtNode) -> bool) -> bool {
    struct Any<F> {
        pred: F,
        found: bool,
    }
    impl<F: Fn(&StmtNode) -> bool> Visitor for Any<F> {
        fn visit_expr(&mut self, _: &Expr) {}
        fn visit_stmt(&mut self, s: &Stmt) {
            if self.found || (self.pred)(s.node()) {
                self.found = true;
                return;
            }
            crate::ir::visit::walk_stmt(self, s)
        }
    }
    let mut a = Any { pred, found: false };
    a.visit_stmt(s);
    a.found
}
