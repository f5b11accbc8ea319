//! A launch plan evaluated where the host code reaches its kernel: the
//! grid (each block loop's extent), the block (threads per dimension) and
//! the value of each scalar argument, in the signature's order.

use compiler::exec::interpret::InterpretError;
use compiler::exec::kernels::{KernelHost, KernelLaunch};
use compiler::ir::expr::Expr;
use compiler::ir::stmt::{ForKind, Stmt, StmtNode};
use compiler::ir::value::Scalar;

/// One launch, evaluated.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchArgs {
    /// Blocks in x, y and z.
    pub grid: [u32; 3],
    /// Threads per block in x, y and z.
    pub block: [u32; 3],
    /// The scalar arguments, in the signature's order, in their types.
    pub scalars: Vec<Scalar>,
}

impl LaunchArgs {
    /// Whether the grid is empty (the host skips the launch).
    pub fn is_empty(&self) -> bool {
        self.grid.contains(&0)
    }
}

/// Evaluates `plan` with the host state at its kernel.
pub fn evaluate(plan: &KernelLaunch, host: &mut dyn KernelHost) -> Result<LaunchArgs, InterpretError> {
    let mut grid = [1u32; 3];
    for (d, b) in plan.kernel.blocks.iter().enumerate() {
        let n = host.eval_scalar(&b.extent)?.as_i128();
        grid[d] = u32::try_from(n.max(0)).unwrap_or(u32::MAX);
    }
    let mut block = [1u32; 3];
    for (d, t) in plan.kernel.threads.iter().enumerate() {
        block[d] = *t as u32;
    }
    let mut scalars = vec![];
    for (name, ty) in &plan.signature.scalars {
        scalars.push(host.eval_scalar(&Expr::var(name.clone(), *ty))?);
    }
    Ok(LaunchArgs { grid, block, scalars })
}

/// The kernel statement `kernel` with its block loops' extents replaced by
/// the grid's: what a device runs, one block per grid point.
pub fn over_grid(kernel: &Stmt, grid: [u32; 3], blocks: usize) -> Stmt {
    fn go(s: &Stmt, grid: [u32; 3], d: usize) -> Stmt {
        match s.node() {
            StmtNode::For { name, min, kind: ForKind::GpuBlock, body, .. } if d > 0 => {
                Stmt::for_loop(name.clone(), min.clone(), Expr::i32(grid[d - 1] as i64), ForKind::GpuBlock, go(body, grid, d - 1))
            }
            StmtNode::LetStmt { name, value, body } => Stmt::let_stmt(name.clone(), value.clone(), go(body, grid, d)),
            _ => s.clone(),
        }
    }
    go(kernel, grid, blocks)
}
