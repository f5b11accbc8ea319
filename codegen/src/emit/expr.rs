//! Expressions: one walk over the expression tree that evaluates the
//! operands, broadcasts scalar operands of vector operations, and hands each
//! node to the arithmetic, math, memory or constant emitter; ramps and
//! broadcasts become LLVM vectors; a select on one condition for all lanes
//! whose values read memory becomes a branch.

use super::{CodegenError, FunctionEmitter, Result, Value};
use compiler::ir::expr::{CallTarget, Expr, ExprNode};
use compiler::ir::visit::expr_any_node;
use inkwell::types::VectorType;
use inkwell::values::IntValue;

impl<'ctx> FunctionEmitter<'ctx, '_, '_> {
    pub(super) fn expr(&mut self, e: &Expr) -> Result<Value<'ctx>> {
        let ty = e.ty();
        match e.node() {
            ExprNode::IntImm { value, .. } => self.constant(ty, *value as i128, 0.0),
            ExprNode::UIntImm { value, .. } => self.constant(ty, *value as i128, 0.0),
            ExprNode::FloatImm { value, .. } => self.constant(ty, 0, *value),
            ExprNode::Var { name, .. } | ExprNode::Param { name, .. } => self.var(name),
            ExprNode::RVar { .. } => Err(CodegenError::Unsupported("a reduction variable survived lowering".into())),
            ExprNode::Cast { ty, value } => {
                let v = self.expr(value)?;
                self.cast(value.ty(), *ty, v)
            }
            ExprNode::Reinterpret { ty, value } => {
                let v = self.expr(value)?;
                let target = self.llvm_type(*ty);
                Ok(self.builder.build_bit_cast(v, target, "")?)
            }
            ExprNode::Binary { op, a, b } => {
                let lanes = ty.lanes;
                let (x, y) = (self.expr(a)?, self.expr(b)?);
                let (x, y) = (self.widened(x, lanes)?, self.widened(y, lanes)?);
                self.binary(*op, ty, x, y)
            }
            ExprNode::Cmp { op, a, b } => {
                let lanes = ty.lanes;
                let (x, y) = (self.expr(a)?, self.expr(b)?);
                let (x, y) = (self.widened(x, lanes)?, self.widened(y, lanes)?);
                self.compare(*op, a.ty().scalar, x, y)
            }
            ExprNode::And { a, b } | ExprNode::Or { a, b } => {
                let lanes = ty.lanes;
                let (x, y) = (self.expr(a)?, self.expr(b)?);
                let (x, y) = (self.widened(x, lanes)?, self.widened(y, lanes)?);
                let op = if matches!(e.node(), ExprNode::And { .. }) {
                    inkwell::values::InstructionOpcode::And
                } else {
                    inkwell::values::InstructionOpcode::Or
                };
                Ok(self.builder.build_binop(op, x, y, "")?)
            }
            ExprNode::Not { a } => {
                let x = self.expr(a)?;
                let ones = self.constant(a.ty(), 1, 0.0)?;
                Ok(self.builder.build_binop(inkwell::values::InstructionOpcode::Xor, x, ones, "")?)
            }
            ExprNode::Select { cond, t, f } if uniform(cond).is_some() && (reads_memory(t) || reads_memory(f)) => {
                self.branching_select(uniform(cond).expect("checked"), t, f, ty.lanes)
            }
            ExprNode::Select { cond, t, f } => {
                let c = self.expr(cond)?;
                let (x, y) = (self.expr(t)?, self.expr(f)?);
                let lanes = ty.lanes;
                let (x, y) = (self.widened(x, lanes)?, self.widened(y, lanes)?);
                self.select(c, x, y)
            }
            ExprNode::Let { name, value, body } => {
                let v = self.expr(value)?;
                self.vars.push((name.clone(), v));
                let r = self.expr(body);
                self.vars.pop();
                r
            }
            ExprNode::Call { target: CallTarget::Math(f), args, ty } => self.math(*f, args, *ty),
            ExprNode::Call { target, .. } => Err(CodegenError::Unsupported(format!(
                "a call of {} survived lowering",
                match target {
                    CallTarget::Func(r) => r.name.to_string(),
                    CallTarget::Input(r) => r.name.to_string(),
                    CallTarget::Math(f) => f.name().to_string(),
                }
            ))),
            ExprNode::Load { buffer, index, ty } => self.load(buffer, index, *ty),
            ExprNode::Ramp { base, stride, lanes } => {
                let b = self.expr(base)?;
                let s = self.expr(stride)?;
                let (b, s) = (self.splat(b, *lanes)?, self.splat(s, *lanes)?);
                let bits = base.ty().scalar.bits();
                let steps: Vec<IntValue> = (0..*lanes).map(|k| self.int_type(bits).const_int(k as u64, false)).collect();
                let steps: Value = VectorType::const_vector(&steps).into();
                let offsets = self.builder.build_binop(inkwell::values::InstructionOpcode::Mul, s, steps, "")?;
                Ok(self.builder.build_binop(inkwell::values::InstructionOpcode::Add, b, offsets, "ramp")?)
            }
            ExprNode::Broadcast { value, lanes } => {
                let v = self.expr(value)?;
                self.splat(v, *lanes)
            }
        }
    }
}

impl<'ctx> FunctionEmitter<'ctx, '_, '_> {
    /// A select whose condition is the same for every lane, and whose
    /// values read memory, as a branch: only the chosen value is computed
    /// (a select inside a loop over colour channels evaluates one channel's
    /// formula per pixel, not all three). Values are pure and every load of
    /// either side is in bounds, so skipping one changes nothing else.
    fn branching_select(&mut self, cond: &Expr, t: &Expr, f: &Expr, lanes: u32) -> Result<Value<'ctx>> {
        let c = self.expr(cond)?.into_int_value();
        self.branch(
            c,
            |e| {
                let v = e.expr(t)?;
                e.widened(v, lanes)
            },
            |e| {
                let v = e.expr(f)?;
                e.widened(v, lanes)
            },
        )
    }

    /// The value of `then` where `c` holds, else of `otherwise`, each
    /// emitted in a block of its own and only run there (values of one
    /// type, merged by a phi).
    pub(super) fn branch(
        &mut self,
        c: inkwell::values::IntValue<'ctx>,
        then: impl FnOnce(&mut Self) -> Result<Value<'ctx>>,
        otherwise: impl FnOnce(&mut Self) -> Result<Value<'ctx>>,
    ) -> Result<Value<'ctx>> {
        let ctx = self.ctx();
        let (then_block, else_block) =
            (ctx.append_basic_block(self.function, "branch.t"), ctx.append_basic_block(self.function, "branch.f"));
        let merge = ctx.append_basic_block(self.function, "branch.merge");
        self.builder.build_conditional_branch(c, then_block, else_block)?;
        self.builder.position_at_end(then_block);
        let x = then(self)?;
        let x_end = self.builder.get_insert_block().expect("positioned");
        self.builder.build_unconditional_branch(merge)?;
        self.builder.position_at_end(else_block);
        let y = otherwise(self)?;
        let y_end = self.builder.get_insert_block().expect("positioned");
        self.builder.build_unconditional_branch(merge)?;
        self.builder.position_at_end(merge);
        let phi = self.builder.build_phi(x.get_type(), "")?;
        phi.add_incoming(&[(&x, x_end), (&y, y_end)]);
        Ok(phi.as_basic_value())
    }
}

/// The scalar condition of a select that is the same for every lane: a
/// scalar condition, or the broadcast of one.
fn uniform(cond: &Expr) -> Option<&Expr> {
    match cond.node() {
        ExprNode::Broadcast { value, .. } => Some(value),
        _ if cond.ty().lanes == 1 => Some(cond),
        _ => None,
    }
}

/// Whether evaluating `e` reads memory (what makes computing an unused
/// select value worth a branch).
fn reads_memory(e: &Expr) -> bool {
    expr_any_node(e, |n| matches!(n, ExprNode::Load { .. }))
}
