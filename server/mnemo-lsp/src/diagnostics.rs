//! Diagnostics on memory documents: stale notes (warning), revoked and
//! superseded notes (hint, tagged deprecated so editors grey them out),
//! expired notes (information), and a checkout's parse errors.

use mnemo_core::memory_md::{Severity, StateMarker};
use tower_lsp_server::ls_types::{Diagnostic, DiagnosticSeverity, DiagnosticTag};

use crate::documents::{Document, DocumentKind};
use crate::outline::parse_document;
use crate::to_proto::line_range;

const SOURCE: &str = "mnemo";

pub fn diagnostics(doc: &Document) -> Vec<Diagnostic> {
    // The mirror is never checked in; it is read here only to mark its entries.
    let Some((text, parsed)) = parse_document(doc) else { return Vec::new() };
    let mut out = Vec::new();
    if doc.kind == DocumentKind::Checkout {
        for d in &parsed.diagnostics {
            let severity = match d.severity {
                Severity::Error => DiagnosticSeverity::ERROR,
                Severity::Warning => DiagnosticSeverity::WARNING,
                Severity::Information => DiagnosticSeverity::INFORMATION,
                Severity::Hint => DiagnosticSeverity::HINT,
            };
            out.push(Diagnostic {
                range: line_range(&text, d.line, d.start_column, d.end_column),
                severity: Some(severity),
                source: Some(SOURCE.into()),
                message: d.message.clone(),
                ..Diagnostic::default()
            });
        }
    }
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
        };
        out.push(Diagnostic {
            range: line_range(&text, parsed_entry.first_line, 0, 0),
            severity: Some(severity),
            source: Some(SOURCE.into()),
            message,
            tags: deprecated.then(|| vec![DiagnosticTag::DEPRECATED]),
            ..Diagnostic::default()
        });
    }
    out
}
