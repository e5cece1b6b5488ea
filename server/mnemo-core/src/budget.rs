//! Delivery budgets. Notes delivered whole (directives at session start,
//! the bundles a workspace configures) still share the budget of the
//! delivery: each body gets a fair share of it, and a body over its share is
//! cut at a line (or character) boundary with a line that says how much was
//! cut and how to read the rest — never silently.

use crate::model::NoteView;

/// The smallest share of a budget one body gets, in characters.
const MIN_SHARE: usize = 200;

/// The line that ends a cut body.
pub fn cut_notice(id: i64, cut_chars: usize) -> String {
    format!("… ({cut_chars} more characters cut for the budget; `mnemo expand {id}` shows the whole note)")
}

/// `body` cut to at most `max` characters, at the last line break that fits
/// when there is one; the kept text and how many characters were cut.
pub fn clip(body: &str, max: usize) -> (&str, usize) {
    let total = body.chars().count();
    if total <= max {
        return (body, 0);
    }
    let end = body.char_indices().nth(max).map_or(body.len(), |(at, _)| at);
    let kept = match body[..end].rfind('\n') {
        Some(line_end) if line_end > 0 => &body[..line_end],
        _ => &body[..end],
    };
    (kept, total - kept.chars().count())
}

/// Cut the bodies of `views` so that together, printed with `indent`
/// characters before each line, they fit `budget_chars` (titles are always
/// kept); returns the ids whose bodies were cut. A cut body ends with
/// [`cut_notice`].
pub fn clip_bodies(views: &mut [NoteView], budget_chars: usize, indent: usize) -> Vec<i64> {
    let share = (budget_chars / views.len().max(1)).max(MIN_SHARE);
    let pad = " ".repeat(indent);
    let mut cut = Vec::new();
    for view in views.iter_mut() {
        let printed: String = view.note.content.body.lines().map(|l| format!("{pad}{l}\n")).collect();
        let (kept, cut_chars) = clip(&printed, share);
        if cut_chars > 0 {
            let kept: Vec<&str> = kept.lines().map(|l| l.strip_prefix(pad.as_str()).unwrap_or(l)).collect();
            let notice = cut_notice(view.note.id, cut_chars);
            view.note.content.body = kept.into_iter().chain([notice.as_str()]).collect::<Vec<_>>().join("\n");
            cut.push(view.note.id);
        }
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_is_cut_at_a_line_that_fits_and_says_so() {
        assert_eq!(clip("short", 10), ("short", 0));
        assert_eq!(clip("one\ntwo\nthree", 9), ("one\ntwo", 6));
        assert_eq!(clip("ééééé", 2), ("éé", 3), "characters, not bytes");
        assert!(cut_notice(7, 12).contains("`mnemo expand 7`"));
    }
}
