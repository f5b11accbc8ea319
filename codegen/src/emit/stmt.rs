//! Statements: blocks, lets, assertions (return code `k + 1` when assertion
//! `k` fails), conditionals, serial loops marked so that LLVM neither
//! vectorizes nor unrolls them, and the exit paths that free the live heap
//! allocations before returning.

use super::{CodegenError, FunctionEmitter, Result};
use compiler::ir::expr::Name;
use compiler::ir::stmt::{ForKind, Stmt, StmtNode};
use inkwell::context::Context;
use inkwell::values::{BasicValueEnum, IntValue};
use inkwell::IntPredicate;

/// Attaches `!llvm.loop` metadata to the back edge of a loop saying that
/// LLVM must neither vectorize nor unroll it: the schedule alone decides
/// which loops become vectors or straight code, as in Halide (a naive
/// schedule stays scalar). Loop IDs must refer to themselves, which the
/// inkwell API cannot build, hence the raw LLVM C calls.
fn mark_schedule_owned(ctx: &Context, back_edge: inkwell::values::InstructionValue<'_>) {
    use inkwell::llvm_sys::core::{
        LLVMConstInt, LLVMGetMDKindIDInContext, LLVMInt1TypeInContext, LLVMMDNodeInContext2, LLVMMDStringInContext2, LLVMMetadataAsValue,
        LLVMSetMetadata, LLVMValueAsMetadata,
    };
    use inkwell::llvm_sys::debuginfo::{LLVMMetadataReplaceAllUsesWith, LLVMTemporaryMDNode};
    use inkwell::values::AsValueRef;
    // SAFETY: every reference comes from the live context `ctx` and the
    // branch instruction built in it; the temporary node is consumed by the
    // replacement, which turns the loop ID into a self-referencing node.
    unsafe {
        let c = ctx.raw();
        let hint = |name: &str, value: u64| {
            let mut ops = [
                LLVMMDStringInContext2(c, name.as_ptr().cast(), name.len()),
                LLVMValueAsMetadata(LLVMConstInt(LLVMInt1TypeInContext(c), value, 0)),
            ];
            LLVMMDNodeInContext2(c, ops.as_mut_ptr(), ops.len())
        };
        let no_vectorize = hint("llvm.loop.vectorize.enable", 0);
        let disable_unroll = "llvm.loop.unroll.disable";
        let mut unroll_ops = [LLVMMDStringInContext2(c, disable_unroll.as_ptr().cast(), disable_unroll.len())];
        let no_unroll = LLVMMDNodeInContext2(c, unroll_ops.as_mut_ptr(), unroll_ops.len());
        let placeholder = LLVMTemporaryMDNode(c, std::ptr::null_mut(), 0);
        let mut ops = [placeholder, no_vectorize, no_unroll];
        let loop_id = LLVMMDNodeInContext2(c, ops.as_mut_ptr(), ops.len());
        LLVMMetadataReplaceAllUsesWith(placeholder, loop_id);
        let kind = "llvm.loop";
        let kind_id = LLVMGetMDKindIDInContext(c, kind.as_ptr().cast(), kind.len() as u32);
        LLVMSetMetadata(back_edge.as_value_ref(), kind_id, LLVMMetadataAsValue(c, loop_id));
    }
}

impl<'ctx> FunctionEmitter<'ctx, '_, '_> {
    /// Frees the live heap allocations and returns `code`.
    pub(super) fn return_code(&mut self, code: i32) -> Result<()> {
        let v = self.ctx().i32_type().const_int(code as u64, true);
        self.return_value(v)
    }

    fn return_value(&mut self, v: IntValue<'ctx>) -> Result<()> {
        if self.kernel.is_some() {
            return self.kernel_return(v);
        }
        for p in self.heap.clone().into_iter().rev() {
            self.free(p)?;
        }
        self.builder.build_return(Some(&v))?;
        Ok(())
    }

    /// Branches to a new block that returns `code` when `failed` holds.
    pub(super) fn fail_if(&mut self, failed: IntValue<'ctx>, code: IntValue<'ctx>) -> Result<()> {
        let ctx = self.ctx();
        let bail = ctx.append_basic_block(self.function, "fail");
        let next = ctx.append_basic_block(self.function, "ok");
        self.builder.build_conditional_branch(failed, bail, next)?;
        self.builder.position_at_end(bail);
        self.return_value(code)?;
        self.builder.position_at_end(next);
        Ok(())
    }

    pub(super) fn stmt(&mut self, s: &Stmt) -> Result<()> {
        match s.node() {
            StmtNode::NoOp => Ok(()),
            StmtNode::Block { stmts } => stmts.iter().try_for_each(|x| self.stmt(x)),
            StmtNode::LetStmt { name, value, body } => {
                // Statement lets come from lowering: loop, bounds and
                // address arithmetic, under the same no-overflow rule.
                let v = self.index(value)?;
                self.vars.push((name.clone(), v));
                self.let_values.push((name.clone(), value.clone()));
                let r = self.stmt(body);
                self.let_values.pop();
                self.vars.pop();
                r
            }
            StmtNode::ProducerConsumer { produce, consume, .. } => {
                self.stmt(produce)?;
                self.stmt(consume)
            }
            StmtNode::Assert { cond, message } => {
                // A vector condition (an access check in a vectorized loop)
                // must hold in every lane.
                let c = match self.expr(cond)? {
                    BasicValueEnum::VectorValue(lanes) => self.intrinsic("llvm.vector.reduce.and", &[lanes.into()])?.into_int_value(),
                    c => c.into_int_value(),
                };
                let failed = self.builder.build_not(c, "")?;
                self.state.asserts.push(message.clone());
                let code = self.ctx().i32_type().const_int(self.state.asserts.len() as u64, false);
                self.fail_if(failed, code)
            }
            StmtNode::IfThenElse { cond, then_case, else_case } => {
                let c = self.expr(cond)?.into_int_value();
                let ctx = self.ctx();
                let then_bb = ctx.append_basic_block(self.function, "then");
                let else_bb = ctx.append_basic_block(self.function, "else");
                let after = ctx.append_basic_block(self.function, "endif");
                self.builder.build_conditional_branch(c, then_bb, else_bb)?;
                self.builder.position_at_end(then_bb);
                self.stmt(then_case)?;
                self.builder.build_unconditional_branch(after)?;
                self.builder.position_at_end(else_bb);
                if let Some(e) = else_case {
                    self.stmt(e)?;
                }
                self.builder.build_unconditional_branch(after)?;
                self.builder.position_at_end(after);
                Ok(())
            }
            StmtNode::Store { buffer, index, value } => self.store(buffer, index, value),
            StmtNode::Allocate { buffer, ty, size, body } => self.allocate(buffer, ty.scalar, size, body),
            StmtNode::For { name, min, kind: kind @ (ForKind::GpuBlock | ForKind::GpuThread), body, .. } if self.kernel.is_some() => {
                self.gpu_loop(name, min, *kind, body)
            }
            StmtNode::For { name, min, extent, kind, body } => {
                let (lo, n) = (self.expr(min)?.into_int_value(), self.expr(extent)?.into_int_value());
                if matches!(kind, ForKind::Parallel | ForKind::GpuBlock) {
                    self.parallel_loop(name, lo, n, body)
                } else {
                    self.serial_loop(name, lo, n, body)
                }
            }
            StmtNode::Realize { func, .. } | StmtNode::Provide { func, .. } => {
                Err(CodegenError::Unsupported(format!("{func} was not flattened before code generation")))
            }
        }
    }

    fn serial_loop(&mut self, name: &Name, lo: IntValue<'ctx>, n: IntValue<'ctx>, body: &Stmt) -> Result<()> {
        let ctx = self.ctx();
        let i32t = ctx.i32_type();
        let pre = self.builder.get_insert_block().expect("positioned");
        let header = ctx.append_basic_block(self.function, &format!("{name}.header"));
        let body_bb = ctx.append_basic_block(self.function, &format!("{name}.body"));
        let exit = ctx.append_basic_block(self.function, &format!("{name}.exit"));
        // Loop bounds are index arithmetic, and `i + 1` cannot overflow
        // while `i < end`: both `nsw`, so LLVM can widen the counter.
        let end = self.builder.build_int_nsw_add(lo, n, "")?;
        self.builder.build_unconditional_branch(header)?;
        self.builder.position_at_end(header);
        let phi = self.builder.build_phi(i32t, name)?;
        phi.add_incoming(&[(&lo, pre)]);
        let i = phi.as_basic_value().into_int_value();
        let more = self.builder.build_int_compare(IntPredicate::SLT, i, end, "")?;
        self.builder.build_conditional_branch(more, body_bb, exit)?;
        self.builder.position_at_end(body_bb);
        self.vars.push((name.clone(), i.into()));
        self.stmt(body)?;
        self.vars.pop();
        let next = self.builder.build_int_nsw_add(i, i32t.const_int(1, false), "")?;
        let latch = self.builder.get_insert_block().expect("positioned");
        phi.add_incoming(&[(&next, latch)]);
        let back_edge = self.builder.build_unconditional_branch(header)?;
        mark_schedule_owned(ctx, back_edge);
        self.builder.position_at_end(exit);
        Ok(())
    }
}
