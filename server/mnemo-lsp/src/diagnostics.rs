//! Diagnostics on memory documents: stale notes (warning), revoked and
//! superseded notes (hint, tagged deprecated so editors grey them out),
//! expired notes (information), proposals awaiting review (information,
//! and one on the first line counting them, code `proposals`), the entries
//! past what the agent's harness loads (warning on the first, code
//! `load-budget`; `core::load_budget`), the directives whose bodies the
//! session-start hook cuts at its default budget (warning on the first in
//! the document, code `hook-budget`), and a
//! checkout's problems: parse errors
//! and, when a check-in preview is at hand, what a save would refuse and
//! the conflicts (error, code `conflict`, data `{"conflict": id}`, which the
//! "keep mine" / "take theirs" code actions answer).

use mnemo_core::NoteId;
use mnemo_core::checkin::CheckinPlan;
use mnemo_core::delivery::DEFAULT_HOOK_TOKENS;
use mnemo_core::load_budget::{describe, describe_start_cut, entries_past};
use mnemo_core::memory_md::{Severity, StateMarker};
use mnemo_store::config::WorkspaceConfig;
use tower_lsp_server::ls_types::{Diagnostic, DiagnosticSeverity, DiagnosticTag, NumberOrString, Uri};

use crate::anchors::{DriftState, QUIET_DAYS, memory_diagnostics, relative_path, source_diagnostics};

use crate::documents::{Document, DocumentKind};
use crate::outline::parse_document;
use crate::to_proto::Lines;

const SOURCE: &str = "mnemo";

/// The diagnostics of `doc` at `uri`; `preview` is what checking it in
/// would do; `drift` the latest drift check of the workspace's anchors.
pub fn diagnostics(uri: &Uri, doc: &Document, preview: Option<&CheckinPlan>, drift: &DriftState) -> Vec<Diagnostic> {
    if doc.kind == DocumentKind::Source {
        return relative_path(uri, drift.root.as_deref()).map_or(Vec::new(), |p| source_diagnostics(&p, drift));
    }
    // The mirror is never checked in; it is read here only to mark its entries.
    let Some((text, parsed)) = parse_document(doc) else { return Vec::new() };
    let lines = Lines::new(&text);
    let mut out = memory_diagnostics(&lines, &parsed, drift);
    if doc.kind == DocumentKind::Checkout {
        let conflicts = preview.map_or(&[][..], |p| &p.conflicts[..]);
        let problems = preview.map_or(&parsed.diagnostics, |p| &p.diagnostics);
        out.extend(problems.iter().map(|d| checkout_problem(&lines, d, conflicts)));
    }
    // Live entries no agent was told for a while (`DriftState::quiet`).
    let untold: Vec<(NoteId, usize)> = parsed
        .entries
        .iter()
        .filter(|e| e.entry.marker.is_none())
        .filter_map(|e| Some((e.entry.id.filter(|id| drift.quiet.binary_search(id).is_ok())?, e.first_line)))
        .collect();
    // Room for what follows, exactly (79,000 diagnostics of a 100k mirror
    // took 33 MB in a vector grown by doubling, 20 MB used): a marker's,
    // the untold, and at most one each of load budget, hook budget and
    // proposals.
    let marked = parsed.entries.iter().filter(|e| e.entry.id.is_some() && e.entry.marker.is_some()).count();
    out.reserve_exact(marked + untold.len() + 3);
    for parsed_entry in &parsed.entries {
        let entry = &parsed_entry.entry;
        let (Some(id), Some(marker)) = (entry.id, &entry.marker) else { continue };
        let (severity, message, deprecated) = match marker {
            StateMarker::Stale { reason, .. } => (
                DiagnosticSeverity::WARNING,
                format!("#{id} is flagged stale: {reason}; verify it before relying on it"),
                false,
            ),
            StateMarker::Revoked { reason, .. } => {
                (DiagnosticSeverity::HINT, format!("#{id} was revoked: {reason}"), true)
            }
            StateMarker::Superseded { by, .. } => {
                (DiagnosticSeverity::HINT, format!("#{id} was superseded by #{by}"), true)
            }
            StateMarker::Expired { .. } => (DiagnosticSeverity::INFORMATION, format!("#{id} expired"), false),
            StateMarker::Proposed { .. } => (
                DiagnosticSeverity::INFORMATION,
                format!(
                    "#{id} was proposed by an agent and is not delivered until accepted: Accept (or delete the PROPOSED marker), or Reject (or delete the entry)"
                ),
                false,
            ),
        };
        out.push(Diagnostic {
            range: lines.range(parsed_entry.first_line, 0, 0),
            severity: Some(severity),
            source: Some(SOURCE.into()),
            message,
            tags: deprecated.then(|| vec![DiagnosticTag::DEPRECATED]),
            ..Diagnostic::default()
        });
    }
    let proposals: Vec<String> = parsed
        .entries
        .iter()
        .filter(|e| matches!(e.entry.marker, Some(StateMarker::Proposed { .. })))
        .filter_map(|e| Some(format!("#{}", e.entry.id?)))
        .collect();
    for (id, first_line) in untold {
        out.push(Diagnostic {
            range: lines.range(first_line, 0, 0),
            severity: Some(DiagnosticSeverity::HINT),
            source: Some(SOURCE.into()),
            code: Some(NumberOrString::String("untold".into())),
            message: format!(
                "#{id} was told to no agent in {QUIET_DAYS} days: a candidate to expire or revoke (`mnemo history {id}`)"
            ),
            ..Diagnostic::default()
        });
    }
    let limit = WorkspaceConfig::load(drift.root.as_deref()).map(|c| c.load_limit).unwrap_or_default();
    let past = entries_past(&text, &parsed.entries, &limit);
    if let (Some(message), Some((_, first_line))) = (describe(&past, &limit), past.first()) {
        out.push(Diagnostic {
            range: lines.range(*first_line, 0, 0),
            severity: Some(DiagnosticSeverity::WARNING),
            source: Some(SOURCE.into()),
            code: Some(NumberOrString::String("load-budget".into())),
            message,
            ..Diagnostic::default()
        });
    }
    let first_cut = parsed.entries.iter().find(|e| e.entry.id.is_some_and(|id| drift.start_cut.contains(&id)));
    if let (Some(entry), Some(message)) = (first_cut, describe_start_cut(&drift.start_cut, DEFAULT_HOOK_TOKENS)) {
        out.push(Diagnostic {
            range: lines.range(entry.first_line, 0, 0),
            severity: Some(DiagnosticSeverity::WARNING),
            source: Some(SOURCE.into()),
            code: Some(NumberOrString::String("hook-budget".into())),
            message,
            ..Diagnostic::default()
        });
    }
    if !proposals.is_empty() {
        let listed =
            if proposals.len() > 10 { format!("{}, …", proposals[..10].join(", ")) } else { proposals.join(", ") };
        let count = match proposals.len() {
            1 => "1 proposal waits".to_string(),
            n => format!("{n} proposals wait"),
        };
        out.push(Diagnostic {
            range: lines.range(0, 0, 0),
            severity: Some(DiagnosticSeverity::INFORMATION),
            source: Some(SOURCE.into()),
            code: Some(NumberOrString::String("proposals".into())),
            message: format!("{count} for review: {listed}; agents are not told them until accepted"),
            ..Diagnostic::default()
        });
    }
    out
}

/// A core diagnostic of a checkout's text as an LSP diagnostic.
pub fn checkout_problem(
    lines: &Lines,
    d: &mnemo_core::memory_md::Diagnostic,
    conflicts: &[mnemo_core::checkin::Conflict],
) -> Diagnostic {
    let severity = match d.severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Information => DiagnosticSeverity::INFORMATION,
        Severity::Hint => DiagnosticSeverity::HINT,
    };
    let conflict = conflicts
        .iter()
        .find(|c| c.line == d.line && d.message.starts_with(&format!("#{} changed in the store", c.id)));
    Diagnostic {
        range: lines.range(d.line, d.start_column, d.end_column),
        severity: Some(severity),
        source: Some(SOURCE.into()),
        code: conflict.map(|_| NumberOrString::String("conflict".into())),
        data: conflict.map(|c| serde_json::json!({ "conflict": c.id })),
        message: d.message.clone(),
        ..Diagnostic::default()
    }
}
