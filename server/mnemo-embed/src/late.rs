//! The model's per-token vectors, for late interaction (MaxSim: for each
//! query token its best match among a note's tokens, averaged). Pooling a
//! note into one vector blurs the one phrase a paraphrased question hinges
//! on; matching tokens keeps it. A note's token vectors are taken from the
//! same run of the model that pools its vector and stored as sign bits
//! (`mnemo_core::recall::token_signs`); at query time only the query's are
//! computed here.

use fastembed::{OutputKey, SingleBatchOutput};

use crate::{BATCH_SIZE, EmbedError, Embedder, unit_length};

/// Unit-length vectors of one text's tokens, without `[CLS]` and `[SEP]`.
pub type TokenVectors = Vec<Vec<f32>>;

impl Embedder {
    /// The token vectors of a query (the declared query prefix before it).
    pub fn query_token_vectors(&mut self, query: &str) -> Result<TokenVectors, EmbedError> {
        let text = self.declaration.query_text(query);
        self.token_vectors_of(&text)
    }

    /// The token vectors of `text` as given (any prefix already applied).
    pub(crate) fn token_vectors_of(&mut self, text: &str) -> Result<TokenVectors, EmbedError> {
        if let crate::Model::Resident(connection) = &mut self.model {
            match connection.tokens(text) {
                Ok(vectors) => return Ok(vectors),
                Err(error) => self.stand_alone(error)?,
            }
        }
        let crate::Model::Local(model) = &mut self.model else {
            return Err(EmbedError::Embed("no model to run after the resident one failed".into()));
        };
        let output = model.transform([text], Some(BATCH_SIZE)).map_err(|e| EmbedError::Embed(e.to_string()))?;
        let mut vectors = Vec::new();
        for batch in output.into_raw() {
            vectors.extend(batch_token_vectors(&batch)?);
        }
        Ok(vectors.pop().unwrap_or_default())
    }
}

/// The token vectors of each text of one batch the model ran, in the batch's
/// order; empty when the model's output is already pooled (no token axis).
pub(crate) fn batch_token_vectors(batch: &SingleBatchOutput) -> Result<Vec<TokenVectors>, EmbedError> {
    let states = batch.select_output(&&OutputKey::OnlyOne).map_err(|e| EmbedError::Embed(e.to_string()))?;
    let shape = states.shape().to_vec();
    let [rows, tokens, dims] = shape[..] else { return Ok(Vec::new()) };
    let data = states.as_slice().ok_or_else(|| EmbedError::Embed("token states are not contiguous".into()))?;
    let texts = (0..rows)
        .map(|row| {
            let real = (0..tokens).filter(|&t| batch.attention_mask_array[[row, t]] == 1).count();
            // Skip [CLS] (first) and [SEP] (last real token).
            (1..real.saturating_sub(1))
                .map(|t| {
                    let start = (row * tokens + t) * dims;
                    unit_length(data[start..start + dims].to_vec())
                })
                .collect()
        })
        .collect();
    Ok(texts)
}
