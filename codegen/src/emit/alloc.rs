//! Allocations: small constant-size buffers are 64-byte aligned stack
//! slots in the entry block; the others come from the runtime's `hl_malloc`
//! (returning [`ALLOCATION_FAILED`] when it fails) and are freed at the end
//! of their scope and on every early exit. (A GPU kernel's are in
//! `kernel`.)

use super::{BufferRef, FunctionEmitter, Result, ALLOCATION_FAILED};
use compiler::ir::expr::{Expr, Name};
use compiler::ir::stmt::Stmt;
use compiler::ir::types::ScalarType;
use inkwell::types::{BasicType, BasicTypeEnum};
use inkwell::values::{BasicValue, PointerValue};
use inkwell::AddressSpace;

impl<'ctx> FunctionEmitter<'ctx, '_, '_> {
    pub(super) fn free(&mut self, p: PointerValue<'ctx>) -> Result<()> {
        let ptr = self.ctx().ptr_type(AddressSpace::default());
        let f = self.runtime_function("hl_free", None, &[ptr.into()]);
        self.builder.build_call(f, &[p.into()], "")?;
        Ok(())
    }

    pub(super) fn entry_alloca(&mut self, ty: BasicTypeEnum<'ctx>, name: &str) -> Result<PointerValue<'ctx>> {
        let here = self.builder.get_insert_block().expect("positioned");
        match self.entry.get_first_instruction() {
            Some(i) => self.builder.position_before(&i),
            None => self.builder.position_at_end(self.entry),
        }
        let p = self.builder.build_alloca(ty, name)?;
        if let Some(i) = p.as_instruction_value() {
            let _ = i.set_alignment(64);
        }
        self.builder.position_at_end(here);
        Ok(p)
    }

    pub(super) fn allocate(&mut self, buffer: &Name, elem: ScalarType, size: &Expr, body: &Stmt) -> Result<()> {
        if self.kernel.is_some() {
            return self.kernel_allocate(buffer, elem, size, body);
        }
        let ctx = self.ctx();
        let mem = self.memory_type(elem);
        let bytes = elem.bytes() as i64;
        let constant = compiler::simplify::simplify(size).as_int();
        // Under the guard-page debug allocator every allocation is on the
        // heap, so that every one is guarded.
        let on_stack = crate::guard_pages::mode().is_none() && constant.is_some_and(|n| n >= 0 && n * bytes <= MAX_STACK_BYTES);
        let host = if let (true, Some(n)) = (on_stack, constant) {
            self.entry_alloca(mem.array_type(n.max(1) as u32).into(), buffer)?
        } else {
            let n = self.expr(size)?;
            let i64t = ctx.i64_type();
            let n = self.builder.build_cast(inkwell::values::InstructionOpcode::SExt, n, i64t, "")?.into_int_value();
            let total = self.builder.build_int_mul(n, i64t.const_int(bytes as u64, false), "")?;
            let ptr = ctx.ptr_type(AddressSpace::default());
            let malloc = self.runtime_function("hl_malloc", Some(ptr.into()), &[i64t.into()]);
            let p = self.call_value(malloc, &[total.into()])?.into_pointer_value();
            let null = self.builder.build_is_null(p, "")?;
            let code = ctx.i32_type().const_int(ALLOCATION_FAILED as u64, true);
            self.fail_if(null, code)?;
            self.heap.push(p);
            p
        };
        self.buffers.push(BufferRef { name: buffer.clone(), host, elem });
        self.stmt(body)?;
        self.buffers.pop();
        if !on_stack {
            let p = self.heap.pop().expect("pushed above");
            self.free(p)?;
        }
        Ok(())
    }
}

/// Realizations up to this size with a constant size live on the stack.
const MAX_STACK_BYTES: i64 = 16 * 1024;
