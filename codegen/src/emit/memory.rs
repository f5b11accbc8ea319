//! Memory accesses of the emitted function: buffer element addresses
//! (computed in i64 from loop variables up), dense vector loads and stores,
//! reads at strides up to 8 (downsampling, pooling) as dense loads and a
//! tree of shuffles, reads of repeated elements (upsampling) as two dense
//! loads and shuffles, reads through clamps
//! (boundary conditions, nested or shifted) as a dense load wherever no
//! clamp bites, reads and writes at run-time strides lane by lane from one
//! base address, gathers and lane-by-lane scatters, and the per-buffer
//! TBAA tags that tell LLVM distinct buffers never overlap.

use super::types::vector_of;
use super::{BufferRef, CodegenError, FunctionEmitter, Result, Value};
use compiler::ir::expr::{BinOp, CmpOp, Expr, ExprNode};
use compiler::ir::types::{ScalarType, Type};
use compiler::target::{MAX_SHUFFLED_STRIDE, MAX_UPSAMPLING_FACTOR};
use inkwell::intrinsics::Intrinsic;
use inkwell::types::VectorType;
use inkwell::values::{BasicValue, IntValue, PointerValue};
use inkwell::IntPredicate;

impl<'ctx> FunctionEmitter<'ctx, '_, '_> {
    /// The address of element `index` (scalar) of `b`.
    fn element(&mut self, b: &BufferRef<'ctx>, index: Value<'ctx>) -> Result<PointerValue<'ctx>> {
        let i64t = self.ctx().i64_type();
        let wide = self.builder.build_cast(inkwell::values::InstructionOpcode::SExt, index, i64t, "")?.into_int_value();
        self.element_at(b, wide)
    }

    fn element_at(&mut self, b: &BufferRef<'ctx>, wide: IntValue<'ctx>) -> Result<PointerValue<'ctx>> {
        let elem = self.memory_type(b.elem);
        // SAFETY: lowering asserted that every access is inside its buffer.
        Ok(unsafe { self.builder.build_gep(elem, b.host, &[wide], "")? })
    }

    /// The address of the element at scalar index `index` of `b`, with the
    /// index's sums and products (through the lets defining them) computed
    /// in i64 from sign-extended loop variables and fields: LLVM then sees
    /// one widened induction variable per loop instead of a sign extension
    /// per access.
    fn address(&mut self, b: &BufferRef<'ctx>, index: &Expr) -> Result<PointerValue<'ctx>> {
        let wide = self.wide_index(index, 8)?;
        self.element_at(b, wide)
    }

    fn wide_index(&mut self, e: &Expr, depth: u32) -> Result<IntValue<'ctx>> {
        let i64t = self.ctx().i64_type();
        let scalar_i32 = e.ty() == Type::i32();
        match e.node() {
            ExprNode::IntImm { value, .. } if scalar_i32 => return Ok(i64t.const_int(*value as u64, true)),
            ExprNode::Binary { op: op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b } if scalar_i32 && depth > 0 => {
                let (x, y) = (self.wide_index(a, depth - 1)?, self.wide_index(b, depth - 1)?);
                return Ok(match op {
                    BinOp::Add => self.builder.build_int_nsw_add(x, y, "")?,
                    BinOp::Sub => self.builder.build_int_nsw_sub(x, y, "")?,
                    _ => self.builder.build_int_nsw_mul(x, y, "")?,
                });
            }
            ExprNode::Var { name, .. } if scalar_i32 && depth > 0 => {
                if let Some((_, value)) = self.let_values.iter().rev().find(|(n, _)| n == name).cloned() {
                    return self.wide_index(&value, depth - 1);
                }
            }
            _ => {}
        }
        let narrow = self.index(e)?;
        Ok(self.builder.build_cast(inkwell::values::InstructionOpcode::SExt, narrow, i64t, "")?.into_int_value())
    }

    /// Emits index arithmetic (see `in_index`).
    pub(super) fn index(&mut self, e: &Expr) -> Result<Value<'ctx>> {
        let outer = std::mem::replace(&mut self.in_index, true);
        let v = self.expr(e);
        self.in_index = outer;
        v
    }

    fn memory_to_value(&mut self, s: ScalarType, v: Value<'ctx>, lanes: u32) -> Result<Value<'ctx>> {
        if !s.is_bool() {
            return Ok(v);
        }
        let zero = self.constant(Type { scalar: ScalarType::U8, lanes }, 0, 0.0)?;
        self.icmp(IntPredicate::NE, v, zero)
    }

    fn value_to_memory(&mut self, s: ScalarType, v: Value<'ctx>, lanes: u32) -> Result<Value<'ctx>> {
        if !s.is_bool() {
            return Ok(v);
        }
        let t = self.llvm_type(Type { scalar: ScalarType::U8, lanes });
        Ok(self.builder.build_cast(inkwell::values::InstructionOpcode::ZExt, v, t, "")?)
    }

    pub(super) fn load(&mut self, buffer: &str, index: &Expr, ty: Type) -> Result<Value<'ctx>> {
        let b = self.buffer(buffer)?;
        let mem = self.memory_type(b.elem);
        let lanes = ty.lanes;
        if lanes == 1 {
            let p = self.address(&b, index)?;
            let v = self.builder.build_load(mem, p, "")?;
            self.tag_access(buffer, v.as_instruction_value());
            return self.memory_to_value(b.elem, v, 1);
        }
        if let Some(base) = dense_base(index) {
            let v = self.dense_load(&b, buffer, base, lanes)?;
            return self.memory_to_value(b.elem, v.into(), lanes);
        }
        if let Some((base, stride)) = short_stride(index) {
            return self.strided_load(&b, buffer, base, stride, lanes);
        }
        if let Some(up) = Upsampled::of(index) {
            return self.upsampled_load(&b, buffer, &up, lanes);
        }
        if let Some(clamped) = Clamped::of(index, lanes) {
            // Where no bound bites the lanes are consecutive: one dense load
            // there, the gather only where a bound bites.
            let within = clamped.unclamped.into_iter().reduce(Expr::and).expect("at least one bound");
            let inside = self.expr(&within)?.into_int_value();
            let start = clamped.start;
            let v = self.branch(inside, |e| Ok(e.dense_load(&b, buffer, &start, lanes)?.into()), |e| e.gather(&b, index, lanes))?;
            return self.memory_to_value(b.elem, v, lanes);
        }
        if let ExprNode::Ramp { base, stride, .. } = index.node() {
            let v = self.ramp_load(&b, buffer, base, stride, lanes)?;
            return self.memory_to_value(b.elem, v, lanes);
        }
        let v = self.gather(&b, index, lanes)?;
        self.memory_to_value(b.elem, v, lanes)
    }

    /// A vector read at a stride known only at run time (or too long to
    /// shuffle), `ramp(base, stride, n)`, as `n` scalar loads (see
    /// [`Self::ramp_addresses`]).
    fn ramp_load(&mut self, b: &BufferRef<'ctx>, buffer: &str, base: &Expr, stride: &Expr, lanes: u32) -> Result<Value<'ctx>> {
        let mem = self.memory_type(b.elem);
        let mut v = vector_of(mem, lanes).get_poison();
        for (k, p) in self.ramp_addresses(b, base, stride, lanes)?.into_iter().enumerate() {
            let x = self.builder.build_load(mem, p, "")?;
            self.tag_access(buffer, x.as_instruction_value());
            v = self.builder.build_insert_element(v, x, self.i32_const(k as i64), "")?;
        }
        Ok(v.into())
    }

    /// The addresses of the lanes of `ramp(base, stride, n)` in `b`: one
    /// base address plus `k * stride` elements for lane `k`. The offsets
    /// depend on the stride alone, so LLVM computes them once outside the
    /// loop, where a gather's or scatter's vector of indices would be
    /// rebuilt and split lane by lane at every access.
    fn ramp_addresses(&mut self, b: &BufferRef<'ctx>, base: &Expr, stride: &Expr, lanes: u32) -> Result<Vec<PointerValue<'ctx>>> {
        let mem = self.memory_type(b.elem);
        let first = self.address(b, base)?;
        let step = self.wide_index(stride, 8)?;
        let i64t = self.ctx().i64_type();
        (0..lanes)
            .map(|k| {
                let offset = self.builder.build_int_nsw_mul(step, i64t.const_int(k.into(), false), "")?;
                // SAFETY: lowering asserted that every lane is inside the buffer.
                Ok(unsafe { self.builder.build_gep(mem, first, &[offset], "")? })
            })
            .collect()
    }

    /// One gather of every lane of `index` (in memory's representation).
    fn gather(&mut self, b: &BufferRef<'ctx>, index: &Expr, lanes: u32) -> Result<Value<'ctx>> {
        let mem = self.memory_type(b.elem);
        let indices = self.index(index)?;
        let indices = self.widened(indices, lanes)?.into_vector_value();
        let ctx = self.ctx();
        let wide = self.builder.build_int_s_extend(indices, ctx.i64_type().vec_type(lanes), "")?;
        let pointers = self.lane_addresses(b, wide);
        let loaded = vector_of(mem, lanes);
        let gather = Intrinsic::find("llvm.masked.gather")
            .and_then(|i| i.get_declaration(self.state.module, &[loaded.into(), pointers.get_type().into()]))
            .ok_or_else(|| CodegenError::Llvm("no llvm.masked.gather".into()))?;
        let align = ctx.i32_type().const_int(b.elem.bytes() as u64, false);
        let every_lane = VectorType::const_vector(&vec![ctx.bool_type().const_all_ones(); lanes as usize]);
        self.call_value(gather, &[pointers.into(), align.into(), every_lane.into(), loaded.get_poison().into()])
    }

    /// A vector read at a constant stride `s` (a downsampling) as `s`
    /// dense vectors of `lanes` elements, combined pairwise by two-source
    /// shuffles (`s - 1` of them), instead of a load per lane. The dense
    /// vectors cover exactly the span from the first lane's element to the
    /// last lane's, never beyond it (they start at the span's start, one
    /// `lanes` apart, the last ending at the span's end), so the read stays
    /// inside what the scalar loads would touch.
    fn strided_load(&mut self, b: &BufferRef<'ctx>, buffer: &str, base: &Expr, stride: u32, lanes: u32) -> Result<Value<'ctx>> {
        let mut parts = Vec::new();
        for (start, holds) in strided_parts(stride, lanes) {
            let v = self.dense_load(b, buffer, &(base.clone() + Expr::i32(start as i64)), lanes)?;
            parts.push((v, holds));
        }
        while parts.len() > 1 {
            let mut combined = Vec::with_capacity(parts.len().div_ceil(2));
            let mut pairs = parts.into_iter();
            while let Some((a, a_holds)) = pairs.next() {
                let Some((b, b_holds)) = pairs.next() else {
                    combined.push((a, a_holds));
                    break;
                };
                // Output lane k comes from whichever half holds it, and
                // stays at k from here on; a lane neither holds is left open.
                let ctx = self.ctx();
                let picks: Vec<_> = a_holds
                    .iter()
                    .zip(&b_holds)
                    .map(|(x, y)| match (x, y) {
                        (Some(j), _) => self.i32_const(*j as i64),
                        (None, Some(j)) => self.i32_const((lanes + j) as i64),
                        (None, None) => ctx.i32_type().get_undef(),
                    })
                    .collect();
                let v = self.builder.build_shuffle_vector(a, b, VectorType::const_vector(&picks), "")?;
                let holds = a_holds.iter().zip(&b_holds).enumerate().map(|(k, (x, y))| (x.is_some() || y.is_some()).then_some(k as u32));
                combined.push((v, holds.collect()));
            }
            parts = combined;
        }
        let (v, _) = parts.pop().expect("a stride of at least 1 reads one vector at least");
        self.memory_to_value(b.elem, v.into(), lanes)
    }

    /// A dense vector of `lanes` elements at `start` (the TBAA tag of
    /// `buffer`, no alignment assumed).
    fn dense_load(&mut self, b: &BufferRef<'ctx>, buffer: &str, start: &Expr, lanes: u32) -> Result<inkwell::values::VectorValue<'ctx>> {
        let p = self.address(b, start)?;
        let v = self.builder.build_load(vector_of(self.memory_type(b.elem), lanes), p, "")?;
        if let Some(i) = v.as_instruction_value() {
            let _ = i.set_alignment(1);
        }
        self.tag_access(buffer, v.as_instruction_value());
        Ok(v.into_vector_value())
    }

    /// An upsampling read (`ramp(b, 1, n) / c + s`, each element read by
    /// `c` neighbouring lanes) as two dense loads and a shuffle per
    /// remainder of `b` modulo `c`, selected at run time. Like
    /// [`Self::strided_load`]'s, the two loads cover exactly the elements the
    /// lanes read, whatever the remainder: the first starts at the first
    /// lane's element, the second ends at the last lane's, and neither is
    /// longer than the fewest elements any remainder reads. Each is the
    /// longest power of two that fits (more than half of any remainder's
    /// span, so that together they cover it): a vector LLVM loads whole,
    /// where an odd length (5 or 9 elements) is loaded piece by piece.
    fn upsampled_load(&mut self, b: &BufferRef<'ctx>, buffer: &str, up: &Upsampled<'_>, lanes: u32) -> Result<Value<'ctx>> {
        let c = up.factor;
        let n = lanes as i64;
        let span = |r: i64| (r + n - 1) / c + 1;
        // span(c - 1) <= span(0) + 1 < 2 * half, so two loads cover every span.
        let half = 1i64 << span(0).ilog2();
        let i = |v: i64| Expr::i32(v);
        let remainder = Expr::binary(BinOp::Mod, up.base.clone(), i(c));
        let first = Expr::binary(BinOp::Div, up.base.clone(), i(c)) + up.shift.clone();
        // The last lane's element is first + span(r) - 1; the second load ends there.
        let span_expr = Expr::binary(BinOp::Div, remainder.clone() + i(n - 1), i(c)) + i(1);
        let second = first.clone() + span_expr - i(half);
        let lo = self.dense_load(b, buffer, &first, half as u32)?;
        let hi = self.dense_load(b, buffer, &second, half as u32)?;
        let r = self.index(&remainder)?;
        let mut result: Option<Value<'ctx>> = None;
        for rem in 0..c {
            let picks: Vec<_> = (0..n).map(|k| self.i32_const(pick_from_halves((k + rem) / c, half, span(rem)))).collect();
            let v: Value<'ctx> = self.builder.build_shuffle_vector(lo, hi, VectorType::const_vector(&picks), "")?.into();
            result = Some(match result {
                None => v,
                Some(other) => {
                    let is_rem = self.icmp(IntPredicate::EQ, r, self.i32_const(rem).into())?;
                    self.select(is_rem, v, other)?
                }
            });
        }
        self.memory_to_value(b.elem, result.expect("a factor of at least 2"), lanes)
    }

    /// The addresses of the elements at the i64 `indices` of `b`, as a
    /// vector of pointers (a GEP with a vector index, which the inkwell API
    /// does not build).
    fn lane_addresses(&mut self, b: &BufferRef<'ctx>, indices: inkwell::values::VectorValue<'ctx>) -> inkwell::values::VectorValue<'ctx> {
        use inkwell::types::AsTypeRef;
        use inkwell::values::AsValueRef;
        let elem = self.memory_type(b.elem);
        let mut index = [indices.as_value_ref()];
        // SAFETY: all references come from this function's live context and
        // builder; a GEP of a pointer by an i64 vector is a vector of
        // pointers. Lowering asserted that every lane is inside the buffer.
        unsafe {
            let raw = inkwell::llvm_sys::core::LLVMBuildGEP2(
                self.builder.as_mut_ptr(),
                elem.as_type_ref(),
                b.host.as_value_ref(),
                index.as_mut_ptr(),
                1,
                c"".as_ptr(),
            );
            inkwell::values::VectorValue::new(raw)
        }
    }

    pub(super) fn store(&mut self, buffer: &str, index: &Expr, value: &Expr) -> Result<()> {
        let b = self.buffer(buffer)?;
        let lanes = value.ty().lanes.max(index.ty().lanes);
        let v = self.expr(value)?;
        let v = self.widened(v, lanes)?;
        let v = self.value_to_memory(b.elem, v, lanes)?;
        if lanes == 1 {
            let p = self.address(&b, index)?;
            let st = self.builder.build_store(p, v)?;
            self.tag_access(buffer, Some(st));
            return Ok(());
        }
        if let Some(base) = dense_base(index) {
            let p = self.address(&b, base)?;
            let st = self.builder.build_store(p, v)?;
            let _ = st.set_alignment(1);
            self.tag_access(buffer, Some(st));
            return Ok(());
        }
        let values = v.into_vector_value();
        let addresses = match index.node() {
            ExprNode::Ramp { base, stride, .. } => self.ramp_addresses(&b, base, stride, lanes)?,
            _ => {
                let indices = self.index(index)?;
                let indices = self.widened(indices, lanes)?.into_vector_value();
                let mut addresses = Vec::with_capacity(lanes as usize);
                for k in 0..lanes {
                    let i = self.builder.build_extract_element(indices, self.i32_const(k as i64), "")?;
                    addresses.push(self.element(&b, i)?);
                }
                addresses
            }
        };
        for (k, p) in addresses.into_iter().enumerate() {
            let x = self.builder.build_extract_element(values, self.i32_const(k as i64), "")?;
            let st = self.builder.build_store(p, x)?;
            self.tag_access(buffer, Some(st));
        }
        Ok(())
    }

    /// Tells LLVM which buffer a load or store touches (a TBAA type per
    /// buffer): distinct buffers never overlap, so accesses to one do not
    /// keep values of another from staying in registers or moving.
    fn tag_access(&self, buffer: &str, access: Option<inkwell::values::InstructionValue<'ctx>>) {
        let Some(access) = access else { return };
        let ctx = self.ctx();
        let zero = ctx.i64_type().const_zero().into();
        let root = ctx.metadata_node(&[ctx.metadata_string("halide-rs buffers").into()]);
        let ty = ctx.metadata_node(&[ctx.metadata_string(buffer).into(), root.into(), zero]);
        let tag = ctx.metadata_node(&[ty.into(), ty.into(), zero]);
        let _ = access.set_metadata(tag, ctx.get_kind_id("tbaa"));
    }
}

/// Where element `j` of a span of `span` elements lies in the concatenation
/// of two loads of `half` elements, the first at the span's start and the
/// second ending at its end.
fn pick_from_halves(j: i64, half: i64, span: i64) -> i64 {
    if j < half {
        j
    } else {
        half + j - (span - half)
    }
}

/// The dense vectors of a read of `lanes` lanes at stride `stride`: each
/// one's first element within the span (one `lanes` apart, the last ending
/// at the span's end) and, for each output lane, which of its lanes holds
/// that lane's element if it is the first vector to hold it. Vectors that
/// hold no lane first are left out.
fn strided_parts(stride: u32, lanes: u32) -> Vec<(u32, Vec<Option<u32>>)> {
    let span = stride * (lanes - 1) + 1;
    let mut taken = vec![false; lanes as usize];
    let mut parts = Vec::new();
    for start in (0..span).step_by(lanes as usize).map(|start| start.min(span - lanes)) {
        let holds: Vec<Option<u32>> = (0..lanes)
            .map(|k| {
                let j = (stride * k).checked_sub(start).filter(|&j| j < lanes && !taken[k as usize]);
                taken[k as usize] |= j.is_some();
                j
            })
            .collect();
        if holds.iter().any(Option::is_some) {
            parts.push((start, holds));
        }
    }
    parts
}

/// The base and stride of a vector access at a short constant stride (2 to
/// [`MAX_SHUFFLED_STRIDE`]).
fn short_stride(index: &Expr) -> Option<(&Expr, u32)> {
    match index.node() {
        ExprNode::Ramp { base, stride, .. } => stride.as_int().filter(|s| (2..=MAX_SHUFFLED_STRIDE).contains(s)).map(|s| (base, s as u32)),
        _ => None,
    }
}

/// A vector index `ramp(base, 1, n) / factor + shift` with `factor` in 2
/// to [`MAX_UPSAMPLING_FACTOR`] and `shift` scalar (the broadcasts added
/// to or subtracted from the quotient): the read of an upsampling.
struct Upsampled<'e> {
    base: &'e Expr,
    factor: i64,
    shift: Expr,
}

impl<'e> Upsampled<'e> {
    fn of(index: &'e Expr) -> Option<Upsampled<'e>> {
        let (core, shift) = peel_shift(index)?;
        match core.node() {
            ExprNode::Binary { op: BinOp::Div, a, b } => match (a.node(), uniform_int(b)) {
                (ExprNode::Ramp { base, stride, .. }, Some(factor))
                    if stride.as_int() == Some(1) && (2..=MAX_UPSAMPLING_FACTOR).contains(&factor) =>
                {
                    Some(Upsampled { base, factor, shift })
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// A vector index built from `ramp(base, 1, n)` by adding or subtracting
/// scalars (broadcasts) and taking its min or max with scalars, at least
/// once: a read through a clamp-to-edge boundary condition, or through
/// several (a Func that clamps reading one that clamps, with a shift in
/// between). Wherever no min or max bites, the lanes are `ramp(start, 1, n)`.
struct Clamped {
    /// The first lane's index where no bound bites.
    start: Expr,
    /// Scalar conditions that together say no bound bites.
    unclamped: Vec<Expr>,
}

impl Clamped {
    fn of(index: &Expr, lanes: u32) -> Option<Clamped> {
        Self::chain(index, lanes).filter(|c| !c.unclamped.is_empty())
    }

    /// `e` as a chain of shifts and bounds around a ramp of stride one.
    fn chain(e: &Expr, lanes: u32) -> Option<Clamped> {
        let (core, shift) = peel_shift(e)?;
        let mut c = match core.node() {
            ExprNode::Ramp { base, stride, .. } if stride.as_int() == Some(1) => Clamped { start: base.clone(), unclamped: vec![] },
            ExprNode::Binary { op: op @ (BinOp::Min | BinOp::Max), a, b } => {
                let (inner, bound) = vector_and_uniform(a, b)?;
                let mut c = Self::chain(inner, lanes)?;
                // A max does not bite when the first lane is above its
                // bound; a min, when the last lane is below its bound.
                let unclamped = if *op == BinOp::Max {
                    Expr::cmp(CmpOp::Ge, c.start.clone(), bound)
                } else {
                    Expr::cmp(CmpOp::Le, c.start.clone() + Expr::i32(i64::from(lanes) - 1), bound)
                };
                c.unclamped.push(unclamped);
                c
            }
            _ => return None,
        };
        c.start = c.start + shift;
        Some(c)
    }
}

/// The operands of a binary operation as (the vector, the scalar of the
/// broadcast), in either order; `None` unless exactly one is a broadcast.
fn vector_and_uniform<'e>(a: &'e Expr, b: &'e Expr) -> Option<(&'e Expr, Expr)> {
    match (uniform(a), uniform(b)) {
        (Some(s), None) => Some((b, s)),
        (None, Some(s)) => Some((a, s)),
        _ => None,
    }
}

/// The scalar of a broadcast.
fn uniform(e: &Expr) -> Option<Expr> {
    match e.node() {
        ExprNode::Broadcast { value, .. } => Some(value.clone()),
        _ => None,
    }
}

/// The constant integer of a broadcast.
fn uniform_int(e: &Expr) -> Option<i64> {
    uniform(e).and_then(|v| v.as_int())
}

/// A vector index as its core (what is left once every broadcast added or
/// subtracted around it is peeled off) and the scalar sum of those
/// broadcasts; `None` when the index is a broadcast itself.
fn peel_shift(index: &Expr) -> Option<(&Expr, Expr)> {
    match index.node() {
        ExprNode::Broadcast { .. } => None,
        ExprNode::Binary { op: BinOp::Add, a, b } => match vector_and_uniform(a, b) {
            Some((vector, s)) => peel_shift(vector).map(|(core, shift)| (core, shift + s)),
            None => Some((index, Expr::i32(0))),
        },
        ExprNode::Binary { op: BinOp::Sub, a, b } => match uniform(b) {
            Some(s) => peel_shift(a).map(|(core, shift)| (core, shift - s)),
            None => Some((index, Expr::i32(0))),
        },
        _ => Some((index, Expr::i32(0))),
    }
}

/// The base of a dense vector access: `index` is a ramp of stride one.
fn dense_base(index: &Expr) -> Option<&Expr> {
    match index.node() {
        ExprNode::Ramp { base, stride, .. } if stride.as_int() == Some(1) => Some(base),
        _ => None,
    }
}
