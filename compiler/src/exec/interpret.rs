//! The interpreter of the lowered statement IR: the oracle that executes every
//! schedule before (and alongside) any code generator.
//!
//! It requires the final IR after storage flattening: `For`, `LetStmt`,
//! `Block`, `IfThenElse`, `Assert`, `ProducerConsumer`, `Allocate`, `Store`
//! and `NoOp` statements over expressions without `RVar`, `Param` or calls of
//! Funcs and inputs. `Realize`, `Provide` and those expressions are reported
//! as [`InterpretError::NotLowered`].
//!
//! Every loop runs serially and in order, whatever its [`ForKind`]
//! (parallel, vectorized, unrolled and GPU loops included), unless a
//! [`KernelLauncher`] is given ([`run_with_launcher`]): then each kernel
//! (an outermost GPU block loop) is handed to it. Expressions are
//! evaluated by the evaluator shared with the reference evaluator,
//! [`crate::exec::eval`], with its semantics (eager `&&`, `||` and `Select`,
//! as in compiled code; lane-wise vector operations); this module supplies
//! the variables in scope and buffer loads. Pipeline buffers are addressed by
//! flat element index, with their `min`/`extent`/`stride` fields bound as
//! `i32` variables named by [`buffer_vars`]. Every failure, including
//! out-of-bounds accesses and malformed IR, is returned as an
//! [`InterpretError`]; nothing panics.
//!
//! [`ForKind`]: crate::ir::stmt::ForKind

use crate::exec::buffer::{Buffer, BufferError};
use crate::exec::eval::{self, convert, lane_mismatch, EvalContext, EvalError, Scope, Val};
use crate::exec::kernels::{KernelHost, KernelLauncher};
use crate::ir::expr::{Expr, Name};
use crate::ir::stmt::{ForKind, Stmt, StmtNode};
use crate::ir::types::ScalarType;
use crate::ir::value::{widest_type, Scalar};
use crate::lang::pipeline::buffer_vars;
use std::collections::BTreeMap;
use std::fmt;
use thiserror::Error;

/// Whether a buffer access reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A read.
    Load,
    /// A write.
    Store,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Access::Load => "load",
            Access::Store => "store",
        })
    }
}

/// Why running a statement failed.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum InterpretError {
    /// An `Assert` whose condition is false.
    #[error("assertion failed: {message}")]
    AssertionFailed {
        /// The assertion's message.
        message: String,
    },
    /// A load or store at a flat index outside the buffer.
    #[error("{access} of element {index} of buffer {buffer}, which has {size} elements")]
    OutOfBounds {
        /// The buffer.
        buffer: String,
        /// The flat index.
        index: i64,
        /// The buffer's number of elements.
        size: usize,
        /// Whether it is a load or a store.
        access: Access,
    },
    /// A load or store of a buffer that is neither a pipeline buffer nor
    /// allocated in scope.
    #[error("buffer {name} is neither a pipeline buffer nor allocated here")]
    UnknownBuffer {
        /// The buffer.
        name: String,
    },
    /// A node that flattening removes (`Realize`, `Provide`, a call of a Func
    /// or input, ...).
    #[error("{node} is not lowered; the interpreter runs only flattened IR")]
    NotLowered {
        /// The kind of node.
        node: String,
    },
    /// An `Allocate` of negative size.
    #[error("allocation of buffer {buffer} has negative size {size}")]
    NegativeAllocation {
        /// The buffer allocated.
        buffer: String,
        /// Its size, in elements.
        size: i128,
    },
    /// An `Allocate` larger than the run's limit.
    #[error("allocation of buffer {buffer}: {size} elements ({bytes} bytes) is more than the {limit}-byte limit")]
    AllocationTooLarge {
        /// The buffer allocated.
        buffer: String,
        /// Its size, in elements.
        size: i128,
        /// Its size, in bytes.
        bytes: i128,
        /// The most bytes one allocation may take.
        limit: u64,
    },
    /// The run executed more statements and loop iterations than its budget.
    #[error("step budget of {max_steps} statements and loop iterations exceeded")]
    StepBudgetExceeded {
        /// The budget.
        max_steps: u64,
    },
    /// A pipeline buffer's min, extent or stride that does not fit `i32`.
    #[error("buffer field {name} = {value} does not fit in i32")]
    BufferFieldOverflow {
        /// The field (`f.min.0`, ...).
        name: String,
        /// Its value.
        value: i64,
    },
    /// Evaluating an expression failed (an unbound variable, mismatched
    /// lanes, a math function with the wrong arguments).
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// An allocation could not be made as a buffer.
    #[error(transparent)]
    Buffer(#[from] BufferError),
}

/// The default limit on one `Allocate`, in bytes (1 GiB).
pub const DEFAULT_MAX_ALLOCATION_BYTES: u64 = 1 << 30;

/// Limits on one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// The most statements plus loop iterations to execute; `None` is unlimited.
    pub max_steps: Option<u64>,
    /// The largest single `Allocate`, in bytes.
    pub max_allocation_bytes: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options { max_steps: None, max_allocation_bytes: DEFAULT_MAX_ALLOCATION_BYTES }
    }
}

/// Runs `stmt` over the pipeline's `buffers` (inputs and outputs, by name)
/// and scalar params, with no step budget.
pub fn run(stmt: &Stmt, buffers: &mut BTreeMap<String, Buffer>, scalars: &BTreeMap<String, Scalar>) -> Result<(), InterpretError> {
    run_with_options(stmt, buffers, scalars, &Options::default()).map(|_| ())
}

/// Runs `stmt` like [`run`] under `options`; returns the number of steps
/// (statements plus loop iterations) executed.
pub fn run_with_options(
    stmt: &Stmt,
    buffers: &mut BTreeMap<String, Buffer>,
    scalars: &BTreeMap<String, Scalar>,
    options: &Options,
) -> Result<u64, InterpretError> {
    let mut interpreter = bind(buffers, scalars, options)?;
    interpreter.exec(stmt)?;
    Ok(interpreter.steps)
}

/// Runs a GPU pipeline's `stmt` like [`run_with_options`], handing each
/// kernel (an outermost GPU block loop) to `launcher` instead of running
/// it; the host code around the kernels runs here.
pub fn run_with_launcher(
    stmt: &Stmt,
    buffers: &mut BTreeMap<String, Buffer>,
    scalars: &BTreeMap<String, Scalar>,
    options: &Options,
    launcher: &mut dyn KernelLauncher,
) -> Result<u64, InterpretError> {
    let mut interpreter = bind(buffers, scalars, options)?;
    interpreter.launcher = Some(launcher);
    interpreter.exec(stmt)?;
    Ok(interpreter.steps)
}

/// An interpreter over `buffers` with the params and the buffers' fields
/// in scope.
fn bind<'a, 'l>(
    buffers: &'a mut BTreeMap<String, Buffer>,
    scalars: &BTreeMap<String, Scalar>,
    options: &Options,
) -> Result<Interpreter<'a, 'l>, InterpretError> {
    // The buffers' fields first, so that a scalar given by the same name
    // (a kernel's argument: the region of a Func in a flat buffer of the
    // caller) shadows it.
    let mut scope = Scope::default();
    for (name, buffer) in buffers.iter() {
        for (d, dim) in buffer.dims.iter().enumerate() {
            let fields = [
                (buffer_vars::min(name, d), dim.min),
                (buffer_vars::extent(name, d), dim.extent),
                (buffer_vars::stride(name, d), dim.stride),
            ];
            for (field, value) in fields {
                let Ok(v) = i32::try_from(value) else {
                    return Err(InterpretError::BufferFieldOverflow { name: field, value });
                };
                scope.push(field.into(), ScalarType::I32, Val::Scalar(Scalar::Int(v.into())));
            }
        }
    }
    for (name, &v) in scalars {
        scope.push(name.as_str().into(), widest_type(v), Val::Scalar(v));
    }
    Ok(Interpreter { buffers, allocations: Vec::new(), scope, steps: 0, options: *options, launcher: None })
}

/// A flat index from an index value (saturating; out-of-range indices fail
/// the bounds check anyway).
fn flat_index(s: Scalar) -> i64 {
    s.as_i128().clamp(i64::MIN.into(), i64::MAX.into()) as i64
}

struct Interpreter<'a, 'l> {
    buffers: &'a mut BTreeMap<String, Buffer>,
    /// Buffers of enclosing `Allocate`s, innermost last.
    allocations: Vec<(Name, Buffer)>,
    /// Variables in scope: params, buffer fields, loop variables and lets.
    scope: Scope,
    steps: u64,
    options: Options,
    /// Where kernels go, when not run here.
    launcher: Option<&'l mut dyn KernelLauncher>,
}

impl Interpreter<'_, '_> {
    /// Counts one statement or loop iteration against the budget.
    fn step(&mut self) -> Result<(), InterpretError> {
        self.steps += 1;
        match self.options.max_steps {
            Some(max_steps) if self.steps > max_steps => Err(InterpretError::StepBudgetExceeded { max_steps }),
            _ => Ok(()),
        }
    }

    fn exec(&mut self, s: &Stmt) -> Result<(), InterpretError> {
        self.step()?;
        match s.node() {
            StmtNode::For { kind: ForKind::GpuBlock, .. } if self.launcher.is_some() => {
                let launcher = self.launcher.take().expect("checked");
                let result = launcher.launch(s, self);
                self.launcher = Some(launcher);
                result
            }
            StmtNode::For { name, min, extent, body, .. } => {
                let min = eval::eval_scalar(self, min, "For min")?.as_i128();
                let extent = eval::eval_scalar(self, extent, "For extent")?.as_i128();
                let slot = self.scope.push(name.clone(), ScalarType::I32, Val::Scalar(Scalar::Int(0)));
                for i in min..min + extent {
                    self.step()?;
                    self.scope.set(slot, Val::Scalar(Scalar::from_i128(i, ScalarType::I32)));
                    self.exec(body)?;
                }
                self.scope.truncate(slot);
                Ok(())
            }
            StmtNode::LetStmt { name, value, body } => {
                let (ty, value) = eval::eval(self, value)?;
                let slot = self.scope.push(name.clone(), ty, value);
                let result = self.exec(body);
                self.scope.truncate(slot);
                result
            }
            StmtNode::Block { stmts } => stmts.iter().try_for_each(|s| self.exec(s)),
            StmtNode::IfThenElse { cond, then_case, else_case } => {
                if eval::eval_scalar(self, cond, "IfThenElse condition")?.as_bool() {
                    self.exec(then_case)
                } else if let Some(else_case) = else_case {
                    self.exec(else_case)
                } else {
                    Ok(())
                }
            }
            StmtNode::Assert { cond, message } => {
                // A vector condition (an access check in a vectorized loop)
                // must hold in every lane.
                let holds = match eval::eval(self, cond)?.1 {
                    Val::Scalar(c) => c.as_bool(),
                    Val::Vector(lanes) => lanes.iter().all(|c| c.as_bool()),
                };
                if holds {
                    Ok(())
                } else {
                    Err(InterpretError::AssertionFailed { message: message.clone() })
                }
            }
            StmtNode::ProducerConsumer { produce, consume, .. } => {
                self.exec(produce)?;
                self.exec(consume)
            }
            StmtNode::Realize { func, .. } => Err(InterpretError::NotLowered { node: format!("Realize of {func}") }),
            StmtNode::Provide { func, .. } => Err(InterpretError::NotLowered { node: format!("Provide to {func}") }),
            StmtNode::Allocate { buffer, ty, size, body } => {
                let size = eval::eval_scalar(self, size, "Allocate size")?.as_i128();
                let allocation = self.allocate(buffer, ty.scalar, size)?;
                self.allocations.push((buffer.clone(), allocation));
                let result = self.exec(body);
                self.allocations.pop();
                result
            }
            StmtNode::Store { buffer, index, value } => self.store(buffer, index, value),
            StmtNode::NoOp => Ok(()),
        }
    }

    /// A zeroed 1-D buffer of `size` elements, within the allocation limit.
    fn allocate(&self, name: &str, ty: ScalarType, size: i128) -> Result<Buffer, InterpretError> {
        if size < 0 {
            return Err(InterpretError::NegativeAllocation { buffer: name.into(), size });
        }
        let bytes = size * ty.bytes() as i128;
        let limit = self.options.max_allocation_bytes;
        let too_large = || InterpretError::AllocationTooLarge { buffer: name.into(), size, bytes, limit };
        if bytes > limit.into() {
            return Err(too_large());
        }
        let elements = i64::try_from(size).map_err(|_| too_large())?;
        Ok(Buffer::new(name, ty, &[(0, elements)])?)
    }

    fn store(&mut self, name: &Name, index: &Expr, value: &Expr) -> Result<(), InterpretError> {
        let (_, index) = eval::eval(self, index)?;
        let (from, value) = eval::eval(self, value)?;
        let buffer = self.buffer_mut(name)?;
        let to = buffer.ty;
        let mut write = |i: Scalar, v: Scalar| {
            let index = flat_index(i);
            if buffer.write(index, convert(from, to, v)) {
                Ok(())
            } else {
                Err(InterpretError::OutOfBounds { buffer: name.to_string(), index, size: buffer.len(), access: Access::Store })
            }
        };
        match (index, value) {
            (Val::Scalar(i), Val::Scalar(v)) => write(i, v),
            (Val::Vector(is), Val::Vector(vs)) if is.len() == vs.len() => is.into_iter().zip(vs).try_for_each(|(i, v)| write(i, v)),
            (i, v) => Err(lane_mismatch("Store value", i.lanes(), v.lanes()).into()),
        }
    }

    fn buffer(&self, name: &Name) -> Result<&Buffer, InterpretError> {
        if let Some((_, b)) = self.allocations.iter().rev().find(|(n, _)| n == name) {
            return Ok(b);
        }
        self.buffers.get(&**name).ok_or_else(|| InterpretError::UnknownBuffer { name: name.to_string() })
    }

    fn buffer_mut(&mut self, name: &Name) -> Result<&mut Buffer, InterpretError> {
        if let Some(i) = self.allocations.iter().rposition(|(n, _)| n == name) {
            return Ok(&mut self.allocations[i].1);
        }
        self.buffers.get_mut(&**name).ok_or_else(|| InterpretError::UnknownBuffer { name: name.to_string() })
    }
}

impl KernelHost for Interpreter<'_, '_> {
    fn eval_scalar(&mut self, e: &Expr) -> Result<Scalar, InterpretError> {
        eval::eval_scalar(self, e, "kernel argument")
    }

    fn host_buffer(&mut self, name: &Name) -> Result<&mut Buffer, InterpretError> {
        self.buffer_mut(name)
    }

    fn run_here(&mut self, s: &Stmt) -> Result<(), InterpretError> {
        self.exec(s)
    }
}

/// Lowered IR: variables are loop variables, lets, params and buffer fields;
/// memory is read by `Load`s; params, reduction variables and calls of Funcs
/// and inputs are gone.
impl EvalContext for Interpreter<'_, '_> {
    type Error = InterpretError;

    fn scope(&mut self) -> &mut Scope {
        &mut self.scope
    }

    fn error(&self, error: EvalError) -> InterpretError {
        match error {
            EvalError::ReductionVariable { name } => InterpretError::NotLowered { node: format!("reduction variable {name}") },
            error => InterpretError::Eval(error),
        }
    }

    fn param(&mut self, name: &Name, _: ScalarType) -> Result<Scalar, InterpretError> {
        Err(InterpretError::NotLowered { node: format!("param {name}") })
    }

    fn call_func(&mut self, func: &Name, _: usize, _: &[i64]) -> Result<Scalar, InterpretError> {
        Err(InterpretError::NotLowered { node: format!("call of Func {func}") })
    }

    fn read_input(&mut self, input: &Name, _: &[i64]) -> Result<Scalar, InterpretError> {
        Err(InterpretError::NotLowered { node: format!("call of input {input}") })
    }

    fn load(&mut self, name: &Name, index: Val, ty: ScalarType) -> Result<Val, InterpretError> {
        let b = self.buffer(name)?;
        index.try_map(|i| {
            let index = flat_index(i);
            b.read(index).map(|v| convert(b.ty, ty, v)).ok_or_else(|| InterpretError::OutOfBounds {
                buffer: name.to_string(),
                index,
                size: b.len(),
                access: Access::Load,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::buffer::BufferDim;
    use crate::ir::expr::{BinOp, CallTarget, DefRef, ExprNode, MathFn};
    use crate::ir::stmt::{ForKind, Range};
    use crate::ir::types::Type;
    use crate::ir::value;
    use crate::lang::ops::{cast, select, CompareExt};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn field(f: fn(&str, usize) -> String, buffer: &str, d: usize) -> Expr {
        Expr::ivar(f(buffer, d))
    }

    /// The flat index of `coords` in pipeline buffer `buffer`, through its fields.
    fn flat(buffer: &str, coords: &[Expr]) -> Expr {
        coords
            .iter()
            .enumerate()
            .fold(Expr::i32(0), |acc, (d, c)| acc + (c - field(buffer_vars::min, buffer, d)) * field(buffer_vars::stride, buffer, d))
    }

    /// Loops over every coordinate of `buffer`, `names` innermost first.
    fn over(buffer: &str, names: &[&str], kind: ForKind, body: Stmt) -> Stmt {
        names.iter().enumerate().fold(body, |body, (d, name)| {
            let min = field(buffer_vars::min, buffer, d);
            let extent = field(buffer_vars::extent, buffer, d);
            Stmt::for_loop(*name, min, extent, kind, body)
        })
    }

    fn buffer(name: &str, ty: ScalarType, region: &[(i64, i64)]) -> Buffer {
        Buffer::new(name, ty, region).unwrap()
    }

    fn named(list: Vec<Buffer>) -> BTreeMap<String, Buffer> {
        list.into_iter().map(|b| (b.name.clone(), b)).collect()
    }

    fn run_plain(stmt: &Stmt, buffers: &mut BTreeMap<String, Buffer>) -> Result<(), InterpretError> {
        run(stmt, buffers, &BTreeMap::new())
    }

    fn ints(b: &Buffer) -> Vec<i128> {
        (0..b.len() as i64).map(|i| b.read(i).unwrap().as_i128()).collect()
    }

    #[test]
    fn loop_over_output_with_nonzero_min() {
        let mut bufs = named(vec![buffer("out", ScalarType::I32, &[(5, 10)])]);
        let x = Expr::ivar("x");
        let body = Stmt::store("out", flat("out", std::slice::from_ref(&x)), x * 2 + 1);
        let stmt = over("out", &["x"], ForKind::Parallel, body);
        run_plain(&stmt, &mut bufs).unwrap();
        for x in 5..15 {
            assert_eq!(bufs["out"].get(&[x]).unwrap(), Scalar::Int(2 * x + 1));
        }
    }

    #[test]
    fn nested_loops_follow_mins_and_strides() {
        let mut input = buffer("in", ScalarType::I16, &[(-2, 4), (3, 3)]);
        input.fill(|c| Scalar::Int(c[0] * 10 + c[1]));
        // A column-major output: dimension 0 has the larger stride.
        let mut out = buffer("out", ScalarType::I32, &[(-2, 4), (3, 3)]);
        out.dims = vec![BufferDim { min: -2, extent: 4, stride: 3 }, BufferDim { min: 3, extent: 3, stride: 1 }];
        let mut bufs = named(vec![input, out]);
        let (x, y) = (Expr::ivar("x"), Expr::ivar("y"));
        let value = cast(Type::i32(), Expr::load("in", flat("in", &[x.clone(), y.clone()]), Type::i16())) * 2 + &y;
        let body = Stmt::store("out", flat("out", &[x, y]), value);
        let stmt = Stmt::for_loop(
            "y",
            field(buffer_vars::min, "out", 1),
            field(buffer_vars::extent, "out", 1),
            ForKind::GpuBlock,
            Stmt::for_loop("x", field(buffer_vars::min, "out", 0), field(buffer_vars::extent, "out", 0), ForKind::GpuThread, body),
        );
        run_plain(&stmt, &mut bufs).unwrap();
        for y in 3..6 {
            for x in -2..2 {
                assert_eq!(bufs["out"].get(&[x, y]).unwrap(), Scalar::Int((x * 10 + y) * 2 + y), "at ({x}, {y})");
            }
        }
    }

    #[test]
    fn allocate_is_zeroed_scoped_scratch_that_shadows() {
        let mut tmp = buffer("tmp", ScalarType::I32, &[(0, 8)]);
        tmp.fill(|c| Scalar::Int(100 + c[0]));
        let mut bufs = named(vec![tmp, buffer("out", ScalarType::I32, &[(0, 10)])]);
        let i = Expr::ivar("i");
        let stmt = Stmt::block(vec![
            Stmt::new(StmtNode::Allocate {
                buffer: "tmp".into(),
                ty: Type::i32(),
                size: Expr::i32(8),
                body: Stmt::block(vec![
                    Stmt::for_loop("i", 0.into(), 8.into(), ForKind::Serial, Stmt::store("tmp", i.clone(), &i * &i)),
                    Stmt::new(StmtNode::Allocate {
                        buffer: "tmp".into(),
                        ty: Type::u16(),
                        size: Expr::i32(2),
                        body: Stmt::store("out", Expr::i32(8), cast(Type::i32(), Expr::load("tmp", Expr::i32(1), Type::u16())) + 1000),
                    }),
                    Stmt::for_loop(
                        "i",
                        0.into(),
                        8.into(),
                        ForKind::Unrolled,
                        Stmt::store("out", i.clone(), Expr::load("tmp", 7 - i.clone(), Type::i32())),
                    ),
                ]),
            }),
            Stmt::store("out", Expr::i32(9), Expr::load("tmp", Expr::i32(2), Type::i32())),
        ]);
        run_plain(&stmt, &mut bufs).unwrap();
        assert_eq!(ints(&bufs["out"]), vec![49, 36, 25, 16, 9, 4, 1, 0, 1000, 102]);
        assert_eq!(ints(&bufs["tmp"]), (100..108).collect::<Vec<_>>());
    }

    #[test]
    fn vector_store_scatters_and_strided_ramp_gathers() {
        let mut input = buffer("in", ScalarType::I32, &[(0, 16)]);
        input.fill(|c| Scalar::Int(10 * c[0]));
        let mut bufs = named(vec![input, buffer("out", ScalarType::I32, &[(0, 8)])]);
        let stmt = Stmt::block(vec![
            Stmt::store("out", Expr::ramp(1.into(), 2.into(), 4), Expr::load("in", Expr::ramp(0.into(), 3.into(), 4), Type::i32())),
            // Lanes are written in order: the last lane wins.
            Stmt::store("out", Expr::broadcast(0.into(), 4), Expr::ramp(5.into(), 1.into(), 4)),
        ]);
        run_plain(&stmt, &mut bufs).unwrap();
        assert_eq!(ints(&bufs["out"]), vec![8, 0, 0, 30, 0, 60, 0, 90]);
    }

    #[test]
    fn select_picks_lane_by_lane() {
        let mut bufs = named(vec![buffer("out", ScalarType::I32, &[(0, 8)])]);
        let ramp = Expr::ramp(0.into(), 1.into(), 4);
        let stmt = Stmt::block(vec![
            Stmt::store("out", ramp.clone(), select(ramp.lt(2), &ramp * 10, Expr::broadcast((-1).into(), 4))),
            // A scalar condition picks a whole vector.
            Stmt::store(
                "out",
                Expr::ramp(4.into(), 1.into(), 4),
                Expr::new(ExprNode::Select { cond: Expr::bool(false), t: ramp.clone(), f: &ramp + 100 }),
            ),
        ]);
        run_plain(&stmt, &mut bufs).unwrap();
        assert_eq!(ints(&bufs["out"]), vec![0, 10, -1, -1, 100, 101, 102, 103]);
    }

    #[test]
    fn u8_values_wrap_in_arithmetic_and_on_store() {
        let mut bufs = named(vec![buffer("out", ScalarType::U8, &[(0, 4)]), buffer("big", ScalarType::U8, &[(0, 2)])]);
        let x = Expr::ivar("x");
        let stmt = Stmt::block(vec![
            Stmt::for_loop(
                "x",
                0.into(),
                4.into(),
                ForKind::Vectorized,
                Stmt::store("out", x.clone(), cast(Type::u8(), x) + Expr::int(254, Type::u8())),
            ),
            Stmt::store("big", Expr::i32(0), Expr::i32(300)),
            Stmt::store("big", Expr::i32(1), Expr::i32(-1)),
        ]);
        run_plain(&stmt, &mut bufs).unwrap();
        assert_eq!(ints(&bufs["out"]), vec![254, 255, 0, 1]);
        assert_eq!(ints(&bufs["big"]), vec![44, 255]);
    }

    #[test]
    fn failed_assert_returns_its_message() {
        let stmt = Stmt::block(vec![
            Stmt::assert(Expr::i32(1).lt(2), "never"),
            Stmt::assert(Expr::i32(3).lt(2), "out.extent.0 is too small"),
            Stmt::store("out", Expr::i32(0), Expr::i32(1)),
        ]);
        let mut bufs = named(vec![buffer("out", ScalarType::I32, &[(0, 1)])]);
        let err = run_plain(&stmt, &mut bufs).unwrap_err();
        assert_eq!(err, InterpretError::AssertionFailed { message: "out.extent.0 is too small".into() });
        assert_eq!(ints(&bufs["out"]), vec![0]);
    }

    #[test]
    fn out_of_bounds_loads_and_stores_name_the_buffer() {
        let mut bufs = named(vec![buffer("in", ScalarType::F32, &[(0, 4)]), buffer("out", ScalarType::F32, &[(0, 4)])]);
        let load = Stmt::store("out", Expr::i32(0), Expr::load("in", Expr::i32(4), Type::f32()));
        assert_eq!(
            run_plain(&load, &mut bufs).unwrap_err(),
            InterpretError::OutOfBounds { buffer: "in".into(), index: 4, size: 4, access: Access::Load }
        );
        let gather =
            Stmt::store("out", Expr::ramp(0.into(), 1.into(), 2), Expr::load("in", Expr::ramp(2.into(), (-3).into(), 2), Type::f32()));
        assert!(matches!(run_plain(&gather, &mut bufs).unwrap_err(), InterpretError::OutOfBounds { index: -1, access: Access::Load, .. }));
        let store = Stmt::store("out", Expr::i32(-1), Expr::from(1.0f32));
        let err = run_plain(&store, &mut bufs).unwrap_err();
        assert_eq!(err, InterpretError::OutOfBounds { buffer: "out".into(), index: -1, size: 4, access: Access::Store });
        assert!(err.to_string().contains("buffer out"), "{err}");
        let unknown = Stmt::store("nowhere", Expr::i32(0), Expr::i32(0));
        assert_eq!(run_plain(&unknown, &mut bufs).unwrap_err(), InterpretError::UnknownBuffer { name: "nowhere".into() });
    }

    #[test]
    fn unbound_variables_are_errors() {
        let mut bufs = named(vec![buffer("out", ScalarType::I32, &[(0, 4)])]);
        let stmt = Stmt::store("out", Expr::i32(0), Expr::ivar("ghost") + 1);
        assert_eq!(run_plain(&stmt, &mut bufs).unwrap_err(), InterpretError::Eval(EvalError::UnboundVariable { name: "ghost".into() }));
        // A loop variable is out of scope after its loop.
        let stmt = Stmt::block(vec![
            Stmt::for_loop("x", 0.into(), 2.into(), ForKind::Serial, Stmt::no_op()),
            Stmt::store("out", Expr::ivar("x"), Expr::i32(1)),
        ]);
        assert_eq!(run_plain(&stmt, &mut bufs).unwrap_err(), InterpretError::Eval(EvalError::UnboundVariable { name: "x".into() }));
    }

    #[test]
    fn step_budget_stops_a_huge_loop_and_counts_steps() {
        let mut bufs = named(vec![buffer("out", ScalarType::I32, &[(0, 1)])]);
        let store = Stmt::store("out", Expr::i32(0), Expr::ivar("x"));
        let huge = Stmt::for_loop("x", 0.into(), i32::MAX.into(), ForKind::Serial, store.clone());
        let options = Options { max_steps: Some(10_000), ..Options::default() };
        let start = std::time::Instant::now();
        let err = run_with_options(&huge, &mut bufs, &BTreeMap::new(), &options).unwrap_err();
        assert_eq!(err, InterpretError::StepBudgetExceeded { max_steps: 10_000 });
        assert!(start.elapsed().as_secs_f64() < 1.0);
        // One For, three iterations, three Stores.
        let small = Stmt::for_loop("x", 0.into(), 3.into(), ForKind::Serial, store);
        assert_eq!(run_with_options(&small, &mut bufs, &BTreeMap::new(), &options), Ok(7));
        assert_eq!(ints(&bufs["out"]), vec![2]);
    }

    #[test]
    fn unlowered_ir_is_refused() {
        let mut bufs = named(vec![buffer("out", ScalarType::I32, &[(0, 4)])]);
        let realize = Stmt::new(StmtNode::Realize {
            func: "f".into(),
            types: vec![Type::i32()],
            bounds: vec![Range { min: 0.into(), extent: 4.into() }],
            body: Stmt::no_op(),
        });
        assert!(matches!(
            run_plain(&realize, &mut bufs).unwrap_err(),
            InterpretError::NotLowered { node } if node.contains("Realize of f")
        ));
        let provide = Stmt::provide("f", vec![0.into()], vec![1.into()]);
        assert!(matches!(run_plain(&provide, &mut bufs).unwrap_err(), InterpretError::NotLowered { .. }));
        let call = Expr::call(CallTarget::Func(DefRef::unlinked("g".into(), 0)), vec![0.into()], Type::i32());
        let stmt = Stmt::store("out", Expr::i32(0), call);
        assert!(matches!(
            run_plain(&stmt, &mut bufs).unwrap_err(),
            InterpretError::NotLowered { node } if node.contains("Func g")
        ));
        let param = Expr::param("k", Type::i32());
        let stmt = Stmt::store("out", Expr::i32(0), param);
        assert!(matches!(run_plain(&stmt, &mut bufs).unwrap_err(), InterpretError::NotLowered { .. }));
    }

    #[test]
    fn bad_allocations_are_errors() {
        let mut bufs = BTreeMap::new();
        let alloc = |size: Expr| Stmt::new(StmtNode::Allocate { buffer: "scratch".into(), ty: Type::f64(), size, body: Stmt::no_op() });
        assert_eq!(
            run_plain(&alloc(Expr::i32(-3)), &mut bufs).unwrap_err(),
            InterpretError::NegativeAllocation { buffer: "scratch".into(), size: -3 }
        );
        let huge = alloc(Expr::int(1 << 40, Type::i64()));
        assert!(matches!(
            run_plain(&huge, &mut bufs).unwrap_err(),
            InterpretError::AllocationTooLarge { buffer, size, .. } if buffer == "scratch" && size == 1 << 40
        ));
        let options = Options { max_allocation_bytes: 80, ..Options::default() };
        assert!(run_with_options(&alloc(Expr::i32(10)), &mut bufs, &BTreeMap::new(), &options).is_ok());
        assert!(run_with_options(&alloc(Expr::i32(11)), &mut bufs, &BTreeMap::new(), &options).is_err());
    }

    #[test]
    fn lets_params_and_branches_keep_their_types() {
        let mut bufs = named(vec![buffer("out", ScalarType::F32, &[(0, 4)])]);
        let scalars: BTreeMap<String, Scalar> = [("k".to_string(), Scalar::Int(3)), ("w".to_string(), Scalar::Float(0.1))].into();
        let (k, w) = (Expr::ivar("k"), Expr::var("w", Type::f32()));
        let half = Expr::var("h", Type::f32());
        let stmt = Stmt::let_stmt(
            "h",
            Expr::from(0.5f32),
            Stmt::block(vec![
                // The param w is read as f32: 0.1 rounded to f32.
                Stmt::store("out", Expr::i32(0), &w + 0.0f32),
                Stmt::if_then_else(
                    k.gt(2),
                    Stmt::store("out", Expr::i32(1), cast(Type::f32(), &k) * &half),
                    Stmt::store("out", Expr::i32(1), Expr::from(-1.0f32)),
                ),
                Stmt::if_then(k.lt(2), Stmt::store("out", Expr::i32(2), Expr::from(-1.0f32))),
                // An inner let shadows an outer one.
                Stmt::store("out", Expr::i32(3), Expr::let_in("h", Expr::from(2.0f32), &half * &half) + &half),
            ]),
        );
        run(&stmt, &mut bufs, &scalars).unwrap();
        let got: Vec<Scalar> = (0..4).map(|i| bufs["out"].read(i).unwrap()).collect();
        assert_eq!(got, vec![Scalar::Float(0.1f32 as f64), Scalar::Float(1.5), Scalar::Float(0.0), Scalar::Float(4.5)]);
    }

    #[test]
    fn math_matches_value_semantics_and_checks_arity() {
        let mut bufs = named(vec![buffer("out", ScalarType::F32, &[(0, 3)])]);
        let x = Expr::from(2.0f32);
        let stmt = Stmt::block(vec![
            Stmt::store("out", Expr::i32(0), crate::lang::ops::sqrt(&x)),
            Stmt::store("out", Expr::i32(1), crate::lang::ops::pow(&x, Expr::from(0.5f32))),
            Stmt::store("out", Expr::ramp(1.into(), 1.into(), 2), crate::lang::ops::abs(Expr::ramp((-3.0f32).into(), 1.5f32.into(), 2))),
        ]);
        run_plain(&stmt, &mut bufs).unwrap();
        let sqrt2 = value::math(MathFn::Sqrt, ScalarType::F32, &[Scalar::Float(2.0)]);
        assert_eq!(bufs["out"].read(0), Some(sqrt2));
        assert_eq!(bufs["out"].read(1), Some(Scalar::Float(3.0)));
        assert_eq!(bufs["out"].read(2), Some(Scalar::Float(1.5)));
        let bad = Expr::call(CallTarget::Math(MathFn::Pow), vec![x], Type::f32());
        assert_eq!(
            run_plain(&Stmt::store("out", Expr::i32(0), bad), &mut bufs).unwrap_err(),
            InterpretError::Eval(EvalError::MathArity { function: "pow", expected: 2, got: 1 })
        );
    }

    #[test]
    fn mismatched_lanes_are_errors() {
        let mut bufs = named(vec![buffer("out", ScalarType::I32, &[(0, 8)])]);
        let stmt = Stmt::store("out", Expr::ramp(0.into(), 1.into(), 4), Expr::i32(1));
        assert_eq!(
            run_plain(&stmt, &mut bufs).unwrap_err(),
            InterpretError::Eval(EvalError::LaneMismatch { context: "Store value", expected: 4, got: 1 })
        );
        let sum =
            Expr::new(ExprNode::Binary { op: BinOp::Add, a: Expr::ramp(0.into(), 1.into(), 4), b: Expr::ramp(0.into(), 1.into(), 2) });
        let stmt = Stmt::store("out", Expr::ramp(0.into(), 1.into(), 4), sum);
        assert!(matches!(run_plain(&stmt, &mut bufs).unwrap_err(), InterpretError::Eval(EvalError::LaneMismatch { .. })));
        let stmt = Stmt::for_loop("x", Expr::ramp(0.into(), 1.into(), 2), 1.into(), ForKind::Serial, Stmt::no_op());
        assert!(matches!(run_plain(&stmt, &mut bufs).unwrap_err(), InterpretError::Eval(EvalError::LaneMismatch { .. })));
    }

    /// Copies a 2-D input to an output over random regions and stride orders,
    /// checking every element through coordinate access.
    #[test]
    fn random_regions_copy_exactly() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..30 {
            let region: Vec<(i64, i64)> = (0..2).map(|_| (rng.random_range(-20..20), rng.random_range(0..7))).collect();
            let mut input = buffer("in", ScalarType::I16, &region);
            input.fill(|c| Scalar::Int(c[0] * 7 - c[1] * 3));
            let mut out = buffer("out", ScalarType::I32, &region);
            if rng.random_bool(0.5) {
                out.dims[1].stride = 1;
                out.dims[0].stride = region[1].1;
            }
            let mut bufs = named(vec![input, out]);
            let (x, y) = (Expr::ivar("x"), Expr::ivar("y"));
            let value = cast(Type::i32(), Expr::load("in", flat("in", &[x.clone(), y.clone()]), Type::i16())) * 3 - &x;
            let stmt = over("out", &["x", "y"], ForKind::Serial, Stmt::store("out", flat("out", &[x, y]), value));
            run_plain(&stmt, &mut bufs).unwrap();
            for c in bufs["out"].coordinates() {
                let expected = (c[0] * 7 - c[1] * 3) * 3 - c[0];
                assert_eq!(bufs["out"].get(&c).unwrap(), Scalar::Int(expected), "at {c:?} in {region:?}");
            }
        }
    }
}
