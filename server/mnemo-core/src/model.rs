//! The note model: kinds, priorities, provenance classes, actors, anchors and
//! the rules a new note must satisfy before it is stored.
//!
//! The order of the `ALL` arrays is the order used everywhere (docs/format.md).

use crate::time::Timestamp;

/// Store-wide note id; ascending in creation order, never reused.
pub type NoteId = i64;

/// Error for a word that is not one of an enum's accepted spellings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} '{given}'; expected one of: {expected}")]
pub struct ParseEnumError {
    pub what: &'static str,
    pub given: String,
    pub expected: String,
}

macro_rules! word_enum {
    ($(#[$doc:meta])* $name:ident, $what:literal, { $($variant:ident => $word:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $name { $(#[serde(rename = $word)] $variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $word),+ }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = ParseEnumError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($word => Ok($name::$variant),)+
                    _ => Err(ParseEnumError {
                        what: $what,
                        given: s.to_string(),
                        expected: [$($word),+].join(", "),
                    }),
                }
            }
        }
    };
}

pub(crate) use word_enum;

word_enum!(
    /// What a note is about; also its section in MEMORY.md, in this order.
    Kind, "kind", {
    Directive => "directive",
    Task => "task",
    Gotcha => "gotcha",
    Finding => "finding",
    Reference => "reference",
    Decision => "decision",
    Operational => "operational",
});

word_enum!(
    /// How much a note matters.
    Priority, "priority", {
    High => "high",
    Medium => "medium",
    Low => "low",
});

word_enum!(
    /// Who vouches for a note, weakest to strongest.
    Provenance, "provenance", {
    Auto => "auto",
    Agent => "agent",
    UserStated => "user-stated",
    Human => "human",
});

word_enum!(
    /// Who appended an event.
    Actor, "actor", {
    Agent => "agent",
    Human => "human",
    System => "system",
});

impl Provenance {
    /// The next class up for `promote`, or `None` when nothing is above.
    pub fn promotion(self) -> Option<Provenance> {
        match self {
            Provenance::Auto => Some(Provenance::Agent),
            Provenance::Agent | Provenance::UserStated => Some(Provenance::Human),
            Provenance::Human => None,
        }
    }
}

/// A code location a note describes: workspace-relative path, 1-based
/// inclusive line range and the sha256 of those lines when captured.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Anchor {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    /// `None` for anchors imported without their file (nothing to hash).
    pub content_sha256: Option<String>,
}

/// The content of a note as written; immutable once stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewNote {
    pub kind: Kind,
    pub priority: Priority,
    pub title: String,
    pub body: String,
    pub provenance: Provenance,
    pub quote: Option<String>,
    pub anchors: Vec<Anchor>,
}

/// A stored note: its content plus identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub id: NoteId,
    pub workspace: String,
    pub content: NewNote,
    pub created_at: Timestamp,
}

/// A note with its current state: what every reader and renderer works on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteView {
    pub note: Note,
    pub state: crate::lifecycle::NoteState,
}

/// A rule a write breaks; reported to the user, never a panic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("the title is empty; give the note a one-line title")]
    EmptyTitle,
    #[error("a directive can never have provenance 'auto'; record it as 'agent' or state it yourself")]
    AutoDirective,
    #[error("provenance 'human' is reached only by a person (pass --as-human when you are one)")]
    HumanNeedsPerson,
    #[error("only a person accepts a proposal: it is their review of what an agent wrote")]
    AcceptNeedsPerson,
    #[error(
        "provenance 'user-stated' cannot be requested; it is derived when the note's text occurs in the user's message"
    )]
    UserStatedRequested,
    #[error("a {0} needs a reason; say why")]
    MissingReason(&'static str),
    #[error(
        "the {field} holds what looks like a secret ({rule}) on its line {line}; secrets do not belong in a memory agents read back and export: remove it and say where it lives instead (a person who must keep it passes --allow-secret)"
    )]
    Secret { field: &'static str, rule: String, line: usize },
    #[error("the {field} is {got} {unit} long, over the limit of {limit}; {advice}")]
    TooLong { field: &'static str, got: usize, limit: usize, unit: &'static str, advice: &'static str },
}

/// The longest title, in characters: a title is one line an index can show.
pub const MAX_TITLE_CHARS: usize = 500;
/// The longest body, in bytes: a note, not a document.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// The most anchors one note may carry.
pub const MAX_ANCHORS: usize = 50;
/// The longest reason of an event, in characters.
pub const MAX_REASON_CHARS: usize = 1000;

/// Control characters (C0 but line feed and tab, DEL, C1) replaced by their
/// visible Unicode pictures (`ESC` → `␛`) or U+FFFD: no note's text can
/// drive the terminal it is printed in, nor hide itself from a person.
pub fn neutralize_controls(text: &str) -> String {
    if !text.chars().any(is_hostile_control) {
        return text.to_string();
    }
    text.chars()
        .map(|c| match c {
            c if !is_hostile_control(c) => c,
            '\u{7f}' => '\u{2421}',
            c if (c as u32) < 0x20 => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
            _ => '\u{fffd}',
        })
        .collect()
}

fn is_hostile_control(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// Collapse every run of whitespace (line breaks included) to one space, trim,
/// and drop ` · ` separators at the start, so a title is always one line that
/// renders without escaping (docs/format.md, "An entry"). A title that would read
/// back as a state marker (`REVOKED (x) · rest`) has that separator turned
/// into ` - `.
pub fn normalize_title(title: &str) -> String {
    let mut title = neutralize_controls(&title.split_whitespace().collect::<Vec<_>>().join(" "));
    loop {
        let trimmed = title.trim_start_matches('·').trim_start();
        if trimmed.len() == title.len() {
            break;
        }
        title = trimmed.to_string();
    }
    while crate::memory_md::split_marker(&title).is_some() {
        title = title.replacen(" · ", " - ", 1);
    }
    title
}

/// Normalise body text: LF line endings, no trailing whitespace per line, no
/// leading or trailing blank lines. Lines that look like the file's structure
/// are escaped when rendered (`memory_md::render`), not here.
pub fn normalize_body(body: &str) -> String {
    let body = neutralize_controls(&body.replace("\r\n", "\n"));
    let lines: Vec<&str> = body.lines().map(|l| l.trim_end()).collect();
    let first = lines.iter().position(|l| !l.is_empty());
    let last = lines.iter().rposition(|l| !l.is_empty());
    match (first, last) {
        (Some(a), Some(b)) => lines[a..=b].join("\n"),
        _ => String::new(),
    }
}

/// A reason is one line: whitespace collapsed, and no ` · ` (which separates
/// fields in MEMORY.md).
pub fn normalize_reason(reason: &str) -> String {
    neutralize_controls(&reason.split_whitespace().collect::<Vec<_>>().join(" ").replace(" · ", " - "))
}

impl NewNote {
    /// The first secret in the title or the body (gitleaks' rules,
    /// `secrets.rs`), as the error that refuses the note.
    pub fn secret_check(&self) -> Result<(), RuleError> {
        for (field, text) in [("title", &self.title), ("body", &self.body)] {
            if let Some(found) = crate::secrets::find_secrets(text).into_iter().next() {
                return Err(RuleError::Secret { field, rule: found.rule, line: found.line });
            }
        }
        Ok(())
    }

    /// Check the creation rules and return the note with its text normalised.
    /// `actor` is who is writing: only a human actor may create a `human` note.
    pub fn validated(mut self, actor: Actor) -> Result<NewNote, RuleError> {
        self.title = normalize_title(&self.title);
        self.body = normalize_body(&self.body);
        self.quote = self.quote.map(|q| neutralize_controls(&q));
        if self.title.is_empty() {
            return Err(RuleError::EmptyTitle);
        }
        let title_chars = self.title.chars().count();
        if title_chars > MAX_TITLE_CHARS {
            return Err(RuleError::TooLong {
                field: "title",
                got: title_chars,
                limit: MAX_TITLE_CHARS,
                unit: "characters",
                advice: "keep the title to one line and put the rest in the body",
            });
        }
        if self.body.len() > MAX_BODY_BYTES {
            return Err(RuleError::TooLong {
                field: "body",
                got: self.body.len(),
                limit: MAX_BODY_BYTES,
                unit: "bytes",
                advice: "a note is a finding, not a document: summarise it and anchor or name the file that holds the rest",
            });
        }
        if self.anchors.len() > MAX_ANCHORS {
            return Err(RuleError::TooLong {
                field: "anchor list",
                got: self.anchors.len(),
                limit: MAX_ANCHORS,
                unit: "anchors",
                advice: "anchor the few places the note is about",
            });
        }
        if self.kind == Kind::Directive && self.provenance == Provenance::Auto {
            return Err(RuleError::AutoDirective);
        }
        if self.provenance == Provenance::Human && actor != Actor::Human {
            return Err(RuleError::HumanNeedsPerson);
        }
        if self.provenance == Provenance::UserStated && self.quote.is_none() {
            return Err(RuleError::UserStatedRequested);
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(kind: Kind, provenance: Provenance) -> NewNote {
        NewNote {
            kind,
            priority: Priority::Medium,
            title: "  ·  Keep\n the  lock ".into(),
            body: "\n\nline one   \n\nline two\n\n".into(),
            provenance,
            quote: None,
            anchors: vec![],
        }
    }

    #[test]
    fn words_round_trip_and_unknown_words_list_the_choices() {
        for kind in Kind::ALL {
            assert_eq!(kind.as_str().parse::<Kind>(), Ok(*kind));
        }
        let err = "gotchas".parse::<Kind>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown kind 'gotchas'; expected one of: directive, task, gotcha, finding, reference, decision, operational"
        );
    }

    #[test]
    fn validation_normalises_title_and_body() {
        let n = note(Kind::Gotcha, Provenance::Agent).validated(Actor::Agent).unwrap();
        assert_eq!(n.title, "Keep the lock");
        assert_eq!(n.body, "line one\n\nline two");
    }

    #[test]
    fn creation_rules() {
        assert_eq!(note(Kind::Directive, Provenance::Auto).validated(Actor::Agent), Err(RuleError::AutoDirective));
        assert_eq!(note(Kind::Task, Provenance::Human).validated(Actor::Agent), Err(RuleError::HumanNeedsPerson));
        assert!(note(Kind::Task, Provenance::Human).validated(Actor::Human).is_ok());
        assert_eq!(
            note(Kind::Task, Provenance::UserStated).validated(Actor::Agent),
            Err(RuleError::UserStatedRequested)
        );
        let mut empty = note(Kind::Task, Provenance::Agent);
        empty.title = " \n · ".into();
        assert_eq!(empty.validated(Actor::Agent), Err(RuleError::EmptyTitle));
    }

    #[test]
    fn promotion_is_one_step_up() {
        assert_eq!(Provenance::Auto.promotion(), Some(Provenance::Agent));
        assert_eq!(Provenance::Agent.promotion(), Some(Provenance::Human));
        assert_eq!(Provenance::UserStated.promotion(), Some(Provenance::Human));
        assert_eq!(Provenance::Human.promotion(), None);
    }
}
