//! A checkout base as the lines it shares with another base (its key) and
//! the lines it does not. Two renderings of one workspace at nearby epochs
//! differ in a few entries, so a base stored this way costs bytes in
//! proportion to what changed, not to the document (a 10k-note checkout is
//! 2 MB; its delta after an edit, a few hundred bytes).
//!
//! The encoding is exact for any pair of texts (a worse match only makes
//! the delta longer): `k LENGTH SAMPLE` names the key it was made against
//! (its length and a hash of its first and last 4 KB, which hold a
//! checkout's header: workspace and epoch), then a sequence of operations,
//! each a header line — `c START COUNT` copies COUNT lines of the key from
//! line START, `i BYTES` inserts the BYTES bytes that follow its newline —
//! where a line keeps its
//! own `\n` (the last may have none). Runs start at landmarks: lines that
//! open an entry or a section, which a rendering holds once each; other
//! lines only continue a run, so encoding hashes one line in five.

use foldhash::HashMap;

/// The lines of `text`, each with its own `\n` (the last may lack one).
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// Whether a run may start at `line`: an entry's first line or a heading.
fn is_landmark(line: &str) -> bool {
    line.starts_with("- [#") || line.starts_with('#')
}

/// How many bytes at each end of a key its sample hashes.
const SAMPLED: usize = 4096;

/// A delta rebuilds at most this many times the bytes of its key and
/// itself: a damaged one that copies the key over and over is refused
/// rather than filling memory.
const AT_MOST_TIMES: usize = 8;

/// The key's line: its length and an FNV-1a hash of its ends.
fn key_line(key: &str) -> String {
    let bytes = key.as_bytes();
    let ends = bytes[..bytes.len().min(SAMPLED)].iter().chain(&bytes[bytes.len().saturating_sub(SAMPLED)..]);
    let sample = ends.fold(0xcbf2_9ce4_8422_2325_u64, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    format!("k {} {sample:016x}\n", bytes.len())
}

/// A key made ready to encode against: its lines, and where each
/// landmark stands (its first place, and for each landmark line where the
/// same line stands next: a landmark is nearly always unique, so a chain is
/// one long). Made once, it encodes any number of texts; a process that
/// writes base after base against one key keeps it (`bases.rs`).
pub struct Key {
    text: String,
    /// Each line's byte range in `text`, its `\n` included.
    lines: Vec<std::ops::Range<usize>>,
    /// A landmark line's hash → its first line. Two landmarks of one hash
    /// keep the first: the other is not found, and only makes a delta longer.
    first: HashMap<u64, usize>,
    then: Vec<usize>,
    key_line: String,
}

impl Key {
    pub fn new(text: String) -> Key {
        let mut lines = Vec::new();
        let mut start = 0;
        for line in text.split_inclusive('\n') {
            lines.push(start..start + line.len());
            start += line.len();
        }
        let mut first: HashMap<u64, usize> = HashMap::with_capacity_and_hasher(lines.len() / 2, Default::default());
        let mut then = vec![usize::MAX; lines.len()];
        for (at, range) in lines.iter().enumerate().rev() {
            let line = &text[range.clone()];
            if !is_landmark(line) {
                continue;
            }
            match first.insert(hash(line), at) {
                Some(next) if text[lines[next].clone()] == *line => then[at] = next,
                // Another line of the same hash: the chain starts again here.
                _ => {}
            }
        }
        let key_line = key_line(&text);
        Key { text, lines, first, then, key_line }
    }

    fn line(&self, at: usize) -> Option<&str> {
        self.lines.get(at).map(|range| &self.text[range.clone()])
    }

    /// Where landmark `line` first stands in the key, if it does.
    fn landmark(&self, line: &str) -> Option<usize> {
        self.first.get(&hash(line)).copied().filter(|&at| self.line(at) == Some(line))
    }

    /// `text` as operations on the key's lines.
    pub fn encode(&self, text: &str) -> Vec<u8> {
        let mut out = self.key_line.clone().into_bytes();
        let mut copy: Option<(usize, usize)> = None;
        let mut insert = String::new();
        let flush_copy = |out: &mut Vec<u8>, copy: &mut Option<(usize, usize)>| {
            if let Some((start, count)) = copy.take() {
                out.extend_from_slice(format!("c {start} {count}\n").as_bytes());
            }
        };
        let flush_insert = |out: &mut Vec<u8>, insert: &mut String| {
            if !insert.is_empty() {
                out.extend_from_slice(format!("i {}\n", insert.len()).as_bytes());
                out.extend_from_slice(insert.as_bytes());
                insert.clear();
            }
        };
        for line in text.split_inclusive('\n') {
            // The run goes on when the key's next line is this one.
            if let Some((start, count)) = copy.as_mut()
                && self.line(*start + *count) == Some(line)
            {
                *count += 1;
                continue;
            }
            let next = copy.map_or(0, |(start, count)| start + count);
            let landmark = if is_landmark(line) { self.landmark(line) } else { None };
            let found = landmark.map(|first| {
                // The first occurrence at or after where the last run ended keeps runs in order.
                let mut at = first;
                while at < next && self.then[at] != usize::MAX {
                    at = self.then[at];
                }
                if at >= next { at } else { first }
            });
            match found {
                Some(at) => {
                    flush_copy(&mut out, &mut copy);
                    flush_insert(&mut out, &mut insert);
                    copy = Some((at, 1));
                }
                None => {
                    flush_copy(&mut out, &mut copy);
                    insert.push_str(line);
                }
            }
        }
        flush_copy(&mut out, &mut copy);
        flush_insert(&mut out, &mut insert);
        out
    }
}

/// A landmark line's hash (the same in every process: the seed is fixed).
fn hash(line: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0x006d_6e65_6d6f).hash_one(line)
}

/// `text` as operations on `key`'s lines.
#[cfg(test)]
pub fn encode(key: &str, text: &str) -> Vec<u8> {
    Key::new(key.to_string()).encode(text)
}

/// The text `delta` encodes against `key`; `None` when the delta does not
/// fit the key (damaged, or made against another text).
pub fn apply(key: &str, delta: &[u8]) -> Option<String> {
    let mut rest = delta.strip_prefix(key_line(key).as_bytes())?;
    let key_lines = lines(key);
    let most = AT_MOST_TIMES.saturating_mul(key.len().saturating_add(delta.len()));
    let mut text = String::with_capacity(key.len());
    while !rest.is_empty() {
        if text.len() > most {
            return None;
        }
        let end = rest.iter().position(|&b| b == b'\n')?;
        let header = std::str::from_utf8(&rest[..end]).ok()?;
        rest = &rest[end + 1..];
        let mut words = header.split(' ');
        match (words.next()?, words.next(), words.next(), words.next()) {
            ("c", Some(start), Some(count), None) => {
                let (start, count): (usize, usize) = (start.parse().ok()?, count.parse().ok()?);
                for line in key_lines.get(start..start.checked_add(count)?)? {
                    text.push_str(line);
                }
            }
            ("i", Some(bytes), None, None) => {
                let bytes: usize = bytes.parse().ok()?;
                text.push_str(std::str::from_utf8(rest.get(..bytes)?).ok()?);
                rest = &rest[bytes..];
            }
            _ => return None,
        }
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_small_edit_of_a_large_text_is_a_small_delta() {
        let key: String = (0..10_000).map(|i| format!("- [#{i}] note {i}\n  Body of note {i}.\n")).collect();
        let text = key.replace("- [#5000] note 5000\n", "- [#5000] note 5000 (edited)\n") + "- [#10000] new\n";
        let delta = encode(&key, &text);
        assert!(delta.len() < 130, "{} bytes: {}", delta.len(), String::from_utf8_lossy(&delta));
        assert_eq!(apply(&key, &delta).as_deref(), Some(text.as_str()));
    }

    #[test]
    fn texts_with_nothing_in_common_and_without_a_final_newline() {
        for (key, text) in [("", ""), ("", "a"), ("a\nb", "b\na"), ("a\n", "a"), ("x\r\ny\n", "y\n\nx\r\n")] {
            assert_eq!(apply(key, &encode(key, text)).as_deref(), Some(text), "{key:?} → {text:?}");
        }
    }

    #[test]
    fn a_delta_that_does_not_fit_its_key_is_refused() {
        let key = "- [#1] a\n- [#2] b\n- [#3] c\n";
        let delta = encode(key, "- [#3] c\n- [#2] b\n");
        assert_eq!(apply(key, &delta).as_deref(), Some("- [#3] c\n- [#2] b\n"));
        assert_eq!(apply("- [#1] a\n", &delta), None, "made against another key");
        assert_eq!(apply("- [#1] a\n- [#2] b\n- [#4] c\n", &delta), None, "a key of the same length");
        let fits = |ops: &str| [key_line(key).as_bytes(), ops.as_bytes()].concat();
        assert_eq!(apply(key, &fits("c 0 1")), None, "no newline after the header");
        assert_eq!(apply(key, &fits("i 99\nab")), None, "fewer bytes than said");
        assert_eq!(apply(key, &fits("x 1\n")), None);
        assert_eq!(apply(key, &fits("c 18446744073709551615 2\n")), None, "an overflowing range");
        let long: String = (0..100).map(|i| format!("- [#{i}] a line of the key\n")).collect();
        let over_and_over = [key_line(&long).into_bytes(), "c 0 100\n".repeat(100).into_bytes()].concat();
        assert_eq!(apply(&long, &over_and_over), None, "copies the key over and over");
        assert_eq!(apply(key, b"c 0 1\n"), None, "no key line");
    }

    proptest! {
        #[test]
        fn any_text_comes_back_exactly(
            key in proptest::collection::vec("[ab#\\n]{0,3}|- \\[#[0-9]\\] [é x]{0,4}\n", 0..40),
            text in proptest::collection::vec("[ab#\\n]{0,3}|- \\[#[0-9]\\] [é x]{0,4}\n", 0..40),
        ) {
            let (key, text) = (key.concat(), text.concat());
            prop_assert_eq!(apply(&key, &encode(&key, &text)), Some(text));
        }
    }
}
