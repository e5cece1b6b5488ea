//! After a check-in the document is re-rendered at the new epoch, and what
//! was not applied is carried into it exactly as the person typed it, so
//! nothing typed is lost (docs/format.md: "kept in the editor buffer").
//!
//! The text is handled as blocks: the header, section headings and entries,
//! separated by one empty line as the renderer writes them. A carried entry
//! takes the place of its note's fresh rendering when it is still in the
//! same section, and goes to the end of its section otherwise; lines that
//! belong to no entry (a broken entry line, an unknown section) go to the
//! end of their section, or of the document — except a lone body line,
//! which goes first so that it cannot join the entry above it.
//!
//! So that a conflict survives the re-render, the check-in base recorded for
//! the new text keeps the *old* base version of each conflicting entry: the
//! next check-in of the carried text finds the same conflict again, instead
//! of quietly applying the person's side.

use std::collections::{BTreeSet, HashSet};

use crate::memory_md::{ParsedCheckout, Severity, leading_id, parse_checkout};
use crate::model::NoteId;

use super::{CheckinPlan, Conflict};

/// The new text, the base to record for it, and where carried entries went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Carried {
    pub text: String,
    pub base: String,
    /// (line in the edited text, line in the new text) of each carried block.
    pub moved: Vec<(usize, usize)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum BlockKind {
    Head,
    Heading(String),
    Entry(Option<NoteId>),
    /// Lines that belong to no entry.
    Stray,
}

#[derive(Debug, Clone)]
struct Block {
    kind: BlockKind,
    lines: Vec<String>,
    /// The first line of a carried block in the edited text.
    origin: Option<usize>,
}

/// Split a canonical rendering into blocks.
fn blocks_of(text: &str) -> Vec<Block> {
    let parsed = parse_checkout(text);
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut entries = parsed.entries.iter().peekable();
    let mut index = 0;
    let mut head = Vec::new();
    while index < lines.len() && !lines[index].starts_with("## ") {
        head.push(lines[index].to_string());
        index += 1;
    }
    while head.last().is_some_and(|l| l.is_empty()) {
        head.pop();
    }
    blocks.push(Block { kind: BlockKind::Head, lines: head, origin: None });
    while index < lines.len() {
        if let Some(entry) = entries.next_if(|e| e.first_line == index) {
            let lines = lines[entry.first_line..=entry.last_line].iter().map(|l| l.to_string()).collect();
            blocks.push(Block { kind: BlockKind::Entry(entry.entry.id), lines, origin: None });
            index = entry.last_line + 1;
        } else {
            let line = lines[index];
            if line.starts_with("## ") {
                blocks.push(Block {
                    kind: BlockKind::Heading(line.to_string()),
                    lines: vec![line.into()],
                    origin: None,
                });
            }
            index += 1;
        }
    }
    blocks
}

/// Join blocks as the renderer does; returns the text and the first line of each block.
fn join(blocks: &[Block]) -> (String, Vec<usize>) {
    let mut text = String::new();
    let mut starts = Vec::with_capacity(blocks.len());
    let mut line = 0;
    for (index, block) in blocks.iter().enumerate() {
        if index > 0 {
            text.push_str("\n\n");
            line += 2;
        }
        starts.push(line);
        text.push_str(&block.lines.join("\n"));
        line += block.lines.len().saturating_sub(1);
    }
    text.push('\n');
    (text, starts)
}

/// A line that starts a new block in a person's text.
fn is_boundary(line: &str) -> bool {
    line.starts_with("- ") || line.starts_with("## ") || line.starts_with("# ") || line.starts_with("<!--")
}

/// The block of the edited text starting at `start`: up to the next block, trailing empty lines dropped.
fn chunk(lines: &[&str], start: usize, kind: BlockKind, section: Option<&str>) -> (Block, Option<String>) {
    let mut end = start + 1;
    while end < lines.len() && !is_boundary(lines[end]) {
        end += 1;
    }
    while end > start + 1 && lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    let lines = lines[start..end].iter().map(|l| l.to_string()).collect();
    (Block { kind, lines, origin: Some(start) }, section.map(str::to_string))
}

/// The section heading above `line` in `lines`.
fn section_above<'a>(lines: &[&'a str], line: usize) -> Option<&'a str> {
    lines[..line].iter().rev().find(|l| l.starts_with("## ")).copied()
}

/// Where a block for `section` goes: after the last block of that section,
/// or at the end when there is no such section.
fn end_of_section(blocks: &[Block], section: Option<&str>) -> usize {
    let Some(start) =
        blocks.iter().position(|b| matches!(&b.kind, BlockKind::Heading(h) if Some(h.as_str()) == section))
    else {
        return blocks.len();
    };
    blocks[start + 1..]
        .iter()
        .position(|b| matches!(b.kind, BlockKind::Heading(_)))
        .map_or(blocks.len(), |p| start + 1 + p)
}

/// Right after the heading of `section`, or after the header block.
fn start_of_section(blocks: &[Block], section: Option<&str>) -> usize {
    blocks
        .iter()
        .position(|b| matches!(&b.kind, BlockKind::Heading(h) if Some(h.as_str()) == section))
        .map_or(1, |p| p + 1)
}

fn section_of(blocks: &[Block], index: usize) -> Option<&str> {
    blocks[..index].iter().rev().find_map(|b| match &b.kind {
        BlockKind::Heading(h) => Some(h.as_str()),
        _ => None,
    })
}

fn position_of(blocks: &[Block], id: NoteId) -> Option<usize> {
    blocks.iter().position(|b| b.kind == BlockKind::Entry(Some(id)))
}

/// The lines of the edited text a problem was reported on.
fn problem_lines(plan: &CheckinPlan, refused: &[(usize, String)]) -> BTreeSet<usize> {
    let serious = plan.diagnostics.iter().filter(|d| matches!(d.severity, Severity::Error | Severity::Warning));
    serious
        .map(|d| d.line)
        .chain(refused.iter().map(|(line, _)| *line))
        .chain(plan.conflicts.iter().map(|c| c.line))
        .collect()
}

/// Carry what `plan` (and the store, in `refused`) did not apply from the
/// edited text into `rendered`, a fresh checkout; `old_base` is the text
/// the edit was based on.
pub fn carry_over(
    edited_text: &str,
    edited: &ParsedCheckout,
    plan: &CheckinPlan,
    refused: &[(usize, String)],
    rendered: &str,
    old_base: &str,
) -> Carried {
    let lines: Vec<&str> = edited_text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let problems = problem_lines(plan, refused);
    let in_range = |start: usize, len: usize| problems.range(start..start + len.max(1)).next().is_some();

    // The person's blocks that were not applied, in text order.
    let mut carried: Vec<(Block, Option<String>)> = Vec::new();
    let mut covered: Vec<(usize, usize)> = Vec::new();
    let mut standing: HashSet<NoteId> = HashSet::new();
    for parsed in &edited.entries {
        let section = section_above(&lines, parsed.first_line);
        let (block, section) = chunk(&lines, parsed.first_line, BlockKind::Entry(parsed.entry.id), section);
        covered.push((parsed.first_line, block.lines.len()));
        if in_range(parsed.first_line, block.lines.len()) {
            carried.push((block, section));
        } else if let Some(id) = parsed.entry.id {
            standing.insert(id);
        }
    }
    for &line in &problems {
        let inside = covered.iter().any(|&(start, len)| line >= start && line < start + len);
        if line == 0 || line >= lines.len() || inside || lines[line].trim().is_empty() {
            continue;
        }
        let section = if lines[line].starts_with("## ") { Some(lines[line]) } else { section_above(&lines, line) };
        // A broken entry line still names its note: it takes that note's place.
        let kind = match lines[line].strip_prefix("- ").and_then(leading_id) {
            Some(id) => BlockKind::Entry(Some(id)),
            None => BlockKind::Stray,
        };
        let (block, section) = chunk(&lines, line, kind, section);
        covered.push((line, block.lines.len()));
        carried.push((block, section));
    }
    carried.sort_by_key(|(block, _)| block.origin);

    let mut blocks = blocks_of(rendered);
    let mut claimed = standing;
    for (block, section) in carried {
        let id = match block.kind {
            BlockKind::Entry(id) => id,
            _ => None,
        };
        if let Some(id) = id.filter(|id| !claimed.contains(id)) {
            claimed.insert(id);
            if let Some(at) = position_of(&blocks, id) {
                if section_of(&blocks, at) == section.as_deref() {
                    blocks[at] = block;
                    continue;
                }
                blocks.remove(at);
            }
        }
        // A lone body line would join the entry above it: it goes first in
        // its section (or after the header), where it still reads as stray.
        let indented = block.kind == BlockKind::Stray && block.lines[0].starts_with([' ', '\t']);
        let at = match indented {
            true => start_of_section(&blocks, section.as_deref()),
            false => end_of_section(&blocks, section.as_deref()),
        };
        blocks.insert(at, block);
    }
    // A deletion that conflicted stays deleted in the new text.
    for conflict in plan.conflicts.iter().filter(|c| c.mine.is_none()) {
        if !claimed.contains(&conflict.id)
            && let Some(at) = position_of(&blocks, conflict.id)
        {
            blocks.remove(at);
        }
    }
    let (text, starts) = join(&blocks);
    let moved = blocks.iter().zip(starts).filter_map(|(b, start)| Some((b.origin?, start))).collect();
    Carried { text, base: conflict_base(rendered, old_base, &plan.conflicts), moved }
}

/// The base to record for the new text: the fresh rendering, except that
/// each conflicting entry keeps its version from the old base.
fn conflict_base(rendered: &str, old_base: &str, conflicts: &[Conflict]) -> String {
    if conflicts.is_empty() {
        return rendered.to_string();
    }
    let old = blocks_of(old_base);
    let mut blocks = blocks_of(rendered);
    for conflict in conflicts {
        let Some(old_at) = position_of(&old, conflict.id) else { continue };
        let old_block = old[old_at].clone();
        match position_of(&blocks, conflict.id) {
            Some(at) => blocks[at] = old_block,
            None => {
                let at = end_of_section(&blocks, section_of(&old, old_at));
                blocks.insert(at, old_block);
            }
        }
    }
    join(&blocks).0
}
