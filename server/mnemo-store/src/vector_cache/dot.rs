//! The approximate score's kernel: a chunk's signed-byte codes against the
//! query's 16-bit weights, summed exactly in an `i32` — so the order of the
//! sum does not matter, and the AVX-512 and AVX2 paths answer what the
//! portable one does. [`dots`] scores a list of chunks in one call, so the
//! processor's features are looked up once per search, not once per chunk,
//! and the kernel is inlined into the loop.

/// The largest query weight: 16 bits, and small enough that a dot product
/// of `dims` codes of 127 stays inside an i32 (32767 up to 516 dimensions).
pub(super) fn weight_top(dims: usize) -> f32 {
    (i32::MAX as f32 / (127.0 * dims.max(1) as f32)).min(f32::from(i16::MAX)).floor()
}

/// Signed bytes against 16-bit weights, summed exactly ([`weight_top`]
/// keeps the sum, and any part of it, inside an i32).
#[cfg(test)]
pub(super) fn dot(codes: &[i8], weights: &[i16]) -> i32 {
    let mut out = Vec::new();
    dots(codes, codes.len(), weights, &[0], &mut out);
    out[0]
}

/// [`dot`] of each chunk of `dims` codes at the places `chunks` (in
/// `codes`) against `weights`, into `out` in their order; with AVX-512 or
/// AVX2 where the processor has them.
pub(super) fn dots(codes: &[i8], dims: usize, weights: &[i16], chunks: &[u32], out: &mut Vec<i32>) {
    out.clear();
    out.reserve(chunks.len());
    let chunk = |at: u32| &codes[at as usize * dims..(at as usize + 1) * dims];
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512bw") {
            // SAFETY: the processor was just found to support AVX-512 BW (and F).
            return unsafe { dots_avx512(chunks, chunk, weights, out) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor was just found to support AVX2.
            return unsafe { dots_avx2(chunks, chunk, weights, out) };
        }
    }
    out.extend(chunks.iter().map(|&at| dot_portable(chunk(at), weights)));
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
fn dots_avx512<'c>(chunks: &[u32], chunk: impl Fn(u32) -> &'c [i8], weights: &[i16], out: &mut Vec<i32>) {
    out.extend(chunks.iter().map(|&at| dot_avx512(chunk(at), weights)));
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dots_avx2<'c>(chunks: &[u32], chunk: impl Fn(u32) -> &'c [i8], weights: &[i16], out: &mut Vec<i32>) {
    out.extend(chunks.iter().map(|&at| dot_avx2(chunk(at), weights)));
}

fn dot_portable(codes: &[i8], weights: &[i16]) -> i32 {
    codes.iter().zip(weights).map(|(&c, &w)| i32::from(c) * i32::from(w)).sum()
}

/// Thirty-two codes at a time, as [`dot_avx2`] does sixteen.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn dot_avx512(codes: &[i8], weights: &[i16]) -> i32 {
    use std::arch::x86_64::*;
    let n = codes.len().min(weights.len());
    let whole = n - n % 32;
    let mut sums = _mm512_setzero_si512();
    for at in (0..whole).step_by(32) {
        // SAFETY: `at + 32 <= n`: thirty-two bytes of `codes` and thirty-two
        // i16 of `weights` from `at` are in bounds; the loads are unaligned ones.
        let (codes, weights) = unsafe {
            (
                _mm256_loadu_si256(codes.as_ptr().add(at).cast::<__m256i>()),
                _mm512_loadu_si512(weights.as_ptr().add(at).cast::<__m512i>()),
            )
        };
        sums = _mm512_add_epi32(sums, _mm512_madd_epi16(_mm512_cvtepi8_epi16(codes), weights));
    }
    _mm512_reduce_add_epi32(sums) + dot_portable(&codes[whole..n], &weights[whole..n])
}

/// Sixteen codes at a time: widened to 16 bits, multiplied by the weights
/// and added in pairs into eight 32-bit sums (`vpmaddwd`). A scan of 100k
/// chunks of 384 dimensions took 7–9 ms through the compiler's widening to
/// 32 bits first, which multiplies eight at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
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
                let portable = dot_portable(&codes, &weights);
                assert_eq!(dot(&codes, &weights), portable, "dims {dims}, round {round}");
                #[cfg(target_arch = "x86_64")]
                {
                    if std::arch::is_x86_feature_detected!("avx2") {
                        // SAFETY: found just above.
                        assert_eq!(unsafe { dot_avx2(&codes, &weights) }, portable, "AVX2, dims {dims}");
                    }
                    if std::arch::is_x86_feature_detected!("avx512bw") {
                        // SAFETY: found just above.
                        assert_eq!(unsafe { dot_avx512(&codes, &weights) }, portable, "AVX-512, dims {dims}");
                    }
                }
            }
        }
        assert_eq!(dot(&[127; 384], &[32767; 384]), 127 * 32767 * 384);
    }

    #[test]
    fn chunks_are_scored_in_the_order_asked() {
        let codes: Vec<i8> = (0..4 * 40).map(|i| (i % 251 - 125) as i8).collect();
        let weights: Vec<i16> = (0..40).map(|i| i * 100 - 2000).collect();
        let mut out = vec![7];
        dots(&codes, 40, &weights, &[3, 0, 3], &mut out);
        let one = |at: usize| dot_portable(&codes[at * 40..(at + 1) * 40], &weights);
        assert_eq!(out, [one(3), one(0), one(3)]);
    }

    #[test]
    fn weights_keep_any_dot_product_inside_an_i32() {
        assert_eq!(weight_top(384), 32767.0);
        for dims in [517, 768, 1024, 4096] {
            assert!(f64::from(weight_top(dims)) * 127.0 * dims as f64 <= f64::from(i32::MAX), "{dims}");
        }
    }
}
