//! The trust frame: how a recalled note is introduced, by provenance.

use crate::model::Provenance;

/// The sentence that introduces a note of this provenance.
pub fn trust_frame(provenance: Provenance, quote: Option<&str>) -> String {
    match (provenance, quote) {
        (Provenance::Auto, _) => "captured automatically, unreviewed".into(),
        (Provenance::Agent, _) => "recorded by an agent session; verify before relying on it".into(),
        (Provenance::UserStated, Some(quote)) => format!("the user said: «{quote}»"),
        (Provenance::UserStated, None) => "stated by the user".into(),
        (Provenance::Human, _) => "endorsed by a person".into(),
    }
}
