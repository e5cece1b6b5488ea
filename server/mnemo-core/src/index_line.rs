//! The index tier: one line a note, the compact form `list` and recall print:
//! `[#412] gotcha/high · agent · [STALE] Workspace lock released · 3d`.
//! The state marker leads the title so a scan of the column shows it.

use crate::lifecycle::{NoteState, Status};
use crate::model::{Note, NoteView};
use crate::recall::trust_frame;
use crate::time::Timestamp;

/// The marker for a non-active state, e.g. `[SUPERSEDED by #415]`.
pub fn state_marker(status: Status) -> Option<String> {
    match status {
        Status::Active => None,
        Status::StaleFlagged => Some("[STALE]".into()),
        Status::Revoked => Some("[REVOKED]".into()),
        Status::Expired => Some("[EXPIRED]".into()),
        Status::Proposed => Some("[PROPOSED]".into()),
        Status::Superseded { by } => Some(format!("[SUPERSEDED by #{by}]")),
    }
}

/// One index-tier line; the age is measured from `now`.
pub fn index_line(note: &Note, state: &NoteState, now: Timestamp) -> String {
    let c = &note.content;
    let marker = state_marker(state.status).map(|m| m + " ").unwrap_or_default();
    format!(
        "[#{}] {}/{} · {} · {marker}{} · {}",
        note.id,
        c.kind,
        c.priority,
        state.provenance,
        c.title,
        note.created_at.age(now)
    )
}

/// The index line an agent reads: the note's [`index_line`] followed by its
/// trust frame, `[#412] gotcha/high · agent · … · 3d (recorded by an agent
/// session; verify before relying on it)`. Hooks, recall and MCP print this.
pub fn framed_index_line(view: &NoteView, now: Timestamp) -> String {
    let frame = trust_frame(view.state.provenance, view.note.content.quote.as_deref());
    format!("{} ({frame})", index_line(&view.note, &view.state, now))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifecycle::created;
    use crate::model::{Kind, NewNote, Priority, Provenance};

    #[test]
    fn lines_for_each_state() {
        let note = Note {
            id: 412,
            workspace: "/w".into(),
            content: NewNote {
                kind: Kind::Gotcha,
                priority: Priority::High,
                title: "Workspace lock released before daemon restart".into(),
                body: String::new(),
                provenance: Provenance::Agent,
                quote: None,
                anchors: vec![],
            },
            created_at: Timestamp(0),
        };
        let now = Timestamp(3 * 86_400 + 5);
        let mut state = created(Provenance::Agent, Timestamp(0));
        let mut lines = vec![index_line(&note, &state, now)];
        for status in [Status::StaleFlagged, Status::Revoked, Status::Expired, Status::Superseded { by: 415 }] {
            state.status = status;
            lines.push(index_line(&note, &state, now));
        }
        expect_test::expect![[r#"
            [#412] gotcha/high · agent · Workspace lock released before daemon restart · 3d
            [#412] gotcha/high · agent · [STALE] Workspace lock released before daemon restart · 3d
            [#412] gotcha/high · agent · [REVOKED] Workspace lock released before daemon restart · 3d
            [#412] gotcha/high · agent · [EXPIRED] Workspace lock released before daemon restart · 3d
            [#412] gotcha/high · agent · [SUPERSEDED by #415] Workspace lock released before daemon restart · 3d"#]]
        .assert_eq(&lines.join("\n"));
    }

    #[test]
    fn an_agents_line_carries_the_trust_frame_with_the_users_quote() {
        let mut note = Note {
            id: 7,
            workspace: "/w".into(),
            content: NewNote {
                kind: Kind::Directive,
                priority: Priority::Medium,
                title: "Never force-push to main".into(),
                body: String::new(),
                provenance: Provenance::UserStated,
                quote: Some("never force-push to main".into()),
                anchors: vec![],
            },
            created_at: Timestamp(0),
        };
        let state = created(Provenance::UserStated, Timestamp(0));
        let quoted = framed_index_line(&NoteView { note: note.clone(), state: state.clone() }, Timestamp(60));
        note.content.quote = None;
        let agent =
            framed_index_line(&NoteView { note, state: created(Provenance::Agent, Timestamp(0)) }, Timestamp(60));
        expect_test::expect![[r#"
            [#7] directive/medium · user-stated · Never force-push to main · 1min (the user said: «never force-push to main»)
            [#7] directive/medium · agent · Never force-push to main · 1min (recorded by an agent session; verify before relying on it)"#]]
        .assert_eq(&[quoted, agent].join("\n"));
    }
}
