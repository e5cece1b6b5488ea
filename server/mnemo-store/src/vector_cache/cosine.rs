//! sqlite-vec's cosine distance between two stored vectors of floats,
//! computed here as its C source computes it (`distance_cosine_float`: one
//! pass summing the dot product and both squared lengths in `f32`, in
//! order, then `1 - dot / (sqrt(a) * sqrt(b))` in `double`), so a search of
//! the kept copy gives sqlite-vec's distances to the bit without a call
//! through SQLite for each chunk scored exactly (a quarter of that stage).
//! A test holds the two equal on random vectors. That needs sqlite-vec's C
//! compiled without fused multiply-adds, as `cc` compiles it for x86-64; a
//! compiler that fuses `dot += a * b` (GCC on aarch64 by default) would
//! differ in the last bits, and that test would say so.

/// The cosine distance between the little-endian `f32` vectors `stored` and
/// `query` (as `vec_distance_cosine(stored, query)`); `None` when their
/// lengths differ or the answer is not a number (a vector of zeros), where
/// SQLite would answer NULL or an error.
pub(super) fn distance(stored: &[u8], query: &[f32]) -> Option<f32> {
    if stored.len() != query.len() * 4 {
        return None;
    }
    let (mut dot, mut a, mut b) = (0f32, 0f32, 0f32);
    for (bytes, &q) in stored.chunks_exact(4).zip(query) {
        let s = f32::from_le_bytes(bytes.try_into().expect("four bytes"));
        dot += s * q;
        a += s * s;
        b += q * q;
    }
    let distance = (1.0 - f64::from(dot) / (f64::from(a).sqrt() * f64::from(b).sqrt())) as f32;
    (!distance.is_nan()).then_some(distance)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_are_sqlite_vecs_to_the_bit() {
        crate::vectors::register_sqlite_vec();
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        for dims in [1, 3, 384, 1024] {
            for _ in 0..200 {
                let stored: Vec<f32> = (0..dims).map(|_| next()).collect();
                let query: Vec<f32> = (0..dims).map(|_| next() * 3.0).collect();
                let blob = crate::vectors::to_blob(&stored);
                let theirs: f32 = conn
                    .query_row(
                        "SELECT vec_distance_cosine(?1, ?2)",
                        rusqlite::params![blob, crate::vectors::to_blob(&query)],
                        |r| r.get(0),
                    )
                    .unwrap();
                assert_eq!(distance(&blob, &query).map(f32::to_bits), Some(theirs.to_bits()), "dims {dims}");
            }
        }
        assert_eq!(distance(&crate::vectors::to_blob(&[0.0, 0.0]), &[1.0, 0.0]), None);
        assert_eq!(distance(&[0; 8], &[1.0]), None);
    }
}
