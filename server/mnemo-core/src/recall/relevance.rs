//! Whether a recalled note is relevant enough to push into an agent's
//! context unasked (the user-prompt hook runs before every prompt: a note
//! that merely ranked first among unrelated ones costs the agent tokens and
//! attention at every turn).
//!
//! The floor was read off the public set (`eval/`, with the packaged
//! all-MiniLM-L6-v2): the best candidate of every answerable query has a
//! cosine of at least 0.257, while prompts about nothing in the memory
//! ("What is the weather like today?", "Add a CHANGELOG.md") stay below 0.19.
//! It abstains from the off-topic, not from the near miss: the public set's
//! on-topic negatives reach 0.46, which no single signal separates from the
//! answerable queries without losing some.

use super::{Candidate, RankingMode};

/// The least cosine similarity of a note pushed unasked.
pub const SIMILARITY_FLOOR: f64 = 0.25;

/// Whether `candidate` may be pushed unasked: by its cosine when vectors
/// ranked, by any lexical match when only the full-text index did.
pub fn relevant_enough(candidate: &Candidate, mode: RankingMode) -> bool {
    match mode {
        RankingMode::LexicalOnly => candidate.lexical.is_some(),
        RankingMode::Hybrid | RankingMode::VectorOnly => candidate.similarity.is_some_and(|s| s >= SIMILARITY_FLOOR),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifecycle::Status;
    use crate::model::Kind;

    fn candidate(similarity: Option<f64>, lexical: Option<f64>) -> Candidate {
        Candidate {
            id: 1,
            workspace: "/w".into(),
            kind: Kind::Gotcha,
            status: Status::Active,
            successor: None,
            lexical,
            similarity,
            late: None,
        }
    }

    #[test]
    fn the_floor_by_the_evidence_that_ranked() {
        assert!(relevant_enough(&candidate(Some(0.31), None), RankingMode::Hybrid));
        assert!(
            !relevant_enough(&candidate(Some(0.12), Some(9.0)), RankingMode::Hybrid),
            "a common word is not relevance"
        );
        assert!(!relevant_enough(&candidate(None, None), RankingMode::VectorOnly));
        assert!(relevant_enough(&candidate(None, Some(1.5)), RankingMode::LexicalOnly));
        assert!(!relevant_enough(&candidate(None, None), RankingMode::LexicalOnly));
    }
}
