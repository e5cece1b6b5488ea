//! The miss-rate harness's arithmetic: recall@k, hit@k (any relevant note in
//! the top k), MRR and the miss rate, overall and per category, with every
//! miss attributed to the stage that lost it — `filtered` (excluded before
//! ranking), `not_in_candidates` (neither FTS nor the vector pool held it),
//! `below_cutoff` (in the pool, ranked past k) or `abstained` (recall
//! answered "no confident match") — plus silent stale misses,
//! cross-workspace leaks, and abstention: how often recall said "nothing
//! relevant" where nothing is (`negative`, `cross_workspace`), and the sweep
//! of similarity floors it would have said so at.
//!
//! Answerable queries are those with relevant notes, excluding
//! `filter_stale` (whose first relevant note is stale by design and is
//! judged by whether the answer names it).

use std::collections::{BTreeMap, HashSet};

use super::relevance;
use crate::model::NoteId;

/// A labelled query (ids already mapped to store ids).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryCase {
    pub qid: String,
    pub category: String,
    pub relevant: Vec<NoteId>,
}

/// What a recall run answered for one query.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueryOutcome {
    /// Returned ids, best first (at most k are judged).
    pub results: Vec<NoteId>,
    /// Returned ids that belong to another workspace (must be empty).
    pub leaked: Vec<NoteId>,
    /// Every id that entered the candidate pool.
    pub candidates: HashSet<NoteId>,
    /// Relevant ids the request's filters exclude.
    pub filtered: HashSet<NoteId>,
    /// Hidden stale matches the answer named.
    pub hidden_stale: Vec<NoteId>,
    /// Recall answered "no confident match".
    pub abstained: bool,
    /// The best cosine of the results before any abstention (`None`:
    /// confident whatever the floor), for the sweep.
    pub best_similarity: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CategoryReport {
    pub queries: usize,
    pub recall_at_k: f64,
    pub hit_at_k: f64,
    pub mrr: f64,
    pub miss_rate: f64,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Miss {
    pub qid: String,
    pub id: NoteId,
    pub stage: &'static str,
    /// 1-based rank in the answer when it was returned past k.
    pub rank: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EvalReport {
    pub k: usize,
    pub queries: usize,
    pub answerable: usize,
    pub recall_at_k: f64,
    pub hit_at_k: f64,
    pub mrr: f64,
    pub miss_rate: f64,
    pub abstention: AbstentionReport,
    pub misses_by_stage: BTreeMap<&'static str, usize>,
    pub by_category: BTreeMap<String, CategoryReport>,
    /// `filter_stale` queries whose stale note was neither returned nor named.
    pub silent_stale_misses: Vec<String>,
    /// Queries that returned a note of another workspace.
    pub cross_workspace_leaks: Vec<String>,
    pub misses: Vec<Miss>,
}

/// How often recall answered "no confident match", by what the query needed.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AbstentionReport {
    /// `negative` queries (nothing answers them): asked, abstained.
    pub negative: (usize, usize),
    /// `cross_workspace` queries (only another workspace answers them): asked, abstained.
    pub cross_workspace: (usize, usize),
    /// Answerable queries: asked, wrongly abstained (their misses are `abstained`).
    pub answerable: (usize, usize),
    /// At each similarity floor: negatives, cross-workspace and answerable
    /// queries that would be abstained on.
    pub sweep: Vec<SweepRow>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SweepRow {
    pub floor: f64,
    pub negative: usize,
    pub cross_workspace: usize,
    pub answerable: usize,
}

/// The floors the sweep tries.
const SWEEP: [f64; 9] = [0.2, 0.225, 0.25, 0.275, 0.3, 0.325, 0.35, 0.4, 0.45];

#[derive(Default)]
struct Totals {
    queries: usize,
    recall: f64,
    hits: usize,
    reciprocal_rank: f64,
}

impl Totals {
    fn add(&mut self, recall: f64, reciprocal_rank: f64) {
        self.queries += 1;
        self.recall += recall;
        self.hits += usize::from(recall > 0.0);
        self.reciprocal_rank += reciprocal_rank;
    }

    fn report(&self) -> CategoryReport {
        let n = self.queries.max(1) as f64;
        let recall = round(self.recall / n);
        CategoryReport {
            queries: self.queries,
            recall_at_k: recall,
            hit_at_k: round(self.hits as f64 / n),
            mrr: round(self.reciprocal_rank / n),
            miss_rate: round(1.0 - recall),
        }
    }
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Score `runs` at cutoff `k`.
pub fn evaluate(runs: &[(QueryCase, QueryOutcome)], k: usize) -> EvalReport {
    let mut overall = Totals::default();
    let mut categories: BTreeMap<String, Totals> = BTreeMap::new();
    let mut misses_by_stage: BTreeMap<&'static str, usize> =
        [("filtered", 0), ("not_in_candidates", 0), ("below_cutoff", 0), ("abstained", 0)].into_iter().collect();
    let mut best: BTreeMap<&'static str, Vec<Option<f64>>> = BTreeMap::new();
    let mut abstained: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut misses = Vec::new();
    let mut silent_stale_misses = Vec::new();
    let mut cross_workspace_leaks = Vec::new();
    for (case, outcome) in runs {
        if !outcome.leaked.is_empty() {
            cross_workspace_leaks.push(case.qid.clone());
        }
        let top: Vec<NoteId> = outcome.results.iter().take(k).copied().collect();
        if case.category == "filter_stale" {
            if let Some(stale) = case.relevant.first()
                && !top.contains(stale)
                && !outcome.hidden_stale.contains(stale)
            {
                silent_stale_misses.push(case.qid.clone());
            }
            continue;
        }
        let group = match case.category.as_str() {
            "negative" => "negative",
            "cross_workspace" => "cross_workspace",
            _ if case.relevant.is_empty() => continue,
            _ => "answerable",
        };
        best.entry(group).or_default().push(outcome.best_similarity);
        *abstained.entry(group).or_default() += usize::from(outcome.abstained);
        if case.relevant.is_empty() {
            continue;
        }
        let found = case.relevant.iter().filter(|id| top.contains(id)).count();
        let recall = found as f64 / case.relevant.len() as f64;
        let reciprocal_rank =
            top.iter().position(|id| case.relevant.contains(id)).map_or(0.0, |rank| 1.0 / (rank as f64 + 1.0));
        overall.add(recall, reciprocal_rank);
        categories.entry(case.category.clone()).or_default().add(recall, reciprocal_rank);
        for id in case.relevant.iter().filter(|id| !top.contains(id)) {
            let stage = if outcome.filtered.contains(id) {
                "filtered"
            } else if outcome.abstained {
                "abstained"
            } else if !outcome.candidates.contains(id) {
                "not_in_candidates"
            } else {
                "below_cutoff"
            };
            *misses_by_stage.entry(stage).or_default() += 1;
            let rank = outcome.results.iter().position(|r| r == id).map(|p| p + 1);
            misses.push(Miss { qid: case.qid.clone(), id: *id, stage, rank });
        }
    }
    let report = overall.report();
    let count = |group: &str| (best.get(group).map_or(0, Vec::len), abstained.get(group).copied().unwrap_or(0));
    let at = |floor: f64, group: &str| relevance::abstained_at(floor, best.get(group).map_or(&[][..], Vec::as_slice));
    let abstention = AbstentionReport {
        negative: count("negative"),
        cross_workspace: count("cross_workspace"),
        answerable: count("answerable"),
        sweep: SWEEP
            .iter()
            .map(|&floor| SweepRow {
                floor,
                negative: at(floor, "negative"),
                cross_workspace: at(floor, "cross_workspace"),
                answerable: at(floor, "answerable"),
            })
            .collect(),
    };
    EvalReport {
        k,
        queries: runs.len(),
        answerable: overall.queries,
        recall_at_k: report.recall_at_k,
        hit_at_k: report.hit_at_k,
        mrr: report.mrr,
        miss_rate: report.miss_rate,
        abstention,
        misses_by_stage,
        by_category: categories.into_iter().map(|(name, totals)| (name, totals.report())).collect(),
        silent_stale_misses,
        cross_workspace_leaks,
        misses,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(qid: &str, category: &str, relevant: &[NoteId]) -> QueryCase {
        QueryCase { qid: qid.into(), category: category.into(), relevant: relevant.to_vec() }
    }

    fn outcome(results: &[NoteId], candidates: &[NoteId]) -> QueryOutcome {
        QueryOutcome {
            results: results.to_vec(),
            candidates: candidates.iter().copied().collect(),
            ..Default::default()
        }
    }

    #[test]
    fn recall_mrr_and_stages() {
        let mut filtered = outcome(&[9], &[9, 4]);
        filtered.filtered.insert(4);
        let runs = vec![
            (case("q1", "lexical", &[1]), outcome(&[1, 2, 3], &[1, 2, 3])),
            (case("q2", "paraphrase", &[5]), outcome(&[2, 5], &[2, 5])),
            (case("q3", "paraphrase", &[6]), outcome(&[2, 3, 6], &[2, 3, 6])),
            (case("q4", "paraphrase", &[7]), outcome(&[2], &[2])),
            (case("q5", "multi", &[1, 2]), outcome(&[1, 8], &[1, 8])),
            (case("q6", "wrong_kind", &[4]), filtered),
            (case("q7", "negative", &[]), outcome(&[1], &[1])),
        ];
        let report = evaluate(&runs, 2);
        assert_eq!(report.answerable, 6);
        assert_eq!(report.recall_at_k, round((1.0 + 1.0 + 0.0 + 0.0 + 0.5 + 0.0) / 6.0));
        assert_eq!(report.mrr, round((1.0 + 0.5 + 0.0 + 0.0 + 1.0 + 0.0) / 6.0));
        assert_eq!(report.miss_rate, round(1.0 - report.recall_at_k));
        assert_eq!(report.misses_by_stage["below_cutoff"], 1);
        assert_eq!(report.misses_by_stage["not_in_candidates"], 2);
        assert_eq!(report.misses_by_stage["filtered"], 1);
        assert_eq!(report.misses.iter().find(|m| m.qid == "q3").unwrap().rank, Some(3));
        assert_eq!(report.by_category["paraphrase"].queries, 3);
        assert_eq!(report.by_category["paraphrase"].recall_at_k, 0.333);
        assert_eq!(report.hit_at_k, 0.5, "q1, q2 and q5 (one of its two notes is a hit)");
        assert_eq!(report.by_category["multi"].hit_at_k, 1.0);
    }

    #[test]
    fn abstention_is_counted_by_what_the_query_needed_and_swept() {
        let mut said_nothing = outcome(&[], &[3]);
        said_nothing.abstained = true;
        said_nothing.best_similarity = Some(0.21);
        let mut wrongly = outcome(&[], &[5]);
        wrongly.abstained = true;
        wrongly.best_similarity = Some(0.24);
        let mut answered = outcome(&[1], &[1]);
        answered.best_similarity = Some(0.3);
        let mut near_miss = outcome(&[2], &[2]);
        near_miss.best_similarity = Some(0.33);
        let runs = vec![
            (case("n1", "negative", &[]), said_nothing),
            (case("n2", "negative", &[]), near_miss),
            (case("a1", "paraphrase", &[5]), wrongly),
            (case("a2", "lexical", &[1]), answered),
        ];
        let report = evaluate(&runs, 5);
        assert_eq!(report.abstention.negative, (2, 1));
        assert_eq!(report.abstention.answerable, (2, 1));
        assert_eq!(report.abstention.cross_workspace, (0, 0));
        assert_eq!(report.misses_by_stage["abstained"], 1);
        let row = report.abstention.sweep.iter().find(|r| r.floor == 0.325).unwrap();
        assert_eq!((row.negative, row.answerable), (1, 2));
    }

    #[test]
    fn stale_queries_are_judged_by_naming_and_leaks_are_counted() {
        let mut named = outcome(&[3], &[3, 7]);
        named.hidden_stale = vec![7];
        let silent = outcome(&[3], &[3, 8]);
        let mut leak = outcome(&[40], &[40]);
        leak.leaked = vec![40];
        let runs = vec![
            (case("s1", "filter_stale", &[7]), named),
            (case("s2", "filter_stale", &[8]), silent),
            (case("x1", "cross_workspace", &[]), leak),
        ];
        let report = evaluate(&runs, 5);
        assert_eq!(report.silent_stale_misses, vec!["s2".to_string()]);
        assert_eq!(report.cross_workspace_leaks, vec!["x1".to_string()]);
        assert_eq!(report.answerable, 0);
    }
}
