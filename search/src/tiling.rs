//! Tile-size generation (Adams et al. 2019, section 3.2 of our design
//! facts): for a loop nest of extents `s` (innermost first), candidate
//! numbers of outer tiles per dimension, spaced by powers of a factor so
//! that the candidates stay few, and rejecting tilings that over-compute
//! more than about 14% through rounding up.

/// Candidate outer tile counts for extents `s`. With `allow_splits` false,
/// each dimension is either not split (1 outer tile) or fully outer (`s[d]`
/// tiles of size 1). The all-ones tiling and the tiling equal to `s` are
/// left out (they change nothing).
pub fn generate_tilings(s: &[i64], allow_splits: bool) -> Vec<Vec<i64>> {
    let mut out = tilings(s, s.len(), 2, allow_splits);
    out.retain(|t| t.iter().any(|&v| v != 1) && t.as_slice() != s);
    out
}

/// `a / b` rounded up, for `a >= 1` and `b >= 1`, without overflow.
fn ceil_div(a: i64, b: i64) -> i64 {
    (a - 1) / b + 1
}

fn tilings(s: &[i64], d: usize, factor: i64, allow_splits: bool) -> Vec<Vec<i64>> {
    if d == 0 {
        return vec![vec![]];
    }
    let inner = tilings(s, d - 1, factor, allow_splits);
    // Many options already: space the outer dimension's candidates more.
    let factor = if inner.len() as i64 > factor * 100 { factor * 2 } else { factor };
    let extent = s[d - 1];
    let mut options: Vec<i64> = vec![];
    if !allow_splits || extent <= 1 {
        options.push(1);
        if extent > 1 {
            options.push(extent);
        }
    } else {
        let over_computes = |inner: i64, outer: i64| inner > 1 && i128::from(inner) * i128::from(outer) * 7 > i128::from(extent) * 8;
        // Inner sizes 1, f, f^2, ... below the extent.
        let mut max_inner = 0;
        let mut inner_size = 1;
        while inner_size < extent {
            let outer = ceil_div(extent, inner_size);
            if over_computes(inner_size, outer) {
                break;
            }
            options.push(outer);
            max_inner = max_inner.max(inner_size);
            let Some(next) = inner_size.checked_mul(factor) else { break };
            inner_size = next;
        }
        // Outer counts 1, f, f^2, ... up to the extent.
        let mut outer = 1i64;
        while outer <= extent {
            let inner_size = ceil_div(extent, outer);
            if inner_size >= max_inner.saturating_mul(2) && !over_computes(inner_size, outer) {
                options.push(outer);
            }
            let Some(next) = outer.checked_mul(factor) else { break };
            outer = next;
        }
        // Inner 3: register blocking of three rows.
        if factor == 2 && extent > 3 && !over_computes(3, ceil_div(extent, 3)) {
            options.push(ceil_div(extent, 3));
        }
        options.push(extent);
    }
    options.sort_unstable();
    options.dedup();
    let mut result = vec![];
    for t in &inner {
        for &o in &options {
            let mut v = t.clone();
            v.push(o);
            result.push(v);
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extents_near_the_largest_integer_give_tilings_without_overflow() {
        for extent in [i64::MAX, i64::MAX - 1, 1 << 62, i64::from(i32::MAX)] {
            let t = generate_tilings(&[extent, 3], true);
            assert!(!t.is_empty() && t.iter().all(|t| t[0] >= 1 && t[0] <= extent), "{extent}");
        }
    }

    #[test]
    fn tilings_cover_powers_of_two_and_reject_waste() {
        let t = generate_tilings(&[64], true);
        assert!(t.contains(&vec![2]) && t.contains(&vec![8]) && t.contains(&vec![32]), "{t:?}");
        assert!(!t.contains(&vec![1]) && !t.contains(&vec![64]));
        // 100 in tiles of 16 (7 outer) computes 112, 12% more: kept; in
        // tiles of 32 (4 outer) 128, 28% more: rejected.
        let t = generate_tilings(&[100], true);
        assert!(t.contains(&vec![7]) && !t.contains(&vec![4]), "{t:?}");
        for v in &t {
            let inner = (100 + v[0] - 1) / v[0];
            assert!(inner == 1 || inner * v[0] * 7 <= 800, "{v:?} over-computes");
        }
    }

    #[test]
    fn without_splits_each_dimension_is_whole_or_outer() {
        let t = generate_tilings(&[4, 6], false);
        assert_eq!(t, vec![vec![1, 6], vec![4, 1]]);
    }

    #[test]
    fn many_dimensions_stay_few() {
        let t = generate_tilings(&[1024, 1024, 64, 3], true);
        assert!(t.len() < 5000, "{}", t.len());
    }
}
