//! The float mode of generated code. By default (strict) every float
//! operation is rounded as written, so compiled pipelines agree bit for bit
//! with the reference evaluator and the IR interpreter. The fast mode lets
//! LLVM contract a multiply feeding an add into one fused multiply-add
//! (rounded once, so results may differ in the last bits), as Halide does
//! unless a target asks for `strict_float`; nothing else is relaxed (no
//! reassociation, no assumptions about NaN or infinity).

use inkwell::module::Module;
use inkwell::values::{FastMathFlags, InstructionOpcode};

/// Marks every float addition, subtraction and multiplication of `module`
/// as contractible.
pub fn allow_contraction(module: &Module<'_>) {
    for function in module.get_functions() {
        for block in function.get_basic_blocks() {
            let mut next = block.get_first_instruction();
            while let Some(instruction) = next {
                if matches!(instruction.get_opcode(), InstructionOpcode::FAdd | InstructionOpcode::FSub | InstructionOpcode::FMul) {
                    // Float arithmetic always accepts fast-math flags.
                    let _ = instruction.set_fast_math_flags(FastMathFlags::AllowContract);
                }
                next = instruction.get_next_instruction();
            }
        }
    }
}
