//! Provenance from evidence: a note is `user-stated` only when its title or a
//! sentence of its body occurs verbatim in the user's message (ignoring case
//! and runs of whitespace). The bound quote is that span of the message as the
//! user typed it. Nothing else can make a note `user-stated`.

/// Fragments shorter than this many words are too common to count as evidence.
pub const MIN_WORDS: usize = 3;

/// The span of `user_message` that states the note's title or one of its body
/// sentences, as the user typed it; `None` when the message does not state it.
pub fn find_user_quote(title: &str, body: &str, user_message: &str) -> Option<String> {
    let (message, offsets) = normalize_with_offsets(user_message);
    std::iter::once(title)
        .chain(sentences(body))
        .filter(|fragment| fragment.split_whitespace().count() >= MIN_WORDS)
        .find_map(|fragment| {
            let (needle, _) = normalize_with_offsets(fragment);
            // Whole words only: "use the lock" is not stated by "refuse the lockfile".
            let at_boundary = |start: usize, end: usize| {
                !message[..start].chars().next_back().is_some_and(char::is_alphanumeric)
                    && !message[end..].chars().next().is_some_and(char::is_alphanumeric)
            };
            let start = message.match_indices(&needle).map(|(i, _)| i).find(|&i| at_boundary(i, i + needle.len()))?;
            let end = start + needle.len();
            let (from, to) = (offsets[start], offsets[end - 1]);
            let last_char_len = user_message[to..].chars().next().map_or(0, char::len_utf8);
            Some(user_message[from..to + last_char_len].to_string())
        })
}

/// Lowercase and collapse whitespace; `offsets[i]` is the byte offset in `text`
/// of the character that produced byte `i` of the result.
fn normalize_with_offsets(text: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(text.len());
    let mut offsets = Vec::with_capacity(text.len());
    let mut pending_space: Option<usize> = None;
    for (at, ch) in text.trim().char_indices() {
        let at = at + (text.len() - text.trim_start().len());
        if ch.is_whitespace() {
            pending_space.get_or_insert(at);
            continue;
        }
        if let Some(space_at) = pending_space.take() {
            out.push(' ');
            offsets.push(space_at);
        }
        for lower in ch.to_lowercase() {
            let before = out.len();
            out.push(lower);
            offsets.extend(std::iter::repeat_n(at, out.len() - before));
        }
    }
    (out, offsets)
}

/// Sentences of a body: split at line breaks and after `.`, `!`, `?` followed
/// by whitespace. Trailing sentence punctuation is dropped so a user who
/// omits the final full stop still matches.
fn sentences(body: &str) -> impl Iterator<Item = &str> {
    body.lines().flat_map(|line| {
        let mut parts = Vec::new();
        let mut start = 0;
        let bytes = line.as_bytes();
        for (i, b) in bytes.iter().enumerate() {
            let ends =
                matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1).is_none_or(|next| next.is_ascii_whitespace());
            if ends {
                parts.push(&line[start..i]);
                start = i + 1;
            }
        }
        parts.push(&line[start..]);
        parts.into_iter().map(str::trim).filter(|s| !s.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_found_ignoring_case_and_whitespace_binds_the_users_words() {
        let quote = find_user_quote(
            "Always run tests inside the venv",
            "",
            "Please note:   always run\n tests inside the VENV, okay?",
        );
        assert_eq!(quote.as_deref(), Some("always run\n tests inside the VENV"));
    }

    #[test]
    fn a_body_sentence_is_evidence_too() {
        let quote = find_user_quote(
            "Venv rule",
            "The global python lacks the pinned deps. Use make test.",
            "fyi the global Python lacks the pinned deps",
        );
        assert_eq!(quote.as_deref(), Some("the global Python lacks the pinned deps"));
    }

    #[test]
    fn no_evidence_no_quote() {
        assert_eq!(find_user_quote("Run tests in the venv", "", "run tests somewhere"), None);
        assert_eq!(find_user_quote("Run tests in the venv", "", ""), None);
    }

    #[test]
    fn only_whole_words_are_evidence() {
        assert_eq!(find_user_quote("use the lock file", "", "please refuse the lock files"), None);
        assert_eq!(
            find_user_quote("use the lock file", "", "refuse the lock files, then use the lock file.").as_deref(),
            Some("use the lock file")
        );
    }

    #[test]
    fn short_fragments_are_not_evidence() {
        assert_eq!(find_user_quote("Use nextest", "Yes.", "use nextest. yes."), None);
    }

    #[test]
    fn unicode_case_folding_keeps_offsets_valid() {
        let quote = find_user_quote("Größe der Datei prüfen", "", "bitte GRÖSSE? nein: größe der  Datei prüfen!");
        assert_eq!(quote.as_deref(), Some("größe der  Datei prüfen"));
    }
}
