//! Positions, in one place: LSP counts UTF-16 code units within a line;
//! documents are ropes of chars; core diagnostics count bytes within a line.
//! Every conversion between them is here, and no other module counts UTF-16
//! units (`chars_before` is the one reading of an LSP column).
use ropey::Rope;
use tower_lsp_server::ls_types::{Position, Range};

/// How many chars of a line come before UTF-16 column `character`: **the**
/// conversion of an LSP column. A column inside a char (half of a surrogate
/// pair) counts that char; the line break is never passed.
fn chars_before(line: impl IntoIterator<Item = char>, character: u32) -> usize {
    let mut utf16 = 0usize;
    let mut chars = 0usize;
    for ch in line {
        if utf16 >= character as usize || ch == '\n' || ch == '\r' {
            break;
        }
        utf16 += ch.len_utf16();
        chars += 1;
    }
    chars
}

/// The char index of an LSP position, clamped to the document.
pub fn char_index(rope: &Rope, position: Position) -> usize {
    if rope.len_lines() == 0 {
        return 0;
    }
    let line = (position.line as usize).min(rope.len_lines() - 1);
    rope.line_to_char(line) + chars_before(rope.line(line).chars(), position.character)
}

/// The byte offset in `line` of UTF-16 column `character` (clamped to the line).
pub fn byte_offset(line: &str, character: u32) -> usize {
    line.chars().take(chars_before(line.chars(), character)).map(char::len_utf8).sum()
}

/// The UTF-16 column of byte `byte` in `line` (clamped to a char boundary and the line).
pub fn utf16_column(line: &str, byte: usize) -> u32 {
    let mut byte = byte.min(line.len());
    while !line.is_char_boundary(byte) {
        byte -= 1;
    }
    line[..byte].encode_utf16().count() as u32
}

/// A text split into lines once, for the many ranges of one answer (finding
/// a line by scanning the text each time is quadratic on a large memory).
pub struct Lines<'a>(Vec<&'a str>);

impl<'a> Lines<'a> {
    pub fn new(text: &'a str) -> Lines<'a> {
        Lines(text.lines().collect())
    }

    /// The range of bytes `start..end` of line `line` (`end` 0: to the line's end).
    pub fn range(&self, line: usize, start: usize, end: usize) -> Range {
        range_in(self.0.get(line).copied().unwrap_or(""), line, start, end)
    }
}

fn range_in(content: &str, line: usize, start: usize, end: usize) -> Range {
    let end = if end == 0 { content.len() } else { end };
    Range::new(
        Position::new(line as u32, utf16_column(content, start)),
        Position::new(line as u32, utf16_column(content, end)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_positions_round_trip_through_chars() {
        let rope = Rope::from_str("a🙂b\nxé\n");
        assert_eq!(char_index(&rope, Position::new(0, 0)), 0);
        assert_eq!(char_index(&rope, Position::new(0, 3)), 2, "🙂 is two UTF-16 units, one char");
        assert_eq!(char_index(&rope, Position::new(1, 1)), 5);
        assert_eq!(char_index(&rope, Position::new(1, 99)), 6, "past the end of a line clamps to before its newline");
        assert_eq!(char_index(&rope, Position::new(99, 0)), rope.line_to_char(2), "past the last line clamps");
        assert_eq!(utf16_column("a🙂b", 5), 3);
        assert_eq!(utf16_column("a🙂b", 2), 1, "inside a char clamps back to its start");
        assert_eq!(byte_offset("a🙂b", 2), 5, "a column inside a char counts that char");
        assert_eq!(byte_offset("a🙂b\n", 9), 6, "past the end clamps to before the line break");
        assert_eq!(byte_offset("é#7", 1), 2);
        assert_eq!(Lines::new("x\nab🙂\n").range(1, 0, 0), Range::new(Position::new(1, 0), Position::new(1, 4)));
    }
}
