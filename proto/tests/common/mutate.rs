//! Random mutations of a message's encoding, for the fuzz-style tests of
//! the wire format (here) and of the server (`service/tests`, which
//! includes this file).

use rand::Rng;

/// One random mutation: mostly a bit flip (which often still decodes, so
/// the conversion is exercised), else a truncation, an inserted byte or a
/// deleted byte.
pub fn mutate(bytes: &[u8], rng: &mut impl Rng) -> Vec<u8> {
    let mut b = bytes.to_vec();
    let at = rng.random_range(0..b.len());
    match rng.random_range(0..10) {
        0 => b.truncate(at),
        1 => b.insert(at, rng.random()),
        2 => {
            b.remove(at);
        }
        _ => b[at] ^= 1 << rng.random_range(0..8),
    }
    b
}
