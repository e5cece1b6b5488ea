//! Ranking by data: fusion, filters and their hidden counts, successors.

use super::*;

fn candidate(
    id: NoteId,
    workspace: &str,
    kind: Kind,
    status: Status,
    lexical: Option<f64>,
    similarity: Option<f64>,
) -> Candidate {
    let successor = match status {
        Status::Superseded { by } => Some(by),
        _ => None,
    };
    Candidate {
        id,
        workspace: workspace.into(),
        kind,
        status,
        successor,
        lexical,
        similarity,
        every_word: false,
        late: None,
    }
}

fn ids(answer: &RecallAnswer) -> Vec<NoteId> {
    answer.results.iter().map(|r| r.id).collect()
}

#[test]
fn ties_break_by_id_and_modes_use_their_evidence() {
    let c = vec![
        candidate(3, "w", Kind::Gotcha, Status::Active, Some(5.0), Some(0.25)),
        candidate(1, "w", Kind::Gotcha, Status::Active, None, Some(0.5)),
        candidate(2, "w", Kind::Gotcha, Status::Active, None, Some(0.5)),
    ];
    let mut request = RecallRequest::new("w", 10);
    request.mode = RankingMode::VectorOnly;
    assert_eq!(ids(&rank(&c, &request)), [1, 2, 3]);
    request.mode = RankingMode::LexicalOnly;
    assert_eq!(ids(&rank(&c, &request)), [3], "lexical only ranks only lexical matches");
    request.mode = RankingMode::Hybrid;
    request.fusion = Fusion::Weighted { vector: 1.0, lexical: 0.3 };
    assert_eq!(ids(&rank(&c, &request)), [3, 1, 2], "0.25 + 0.3 × 1.0 beats 0.5; ties by id");
    request.fusion = Fusion::Rrf { k: 60.0, vector: 1.0, lexical: 1.0 };
    assert_eq!(ids(&rank(&c, &request)), [3, 1, 2]);
}

#[test]
fn filters_count_what_they_hide_and_name_stale_and_superseded_notes() {
    let c = vec![
        candidate(1, "w", Kind::Gotcha, Status::StaleFlagged, None, Some(0.9)),
        candidate(2, "w", Kind::Gotcha, Status::Superseded { by: 6 }, None, Some(0.85)),
        candidate(3, "w", Kind::Gotcha, Status::Revoked, None, Some(0.8)),
        candidate(4, "w", Kind::Task, Status::Active, None, Some(0.75)),
        candidate(5, "other", Kind::Gotcha, Status::Active, None, Some(0.95)),
        candidate(6, "w", Kind::Gotcha, Status::Active, None, Some(0.1)),
        candidate(7, "w", Kind::Gotcha, Status::Expired, None, Some(0.7)),
    ];
    let mut request = RecallRequest::new("w", 3);
    request.kinds = vec![Kind::Gotcha];
    let answer = rank(&c, &request);
    assert_eq!(ids(&answer), [6], "the successor of #2 surfaces with its score");
    assert_eq!(answer.results[0].via_superseded, Some(2));
    assert_eq!(answer.results[0].score, 0.85);
    let hidden: Vec<(&str, usize)> = answer.hidden.iter().map(|(k, v)| (*k, *v)).collect();
    assert_eq!(
        hidden,
        [("expired", 1), ("other kind", 1), ("other workspace", 1), ("revoked", 1), ("stale", 1), ("superseded", 1)]
    );
    assert_eq!(answer.hidden_stale, [1]);
    assert_eq!(answer.hidden_superseded, [(2, Some(6))]);
    assert_eq!(
        answer.describe_hidden(),
        "1 expired, 1 other kind, 1 other workspace, 1 revoked, 1 stale (#1), 1 superseded (#2 → #6)"
    );
    assert_eq!(RecallAnswer::default().describe_hidden(), "nothing");

    request.states = vec!["active", "stale_flagged"];
    let answer = rank(&c, &request);
    assert_eq!(ids(&answer), [1, 6]);
    assert!(answer.hidden_stale.is_empty());
    assert!(!answer.hidden.contains_key("stale"));
}

#[test]
fn a_superseded_note_never_outranks_its_successor_even_when_both_are_returned() {
    let c = vec![
        candidate(1, "w", Kind::Finding, Status::Superseded { by: 2 }, Some(9.0), Some(0.9)),
        candidate(2, "w", Kind::Finding, Status::Active, None, Some(0.3)),
        candidate(3, "w", Kind::Finding, Status::Active, None, Some(0.6)),
    ];
    let mut request = RecallRequest::new("w", 5);
    request.states = vec!["active", "superseded"];
    let order = ids(&rank(&c, &request));
    let position = |id| order.iter().position(|x| *x == id).unwrap();
    assert!(position(2) < position(1), "{order:?}");
}

#[test]
fn other_workspaces_are_never_returned_only_counted() {
    let c = vec![
        candidate(1, "other", Kind::Gotcha, Status::Active, Some(10.0), Some(0.99)),
        candidate(2, "w", Kind::Gotcha, Status::Active, None, Some(0.3)),
    ];
    let answer = rank(&c, &RecallRequest::new("w", 5));
    assert_eq!(ids(&answer), [2]);
    assert_eq!(answer.hidden.get("other workspace"), Some(&1));
}

#[test]
fn other_workspaces_are_reranked_too_so_their_matches_are_still_counted() {
    let mut c = vec![
        candidate(1, "other", Kind::Gotcha, Status::Active, None, Some(0.9)),
        candidate(2, "other", Kind::Gotcha, Status::Active, None, Some(0.1)),
        candidate(3, "w", Kind::Gotcha, Status::Active, None, Some(0.5)),
        candidate(4, "w", Kind::Gotcha, Status::Active, None, Some(0.4)),
    ];
    let request = RecallRequest::new("w", 5);
    assert_eq!(rerank_targets(&c, &request, 1), [3, 1], "the best of the workspace, then the best elsewhere");
    for (candidate, late) in c.iter_mut().zip([Some(0.8), None, Some(0.6), Some(0.5)]) {
        candidate.late = late;
    }
    let answer = rank(&c, &request);
    assert_eq!(ids(&answer), [3, 4]);
    assert_eq!(answer.hidden.get("other workspace"), Some(&1), "judged by its late score, as the results are");
}

#[test]
fn hidden_matches_are_limited_to_the_match_window() {
    let mut c: Vec<Candidate> = (1..=30)
        .map(|id| candidate(id, "w", Kind::Gotcha, Status::Active, None, Some(1.0 - id as f64 / 100.0)))
        .collect();
    c.push(candidate(99, "w", Kind::Gotcha, Status::StaleFlagged, None, Some(0.01)));
    let answer = rank(&c, &RecallRequest::new("w", 5));
    assert!(answer.hidden.is_empty(), "a stale note ranked 31st is not a match: {:?}", answer.hidden);
}

#[test]
fn reranked_candidates_rank_above_the_rest_by_their_late_score_and_successors_still_win() {
    let mut candidates = vec![
        candidate(1, "w", Kind::Finding, Status::Active, Some(5.0), Some(0.9)),
        candidate(2, "w", Kind::Finding, Status::Active, None, Some(0.5)),
        candidate(3, "w", Kind::Finding, Status::Superseded { by: 4 }, None, Some(0.4)),
        candidate(4, "w", Kind::Finding, Status::Active, None, Some(0.1)),
    ];
    let request = RecallRequest::new("w", 10);
    assert_eq!(rerank_targets(&candidates, &request, 2), [1, 2], "the two best of the first stage");
    candidates[1].late = Some(0.8);
    candidates[0].late = Some(0.6);
    candidates[2].late = Some(0.95);
    assert_eq!(
        ids(&rank(&candidates, &request)),
        [4, 2, 1],
        "the successor inherits its old note's late score; #2 passes #1"
    );
    let mut lexical_only = request.clone();
    lexical_only.mode = RankingMode::LexicalOnly;
    assert_eq!(rank(&candidates, &lexical_only).results[0].id, 1, "late scores count in hybrid ranking only");
}

#[test]
fn one_wording_of_the_ranking() {
    assert_eq!(describe_ranking(RankingMode::Hybrid, None, 0, None), "hybrid");
    assert_eq!(
        describe_ranking(RankingMode::Hybrid, None, 30, None),
        "hybrid, the best 30 reranked by late interaction"
    );
    assert_eq!(
        describe_ranking(RankingMode::Hybrid, None, 30, Some(Fusion::default())),
        "hybrid, weighted (vector 1, lexical 0.05), then the best 30 reranked by late interaction"
    );
    assert_eq!(
        describe_ranking(RankingMode::LexicalOnly, Some("no model at /m"), 0, None),
        "lexical only (no model at /m)"
    );
}

#[test]
fn only_weak_matches_are_held_back_and_counted_unless_all_are_asked_for() {
    let c = vec![
        candidate(1, "w", Kind::Gotcha, Status::Active, Some(3.0), Some(0.19)),
        candidate(2, "w", Kind::Gotcha, Status::Active, None, Some(0.12)),
        candidate(3, "w", Kind::Gotcha, Status::StaleFlagged, None, Some(0.4)),
    ];
    let mut request = RecallRequest::new("w", 10);
    let answer = rank(&c, &request);
    assert!(answer.results.is_empty());
    assert_eq!(answer.abstention, Some(Abstention { held_back: 2, best_similarity: Some(0.19) }));
    assert_eq!(answer.hidden_stale, [3], "a hidden stale match is still named");
    assert_eq!(
        answer.abstention.unwrap().describe(),
        "no confident match: 2 weaker matches held back (best similarity 0.19, below 0.25)"
    );
    request.abstain = false;
    let all = rank(&c, &request);
    assert_eq!(ids(&all), [1, 2]);
    assert_eq!((all.abstention, all.best_similarity), (None, Some(0.19)));
    assert_eq!(
        all.describe_unconfident().as_deref(),
        Some("none of these is a confident match (best similarity 0.19, below 0.25)"),
        "asked-for weak matches say they are guesses"
    );

    let mut whole = c.clone();
    whole[1].every_word = true;
    request.abstain = true;
    let answer = rank(&whole, &request);
    assert_eq!(ids(&answer), [1, 2], "a note holding every query word is a confident match");
    assert_eq!(answer.best_similarity, None, "confident whatever the floor");
    assert!(!answer.unconfident && answer.describe_unconfident().is_none());

    let mut via = vec![
        candidate(4, "w", Kind::Gotcha, Status::Superseded { by: 5 }, None, Some(0.6)),
        candidate(5, "w", Kind::Gotcha, Status::Active, None, None),
    ];
    via[1].similarity = None;
    assert_eq!(ids(&rank(&via, &request)), [5], "confident by the superseded note it replaced");
}
