//! The resident model: one process per user and model keeps the model
//! loaded and embeds for short-lived processes (a CLI recall, a hook before
//! every prompt) over a Unix socket, so they skip the time it takes to load
//! ONNX Runtime and the model. Without it everything works the same, only
//! slower: a process that finds no resident model loads its own, and one
//! whose resident model stops answering loads its own and carries on.
//!
//! The socket lives in the user's runtime directory (`$XDG_RUNTIME_DIR/mnemo`,
//! else `/tmp/mnemo-UID`), a directory only its owner may enter (0700,
//! checked), and is itself mode 0600. Its name is derived from the model
//! directory and the ONNX Runtime library, so two models never share one.
//! One daemon per socket: it holds an advisory lock on `<socket>.lock` for
//! its whole life, taken before it loads anything, so a burst of commands
//! that each start one ends with one model loaded, not one each.
//!
//! The protocol is one JSON object per line each way. Texts arrive with the
//! declared prefixes already applied by the client (`Embedder`), and
//! vectors go back as JSON numbers, which round-trip `f32` exactly: a
//! vector made here is bit for bit the one the client would have made.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::{EmbedError, EmbeddedPassage, Embedder, ModelLocation, TokenVectors};

/// How long a client waits for the hello: answered without embedding
/// anything (a daemon listens only once its model is loaded), so a daemon
/// that does not answer in this time is stopped or stuck.
const HELLO_TIMEOUT: Duration = Duration::from_secs(1);

/// How long a client waits for an embedding: this, plus [`PER_TEXT`] a text.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);
const PER_TEXT: Duration = Duration::from_millis(500);

/// The longest answer line a client reads (32 texts with token signs are
/// well under 1 MB).
const MAX_ANSWER_BYTES: u64 = 64 << 20;

/// Texts per request: the texts a local run hands the runtime at once
/// (`BATCH_SIZE * 4`), so the batches are the same, and few enough that one
/// client's import lets another's query in between its requests.
pub(crate) const TEXTS_PER_REQUEST: usize = crate::BATCH_SIZE * 4;

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Request {
    Hello,
    /// Embed texts as given (prefixes applied), with token signs when asked.
    Embed {
        texts: Vec<String>,
        token_signs: bool,
    },
    /// The token vectors of one text as given.
    Tokens {
        text: String,
    },
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Answer {
    Hello { identity: String, dims: usize, model_dir: PathBuf },
    Embedded { passages: Vec<(Vec<f32>, Vec<u8>)> },
    Tokens { vectors: TokenVectors },
    Failed { reason: String },
}

/// The directory resident models' sockets live in, made (0700) if needed;
/// `None` when it cannot be made or is not safe (not ours, or open to others).
pub fn runtime_dir() -> Option<PathBuf> {
    let uid = current_uid();
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(base) => PathBuf::from(base).join("mnemo"),
        None => std::env::temp_dir().join(format!("mnemo-{uid}")),
    };
    let _ = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir);
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    let private = meta.is_dir() && meta.uid() == uid && meta.permissions().mode() & 0o077 == 0;
    if !private {
        tracing::warn!(dir = %dir.display(), "the runtime directory is not private to this user (0700, owned by us); no resident model");
        return None;
    }
    Some(dir)
}

/// This process's user id, read from `/proc/self`.
fn current_uid() -> u32 {
    std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(u32::MAX)
}

/// The socket of the resident model for `location`.
pub fn socket_path(location: &ModelLocation) -> Option<PathBuf> {
    use std::hash::{Hash, Hasher};
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    canonical(&location.model_dir).hash(&mut hasher);
    canonical(&location.onnxruntime).hash(&mut hasher);
    Some(runtime_dir()?.join(format!("model-{:016x}.sock", hasher.finish())))
}

/// The lock a daemon holds for its whole life, beside its socket.
fn lock_path(socket: &Path) -> PathBuf {
    let mut name = socket.as_os_str().to_os_string();
    name.push(".lock");
    PathBuf::from(name)
}

/// Take the daemon lock of `socket` without waiting: `None` when another
/// daemon holds it (serving, or loading its model).
fn take_lock(socket: &Path) -> Option<File> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(lock_path(socket))
        .ok()?;
    match file.try_lock() {
        Ok(()) => Some(file),
        Err(TryLockError::WouldBlock) | Err(TryLockError::Error(_)) => None,
    }
}

/// Whether a daemon for `location` holds its lock (serving, or starting).
pub fn is_running(location: &ModelLocation) -> bool {
    socket_path(location).is_some_and(|socket| take_lock(&socket).is_none())
}

/// A connection to a resident model.
#[derive(Debug)]
pub(crate) struct Connection {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    /// Where the model is, to load it here if the daemon stops answering.
    pub(crate) location: ModelLocation,
}

impl Connection {
    fn ask(&mut self, request: &Request, timeout: Duration) -> Result<Answer, EmbedError> {
        let gone = |e: String| EmbedError::Embed(format!("the resident model did not answer ({e})"));
        self.writer.set_write_timeout(Some(timeout)).map_err(|e| gone(e.to_string()))?;
        self.reader.get_ref().set_read_timeout(Some(timeout)).map_err(|e| gone(e.to_string()))?;
        let mut line = serde_json::to_string(request).map_err(|e| gone(e.to_string()))?;
        line.push('\n');
        self.writer.write_all(line.as_bytes()).map_err(|e| gone(e.to_string()))?;
        let mut answer = Vec::new();
        match self.reader.by_ref().take(MAX_ANSWER_BYTES).read_until(b'\n', &mut answer) {
            Ok(0) => return Err(gone("it closed the connection".into())),
            Ok(_) if answer.last() != Some(&b'\n') => return Err(gone("an answer too long or cut short".into())),
            Ok(_) => {}
            Err(e) => return Err(gone(e.to_string())),
        }
        match serde_json::from_slice(&answer).map_err(|e| gone(e.to_string()))? {
            Answer::Failed { reason } => Err(EmbedError::Embed(reason)),
            answer => Ok(answer),
        }
    }

    pub(crate) fn embed(&mut self, texts: &[String], token_signs: bool) -> Result<Vec<EmbeddedPassage>, EmbedError> {
        let request = Request::Embed { texts: texts.to_vec(), token_signs };
        match self.ask(&request, ANSWER_TIMEOUT + PER_TEXT * texts.len() as u32)? {
            Answer::Embedded { passages } if passages.len() == texts.len() => {
                Ok(passages.into_iter().map(|(vector, token_signs)| EmbeddedPassage { vector, token_signs }).collect())
            }
            _ => Err(EmbedError::Embed("the resident model answered something else".into())),
        }
    }

    pub(crate) fn tokens(&mut self, text: &str) -> Result<TokenVectors, EmbedError> {
        match self.ask(&Request::Tokens { text: text.to_string() }, ANSWER_TIMEOUT + PER_TEXT)? {
            Answer::Tokens { vectors } => Ok(vectors),
            _ => Err(EmbedError::Embed("the resident model answered something else".into())),
        }
    }
}

impl Embedder {
    /// The resident model for `location`, when one is running and answers:
    /// an embedder that asks it instead of loading the model. `None` when
    /// there is none, it runs another model, or it does not answer at once.
    pub fn connect(location: &ModelLocation) -> Option<Embedder> {
        let started = Instant::now();
        let path = socket_path(location)?;
        let stream = connect_at_once(&path).ok()?;
        let reader = BufReader::new(stream.try_clone().ok()?);
        let mut connection = Connection { reader, writer: stream, location: location.clone() };
        let (identity, dims, model_dir) = match connection.ask(&Request::Hello, HELLO_TIMEOUT) {
            Ok(Answer::Hello { identity, dims, model_dir }) => (identity, dims, model_dir),
            Ok(_) | Err(_) => {
                tracing::warn!(socket = %path.display(), "the resident model does not answer; loading the model here");
                return None;
            }
        };
        let same_model = std::fs::canonicalize(&model_dir).ok() == std::fs::canonicalize(&location.model_dir).ok();
        let declaration = crate::Declaration::for_directory(&location.model_dir).ok()?;
        if !same_model || dims != declaration.dimensions {
            tracing::debug!(socket = %path.display(), "the resident model runs another model; loading our own");
            return None;
        }
        tracing::info!(
            socket = %path.display(),
            %identity,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "using the resident model"
        );
        Some(Embedder { model: crate::Model::Resident(Box::new(connection)), declaration, identity, dims })
    }

    /// Whether this embedder asks a resident model.
    pub fn is_resident(&self) -> bool {
        matches!(self.model, crate::Model::Resident(_))
    }

    /// The resident model failed (`error`): load the model here and go on
    /// with it, so an answer never quietly loses its vectors. The error
    /// stands when the model cannot be loaded here either.
    pub(crate) fn stand_alone(&mut self, error: EmbedError) -> Result<(), EmbedError> {
        let crate::Model::Resident(connection) = &self.model else { return Err(error) };
        tracing::warn!(%error, "the resident model failed; loading the model here");
        let local = Embedder::load(&connection.location)?;
        if local.identity != self.identity {
            return Err(error);
        }
        *self = local;
        Ok(())
    }
}

/// A connection to the socket at `path`, or an error at once: a daemon that
/// is stopped (SIGSTOP, a debugger) with its queue of pending connections
/// full makes a blocking connect wait forever, which would hang every command
/// that needs the model. A non-blocking connect to a Unix socket either
/// completes or fails (`EAGAIN`) immediately; the stream is then made
/// blocking again, bounded by the timeouts of each request.
fn connect_at_once(path: &Path) -> std::io::Result<UnixStream> {
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    // SAFETY: a zeroed sockaddr_un is a valid value of the type.
    let mut address: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    if bytes.len() >= address.sun_path.len() || bytes.contains(&0) {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "socket path too long"));
    }
    address.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (slot, byte) in address.sun_path.iter_mut().zip(bytes) {
        *slot = *byte as libc::c_char;
    }
    // SAFETY: plain system calls on a descriptor this function owns from
    // creation (OwnedFd closes it on every early return).
    unsafe {
        let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let owned = OwnedFd::from_raw_fd(fd);
        let length = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
        if libc::connect(fd, (&raw const address).cast::<libc::sockaddr>(), length) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let stream = UnixStream::from(owned);
        stream.set_nonblocking(false)?;
        Ok(stream)
    }
}

/// What `serve` did.
#[derive(Debug, PartialEq, Eq)]
pub enum Served {
    /// Another daemon holds this model's lock (serving, or loading it).
    AlreadyRunning(PathBuf),
    /// Served until idle.
    Idle(PathBuf),
}

/// Serve the model of `location` (made by `load`, called only once this
/// process holds the daemon lock and its socket) until no client has been
/// connected for `idle`.
pub fn serve(
    location: &ModelLocation,
    idle: Duration,
    load: impl FnOnce() -> Result<Embedder, EmbedError>,
) -> Result<Served, String> {
    let path = socket_path(location).ok_or("no private runtime directory for the socket (see MNEMO_LOG=warn)")?;
    let Some(_lock) = take_lock(&path) else { return Ok(Served::AlreadyRunning(path)) };
    // Ours now: whatever is at the path is a dead daemon's socket (or junk).
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
        return Err(format!("{} is a directory; remove it", path.display()));
    }
    // The model first, then the socket: a command that comes while the
    // model loads finds no socket (or a dead one) and loads its own at once,
    // instead of waiting on a daemon that cannot answer yet.
    let embedder = load().map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("cannot make {} private: {e}", path.display()))?;
    let inode = std::fs::metadata(&path).map(|m| m.ino()).ok();
    let served = answer_until_idle(&listener, embedder, location, idle);
    // Only our own socket is removed (a newer daemon may have replaced it).
    if inode.is_some() && std::fs::metadata(&path).map(|m| m.ino()).ok() == inode {
        let _ = std::fs::remove_file(&path);
    }
    served.map(|()| Served::Idle(path))
}

fn answer_until_idle(
    listener: &UnixListener,
    embedder: Embedder,
    location: &ModelLocation,
    idle: Duration,
) -> Result<(), String> {
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    tracing::info!(idle_seconds = idle.as_secs(), "resident model serving");
    let identity = (embedder.identity().to_string(), embedder.dims(), location.model_dir.clone());
    let model = Arc::new(Mutex::new(embedder));
    let started = Instant::now();
    let now = move || started.elapsed().as_millis() as u64;
    // The last moment anything happened (a request, a connection, a client
    // leaving), and the clients connected now: a long-lived client (an MCP
    // server) keeps the model resident while it is connected, however quiet.
    let last_activity = Arc::new(AtomicU64::new(0));
    let connected = Arc::new(AtomicU64::new(0));
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                let _ = stream.set_nonblocking(false);
                let (model, identity) = (model.clone(), identity.clone());
                let (activity, connected) = (last_activity.clone(), connected.clone());
                connected.fetch_add(1, Ordering::SeqCst);
                activity.store(now(), Ordering::Relaxed);
                std::thread::spawn(move || {
                    answer_connection(stream, &model, &identity, || activity.store(now(), Ordering::Relaxed));
                    activity.store(now(), Ordering::Relaxed);
                    connected.fetch_sub(1, Ordering::SeqCst);
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let quiet = Duration::from_millis(now().saturating_sub(last_activity.load(Ordering::Relaxed)));
                if quiet >= idle && connected.load(Ordering::SeqCst) == 0 {
                    tracing::info!("resident model idle; exiting");
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(format!("accepting a client: {e}")),
        }
    }
}

/// Answer one client's requests, one line each, until it hangs up.
fn answer_connection(
    stream: UnixStream,
    model: &Mutex<Embedder>,
    identity: &(String, usize, PathBuf),
    mut touched: impl FnMut(),
) {
    let Ok(mut writer) = stream.try_clone() else { return };
    for line in BufReader::new(stream).lines() {
        let Ok(line) = line else { return };
        touched();
        let answer = match serde_json::from_str::<Request>(&line) {
            Ok(Request::Hello) => {
                Answer::Hello { identity: identity.0.clone(), dims: identity.1, model_dir: identity.2.clone() }
            }
            Ok(Request::Embed { texts, token_signs }) => {
                let mut model = model.lock().unwrap_or_else(|e| e.into_inner());
                match model.embed_texts(&texts, token_signs, |_, _| {}) {
                    Ok(passages) => {
                        Answer::Embedded { passages: passages.into_iter().map(|p| (p.vector, p.token_signs)).collect() }
                    }
                    Err(e) => Answer::Failed { reason: e.to_string() },
                }
            }
            Ok(Request::Tokens { text }) => {
                let mut model = model.lock().unwrap_or_else(|e| e.into_inner());
                match model.token_vectors_of(&text) {
                    Ok(vectors) => Answer::Tokens { vectors },
                    Err(e) => Answer::Failed { reason: e.to_string() },
                }
            }
            Err(e) => Answer::Failed { reason: format!("not a request: {e}") },
        };
        touched();
        let Ok(mut reply) = serde_json::to_string(&answer) else { return };
        reply.push('\n');
        if writer.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_connect_to_a_daemon_that_accepts_nothing_fails_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stopped.sock");
        let listener = UnixListener::bind(&path).unwrap();
        // A stopped daemon: it never accepts, and its queue is full after one.
        // SAFETY: listen on a socket this test owns.
        assert_eq!(unsafe { libc::listen(listener.as_raw_fd(), 0) }, 0);
        let started = Instant::now();
        let mut queued = Vec::new();
        let refused = loop {
            match connect_at_once(&path) {
                Ok(stream) => queued.push(stream),
                Err(error) => break error,
            }
            assert!(queued.len() < 64, "the queue never filled");
        };
        assert_eq!(refused.kind(), std::io::ErrorKind::WouldBlock, "{refused}");
        assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
        assert!(connect_at_once(&dir.path().join("absent.sock")).is_err());
    }

    #[test]
    fn a_connected_stream_blocks_again_so_request_timeouts_apply() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("daemon.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let stream = connect_at_once(&path).unwrap();
        let (mut accepted, _) = listener.accept().unwrap();
        accepted.write_all(b"hello\n").unwrap();
        let mut line = String::new();
        BufReader::new(stream).read_line(&mut line).unwrap();
        assert_eq!(line, "hello\n");
    }
}
