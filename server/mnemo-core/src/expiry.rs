//! Time-to-live per kind: which notes are due to expire at a given time.
//! The workspace config supplies the policy; the store appends the `expired`
//! events (actor system) when it is opened for writing.

use std::collections::BTreeMap;

use crate::lifecycle::{NoteState, Status};
use crate::model::Kind;
use crate::time::Timestamp;

/// Days a note of each kind stays live; kinds absent never expire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpiryPolicy {
    days: BTreeMap<Kind, u32>,
}

/// Tasks live 30 days by default; every other kind lives until changed.
pub const DEFAULT_TASK_DAYS: u32 = 30;

impl Default for ExpiryPolicy {
    fn default() -> Self {
        ExpiryPolicy { days: BTreeMap::from([(Kind::Task, DEFAULT_TASK_DAYS)]) }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("directives never expire; remove `{0}` from [expiry] in .mnemo/config.toml")]
pub struct DirectiveExpiry(pub &'static str);

impl ExpiryPolicy {
    /// Override the defaults; `0` days means never. Directives cannot expire.
    pub fn with_days(mut self, kind: Kind, days: u32) -> Result<Self, DirectiveExpiry> {
        if kind == Kind::Directive {
            return Err(DirectiveExpiry("directive"));
        }
        if days == 0 {
            self.days.remove(&kind);
        } else {
            self.days.insert(kind, days);
        }
        Ok(self)
    }

    pub fn days(&self, kind: Kind) -> Option<u32> {
        self.days.get(&kind).copied()
    }

    /// Whether a note of `kind` in `state` is due to expire at `now`.
    pub fn is_due(&self, kind: Kind, state: &NoteState, now: Timestamp) -> bool {
        let live = matches!(state.status, Status::Active | Status::StaleFlagged);
        match self.days(kind) {
            Some(days) if live => state.live_since.0 + i64::from(days) * 86_400 <= now.0,
            _ => false,
        }
    }

    /// The reason recorded on the `expired` event.
    pub fn reason(&self, kind: Kind) -> String {
        let days = self.days(kind).unwrap_or_default();
        format!("{kind} notes expire {days} days after they are created or reinstated")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifecycle::created;
    use crate::model::Provenance;

    #[test]
    fn tasks_expire_after_thirty_days_and_directives_never() {
        let policy = ExpiryPolicy::default();
        let state = created(Provenance::Agent, Timestamp(0));
        let day = 86_400;
        assert!(!policy.is_due(Kind::Task, &state, Timestamp(30 * day - 1)));
        assert!(policy.is_due(Kind::Task, &state, Timestamp(30 * day)));
        assert!(!policy.is_due(Kind::Directive, &state, Timestamp(10_000 * day)));
        assert!(!policy.is_due(Kind::Gotcha, &state, Timestamp(10_000 * day)));
    }

    #[test]
    fn only_live_notes_expire_and_reinstating_restarts_the_clock() {
        let policy = ExpiryPolicy::default();
        let mut state = created(Provenance::Agent, Timestamp(0));
        state.status = Status::Revoked;
        assert!(!policy.is_due(Kind::Task, &state, Timestamp(100 * 86_400)));
        state.status = Status::Active;
        state.live_since = Timestamp(90 * 86_400);
        assert!(!policy.is_due(Kind::Task, &state, Timestamp(100 * 86_400)));
    }

    #[test]
    fn config_overrides() {
        let policy = ExpiryPolicy::default().with_days(Kind::Task, 0).unwrap().with_days(Kind::Finding, 7).unwrap();
        assert_eq!(policy.days(Kind::Task), None);
        assert_eq!(policy.days(Kind::Finding), Some(7));
        assert_eq!(ExpiryPolicy::default().with_days(Kind::Directive, 3), Err(DirectiveExpiry("directive")));
    }
}
