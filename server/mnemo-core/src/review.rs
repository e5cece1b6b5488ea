//! The review rule: which new notes wait for a person (`[review]` in the
//! workspace config). A proposal is stored like any note (an event, nothing
//! lost) but is not delivered to agents until a person accepts it.

use crate::model::{Actor, Kind, NoteId};

/// `[review] agent = "propose"` (every kind, or only `kinds = [...]`);
/// the default lets notes go live as they are written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReviewPolicy {
    /// Whether notes written by agents wait for review.
    pub agent_proposes: bool,
    /// The kinds that wait; empty: every kind.
    pub kinds: Vec<Kind>,
}

impl ReviewPolicy {
    /// Whether a note of `kind` written by `actor` is a proposal. A person's
    /// own note never is: they are the reviewer.
    pub fn proposes(&self, actor: Actor, kind: Kind) -> bool {
        actor == Actor::Agent && self.agent_proposes && (self.kinds.is_empty() || self.kinds.contains(&kind))
    }
}

/// What a proposal would do to an older note once accepted: until then the
/// older note stands. Kept as the reason of the `proposed` event, so the log
/// alone says it and acceptance applies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProposedLink {
    Supersedes(NoteId),
    Contradicts(NoteId),
}

impl ProposedLink {
    pub fn reason(self) -> String {
        match self {
            ProposedLink::Supersedes(id) => format!("would supersede #{id}"),
            ProposedLink::Contradicts(id) => format!("would contradict #{id}"),
        }
    }

    pub fn from_reason(reason: &str) -> Option<ProposedLink> {
        let id = |rest: &str| rest.strip_prefix('#')?.parse().ok();
        if let Some(rest) = reason.strip_prefix("would supersede ") {
            return id(rest).map(ProposedLink::Supersedes);
        }
        reason.strip_prefix("would contradict ").and_then(id).map(ProposedLink::Contradicts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proposals_link_reads_back_from_its_reason() {
        for link in [ProposedLink::Supersedes(12), ProposedLink::Contradicts(7)] {
            assert_eq!(ProposedLink::from_reason(&link.reason()), Some(link));
        }
        assert_eq!(ProposedLink::from_reason("would supersede 12"), None);
        assert_eq!(ProposedLink::from_reason("anything else"), None);
    }

    #[test]
    fn only_agents_notes_of_the_chosen_kinds_wait_for_review() {
        let off = ReviewPolicy::default();
        assert!(!off.proposes(Actor::Agent, Kind::Gotcha), "the default: live as written");
        let all = ReviewPolicy { agent_proposes: true, kinds: vec![] };
        assert!(all.proposes(Actor::Agent, Kind::Gotcha));
        assert!(!all.proposes(Actor::Human, Kind::Gotcha), "a person is the reviewer");
        assert!(!all.proposes(Actor::System, Kind::Task));
        let directives = ReviewPolicy { agent_proposes: true, kinds: vec![Kind::Directive] };
        assert!(directives.proposes(Actor::Agent, Kind::Directive));
        assert!(!directives.proposes(Actor::Agent, Kind::Finding));
    }
}
