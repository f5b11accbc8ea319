//! Calls from the emitted code: the call helper, overloaded LLVM
//! intrinsics declared for their argument type, and runtime functions
//! (`hl_malloc`, `hl_free`, `hl_parallel_for`) declared on first use.

use super::{CodegenError, FunctionEmitter, Result, Value};
use inkwell::intrinsics::Intrinsic;
use inkwell::module::Linkage;
use inkwell::types::{BasicType, BasicTypeEnum};
use inkwell::values::{FunctionValue, ValueKind};

impl<'ctx> FunctionEmitter<'ctx, '_, '_> {
    pub(super) fn call_value(&mut self, f: FunctionValue<'ctx>, args: &[Value<'ctx>]) -> Result<Value<'ctx>> {
        let args: Vec<_> = args.iter().map(|a| (*a).into()).collect();
        match self.builder.build_call(f, &args, "")?.try_as_basic_value() {
            ValueKind::Basic(v) => Ok(v),
            ValueKind::Instruction(_) => Err(CodegenError::Llvm(format!("{} returns nothing", f.get_name().to_string_lossy()))),
        }
    }

    /// Calls an overloaded LLVM intrinsic on arguments of one type.
    pub(super) fn intrinsic(&mut self, name: &str, args: &[Value<'ctx>]) -> Result<Value<'ctx>> {
        let intrinsic = Intrinsic::find(name).ok_or_else(|| CodegenError::Llvm(format!("no intrinsic {name}")))?;
        let decl = intrinsic
            .get_declaration(self.state.module, &[args[0].get_type()])
            .ok_or_else(|| CodegenError::Llvm(format!("no declaration of {name}")))?;
        self.call_value(decl, args)
    }

    pub(super) fn runtime_function(
        &self,
        name: &str,
        ret: Option<BasicTypeEnum<'ctx>>,
        params: &[BasicTypeEnum<'ctx>],
    ) -> FunctionValue<'ctx> {
        if let Some(f) = self.state.module.get_function(name) {
            return f;
        }
        let params: Vec<_> = params.iter().map(|p| (*p).into()).collect();
        let ty = match ret {
            Some(r) => r.fn_type(&params, false),
            None => self.ctx().void_type().fn_type(&params, false),
        };
        self.state.module.add_function(name, ty, Some(Linkage::External))
    }
}
