//! Trigger bundles: at which harness moments the hooks deliver each kind of
//! note. The defaults form a ladder from "never miss" to "cheap to miss":
//! directives at session start and after compaction, always; gotchas and
//! operational notes before an edit of a file they concern and in prompt
//! recall; findings, decisions, references and tasks in prompt recall only.
//! `.mnemo/config.toml` `[hooks.triggers]` replaces a kind's bundle.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{Kind, ParseEnumError, word_enum};

word_enum!(
    /// A moment at which a hook delivers notes; spelled like the hook.
    Moment, "hook moment", {
    SessionStart => "session-start",
    PostCompaction => "post-compaction",
    PreEdit => "pre-edit",
    UserPrompt => "user-prompt",
});

/// The moments each kind is delivered at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriggerBundles {
    by_kind: BTreeMap<Kind, BTreeSet<Moment>>,
}

impl Default for TriggerBundles {
    fn default() -> Self {
        use Moment::*;
        let bundle = |kind: Kind| -> BTreeSet<Moment> {
            match kind {
                Kind::Directive => [SessionStart, PostCompaction].into(),
                Kind::Gotcha | Kind::Operational => [PreEdit, UserPrompt].into(),
                Kind::Finding | Kind::Decision | Kind::Reference | Kind::Task => [UserPrompt].into(),
            }
        };
        TriggerBundles { by_kind: Kind::ALL.iter().map(|&kind| (kind, bundle(kind))).collect() }
    }
}

/// Why a configured bundle was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TriggerError {
    #[error(transparent)]
    Word(#[from] ParseEnumError),
    #[error(
        "directives are always delivered at session-start and post-compaction (the unconditional tier); keep both in [hooks.triggers] directive"
    )]
    DirectiveNotAlways,
}

impl TriggerBundles {
    /// Replace the bundle of `kind` with `moments` (spelled like the hooks).
    pub fn with_bundle(mut self, kind: Kind, moments: &[String]) -> Result<Self, TriggerError> {
        let moments: BTreeSet<Moment> = moments.iter().map(|m| m.parse()).collect::<Result<_, _>>()?;
        if kind == Kind::Directive
            && !(moments.contains(&Moment::SessionStart) && moments.contains(&Moment::PostCompaction))
        {
            return Err(TriggerError::DirectiveNotAlways);
        }
        self.by_kind.insert(kind, moments);
        Ok(self)
    }

    /// Whether notes of `kind` are delivered at `moment`.
    pub fn delivers(&self, kind: Kind, moment: Moment) -> bool {
        self.by_kind.get(&kind).is_some_and(|m| m.contains(&moment))
    }

    /// The kinds delivered at `moment`, in the order of `Kind::ALL`.
    pub fn kinds_at(&self, moment: Moment) -> Vec<Kind> {
        Kind::ALL.iter().copied().filter(|&kind| self.delivers(kind, moment)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_ladder() {
        let bundles = TriggerBundles::default();
        assert_eq!(bundles.kinds_at(Moment::SessionStart), [Kind::Directive]);
        assert_eq!(bundles.kinds_at(Moment::PostCompaction), [Kind::Directive]);
        assert_eq!(bundles.kinds_at(Moment::PreEdit), [Kind::Gotcha, Kind::Operational]);
        assert_eq!(
            bundles.kinds_at(Moment::UserPrompt),
            [Kind::Task, Kind::Gotcha, Kind::Finding, Kind::Reference, Kind::Decision, Kind::Operational]
        );
    }

    #[test]
    fn a_bundle_is_replaced_and_checked() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let bundles =
            TriggerBundles::default().with_bundle(Kind::Decision, &words(&["pre-edit", "user-prompt"])).unwrap();
        assert!(bundles.delivers(Kind::Decision, Moment::PreEdit));
        let bundles = bundles.with_bundle(Kind::Task, &[]).unwrap();
        assert!(bundles.kinds_at(Moment::UserPrompt).iter().all(|k| *k != Kind::Task), "an empty bundle: never");
        let err = TriggerBundles::default().with_bundle(Kind::Gotcha, &words(&["pre_edit"])).unwrap_err();
        assert!(err.to_string().contains("unknown hook moment 'pre_edit'; expected one of: session-start"), "{err}");
        let err = TriggerBundles::default().with_bundle(Kind::Directive, &words(&["session-start"])).unwrap_err();
        assert_eq!(err, TriggerError::DirectiveNotAlways);
    }
}
