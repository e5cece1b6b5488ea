//! Late interaction: the model's per-token vectors, compared token by token
//! (MaxSim: for each query token its best match among a note's tokens,
//! averaged). Pooling a note into one vector blurs the one phrase a
//! paraphrased question hinges on; matching tokens keeps it. Measured on the
//! public eval set (README, "Recall quality") as a reranker of the hybrid's
//! best candidates.

use fastembed::OutputKey;

use crate::{BATCH_SIZE, EmbedError, Embedder, unit_length};

/// Unit-length vectors of one text's tokens, without `[CLS]` and `[SEP]`.
pub type TokenVectors = Vec<Vec<f32>>;

impl Embedder {
    /// The token vectors of each note's text (the declared passage prefix
    /// before each), in the order of `texts`.
    pub fn token_vectors<S: AsRef<str> + Send + Sync>(&mut self, texts: &[S]) -> Result<Vec<TokenVectors>, EmbedError> {
        let texts: Vec<String> = texts.iter().map(|t| self.declaration.passage_text(t.as_ref())).collect();
        self.token_vectors_as_given(&texts)
    }

    /// The token vectors of a query (the declared query prefix before it).
    pub fn query_token_vectors(&mut self, query: &str) -> Result<TokenVectors, EmbedError> {
        let text = self.declaration.query_text(query);
        Ok(self.token_vectors_as_given(&[text])?.pop().unwrap_or_default())
    }

    fn token_vectors_as_given(&mut self, texts: &[String]) -> Result<Vec<TokenVectors>, EmbedError> {
        let mut by_length: Vec<usize> = (0..texts.len()).collect();
        by_length.sort_by_key(|&i| texts[i].len());
        let mut out: Vec<TokenVectors> = vec![Vec::new(); texts.len()];
        for indices in by_length.chunks(BATCH_SIZE) {
            let slice: Vec<&str> = indices.iter().map(|&i| texts[i].as_str()).collect();
            let output =
                self.model.transform(&slice, Some(BATCH_SIZE)).map_err(|e| EmbedError::Embed(e.to_string()))?;
            let mut position = 0;
            for batch in output.into_raw() {
                let states = batch.select_output(&&OutputKey::OnlyOne).map_err(|e| EmbedError::Embed(e.to_string()))?;
                let shape = states.shape().to_vec();
                let (rows, tokens, dims) = (shape[0], shape[1], shape[2]);
                let data =
                    states.as_slice().ok_or_else(|| EmbedError::Embed("token states are not contiguous".into()))?;
                for row in 0..rows {
                    let real = (0..tokens).filter(|&t| batch.attention_mask_array[[row, t]] == 1).count();
                    // Skip [CLS] (first) and [SEP] (last real token).
                    let vectors = (1..real.saturating_sub(1))
                        .map(|t| {
                            let start = (row * tokens + t) * dims;
                            unit_length(data[start..start + dims].to_vec())
                        })
                        .collect();
                    out[indices[position]] = vectors;
                    position += 1;
                }
            }
        }
        Ok(out)
    }

    /// MaxSim of `query` against each of `documents` (notes' texts), each side
    /// with its declared prefix.
    pub fn late_scores<S: AsRef<str> + Send + Sync>(
        &mut self,
        query: &str,
        documents: &[S],
    ) -> Result<Vec<f64>, EmbedError> {
        let started = std::time::Instant::now();
        let mut texts: Vec<String> = vec![self.declaration.query_text(query)];
        texts.extend(documents.iter().map(|d| self.declaration.passage_text(d.as_ref())));
        let vectors = self.token_vectors_as_given(&texts)?;
        let (query, documents) = vectors.split_first().expect("the query's vectors come first");
        let scores = documents.iter().map(|document| max_sim(query, document)).collect();
        tracing::debug!(
            documents = documents.len(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "late-interaction scores computed"
        );
        Ok(scores)
    }
}

/// The mean over query tokens of the best cosine with any document token.
pub fn max_sim(query: &[Vec<f32>], document: &[Vec<f32>]) -> f64 {
    if query.is_empty() || document.is_empty() {
        return 0.0;
    }
    let best = |q: &Vec<f32>| {
        document.iter().map(|d| q.iter().zip(d).map(|(a, b)| a * b).sum::<f32>()).fold(f32::NEG_INFINITY, f32::max)
    };
    query.iter().map(|q| f64::from(best(q))).sum::<f64>() / query.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_sim_averages_each_query_tokens_best_match() {
        let query = vec![vec![1.0, 0.0], vec![0.0, 1.0]];
        let document = vec![vec![1.0, 0.0], vec![0.6, 0.8]];
        assert!((max_sim(&query, &document) - 0.9).abs() < 1e-6);
        assert_eq!(max_sim(&[], &document), 0.0);
    }
}
