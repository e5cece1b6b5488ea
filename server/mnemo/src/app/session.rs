//! What each agent session has been told, and what its user said last, kept
//! between hook runs in `<store dir>/sessions/<session id>.json`: the hooks
//! deduplicate what they deliver against it (a note listed by its title is
//! not a note delivered in full), and a later write binds the quote of its
//! own session's user message. Files of sessions idle for longer than
//! [`SESSION_RETENTION`] are removed by the next hook run.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use mnemo_core::delivery::Told;
use serde::{Deserialize, Serialize};

use crate::context::Context;

/// How long a session's file outlives its last hook run.
pub const SESSION_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

/// What a session has been told, what the user said last, and where its
/// hooks ran from (the workspace; the hook's parent processes, which include
/// the harness), so a later write binds quotes of its own session.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct SessionState {
    pub user_message: Option<String>,
    /// What the hooks listed and delivered in full. (Not flattened: serde
    /// cannot read a flattened map with integer keys back.)
    #[serde(default)]
    pub told: Told,
    #[serde(default)]
    pub workspace: Option<String>,
    #[serde(default)]
    pub ancestors: Vec<u32>,
}

/// Where sessions are kept; none for a shared store on a machine with
/// neither XDG_DATA_HOME nor HOME (never the working directory: the
/// files hold the user's prompts, and it is usually a repository).
fn sessions_dir(ctx: &Context) -> Option<PathBuf> {
    Some(mnemo_store::paths::store_files_dir(&ctx.store_path)?.join("sessions"))
}

/// The file of `session` (an id from the harness, reduced to a safe file
/// name); `None` when there is no place for sessions (the hook then
/// deduplicates nothing).
pub fn session_file(ctx: &Context, session: &str) -> Option<PathBuf> {
    let safe: String =
        session.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').take(80).collect();
    Some(sessions_dir(ctx)?.join(format!("{}.json", if safe.is_empty() { "default" } else { &safe })))
}

/// The session's state; a new one when the file is missing or unreadable.
pub fn load(path: &Path) -> SessionState {
    std::fs::read_to_string(path).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default()
}

/// Save the state (atomically: a concurrent reader sees the old or the new
/// one), then remove the files of sessions idle past the retention.
/// Best effort: a session file that cannot be written costs deduplication,
/// never the hook's output.
pub fn save(path: &Path, state: &SessionState) {
    let Some(dir) = path.parent() else { return };
    // The user's prompts are in here: a private directory, private files.
    let _ = mnemo_store::paths::ensure_private_dir(dir);
    let text = serde_json::to_string(state).unwrap_or_default();
    // Always rewritten, even unchanged: the file's time is the session's last activity.
    let temp = path.with_extension(format!("json.{}.tmp", std::process::id()));
    let write_private = |file: &Path| {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(file)?
            .write_all(text.as_bytes())
    };
    if write_private(&temp).and_then(|()| std::fs::rename(&temp, path)).is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    prune(dir, SystemTime::now(), SESSION_RETENTION);
}

/// Remove the session files (`*.json`, and `*.tmp` left by a hook killed
/// while saving) in `dir` last modified before `now - retention`.
fn prune(dir: &Path, now: SystemTime, retention: Duration) {
    let Some(cutoff) = now.checked_sub(retention) else { return };
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let idle = entry.metadata().and_then(|m| m.modified()).is_ok_and(|modified| modified < cutoff);
        if idle && path.extension().is_some_and(|e| e == "json" || e == "tmp") {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The user's current message in the writer's own session, for quote
/// binding: among this workspace's sessions, the one whose hooks share the
/// nearest parent process with this process (the harness that runs both),
/// the most recently active one on a tie or where processes tell nothing.
pub fn latest_user_message(ctx: &Context) -> Option<String> {
    let writer = crate::process_tree::ancestors();
    let entries = std::fs::read_dir(sessions_dir(ctx)?).ok()?;
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, load(&e.path()))))
        .filter(|(_, state)| state.workspace.as_deref().is_none_or(|w| w == ctx.workspace.id))
        .filter(|(_, state)| state.user_message.is_some())
        .min_by_key(|(modified, state)| {
            let nearness = crate::process_tree::nearness(&writer, &state.ancestors).unwrap_or(usize::MAX);
            (nearness, std::cmp::Reverse(*modified))
        })
        .and_then(|(_, state)| state.user_message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_session_was_told_survives_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        let mut state = SessionState::default();
        state.told.listed = vec![3];
        state.told.delivered.insert(4, "active".into());
        save(&path, &state);
        let back = load(&path);
        assert_eq!(back.told, state.told);
    }

    #[test]
    fn prune_removes_only_session_files_idle_past_the_retention() {
        let dir = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        let day = Duration::from_secs(24 * 3600);
        let touch = |name: &str, age: Duration| {
            let path = dir.path().join(name);
            std::fs::write(&path, "{}").unwrap();
            std::fs::File::options().write(true).open(&path).unwrap().set_modified(now - age).unwrap();
        };
        touch("idle.json", 8 * day);
        touch("idle.json.4242.tmp", 8 * day);
        touch("recent.json.4243.tmp", 1 * day);
        touch("recent.json", 6 * day);
        touch("idle-but-not-a-session.txt", 30 * day);
        prune(dir.path(), now, 7 * day);
        let mut left: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        left.sort();
        assert_eq!(left, ["idle-but-not-a-session.txt", "recent.json", "recent.json.4243.tmp"]);
    }
}
