//! A device on the CPU that runs each kernel from its launch plan alone:
//! the grid and scalar arguments the host evaluated, the buffers the
//! signature names, nothing else in scope; the kernel's blocks over that
//! grid, its threads as the interpreter runs them. What it computes is
//! what the GPU computes if the plans are right, so it checks the plans
//! (and the host code around them) where there is no GPU.

use crate::launch::{evaluate, over_grid};
use crate::program::{Device, RunError, Timings};
use compiler::exec::buffer::Buffer;
use compiler::exec::interpret::{run_with_options, InterpretError, Options};
use compiler::exec::kernels::{GpuModule, KernelHost, KernelLauncher};
use compiler::ir::stmt::{Stmt, StmtNode};
use std::collections::BTreeMap;

/// Runs kernels on the interpreter from their launch plans.
pub struct Emulator {
    module: GpuModule,
    options: Options,
    timings: Timings,
}

impl Emulator {
    /// An emulator of `module`'s kernels.
    pub fn new(module: GpuModule) -> Emulator {
        Emulator { module, options: Options::default(), timings: Timings::default() }
    }

    /// The same, stopping a kernel after `steps` statements and loop
    /// iterations ([`InterpretError::StepBudgetExceeded`]).
    pub fn with_step_budget(self, steps: u64) -> Emulator {
        Emulator { options: Options { max_steps: Some(steps), ..self.options }, ..self }
    }
}

impl KernelLauncher for Emulator {
    fn launch(&mut self, kernel: &Stmt, host: &mut dyn KernelHost) -> Result<(), InterpretError> {
        let StmtNode::For { name, .. } = kernel.node() else {
            return Err(InterpretError::NotLowered { node: "a kernel that is not a block loop".into() });
        };
        let plan =
            self.module.kernel(name).ok_or_else(|| InterpretError::NotLowered { node: format!("kernel {name} without a launch plan") })?;
        let args = evaluate(plan, host)?;
        self.timings.launches += 1;
        if args.is_empty() {
            return Ok(());
        }
        let mut buffers = BTreeMap::new();
        for (b, _) in &plan.signature.buffers {
            buffers.insert(b.to_string(), host.host_buffer(b)?.clone());
        }
        let scalars = plan.signature.scalars.iter().map(|(n, _)| n.to_string()).zip(args.scalars.iter().copied()).collect();
        run_with_options(&over_grid(kernel, args.grid, plan.kernel.blocks.len()), &mut buffers, &scalars, &self.options)?;
        for (b, _) in &plan.signature.buffers {
            *host.host_buffer(b)? = buffers.remove(&**b).expect("inserted above");
        }
        Ok(())
    }
}

impl Device for Emulator {
    fn finish(&mut self, _: &mut BTreeMap<String, Buffer>) -> Result<Timings, RunError> {
        Ok(std::mem::take(&mut self.timings))
    }

    fn take_error(&mut self) -> Option<RunError> {
        None
    }
}
