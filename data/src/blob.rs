//! `f32` vectors as blobs: little-endian, four bytes a value, no header.

use crate::StoreError;

/// The little-endian bytes of `values`.
pub fn f32s_to_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The values of a blob written by [`f32s_to_bytes`]; an error when its length is not a multiple of four.
pub fn f32s_from_bytes(bytes: &[u8]) -> Result<Vec<f32>, StoreError> {
    let chunks = bytes.chunks_exact(4);
    if !chunks.remainder().is_empty() {
        return Err(StoreError::Corrupt(format!("an f32 blob of {} bytes", bytes.len())));
    }
    Ok(chunks.map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f32_blobs_round_trip_bit_exactly() {
        let values = [0.0, -0.0, 1.5, f32::MIN_POSITIVE, f32::MAX, f32::INFINITY, f32::from_bits(0x7fc0_0001)];
        let bytes = f32s_to_bytes(&values);
        assert_eq!(bytes.len(), 4 * values.len());
        assert_eq!(&bytes[8..12], &1.5f32.to_le_bytes());
        let back = f32s_from_bytes(&bytes).unwrap();
        assert!(values.iter().zip(&back).all(|(a, b)| a.to_bits() == b.to_bits()));
        assert!(matches!(f32s_from_bytes(&bytes[..5]), Err(StoreError::Corrupt(_))));
    }
}
