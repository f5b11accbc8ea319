//! Parallel loops: the body is outlined into `i32 body(ptr closure, i32 i)`,
//! the scalars and buffer pointers it uses are passed in a closure of 8-byte
//! slots, and the runtime's `hl_parallel_for` runs it; a failing iteration's
//! return code is returned.

use super::{BufferRef, CodegenError, FunctionEmitter, Result, Value, ENTRY};
use compiler::ir::expr::{Expr, ExprNode, Name};
use compiler::ir::stmt::{Stmt, StmtNode};
use compiler::ir::visit::{FreeVars, Visitor};
use inkwell::module::Linkage;
use inkwell::values::IntValue;
use inkwell::{AddressSpace, IntPredicate};
use std::collections::BTreeSet;

impl<'ctx> FunctionEmitter<'ctx, '_, '_> {
    /// Outlines `body` into `i32 body(ptr closure, i32 i)` and calls the
    /// runtime's `hl_parallel_for` on it.
    pub(super) fn parallel_loop(&mut self, name: &Name, lo: IntValue<'ctx>, n: IntValue<'ctx>, body: &Stmt) -> Result<()> {
        if self.kernel.is_some() {
            return Err(CodegenError::Unsupported(format!("parallel loop {name} inside a GPU kernel")));
        }
        let ctx = self.ctx();
        let ptr = ctx.ptr_type(AddressSpace::default());
        let i32t = ctx.i32_type();
        let i64t = ctx.i64_type();
        // What the body uses from here: scalars and buffers.
        let mut free = FreeVars::default();
        free.visit_stmt(body);
        let scalars: Vec<(Name, Value<'ctx>)> = self.vars.iter().rev().filter(|(n, _)| free.names.contains(n) && n != name).fold(
            Vec::<(Name, Value<'ctx>)>::new(),
            |mut acc, (n, v)| {
                if !acc.iter().any(|(m, _)| m == n) {
                    acc.push((n.clone(), *v));
                }
                acc
            },
        );
        if let Some((n, _)) = scalars.iter().find(|(_, v)| v.is_vector_value()) {
            return Err(CodegenError::Unsupported(format!("parallel loop {name} captures the vector {n}")));
        }
        let used_buffers = buffers_used(body);
        let buffers: Vec<BufferRef<'ctx>> = used_buffers.iter().filter_map(|b| self.buffer(b).ok()).collect();
        let slots = (scalars.len() + buffers.len()).max(1) as u32;
        let closure = self.entry_alloca(i64t.array_type(slots).into(), "closure")?;
        for (k, (_, v)) in scalars.iter().enumerate() {
            let p = self.gep(i64t.into(), closure, k as u64)?;
            self.builder.build_store(p, *v)?;
        }
        for (k, b) in buffers.iter().enumerate() {
            let p = self.gep(i64t.into(), closure, (scalars.len() + k) as u64)?;
            self.builder.build_store(p, b.host)?;
        }
        // The outlined function.
        self.state.outlined += 1;
        let fname = format!("{ENTRY}.par.{}.{}", self.state.outlined, sanitize(name));
        let fty = i32t.fn_type(&[ptr.into(), i32t.into()], false);
        let outlined = self.state.module.add_function(&fname, fty, Some(Linkage::Internal));
        let saved_block = self.builder.get_insert_block().expect("positioned");
        {
            let mut inner = FunctionEmitter::new(self.state, outlined);
            let cl = outlined.get_nth_param(0).expect("2 params").into_pointer_value();
            for (k, (n, v)) in scalars.iter().enumerate() {
                let p = inner.gep(i64t.into(), cl, k as u64)?;
                let x = inner.builder.build_load(v.get_type(), p, n)?;
                inner.vars.push((n.clone(), x));
            }
            for (k, b) in buffers.iter().enumerate() {
                let p = inner.gep(i64t.into(), cl, (scalars.len() + k) as u64)?;
                let host = inner.builder.build_load(ptr, p, &b.name)?.into_pointer_value();
                inner.buffers.push(BufferRef { name: b.name.clone(), host, elem: b.elem });
            }
            let i = outlined.get_nth_param(1).expect("2 params");
            inner.vars.push((name.clone(), i));
            inner.stmt(body)?;
            inner.return_code(0)?;
        }
        self.builder.position_at_end(saved_block);
        let runner = self.runtime_function("hl_parallel_for", Some(i32t.into()), &[ptr.into(), ptr.into(), i32t.into(), i32t.into()]);
        let fptr = outlined.as_global_value().as_pointer_value();
        let code = self.call_value(runner, &[fptr.into(), closure.into(), lo.into(), n.into()])?.into_int_value();
        let failed = self.builder.build_int_compare(IntPredicate::NE, code, i32t.const_zero(), "")?;
        self.fail_if(failed, code)
    }
}

fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

/// Names of the buffers a statement loads from, stores to (but does not allocate).
pub(super) fn buffers_used(s: &Stmt) -> BTreeSet<Name> {
    struct Used {
        names: BTreeSet<Name>,
        allocated: Vec<Name>,
    }
    impl Visitor for Used {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprNode::Load { buffer, .. } = e.node() {
                if !self.allocated.contains(buffer) {
                    self.names.insert(buffer.clone());
                }
            }
            compiler::ir::visit::walk_expr(self, e);
        }
        fn visit_stmt(&mut self, s: &Stmt) {
            match s.node() {
                StmtNode::Store { buffer, .. } if !self.allocated.contains(buffer) => {
                    self.names.insert(buffer.clone());
                    compiler::ir::visit::walk_stmt(self, s);
                }
                StmtNode::Allocate { buffer, .. } => {
                    self.allocated.push(buffer.clone());
                    compiler::ir::visit::walk_stmt(self, s);
                    self.allocated.pop();
                }
                _ => compiler::ir::visit::walk_stmt(self, s),
            }
        }
    }
    let mut u = Used { names: BTreeSet::new(), allocated: vec![] };
    u.visit_stmt(s);
    u.names
}
