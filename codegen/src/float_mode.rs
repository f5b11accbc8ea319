//! The float mode of generated code. By default (strict) every float
//! operation is rounded as written, so compiled pipelines agree bit for bit
//! with the reference evaluator and the IR interpreter. The fast mode lets
//! LLVM contract a multiply feeding an add into one fused multiply-add
//! (rounded once, so results may differ in the last bits) and turn a
//! division by a constant into a multiplication by the constant's reciprocal
//! (one more rounding; a vector division costs several times a
//! multiplication), as Halide does unless a target asks for `strict_float`;
//! nothing else is relaxed (no reassociation, no division by a variable
//! replaced, no assumptions about NaN or infinity).

use compiler::ir::value::Scalar;
use inkwell::module::Module;
use inkwell::values::{BasicValueEnum, FastMathFlags, InstructionOpcode, InstructionValue, Operand};

/// How far apart a float result of the fast mode and the strict one may be,
/// relative to the larger magnitude (at least 1): fused roundings along a
/// chain of a few thousand multiply-adds stay well inside it.
pub const FAST_FLOAT_TOLERANCE: f64 = 1e-4;

/// Whether `fast`, computed in the fast mode, agrees with `strict`: floats
/// within [`FAST_FLOAT_TOLERANCE`] (NaN with NaN), integers within 1 (an
/// integer computed through floats may round the other way).
pub fn agrees_within_fast_float(strict: Scalar, fast: Scalar) -> bool {
    match (strict, fast) {
        (Scalar::Float(a), Scalar::Float(b)) => {
            (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= FAST_FLOAT_TOLERANCE * a.abs().max(b.abs()).max(1.0)
        }
        (a, b) => (a.as_i128() - b.as_i128()).abs() <= 1,
    }
}

/// Relaxes the float arithmetic of `module` to the fast mode: every
/// addition, subtraction and multiplication may contract, and every division
/// by a constant may become a multiplication by its reciprocal.
pub fn relax_to_fast_mode(module: &Module<'_>) {
    for function in module.get_functions() {
        for block in function.get_basic_blocks() {
            let mut next = block.get_first_instruction();
            while let Some(instruction) = next {
                let flags = match instruction.get_opcode() {
                    InstructionOpcode::FAdd | InstructionOpcode::FSub | InstructionOpcode::FMul => Some(FastMathFlags::AllowContract),
                    InstructionOpcode::FDiv if divisor_is_constant(instruction) => Some(FastMathFlags::AllowReciprocal),
                    _ => None,
                };
                if let Some(flags) = flags {
                    // Float arithmetic always accepts fast-math flags.
                    let _ = instruction.set_fast_math_flags(flags);
                }
                next = instruction.get_next_instruction();
            }
        }
    }
}

/// Whether a division's divisor is a constant (a float, or a vector of
/// them).
fn divisor_is_constant(division: InstructionValue<'_>) -> bool {
    match division.get_operand(1) {
        Some(Operand::Value(BasicValueEnum::FloatValue(v))) => v.is_const(),
        Some(Operand::Value(BasicValueEnum::VectorValue(v))) => v.is_const(),
        _ => false,
    }
}
