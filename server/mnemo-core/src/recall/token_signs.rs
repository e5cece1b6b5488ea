//! Late interaction over stored token signs: a note's token vectors kept as
//! one sign bit per dimension (48 bytes a token for 384 dimensions), scored
//! against the query's full-precision token vectors.
//!
//! Late interaction compares each query token with each note token (MaxSim:
//! each query token's best match, averaged). Running the model over every
//! candidate at query time cost 0.6 s a recall; keeping the note side from
//! when the note was written leaves only the query to embed. Measured on the
//! public eval set (README, "Recall quality"): the note side as sign bits,
//! the query side as floats, reranking the whole pool scores as well as full
//! precision reranking the best 30 (int8/f16 changed nothing, a few
//! centroids per note lost ~5 points); a note of 76 tokens takes 3.6 KB.
//!
//! A note token's sign vector `s ∈ {−1, +1}^d` is scaled to unit length
//! (`s/√d`), so a query token `q` scores `q·s/√d = (2·Σ_{s_i=+1} q_i − Σ q_i)/√d`.
//! The sum over set bits is read from one 256-entry table per byte of the
//! query token, built once per query.

/// A note's token vectors as sign bits: `dims.div_ceil(8)` bytes per token,
/// bit `j` of byte `b` set when dimension `8b + j` is positive.
pub fn pack_signs(tokens: &[Vec<f32>]) -> Vec<u8> {
    let mut packed = Vec::new();
    for token in tokens {
        for chunk in token.chunks(8) {
            let byte =
                chunk.iter().enumerate().fold(0u8, |byte, (bit, x)| if *x > 0.0 { byte | 1 << bit } else { byte });
            packed.push(byte);
        }
    }
    packed
}

/// A query's token vectors, ready to score packed notes with [`QueryTokens::max_sim`].
#[derive(Debug, Clone)]
pub struct QueryTokens {
    dims: usize,
    bytes_per_token: usize,
    /// Per query token, per byte position, the sum of the token's components
    /// over the bits set in each of the 256 byte values.
    tables: Vec<f32>,
    /// Per query token, the sum of its components.
    totals: Vec<f32>,
}

impl QueryTokens {
    /// Tables for `tokens` (the query's token vectors, each of `dims` components).
    pub fn new(tokens: &[Vec<f32>], dims: usize) -> QueryTokens {
        let bytes_per_token = dims.div_ceil(8);
        let mut tables = Vec::with_capacity(tokens.len() * bytes_per_token * 256);
        let mut totals = Vec::with_capacity(tokens.len());
        for token in tokens.iter().filter(|t| t.len() == dims) {
            for position in 0..bytes_per_token {
                let component = |bit: usize| token.get(position * 8 + bit).copied().unwrap_or(0.0);
                let start = tables.len();
                tables.push(0.0);
                for value in 1usize..256 {
                    // A value's sum is its lowest bit's component plus the sum of the rest.
                    let lowest = value.trailing_zeros() as usize;
                    let rest = tables[start + (value & (value - 1))];
                    tables.push(rest + component(lowest));
                }
            }
            totals.push(token.iter().sum());
        }
        QueryTokens { dims, bytes_per_token, tables, totals }
    }

    /// The number of query tokens that score.
    pub fn len(&self) -> usize {
        self.totals.len()
    }

    pub fn is_empty(&self) -> bool {
        self.totals.is_empty()
    }

    /// MaxSim of the query against a note's packed signs: for each query
    /// token its best note token, averaged. `None` when the note has no
    /// tokens or its signs were packed for another number of dimensions.
    pub fn max_sim(&self, packed: &[u8]) -> Option<f64> {
        if self.is_empty() || packed.is_empty() || !packed.len().is_multiple_of(self.bytes_per_token) {
            return None;
        }
        let scale = 1.0 / (self.dims as f32).sqrt();
        let table_len = self.bytes_per_token * 256;
        let mut sum = 0.0_f64;
        for (index, total) in self.totals.iter().enumerate() {
            let tables = &self.tables[index * table_len..(index + 1) * table_len];
            let best = packed
                .chunks_exact(self.bytes_per_token)
                .map(|token| {
                    let set: f32 =
                        token.iter().enumerate().map(|(position, byte)| tables[position * 256 + *byte as usize]).sum();
                    (2.0 * set - total) * scale
                })
                .fold(f32::NEG_INFINITY, f32::max);
            sum += f64::from(best);
        }
        Some(sum / self.len() as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: Vec<f32>) -> Vec<f32> {
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / norm).collect()
    }

    /// The score the tables must reproduce: each query token against each
    /// note token's signs scaled to unit length, best match averaged.
    fn direct(query: &[Vec<f32>], note: &[Vec<f32>]) -> f64 {
        let best = |q: &Vec<f32>| {
            note.iter()
                .map(|t| {
                    let scale = 1.0 / (t.len() as f32).sqrt();
                    q.iter().zip(t).map(|(a, b)| a * if *b > 0.0 { scale } else { -scale }).sum::<f32>()
                })
                .fold(f32::NEG_INFINITY, f32::max)
        };
        query.iter().map(|q| f64::from(best(q))).sum::<f64>() / query.len() as f64
    }

    #[test]
    fn signs_pack_eight_dimensions_a_byte_lowest_bit_first() {
        let packed = pack_signs(&[vec![0.5, -1.0, 0.0, 2.0, -0.1, 0.1, -3.0, 0.2, 0.9, -0.9]]);
        assert_eq!(packed, [0b1010_1001, 0b0000_0001]);
    }

    #[test]
    fn tables_score_as_the_signs_scaled_to_unit_length_do() {
        // Deterministic pseudo-random vectors of 20 dimensions (not a multiple of 8).
        let mut seed = 7u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        };
        let mut vectors = |n: usize| (0..n).map(|_| unit((0..20).map(|_| next()).collect())).collect::<Vec<_>>();
        let query = vectors(4);
        let note = vectors(9);
        let scored = QueryTokens::new(&query, 20).max_sim(&pack_signs(&note)).unwrap();
        assert!((scored - direct(&query, &note)).abs() < 1e-5, "{scored} vs {}", direct(&query, &note));
    }

    #[test]
    fn a_note_token_equal_to_the_query_token_in_sign_scores_highest() {
        let query = vec![unit(vec![1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0])];
        let same = pack_signs(&[vec![0.3, -0.2, 0.9, -0.1, 0.4, -0.4, 0.1, -0.7]]);
        let opposite = pack_signs(&[vec![-0.3, 0.2, -0.9, 0.1, -0.4, 0.4, -0.1, 0.7]]);
        let tables = QueryTokens::new(&query, 8);
        assert!((tables.max_sim(&same).unwrap() - 1.0).abs() < 1e-6);
        assert!((tables.max_sim(&opposite).unwrap() + 1.0).abs() < 1e-6);
    }

    #[test]
    fn nothing_to_score_is_no_score_not_zero() {
        let tables = QueryTokens::new(&[unit(vec![1.0; 16])], 16);
        assert_eq!(tables.max_sim(&[]), None, "a note without tokens");
        assert_eq!(tables.max_sim(&[0u8; 3]), None, "signs packed for other dimensions");
        assert_eq!(QueryTokens::new(&[], 16).max_sim(&[0u8; 2]), None, "a query without tokens");
    }
}
