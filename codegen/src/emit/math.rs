//! Math functions: LLVM intrinsics for the float functions (`llvm.sqrt`,
//! `llvm.floor`, `llvm.roundeven`, ...), `llvm.abs` for signed integers,
//! `llvm.ctpop`/`ctlz`/`cttz` for the bit counts (defined at zero),
//! comparisons for the float classes, the C library's `tanh`/`tanhf`
//! called lane by lane, and for f32 `log` and `pow` outside vectorized
//! loops (where lowering has not expanded them) the runtime's `hl_log_f32`
//! and `hl_pow_f32`: the same steps as the expansions and the evaluators,
//! so the same bits (f32 `exp` is always expanded; `hl_exp_f32` serves a
//! statement lowered without the expansion). In a GPU kernel the
//! transcendental functions are libdevice's (`__nv_sinf`, ...).

use super::{CodegenError, FunctionEmitter, Result, Value};
use compiler::ir::expr::{Expr, MathFn};
use compiler::ir::types::{ScalarType, Type};
use inkwell::intrinsics::Intrinsic;
use inkwell::module::Linkage;
use inkwell::types::BasicType;
use inkwell::values::BasicValueEnum;
use inkwell::FloatPredicate;

impl<'ctx> FunctionEmitter<'ctx, '_, '_> {
    /// Calls an external scalar math function (`tanhf`, `hl_pow_f32`, ...)
    /// of `ty`'s element type on `args`, lane by lane.
    fn scalar_call(&mut self, name: &str, ty: Type, args: &[Value<'ctx>]) -> Result<Value<'ctx>> {
        let scalar = self.scalar_type(ty.scalar);
        let params = vec![scalar.into(); args.len()];
        let f = self
            .state
            .module
            .get_function(name)
            .unwrap_or_else(|| self.state.module.add_function(name, scalar.fn_type(&params, false), Some(Linkage::External)));
        if ty.lanes == 1 {
            return self.call_value(f, args);
        }
        let mut lanes_of = vec![];
        for a in args {
            let BasicValueEnum::VectorValue(v) = *a else {
                return Err(CodegenError::Unsupported("vector math on a scalar".into()));
            };
            lanes_of.push(v);
        }
        let mut out = lanes_of[0].get_type().get_poison();
        for k in 0..ty.lanes {
            let mut lane = vec![];
            for v in &lanes_of {
                lane.push(self.builder.build_extract_element(*v, self.i32_const(k as i64), "")?);
            }
            let r = self.call_value(f, &lane)?;
            out = self.builder.build_insert_element(out, r, self.i32_const(k as i64), "")?;
        }
        Ok(out.into())
    }

    pub(super) fn math(&mut self, f: MathFn, args: &[Expr], ty: Type) -> Result<Value<'ctx>> {
        if args.len() != f.arity() {
            return Err(CodegenError::Unsupported(format!("{} takes {} arguments, got {}", f.name(), f.arity(), args.len())));
        }
        let lanes = ty.lanes;
        let mut values = vec![];
        for a in args {
            let v = self.expr(a)?;
            values.push(self.widened(v, lanes)?);
        }
        let x = values[0];
        let arg = args[0].ty().with_lanes(lanes);
        if f.is_float_class() {
            return self.float_class(f, arg, x);
        }
        if !ty.scalar.is_float() {
            return match f {
                MathFn::PromiseClamped => Ok(x),
                MathFn::Abs if ty.scalar.is_signed_int() => {
                    let no_poison = self.ctx().bool_type().const_int(0, false).into();
                    let intrinsic = Intrinsic::find("llvm.abs").ok_or_else(|| CodegenError::Llvm("no llvm.abs".into()))?;
                    let decl = intrinsic
                        .get_declaration(self.state.module, &[x.get_type()])
                        .ok_or_else(|| CodegenError::Llvm("no declaration of llvm.abs".into()))?;
                    self.call_value(decl, &[x, no_poison])
                }
                MathFn::Abs => Ok(x),
                MathFn::Popcount => self.intrinsic("llvm.ctpop", &[x]),
                MathFn::CountLeadingZeros | MathFn::CountTrailingZeros => {
                    let name = if f == MathFn::CountLeadingZeros { "llvm.ctlz" } else { "llvm.cttz" };
                    let zero_is_poison = self.ctx().bool_type().const_int(0, false).into();
                    let intrinsic = Intrinsic::find(name).ok_or_else(|| CodegenError::Llvm(format!("no {name}")))?;
                    let decl = intrinsic
                        .get_declaration(self.state.module, &[x.get_type()])
                        .ok_or_else(|| CodegenError::Llvm(format!("no declaration of {name}")))?;
                    self.call_value(decl, &[x, zero_is_poison])
                }
                _ => Err(CodegenError::Unsupported(format!("{} of an integer", f.name()))),
            };
        }
        let single = ty.scalar == ScalarType::F32;
        if self.kernel.is_some() {
            if let Some(name) = libdevice_function(f, single) {
                return self.scalar_call(name, ty, &values);
            }
        }
        match f {
            MathFn::Exp if single => self.scalar_call("hl_exp_f32", ty, &[x]),
            MathFn::Log if single => self.scalar_call("hl_log_f32", ty, &[x]),
            MathFn::Pow if single => self.scalar_call("hl_pow_f32", ty, &[x, values[1]]),
            MathFn::Abs => self.intrinsic("llvm.fabs", &[x]),
            MathFn::Sqrt => self.intrinsic("llvm.sqrt", &[x]),
            MathFn::Exp => self.intrinsic("llvm.exp", &[x]),
            MathFn::Log => self.intrinsic("llvm.log", &[x]),
            MathFn::Pow => self.intrinsic("llvm.pow", &[x, values[1]]),
            MathFn::Sin => self.intrinsic("llvm.sin", &[x]),
            MathFn::Cos => self.intrinsic("llvm.cos", &[x]),
            MathFn::Floor => self.intrinsic("llvm.floor", &[x]),
            MathFn::Ceil => self.intrinsic("llvm.ceil", &[x]),
            MathFn::Round => self.intrinsic("llvm.roundeven", &[x]),
            MathFn::Trunc => self.intrinsic("llvm.trunc", &[x]),
            MathFn::Tanh => self.scalar_call(if single { "tanhf" } else { "tanh" }, ty, &[x]),
            MathFn::PromiseClamped => Ok(x),
            MathFn::Popcount
            | MathFn::CountLeadingZeros
            | MathFn::CountTrailingZeros
            | MathFn::IsNan
            | MathFn::IsInf
            | MathFn::IsFinite => Err(CodegenError::Unsupported(format!("{} of a float", f.name()))),
        }
    }

    /// `is_nan` (unordered with itself), `is_inf` (`|x| == inf`) and
    /// `is_finite` (`|x| < inf`, false for NaN) of a float `x` of type `arg`.
    fn float_class(&mut self, f: MathFn, arg: Type, x: Value<'ctx>) -> Result<Value<'ctx>> {
        if !arg.is_float() {
            return Err(CodegenError::Unsupported(format!("{} of a {arg}", f.name())));
        }
        if f == MathFn::IsNan {
            return self.fcmp(FloatPredicate::UNO, x, x);
        }
        let magnitude = self.intrinsic("llvm.fabs", &[x])?;
        let inf = self.constant(arg, 0, f64::INFINITY)?;
        let p = if f == MathFn::IsInf { FloatPredicate::OEQ } else { FloatPredicate::OLT };
        self.fcmp(p, magnitude, inf)
    }
}

/// The libdevice function a GPU kernel calls for `f` (f32 or f64), where
/// NVPTX has no instruction for it: the transcendental functions. (f32
/// `exp`, `log` and `pow` are expanded by lowering inside kernels.)
fn libdevice_function(f: MathFn, single: bool) -> Option<&'static str> {
    Some(match (f, single) {
        (MathFn::Sin, true) => "__nv_sinf",
        (MathFn::Sin, false) => "__nv_sin",
        (MathFn::Cos, true) => "__nv_cosf",
        (MathFn::Cos, false) => "__nv_cos",
        (MathFn::Tanh, true) => "__nv_tanhf",
        (MathFn::Tanh, false) => "__nv_tanh",
        (MathFn::Exp, true) => "__nv_expf",
        (MathFn::Exp, false) => "__nv_exp",
        (MathFn::Log, true) => "__nv_logf",
        (MathFn::Log, false) => "__nv_log",
        (MathFn::Pow, true) => "__nv_powf",
        (MathFn::Pow, false) => "__nv_pow",
        _ => return None,
    })
}
