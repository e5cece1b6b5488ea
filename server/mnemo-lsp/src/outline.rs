//! Structure of a memory document: document symbols (sections and their
//! entries), folding ranges (sections, entries with bodies) and document
//! links (anchors open the file at their lines).

use mnemo_core::Kind;
use mnemo_core::memory_md::{ParsedCheckout, parse_checkout, parse_mirror_entries, section_title};
use tower_lsp_server::ls_types::{
    DocumentLink, DocumentSymbol, FoldingRange, FoldingRangeKind, Position, Range, SymbolKind, Uri,
};

use crate::documents::{Document, DocumentKind};
use crate::to_proto::Lines;

/// Parse a memory document's entries (a mirror is read the way a checkout is).
pub fn parse_document(doc: &Document) -> Option<(String, ParsedCheckout)> {
    let text = doc.whole_text();
    let parsed = match doc.kind {
        DocumentKind::Source => return None,
        DocumentKind::Checkout => parse_checkout(&text),
        DocumentKind::Mirror => parse_mirror_entries(&text),
    };
    Some((text, parsed))
}

fn section_lines(text: &str) -> Vec<(Kind, usize)> {
    text.lines()
        .enumerate()
        .filter_map(|(line, content)| {
            let name = content.strip_prefix("## ")?;
            Kind::ALL.iter().find(|k| section_title(**k) == name).map(|k| (*k, line))
        })
        .collect()
}

fn kind_symbol(kind: Kind) -> SymbolKind {
    match kind {
        Kind::Directive => SymbolKind::CONSTANT,
        Kind::Task => SymbolKind::EVENT,
        Kind::Gotcha => SymbolKind::OPERATOR,
        Kind::Finding => SymbolKind::FIELD,
        Kind::Reference => SymbolKind::FILE,
        Kind::Decision => SymbolKind::ENUM_MEMBER,
        Kind::Operational => SymbolKind::FUNCTION,
    }
}

#[allow(deprecated)]
pub fn document_symbols(doc: &Document) -> Vec<DocumentSymbol> {
    let Some((text, parsed)) = parse_document(doc) else { return Vec::new() };
    let lines = Lines::new(&text);
    let sections = section_lines(&text);
    let total = text.lines().count().max(1);
    sections
        .iter()
        .enumerate()
        .map(|(index, (kind, line))| {
            let end = sections.get(index + 1).map_or(total - 1, |(_, next)| next.saturating_sub(1));
            let children: Vec<DocumentSymbol> = parsed
                .entries
                .iter()
                .filter(|e| e.entry.kind == *kind)
                .map(|e| {
                    let name = match e.entry.id {
                        Some(id) => format!("#{id} {}", e.entry.title),
                        None => format!("(new) {}", e.entry.title),
                    };
                    let range = Range::new(Position::new(e.first_line as u32, 0), lines.range(e.last_line, 0, 0).end);
                    DocumentSymbol {
                        name,
                        detail: Some(e.entry.priority.to_string()),
                        kind: kind_symbol(*kind),
                        tags: None,
                        deprecated: None,
                        range,
                        selection_range: lines.range(e.first_line, 0, 0),
                        children: None,
                    }
                })
                .collect();
            DocumentSymbol {
                name: section_title(*kind).to_string(),
                detail: Some(format!("{} notes", children.len())),
                kind: SymbolKind::NAMESPACE,
                tags: None,
                deprecated: None,
                range: Range::new(Position::new(*line as u32, 0), lines.range(end, 0, 0).end),
                selection_range: lines.range(*line, 0, 0),
                children: Some(children),
            }
        })
        .collect()
}

pub fn folding_ranges(doc: &Document) -> Vec<FoldingRange> {
    let Some((text, parsed)) = parse_document(doc) else { return Vec::new() };
    let sections = section_lines(&text);
    let total = text.lines().count();
    let mut out: Vec<FoldingRange> = sections
        .iter()
        .enumerate()
        .filter_map(|(index, (_, line))| {
            let end = sections.get(index + 1).map_or(total.saturating_sub(1), |(_, next)| next.saturating_sub(2));
            (end > *line).then(|| FoldingRange {
                start_line: *line as u32,
                end_line: end as u32,
                kind: Some(FoldingRangeKind::Region),
                ..FoldingRange::default()
            })
        })
        .collect();
    out.extend(parsed.entries.iter().filter(|e| e.last_line > e.first_line).map(|e| FoldingRange {
        start_line: e.first_line as u32,
        end_line: e.last_line as u32,
        kind: Some(FoldingRangeKind::Region),
        ..FoldingRange::default()
    }));
    out
}

/// Anchor links open the anchored file at its first line.
pub fn document_links(doc: &Document, workspace_root: Option<&std::path::Path>) -> Vec<DocumentLink> {
    let Some(root) = workspace_root else { return Vec::new() };
    let Some((text, _)) = parse_document(doc) else { return Vec::new() };
    let lines = Lines::new(&text);
    text.lines()
        .enumerate()
        .filter_map(|(line, content)| {
            let link = content.strip_prefix("  [")?;
            let (label, _) = link.split_once("](")?;
            let (path, range) = label.rsplit_once(':')?;
            let start: u32 = range.split_once('-').map_or(range, |(a, _)| a).parse().ok()?;
            let target = Uri::from_file_path(root.join(path))?;
            let target: Uri = format!("{}#L{start}", target.as_str()).parse().ok()?;
            Some(DocumentLink {
                range: lines.range(line, 2, content.len()),
                target: Some(target),
                tooltip: Some(format!("open {label}")),
                data: None,
            })
        })
        .collect()
}
