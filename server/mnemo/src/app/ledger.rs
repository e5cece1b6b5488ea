//! Recording deliveries to agents in the store's ledger
//! (`mnemo_store::ledger`), as every entry point that delivers notes does:
//! the hooks, `context`, the MCP tools. A failure to record never costs the
//! agent its delivery: it is logged and said on stderr.

use mnemo_core::NoteId;
use mnemo_core::delivery::Told;
use mnemo_store::Store;
use mnemo_store::ledger::{Delivery, Shown};

use crate::context::Context;

/// Record that `notes` went to `session` at `moment`, `bytes` long.
pub fn record(
    ctx: &Context,
    store: &mut Store,
    session: &str,
    moment: &str,
    notes: Vec<(NoteId, Shown)>,
    bytes: usize,
) {
    // The harness's session id is its text: printed later, so no control
    // character reaches a terminal, and a runaway one is cut.
    let session: String = mnemo_core::model::neutralize_controls(session).chars().take(200).collect();
    let delivery = Delivery {
        workspace: ctx.workspace.id.clone(),
        session,
        moment: moment.to_string(),
        at: ctx.now,
        notes,
        bytes,
    };
    if let Err(e) = store.write(|w| w.record_delivery(&delivery)) {
        tracing::error!(error = %e, "the delivery was not recorded in the ledger");
        eprintln!("mnemo: the delivery was not recorded in the ledger: {e}");
    }
}

/// What a session was told between `before` and `after`: the notes
/// delivered in full (new, or a new version), then those newly listed.
pub fn told_since(before: &Told, after: &Told) -> Vec<(NoteId, Shown)> {
    let mut notes: Vec<(NoteId, Shown)> = after
        .delivered
        .iter()
        .filter(|(id, status)| before.delivered.get(id) != Some(status))
        .map(|(id, _)| (*id, Shown::Full))
        .collect();
    notes.extend(after.listed.iter().filter(|id| !before.listed.contains(id)).map(|id| (*id, Shown::Listed)));
    notes
}
