//! Runtime buffers: typed N-dimensional arrays with a per-dimension min,
//! extent and stride, so that a pipeline can read inputs and write outputs
//! over any region of the integer grid.
//!
//! Elements are stored little-endian in a byte vector; the element at
//! coordinates `c` lives at flat index `sum((c[d] - min[d]) * stride[d])`.

use crate::ir::types::ScalarType;
use crate::ir::value::Scalar;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// One dimension of a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BufferDim {
    /// The first coordinate.
    pub min: i64,
    /// The number of coordinates.
    pub extent: i64,
    /// The distance in elements between neighbours in this dimension.
    pub stride: i64,
}

/// Why a buffer could not be made or accessed.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum BufferError {
    /// A dimension given a negative extent.
    #[error("buffer {name}: extent {extent} of dimension {dim} is negative")]
    NegativeExtent {
        /// The buffer.
        name: String,
        /// The dimension.
        dim: usize,
        /// Its extent.
        extent: i64,
    },
    /// The buffer would take more than `MAX_BUFFER_BYTES` (`bytes` is the
    /// size of one element).
    #[error("buffer {name}: {elements} elements of {bytes} bytes is more than the {limit}-byte limit")]
    TooLarge {
        /// The buffer.
        name: String,
        /// Its number of elements.
        elements: u128,
        /// The size of one element, in bytes.
        bytes: usize,
        /// The most bytes a buffer may take.
        limit: u128,
    },
    /// A coordinate outside the buffer.
    #[error("buffer {name}: coordinate {coord} of dimension {dim} is outside [{min}, {max}]")]
    OutOfBounds {
        /// The buffer.
        name: String,
        /// The dimension.
        dim: usize,
        /// The coordinate.
        coord: i64,
        /// The dimension's first coordinate.
        min: i64,
        /// The dimension's last coordinate.
        max: i64,
    },
    /// The strides address elements outside the data.
    #[error("buffer {name}: its strides address elements [{lowest}, {highest}], outside its {len} elements")]
    Layout {
        /// The buffer.
        name: String,
        /// The lowest flat index the strides address.
        lowest: i128,
        /// The highest flat index the strides address.
        highest: i128,
        /// The number of elements of the data.
        len: usize,
    },
    /// Coordinates whose number differs from the buffer's dimensions.
    #[error("buffer {name}: {got} coordinates for a {dims}-dimensional buffer")]
    Dimensions {
        /// The buffer.
        name: String,
        /// Its number of dimensions.
        dims: usize,
        /// The number of coordinates given.
        got: usize,
    },
}

/// The largest buffer we agree to allocate, in bytes (16 GiB).
pub const MAX_BUFFER_BYTES: u128 = 16 << 30;

/// A typed N-dimensional array.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Buffer {
    /// The name of the input or output it holds.
    pub name: String,
    /// The element type.
    pub ty: ScalarType,
    /// The dimensions, first innermost.
    pub dims: Vec<BufferDim>,
    data: AlignedBytes,
}

/// Zero-initialized bytes whose start is aligned to a cache line (64
/// bytes), so that vector loads and stores of compiled code at a row start
/// do not straddle cache lines, as in Halide's runtime.
#[derive(Clone)]
struct AlignedBytes {
    lines: Vec<CacheLine>,
    len: usize,
}

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct CacheLine([u8; 64]);

impl AlignedBytes {
    fn zeroed(len: usize) -> AlignedBytes {
        AlignedBytes { lines: vec![CacheLine([0; 64]); len.div_ceil(64)], len }
    }
}

impl std::ops::Deref for AlignedBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `lines` holds at least `len` initialized bytes, laid out
        // contiguously (`CacheLine` is 64 bytes without padding).
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr().cast::<u8>(), self.len) }
    }
}

impl std::ops::DerefMut for AlignedBytes {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as for `deref`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr().cast::<u8>(), self.len) }
    }
}

impl PartialEq for AlignedBytes {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for AlignedBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} bytes", self.len)
    }
}

impl Serialize for AlignedBytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self)
    }
}

impl<'de> Deserialize<'de> for AlignedBytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let bytes = Vec::<u8>::deserialize(d)?;
        let mut data = AlignedBytes::zeroed(bytes.len());
        data.copy_from_slice(&bytes);
        Ok(data)
    }
}

impl Buffer {
    /// A zeroed, densely packed buffer over `[min, min + extent)` per dimension
    /// (first dimension innermost).
    pub fn new(name: &str, ty: ScalarType, region: &[(i64, i64)]) -> Result<Buffer, BufferError> {
        let mut dims = Vec::with_capacity(region.len());
        let mut elements: u128 = 1;
        for (d, &(min, extent)) in region.iter().enumerate() {
            if extent < 0 {
                return Err(BufferError::NegativeExtent { name: name.into(), dim: d, extent });
            }
            dims.push(BufferDim { min, extent, stride: elements.min(i64::MAX as u128) as i64 });
            elements = elements.saturating_mul(extent as u128);
        }
        let bytes = elements.saturating_mul(ty.bytes() as u128);
        if bytes > MAX_BUFFER_BYTES {
            return Err(BufferError::TooLarge { name: name.into(), elements, bytes: ty.bytes(), limit: MAX_BUFFER_BYTES });
        }
        Ok(Buffer { name: name.into(), ty, dims, data: AlignedBytes::zeroed(bytes as usize) })
    }

    /// A buffer with the given extents, every min zero.
    pub fn with_extents(name: &str, ty: ScalarType, extents: &[i64]) -> Result<Buffer, BufferError> {
        let region: Vec<(i64, i64)> = extents.iter().map(|&e| (0, e)).collect();
        Buffer::new(name, ty, &region)
    }

    /// Fills every element with `f(coordinates)`.
    pub fn fill(&mut self, mut f: impl FnMut(&[i64]) -> Scalar) {
        let coords: Vec<Vec<i64>> = self.coordinates().collect();
        for c in coords {
            let v = f(&c);
            let i = self.flat_index(&c).expect("coordinates come from the buffer");
            self.write_flat(i as usize, v);
        }
    }

    /// Every coordinate of the buffer, first dimension fastest.
    pub fn coordinates(&self) -> impl Iterator<Item = Vec<i64>> + '_ {
        let total: i64 = self.dims.iter().map(|d| d.extent).product();
        let total = if self.dims.is_empty() { 1 } else { total };
        (0..total).map(move |mut n| {
            self.dims
                .iter()
                .map(|d| {
                    let c = d.min + n % d.extent;
                    n /= d.extent;
                    c
                })
                .collect()
        })
    }

    /// The number of elements of storage.
    pub fn len(&self) -> usize {
        self.data.len() / self.ty.bytes()
    }

    /// Whether it has no storage (some extent is zero).
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Checks that every in-bounds coordinate addresses an element of the
    /// data (after a caller changed `dims`, say to a transposed view).
    pub fn check_layout(&self) -> Result<(), BufferError> {
        if self.dims.iter().any(|d| d.extent == 0) {
            return Ok(());
        }
        let (mut lowest, mut highest) = (0i128, 0i128);
        for d in &self.dims {
            let reach = i128::from(d.extent.max(1) - 1) * i128::from(d.stride);
            lowest += reach.min(0);
            highest += reach.max(0);
        }
        if lowest < 0 || highest >= self.len() as i128 {
            return Err(BufferError::Layout { name: self.name.clone(), lowest, highest, len: self.len() });
        }
        Ok(())
    }

    /// Flat element index of in-bounds coordinates.
    pub fn flat_index(&self, coords: &[i64]) -> Result<i64, BufferError> {
        if coords.len() != self.dims.len() {
            return Err(BufferError::Dimensions { name: self.name.clone(), dims: self.dims.len(), got: coords.len() });
        }
        let mut index = 0i64;
        for (d, (&c, dim)) in coords.iter().zip(&self.dims).enumerate() {
            if c < dim.min || c >= dim.min + dim.extent {
                return Err(BufferError::OutOfBounds {
                    name: self.name.clone(),
                    dim: d,
                    coord: c,
                    min: dim.min,
                    max: dim.min + dim.extent - 1,
                });
            }
            index += (c - dim.min) * dim.stride;
        }
        Ok(index)
    }

    /// The element at `coords`; an error if their number is not the buffer's
    /// dimensions or one is out of bounds.
    pub fn get(&self, coords: &[i64]) -> Result<Scalar, BufferError> {
        let i = self.flat_index(coords)?;
        Ok(self.read_flat(i as usize))
    }

    /// Writes `v`, converted to the element type, at `coords`; an error if
    /// their number is not the buffer's dimensions or one is out of bounds.
    pub fn set(&mut self, coords: &[i64], v: Scalar) -> Result<(), BufferError> {
        let i = self.flat_index(coords)?;
        self.write_flat(i as usize, v);
        Ok(())
    }

    /// Reads the element at a flat index, if it is inside the storage.
    pub fn read(&self, index: i64) -> Option<Scalar> {
        (index >= 0 && (index as usize) < self.len()).then(|| self.read_flat(index as usize))
    }

    /// Writes the element at a flat index; false if outside the storage.
    pub fn write(&mut self, index: i64, v: Scalar) -> bool {
        let ok = index >= 0 && (index as usize) < self.len();
        if ok {
            self.write_flat(index as usize, v);
        }
        ok
    }

    fn read_flat(&self, i: usize) -> Scalar {
        let n = self.ty.bytes();
        let mut raw = [0u8; 8];
        raw[..n].copy_from_slice(&self.data[i * n..(i + 1) * n]);
        let bits = u64::from_le_bytes(raw);
        match self.ty {
            ScalarType::F32 => Scalar::Float(f32::from_bits(bits as u32) as f64),
            ScalarType::F64 => Scalar::Float(f64::from_bits(bits)),
            t if t.is_signed_int() => Scalar::Int(crate::ir::semantics::wrap_signed(bits as i128, t.bits())),
            _ => Scalar::UInt(bits),
        }
    }

    fn write_flat(&mut self, i: usize, v: Scalar) {
        let n = self.ty.bytes();
        let bits: u64 = match (self.ty, v) {
            (ScalarType::F32, v) => (v.as_f64() as f32).to_bits() as u64,
            (ScalarType::F64, v) => v.as_f64().to_bits(),
            (t, v) => match crate::ir::value::cast(crate::ir::value::widest_type(v), t, v) {
                Scalar::Int(x) => x as u64,
                Scalar::UInt(x) => x,
                Scalar::Float(x) => x as u64,
            },
        };
        self.data[i * n..(i + 1) * n].copy_from_slice(&bits.to_le_bytes()[..n]);
    }

    /// Raw little-endian bytes (for code generators and hashing).
    pub fn bytes(&self) -> &[u8] {
        &self.data
    }

    /// Raw little-endian bytes, writable (for code generators).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.data
    }
}

/// The deterministic input pattern shared with the Halide benchmark: at
/// absolute coordinates `c0, c1, ...`, `h = (((17*31 + c0)*31 + c1)*31 ...)`;
/// integer inputs hold `h & 1023` (`h & 255` for 8-bit types), float
/// inputs `(h & 1023) / 1024`.
pub fn pattern_input(name: &str, ty: ScalarType, region: &[(i64, i64)]) -> Result<Buffer, BufferError> {
    salted_pattern_input(name, ty, region, 0)
}

/// [`pattern_input`] with `h` starting from `17 + 7919 * salt`: a
/// pipeline's second and further inputs take their position as the salt,
/// so that two inputs over one region (a stereo pair, two frames) differ.
/// The pattern is linear in the coordinates before the mask, so a salted
/// input is the unsalted one shifted.
pub fn salted_pattern_input(name: &str, ty: ScalarType, region: &[(i64, i64)], salt: u64) -> Result<Buffer, BufferError> {
    let mut b = Buffer::new(name, ty, region)?;
    let mask = if ty.bytes() == 1 { 255 } else { 1023 };
    let start = 17i64.wrapping_add(7919i64.wrapping_mul(salt as i64));
    b.fill(|c| {
        let v = c.iter().fold(start, |h, &x| h.wrapping_mul(31).wrapping_add(x)) & mask;
        if ty.is_float() {
            Scalar::Float(v as f64 / 1024.0)
        } else {
            Scalar::Int(v)
        }
    });
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_follow_min_and_stride() {
        let mut b = Buffer::new("b", ScalarType::I16, &[(-2, 4), (10, 3)]).unwrap();
        b.set(&[-2, 10], Scalar::Int(-5)).unwrap();
        b.set(&[1, 12], Scalar::Int(300)).unwrap();
        assert_eq!(b.get(&[-2, 10]).unwrap(), Scalar::Int(-5));
        assert_eq!(b.get(&[1, 12]).unwrap(), Scalar::Int(300));
        assert_eq!(b.flat_index(&[1, 12]).unwrap(), 3 + 2 * 4);
        assert!(matches!(b.get(&[2, 10]), Err(BufferError::OutOfBounds { dim: 0, coord: 2, .. })));
        assert_eq!(b.coordinates().count(), 12);
    }

    #[test]
    fn refuses_negative_and_huge() {
        assert!(matches!(Buffer::new("n", ScalarType::U8, &[(0, -1)]), Err(BufferError::NegativeExtent { .. })));
        assert!(matches!(Buffer::new("h", ScalarType::F64, &[(0, 1 << 20), (0, 1 << 20)]), Err(BufferError::TooLarge { .. })));
    }
}
