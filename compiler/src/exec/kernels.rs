//! GPU kernels as the host code launches them: a compiled GPU module as
//! data (PTX and each kernel's launch plan: grid, block, shared memory,
//! arguments), which the code generator makes where LLVM is and a GPU host
//! loads without it, and the hook by which the interpreter, running a GPU
//! pipeline's host code, hands each kernel to whatever runs it.

use crate::exec::buffer::Buffer;
use crate::exec::interpret::InterpretError;
use crate::ir::expr::{Expr, Name};
use crate::ir::stmt::Stmt;
use crate::ir::types::{ScalarType, Type};
use crate::ir::value::Scalar;
use crate::lower::Kernel;
use crate::target::GpuTarget;
use serde::{Deserialize, Serialize};

/// What a kernel takes, in argument order: its buffers (global memory),
/// then its scalars, then the error word (an `i32` a failed assertion sets
/// to its code).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelSignature {
    /// Each buffer's name and element type.
    pub buffers: Vec<(Name, ScalarType)>,
    /// Each scalar's name and type (buffer fields, params, values the host
    /// computed before the launch).
    pub scalars: Vec<(Name, Type)>,
}

/// One kernel of a [`GpuModule`] and how to launch it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelLaunch {
    /// The PTX entry's name.
    pub entry: String,
    /// The kernel: its grid (block loop extents, evaluated where the host
    /// code reaches the kernel), threads per block and shared memory.
    pub kernel: Kernel,
    /// Its arguments, in order.
    pub signature: KernelSignature,
    /// The message of each assertion, by the error code minus one.
    pub asserts: Vec<String>,
}

/// The kernels of a pipeline compiled for one GPU architecture.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuModule {
    /// The architecture.
    pub target: GpuTarget,
    /// The PTX of every kernel.
    pub ptx: String,
    /// The kernels, in the order the host code reaches them.
    pub kernels: Vec<KernelLaunch>,
}

impl GpuModule {
    /// The launch plan of the kernel named `name` (its outermost block
    /// loop).
    pub fn kernel(&self, name: &str) -> Option<&KernelLaunch> {
        self.kernels.iter().find(|k| &*k.kernel.name == name)
    }
}

/// The host side of a kernel launch, as the interpreter offers it where
/// its host code reaches a kernel.
pub trait KernelHost {
    /// The value of `e` (a grid extent, a scalar argument) where the
    /// kernel is reached.
    fn eval_scalar(&mut self, e: &Expr) -> Result<Scalar, InterpretError>;
    /// The buffer named `name` in scope there.
    fn host_buffer(&mut self, name: &Name) -> Result<&mut Buffer, InterpretError>;
    /// Runs `s` in the interpreter, in the scope there.
    fn run_here(&mut self, s: &Stmt) -> Result<(), InterpretError>;
}

/// Runs the kernels a GPU pipeline's host code reaches.
pub trait KernelLauncher {
    /// Runs the kernel `kernel` (its statement, the outermost block loop)
    /// with the host state at that point.
    fn launch(&mut self, kernel: &Stmt, host: &mut dyn KernelHost) -> Result<(), InterpretError>;
}
