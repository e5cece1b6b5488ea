//! Using the resident model from a short-lived process: ask the one that
//! runs for this model, else start one (`mnemo daemon`, detached) for the
//! processes after this one and let this one load its own model as before,
//! so no command ever waits for a daemon to come up.
//!
//! `MNEMO_DAEMON=off` (or `0`, `false`, `no`, `disabled`, any case; a value
//! that is neither on nor off too, with a warning) turns both off (the test suite does, except in the tests of the daemon
//! itself); `MNEMO_DAEMON_IDLE_SECONDS` sets how long a started daemon
//! waits, with no client, before it exits (default 600).

use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use mnemo_embed::{Embedder, ModelLocation};

/// How long a daemon with no clients and no requests stays.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(600);

/// Whether this process may use or start a resident model: on unless
/// `MNEMO_DAEMON` says off. A value that is neither on nor off (a typo of
/// `off`, most likely) turns it off with a warning that says so: off only
/// costs speed.
pub fn enabled() -> bool {
    let Ok(value) = std::env::var("MNEMO_DAEMON") else { return true };
    match value.trim().to_ascii_lowercase().as_str() {
        "" | "on" | "1" | "true" | "yes" | "enabled" => true,
        "off" | "0" | "false" | "no" | "disabled" => false,
        _ => {
            eprintln!(
                "warning: MNEMO_DAEMON={value:?} is neither on nor off; the resident model is off (set MNEMO_DAEMON=on or off)"
            );
            false
        }
    }
}

/// The idle time a daemon is started with: `MNEMO_DAEMON_IDLE_SECONDS`, a
/// whole number of seconds from 1, else (unset or empty) the default; a
/// value that is not one is an error that says so.
pub fn idle() -> Result<Duration, String> {
    let value = std::env::var("MNEMO_DAEMON_IDLE_SECONDS").unwrap_or_default();
    if value.trim().is_empty() {
        return Ok(DEFAULT_IDLE);
    }
    match value.trim().parse::<u64>() {
        Ok(seconds) if seconds >= 1 => Ok(Duration::from_secs(seconds)),
        _ => Err(format!(
            "MNEMO_DAEMON_IDLE_SECONDS={value:?} is not a whole number of seconds from 1; unset it for the default (600)"
        )),
    }
}

/// The resident model for `location`, when one answers; otherwise a
/// daemon is started for the next process (unless one is already running
/// or starting) and `None` is returned.
pub fn connect_or_start(location: &ModelLocation) -> Option<Embedder> {
    // No private runtime directory: no socket to ask or to serve on.
    if !enabled() {
        return None;
    }
    let socket = mnemo_embed::resident::socket_path(location)?;
    if let Some(embedder) = Embedder::connect(location) {
        return Some(embedder);
    }
    // Something else at the socket's path: a daemon could not listen there,
    // so starting one per command would only fail each time.
    if std::fs::symlink_metadata(&socket).is_ok_and(|m| !m.file_type().is_socket()) {
        eprintln!(
            "warning: {} is not a socket, so the resident model cannot run; remove it to make commands faster",
            socket.display()
        );
        return None;
    }
    // Only worth starting when the model is there to load, and when no
    // daemon holds the lock (one starting, or one that does not answer).
    if location.model_dir.join("model.onnx").is_file() && !mnemo_embed::resident::is_running(location) {
        match idle() {
            Ok(_) => start(location),
            Err(problem) => eprintln!("warning: {problem}; the resident model was not started"),
        }
    }
    None
}

/// Start `mnemo daemon` for `location`, detached: its own process group (a
/// Ctrl-C in the terminal does not reach it), no terminal, working directory
/// `/`, and no file descriptor of whoever started this process (an editor's
/// pipe held open by a daemon keeps the editor waiting for a process that
/// ended). A thread reaps it, so a long-lived starter (`mnemo mcp`) keeps no
/// zombie; a short-lived one simply exits first.
fn start(location: &ModelLocation) {
    use std::os::unix::process::CommandExt;
    let Ok(exe) = std::env::current_exe() else { return };
    let mut command = Command::new(exe);
    // SAFETY: between fork and exec only close_range(2), async-signal-safe,
    // closing every descriptor above stderr (stdin/out/err are /dev/null).
    unsafe {
        command.pre_exec(|| {
            libc::close_range(3, libc::c_uint::MAX, 0);
            Ok(())
        });
    }
    let started = command
        .arg("daemon")
        .env("MNEMO_MODEL_DIR", &location.model_dir)
        .env("ORT_DYLIB_PATH", &location.onnxruntime)
        .current_dir(Path::new("/"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    match started {
        Ok(mut child) => {
            tracing::info!(pid = child.id(), "started the resident model for the next commands");
            std::thread::spawn(move || child.wait());
        }
        Err(e) => tracing::debug!(error = %e, "could not start the resident model"),
    }
}
