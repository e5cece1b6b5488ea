//! Whether recall is confident a note answers the query: the one rule behind
//! recall's "no confident match" (abstention) and what the user-prompt hook
//! pushes unasked (it runs before every prompt: a note that merely ranked
//! first among unrelated ones costs the agent tokens and attention at every
//! turn).
//!
//! A note is a confident match when its cosine similarity reaches
//! [`SIMILARITY_FLOOR`], or when it holds every word of the query (an
//! identifier, an error string: a short query whose meaning the model barely
//! sees). With only the full-text index ranking, any lexical match counts.
//!
//! The floor was chosen with the harness (`mnemo eval` prints the sweep): on
//! the public set (`eval/`, all-MiniLM-L6-v2) the best result of every
//! answerable query has a cosine of at least 0.279, while prompts about
//! nothing in the memory ("What is the weather like today?", "Add a
//! CHANGELOG.md", "zebra quantum xylophone") stay below 0.19. It abstains
//! from the off-topic, not from the near miss: the public set's on-topic
//! negatives ("How do I configure JWT validation on a route?") reach 0.465,
//! and no signal recall has — cosine, its margin over the corpus or the
//! runner-up, BM25, late interaction, token coverage, or a fitted mix of
//! them — tells them from answerable queries without losing some (README,
//! "Abstention").

use super::{Candidate, RankingMode};

/// The least cosine similarity of a confident match.
pub const SIMILARITY_FLOOR: f64 = 0.25;

/// Whether `candidate` is a confident match in `mode`.
pub fn confident(candidate: &Candidate, mode: RankingMode) -> bool {
    match mode {
        RankingMode::LexicalOnly => candidate.lexical.is_some(),
        RankingMode::Hybrid | RankingMode::VectorOnly => {
            candidate.similarity.is_some_and(|s| s >= SIMILARITY_FLOOR) || candidate.every_word
        }
    }
}

/// Abstention at `floor` over queries whose best result has cosine
/// `best_similarity` (`None`: recall was confident whatever the floor — every
/// word matched, or only the full-text index ranked): how many queries of
/// each kind it would abstain on. The harness prints this sweep so the floor
/// is chosen from evidence.
pub fn abstained_at(floor: f64, best_similarity: &[Option<f64>]) -> usize {
    best_similarity.iter().filter(|s| s.is_some_and(|s| s < floor)).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifecycle::Status;
    use crate::model::Kind;

    fn candidate(similarity: Option<f64>, lexical: Option<f64>, every_word: bool) -> Candidate {
        Candidate {
            id: 1,
            workspace: "/w".into(),
            kind: Kind::Gotcha,
            status: Status::Active,
            successor: None,
            lexical,
            similarity,
            every_word,
            late: None,
        }
    }

    #[test]
    fn confidence_by_the_evidence_that_ranked() {
        assert!(confident(&candidate(Some(0.31), None, false), RankingMode::Hybrid));
        assert!(
            !confident(&candidate(Some(0.12), Some(9.0), false), RankingMode::Hybrid),
            "a common word is not relevance"
        );
        assert!(
            confident(&candidate(Some(0.12), Some(9.0), true), RankingMode::Hybrid),
            "an identifier found whole is, however little the model sees in it"
        );
        assert!(!confident(&candidate(None, None, false), RankingMode::VectorOnly));
        assert!(confident(&candidate(None, Some(1.5), false), RankingMode::LexicalOnly));
        assert!(!confident(&candidate(None, None, false), RankingMode::LexicalOnly));
    }

    #[test]
    fn the_sweep_counts_queries_below_the_floor() {
        let best = [Some(0.2), Some(0.3), None, Some(0.26)];
        assert_eq!(abstained_at(0.25, &best), 1);
        assert_eq!(abstained_at(0.35, &best), 3);
        assert_eq!(abstained_at(0.1, &best), 0);
    }
}
