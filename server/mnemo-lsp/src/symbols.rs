//! Workspace symbols run recall: each ranked note is a symbol located at
//! its entry in the workspace's mirror (or the mirror's first line when the
//! entry is not there). What the filters hid is carried in `containerName`,
//! so nothing is hidden silently. An empty query lists the directives.

use std::path::Path;

use mnemo_core::NoteId;
use mnemo_core::memory_md::section_title;
use mnemo_core::recall::RecallAnswer;
use tower_lsp_server::ls_types::{Location, Position, Range, Uri};

/// Each entry of a MEMORY.md text: its note and line. **The** reading of
/// an entry line here (`- [#12] …`).
fn entries(text: &str) -> impl Iterator<Item = (NoteId, u32)> + '_ {
    text.lines().enumerate().filter_map(|(line, l)| {
        let digits = l.strip_prefix("- [#")?.split_once("] ")?.0;
        Some((digits.parse().ok()?, line as u32))
    })
}

/// The line of entry `id` in a MEMORY.md text.
pub fn entry_line(text: &str, id: NoteId) -> Option<u32> {
    entries(text).find(|(entry, _)| *entry == id).map(|(_, line)| line)
}

/// The line of every entry in `text`, read in one pass.
pub fn entry_lines(text: &str) -> std::collections::HashMap<NoteId, u32> {
    entries(text).collect()
}

/// Where note `id` is shown: its entry in the mirror at `mirror` (`lines`
/// from [`entry_lines`]; line 0 when the mirror does not show it yet).
pub fn entry_location(mirror: &Path, lines: &std::collections::HashMap<NoteId, u32>, id: NoteId) -> Option<Location> {
    let uri = Uri::from_file_path(mirror)?;
    let line = lines.get(&id).copied().unwrap_or(0);
    Some(Location { uri, range: Range::new(Position::new(line, 0), Position::new(line, 0)) })
}

/// `hybrid; hidden: 2 stale (#12), 1 other workspace`.
pub fn hidden_summary(answer: &RecallAnswer, ranking: &str) -> String {
    format!("{ranking}; hidden: {}", answer.describe_hidden())
}

/// The container shown beside a symbol: its section, and what was hidden.
pub fn container(kind: mnemo_core::Kind, summary: &str) -> String {
    format!("{} · {summary}", section_title(kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_lines_are_found_by_exact_id() {
        let text = "x\n- [#12] 2026-01-01 · low · a\n- [#1] 2026-01-01 · low · b\n";
        assert_eq!(entry_line(text, 1), Some(2));
        assert_eq!(entry_line(text, 12), Some(1));
        assert_eq!(entry_line(text, 2), None);
    }
}
