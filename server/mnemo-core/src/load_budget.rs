//! Load budgets: how much of MEMORY.md a harness reads. Claude Code loads
//! the first 200 lines or 25 KB of it, whichever ends first, and says
//! nothing of the rest; mnemo says which entries fall past that, so a
//! person sees what an agent will never read (`[load_budget]` in the
//! workspace config sets another harness's limit). The other budget is the
//! session-start hook's own (`--budget`): what it delivers whole is cut to
//! fit, and [`describe_start_cut`] says which bodies.

use crate::memory_md::ParsedEntry;
use crate::model::NoteId;

/// What a harness loads of the memory file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadLimit {
    pub harness: String,
    pub lines: usize,
    pub bytes: usize,
}

impl Default for LoadLimit {
    fn default() -> Self {
        LoadLimit { harness: "Claude Code".into(), lines: 200, bytes: 25_000 }
    }
}

/// The entries of `text` that do not load whole under `limit`, in file
/// order: each ends past the last line or byte the harness reads.
pub fn entries_past(text: &str, entries: &[ParsedEntry], limit: &LoadLimit) -> Vec<(NoteId, usize)> {
    // The byte offset at which each line ends (its newline included).
    let mut line_ends = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        offset += line.len();
        line_ends.push(offset);
    }
    entries
        .iter()
        .filter(|e| {
            let end = line_ends.get(e.last_line).copied().unwrap_or(offset);
            e.last_line >= limit.lines || end > limit.bytes
        })
        .filter_map(|e| Some((e.entry.id?, e.first_line)))
        .collect()
}

/// "34 entries (#181 … #214) will not load in Claude Code, which reads the
/// first 200 lines or 25000 bytes of MEMORY.md".
pub fn describe(past: &[(NoteId, usize)], limit: &LoadLimit) -> Option<String> {
    let (first, last) = (past.first()?.0, past.last()?.0);
    let which = match past.len() {
        1 => format!("#{first} will not load whole"),
        n => format!("{n} entries (#{first} … #{last}) will not load"),
    };
    let reads = match (limit.lines, limit.bytes) {
        (usize::MAX, bytes) => format!("{bytes} bytes"),
        (lines, usize::MAX) => format!("{lines} lines"),
        (lines, bytes) => format!("{lines} lines or {bytes} bytes"),
    };
    Some(format!(
        "{which} in {}, which reads the first {reads} of MEMORY.md; raise their priority or revoke what is stale to bring them in",
        limit.harness
    ))
}

/// "the session-start hook cuts the bodies of #3, #7 at its default
/// --budget 1500 tokens …": what [`crate::delivery::cut_at_start`] found,
/// for the memory document and for the write that caused it.
pub fn describe_start_cut(cut: &[NoteId], tokens: usize) -> Option<String> {
    let named: Vec<String> = cut.iter().take(10).map(|id| format!("#{id}")).collect();
    let more = if cut.len() > 10 { ", …" } else { "" };
    let whose = match cut.len() {
        0 => return None,
        1 => format!("the body of {}", named[0]),
        n => format!("the bodies of {n} notes ({}{more})", named.join(", ")),
    };
    Some(format!(
        "the session-start hook cuts {whose} at its default --budget {tokens} tokens: agents start with what is left and a line saying how to read the rest; shorten, merge or revoke directives, or raise the hook's --budget in the harness settings"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory_md::parse_checkout;

    #[test]
    fn the_entries_past_a_harness_limit_are_named_by_lines_and_by_bytes() {
        let mut text =
            String::from("<!-- mnemo checkout · workspace /w · epoch 1 -->\n# Memory · w\n\n## Directives\n\n");
        for id in 1..=20 {
            text.push_str(&format!("- [#{id}] 2026-06-02 · high · Rule number {id}\n  why it holds\n\n"));
        }
        let parsed = parse_checkout(&text);
        let by_lines = LoadLimit { harness: "H".into(), lines: 30, bytes: 1_000_000 };
        let past = entries_past(&text, &parsed.entries, &by_lines);
        // Entry n spans lines 5 + 3(n-1) and 6 + 3(n-1): #9 ends on line 29, #10 on 32.
        assert_eq!(past.first().map(|p| p.0), Some(9), "{past:?}");
        assert_eq!(past.len(), 12);
        let by_bytes = LoadLimit { harness: "H".into(), lines: 10_000, bytes: text.find("[#4]").unwrap() };
        assert_eq!(entries_past(&text, &parsed.entries, &by_bytes).first().map(|p| p.0), Some(4), "#4 ends past it");
        assert!(entries_past(&text, &parsed.entries, &LoadLimit::default()).is_empty());
        let said = describe(&past, &by_lines).unwrap();
        assert!(said.starts_with("12 entries (#9 … #20) will not load in H, which reads the first 30 lines"), "{said}");
        assert_eq!(describe(&[], &by_lines), None);
        let only_lines = LoadLimit { bytes: usize::MAX, ..by_lines.clone() };
        assert!(describe(&past, &only_lines).unwrap().contains("which reads the first 30 lines of MEMORY.md"));
    }
}
