//! Fusing lexical and vector evidence into one score. The default was chosen
//! with the miss-rate harness (`mnemo eval`, README "Recall quality"), not by
//! intuition: plain equal-weight reciprocal rank fusion ranks below vector
//! search alone on the public set.

use std::collections::HashMap;

use super::{Candidate, RankingMode};
use crate::model::NoteId;

/// How scores are combined.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    /// `w_vector · cosine + w_lexical · bm25 / max bm25`.
    Weighted { vector: f64, lexical: f64 },
    /// Reciprocal rank fusion: `Σ w / (k + rank)`.
    Rrf { k: f64, vector: f64, lexical: f64 },
    /// `cosine + lexical · bm25 / (bm25 + half)`: BM25 counts by its absolute
    /// strength, so a rare identifier (an error code, a flag) weighs a lot and
    /// a few common words weigh little.
    Saturating { lexical: f64, half: f64 },
}

impl Default for Fusion {
    fn default() -> Self {
        Fusion::Weighted { vector: 1.0, lexical: 0.05 }
    }
}

impl Fusion {
    pub fn describe(self) -> String {
        match self {
            Fusion::Weighted { vector, lexical } => format!("weighted (vector {vector}, lexical {lexical})"),
            Fusion::Rrf { k, vector, lexical } => format!("rrf (k {k}, vector {vector}, lexical {lexical})"),
            Fusion::Saturating { lexical, half } => format!("saturating (lexical {lexical}, half {half})"),
        }
    }
}

/// Reranked candidates rank above all others, by their late-interaction
/// score plus a small share of BM25 (lexical evidence still breaks near-ties
/// on identifiers). Chosen with the harness: the share is flat between 0 and
/// 0.05; more drags paraphrases down, as it does in the first stage.
pub const LATE_LEXICAL: f64 = 0.02;

/// Above any first-stage score (cosine ≤ 1 plus a lexical share < 1).
const RERANKED: f64 = 10.0;

pub(super) fn apply_late(scores: &mut HashMap<NoteId, f64>, candidates: &[Candidate], mode: RankingMode) {
    if mode != RankingMode::Hybrid || candidates.iter().all(|c| c.late.is_none()) {
        return;
    }
    let best = candidates.iter().filter_map(|c| c.lexical).fold(0.0_f64, f64::max);
    for c in candidates {
        if let Some(late) = c.late {
            let lexical = if best > 0.0 { LATE_LEXICAL * c.lexical.unwrap_or(0.0) / best } else { 0.0 };
            scores.insert(c.id, RERANKED + late + lexical);
        }
    }
}

/// A score per candidate that has evidence in `mode`.
pub(super) fn scores(candidates: &[Candidate], mode: RankingMode, fusion: Fusion) -> HashMap<NoteId, f64> {
    let use_lexical = mode != RankingMode::VectorOnly;
    let use_vector = mode != RankingMode::LexicalOnly;
    let lexical: Vec<(NoteId, f64)> =
        if use_lexical { candidates.iter().filter_map(|c| Some((c.id, c.lexical?))).collect() } else { Vec::new() };
    let vector: Vec<(NoteId, f64)> =
        if use_vector { candidates.iter().filter_map(|c| Some((c.id, c.similarity?))).collect() } else { Vec::new() };
    let mut out: HashMap<NoteId, f64> = HashMap::new();
    match (mode, fusion) {
        (RankingMode::LexicalOnly, _) => out.extend(lexical),
        (RankingMode::VectorOnly, _) => out.extend(vector),
        (RankingMode::Hybrid, Fusion::Weighted { vector: wv, lexical: wl }) => {
            let best = lexical.iter().map(|(_, s)| *s).fold(0.0_f64, f64::max);
            for (id, s) in vector {
                *out.entry(id).or_default() += wv * s;
            }
            if best > 0.0 {
                for (id, s) in lexical {
                    *out.entry(id).or_default() += wl * s / best;
                }
            }
        }
        (RankingMode::Hybrid, Fusion::Saturating { lexical: wl, half }) => {
            for (id, s) in vector {
                *out.entry(id).or_default() += s;
            }
            for (id, s) in lexical {
                *out.entry(id).or_default() += wl * s / (s + half);
            }
        }
        (RankingMode::Hybrid, Fusion::Rrf { k, vector: wv, lexical: wl }) => {
            for (list, weight) in [(vector, wv), (lexical, wl)] {
                let mut list = list;
                list.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                for (rank, (id, _)) in list.into_iter().enumerate() {
                    *out.entry(id).or_default() += weight / (k + rank as f64 + 1.0);
                }
            }
        }
    }
    out
}
