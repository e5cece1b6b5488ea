//! The approximate score's kernel: a chunk's signed-byte codes against the
//! query's 16-bit weights, summed exactly in an `i32` — so the order of the
//! sum does not matter, and the AVX2 path answers what the portable one does.

/// The largest query weight: 16 bits, and small enough that a dot product
/// of `dims` codes of 127 stays inside an i32 (32767 up to 516 dimensions).
pub(super) fn weight_top(dims: usize) -> f32 {
    (i32::MAX as f32 / (127.0 * dims.max(1) as f32)).min(f32::from(i16::MAX)).floor()
}

/// Signed bytes against 16-bit weights, summed exactly ([`weight_top`]
/// keeps the sum, and any part of it, inside an i32); with AVX2 where the
/// processor has it.
pub(super) fn dot(codes: &[i8], weights: &[i16]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor was just found to support AVX2.
        return unsafe { dot_avx2(codes, weights) };
    }
    dot_portable(codes, weights)
}

fn dot_portable(codes: &[i8], weights: &[i16]) -> i32 {
    codes.iter().zip(weights).map(|(&c, &w)| i32::from(c) * i32::from(w)).sum()
}

/// Sixteen codes at a time: widened to 16 bits, multiplied by the weights
/// and added in pairs into eight 32-bit sums (`vpmaddwd`). A scan of 100k
/// chunks of 384 dimensions took 7–9 ms through the compiler's widening to
/// 32 bits first, which multiplies eight at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_avx2(codes: &[i8], weights: &[i16]) -> i32 {
    use std::arch::x86_64::*;
    let n = codes.len().min(weights.len());
    let whole = n - n % 16;
    let mut sums = _mm256_setzero_si256();
    for at in (0..whole).step_by(16) {
        // SAFETY: `at + 16 <= n`: sixteen bytes of `codes` and sixteen i16 of
        // `weights` from `at` are in bounds; the loads are unaligned ones.
        let (codes, weights) = unsafe {
            (
                _mm_loadu_si128(codes.as_ptr().add(at).cast::<__m128i>()),
                _mm256_loadu_si256(weights.as_ptr().add(at).cast::<__m256i>()),
            )
        };
        sums = _mm256_add_epi32(sums, _mm256_madd_epi16(_mm256_cvtepi8_epi16(codes), weights));
    }
    let halves = _mm_add_epi32(_mm256_castsi256_si128(sums), _mm256_extracti128_si256::<1>(sums));
    let pairs = _mm_add_epi32(halves, _mm_shuffle_epi32::<0b01_00_11_10>(halves));
    let total = _mm_add_epi32(pairs, _mm_shuffle_epi32::<0b10_11_00_01>(pairs));
    _mm_cvtsi128_si32(total) + dot_portable(&codes[whole..n], &weights[whole..n])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_sums_the_same() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for dims in [0, 1, 15, 16, 17, 100, 384, 516] {
            let top = weight_top(dims) as i16;
            for round in 0..50 {
                let (codes, weights): (Vec<i8>, Vec<i16>) = match round {
                    // The extremes the bound allows.
                    0 => (vec![127; dims], vec![top; dims]),
                    1 => (vec![-127; dims], vec![top; dims]),
                    _ => (0..dims)
                        .map(|_| ((next() % 255) as i32 - 127, (next() % (2 * top as u64 + 1)) as i32 - i32::from(top)))
                        .map(|(c, w)| (c as i8, w as i16))
                        .unzip(),
                };
                assert_eq!(dot(&codes, &weights), dot_portable(&codes, &weights), "dims {dims}, round {round}");
            }
        }
        assert_eq!(dot(&[127; 384], &[32767; 384]), 127 * 32767 * 384);
    }

    #[test]
    fn weights_keep_any_dot_product_inside_an_i32() {
        assert_eq!(weight_top(384), 32767.0);
        for dims in [517, 768, 1024, 4096] {
            assert!(f64::from(weight_top(dims)) * 127.0 * dims as f64 <= f64::from(i32::MAX), "{dims}");
        }
    }
}
