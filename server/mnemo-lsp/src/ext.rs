//! The custom methods (mirrored by the editor clients): `memory/checkout`
//! returns an editable checkout of the workspace as the text of the virtual
//! document `memory:///<workspace>/MEMORY.md`, recorded as a check-in base.

use serde::{Deserialize, Serialize};

#[derive(Debug, Deserialize)]
pub struct CheckoutParams {
    /// A workspace directory; the server's workspace when absent.
    pub workspace: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct CheckoutResult {
    pub text: String,
    pub epoch: i64,
    pub uri: String,
}

/// The virtual document's URI for a workspace path.
pub fn checkout_uri(workspace: &str) -> String {
    format!(
        "memory://{}/MEMORY.md",
        if workspace.starts_with('/') { workspace.to_string() } else { format!("/{workspace}") }
    )
}
