//! What of a note is embedded. The store keeps any number of vectors per
//! note and scores a note by its best one, so chunking strategies can be
//! measured; on the public eval set (README, "Recall quality") adding the
//! title alone or each titled body sentence as extra chunks did not beat
//! the whole text (title, newline, body), so one chunk it is.

/// The whole text of a note as it is embedded (and reranked): title, newline, body.
pub fn embedding_text(title: &str, body: &str) -> String {
    if body.is_empty() { title.to_string() } else { format!("{title}\n{body}") }
}

/// What the model made of one note: a vector per embedding chunk and its
/// whole text's token vectors packed as sign bits ([`super::token_signs`];
/// empty when the model has no token outputs, and late interaction then
/// skips the note).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NoteEmbedding {
    pub chunks: Vec<Vec<f32>>,
    pub token_signs: Vec<u8>,
}

/// The texts embedded for one note; the first is always the whole text.
pub fn embedding_chunks(title: &str, body: &str) -> Vec<String> {
    vec![embedding_text(title, body)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_whole_text_title_then_body() {
        assert_eq!(embedding_chunks("T", ""), ["T"]);
        assert_eq!(embedding_chunks("Lock order", "Take A first.\nThen B"), ["Lock order\nTake A first.\nThen B"]);
    }
}
