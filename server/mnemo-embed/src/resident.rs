//! The resident model: one process per user and model keeps the model
//! loaded and embeds for short-lived processes (a CLI recall, a hook before
//! every prompt) over a Unix socket, so they skip the half second it takes
//! to load ONNX Runtime and the model. Without it everything works the same,
//! only slower: a process that finds no resident model loads its own.
//!
//! The socket lives in the user's runtime directory (`$XDG_RUNTIME_DIR/mnemo`,
//! else `/tmp/mnemo-UID`), a directory only its owner may enter (0700,
//! checked), and is itself mode 0600. Its name is derived from the model
//! directory and the ONNX Runtime library, so two models never share one.
//!
//! The protocol is one JSON object per line each way. Texts arrive with the
//! declared prefixes already applied by the client (`Embedder`), and
//! vectors go back as JSON numbers, which round-trip `f32` exactly: a
//! vector made here is bit for bit the one the client would have made.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::{EmbedError, EmbeddedPassage, Embedder, ModelLocation, TokenVectors};

/// How long a client waits for one answer (an import sends a few hundred
/// texts at a time).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

/// Texts per request, so an import's progress moves and no line is huge; a
/// multiple of the texts a local run hands the runtime at once
/// (`BATCH_SIZE * 4`), so the batches are the same.
pub(crate) const TEXTS_PER_REQUEST: usize = crate::BATCH_SIZE * 32;

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
        tracing::debug!(dir = %dir.display(), "the runtime directory is not private to this user; no resident model");
        return None;
    }
    Some(dir)
}

/// This process's user id, read from `/proc/self` (no `libc` call needed).
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

/// A connection to a resident model.
#[derive(Debug)]
pub(crate) struct Connection {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl Connection {
    fn ask(&mut self, request: &Request) -> Result<Answer, EmbedError> {
        let gone =
            |e: String| EmbedError::Embed(format!("the resident model did not answer ({e}); run the command again"));
        let mut line = serde_json::to_string(request).map_err(|e| gone(e.to_string()))?;
        line.push('\n');
        self.writer.write_all(line.as_bytes()).map_err(|e| gone(e.to_string()))?;
        let mut answer = String::new();
        match self.reader.read_line(&mut answer) {
            Ok(0) => return Err(gone("it closed the connection".into())),
            Ok(_) => {}
            Err(e) => return Err(gone(e.to_string())),
        }
        match serde_json::from_str(&answer).map_err(|e| gone(e.to_string()))? {
            Answer::Failed { reason } => Err(EmbedError::Embed(reason)),
            answer => Ok(answer),
        }
    }

    pub(crate) fn embed(&mut self, texts: &[String], token_signs: bool) -> Result<Vec<EmbeddedPassage>, EmbedError> {
        let request = Request::Embed { texts: texts.to_vec(), token_signs };
        match self.ask(&request)? {
            Answer::Embedded { passages } if passages.len() == texts.len() => {
                Ok(passages.into_iter().map(|(vector, token_signs)| EmbeddedPassage { vector, token_signs }).collect())
            }
            other => Err(EmbedError::Embed(format!("the resident model answered {other:?} to an embedding"))),
        }
    }

    pub(crate) fn tokens(&mut self, text: &str) -> Result<TokenVectors, EmbedError> {
        match self.ask(&Request::Tokens { text: text.to_string() })? {
            Answer::Tokens { vectors } => Ok(vectors),
            other => Err(EmbedError::Embed(format!("the resident model answered {other:?} to a query"))),
        }
    }
}

impl Embedder {
    /// The resident model for `location`, when one is running: an embedder
    /// that asks it instead of loading the model. `None` when there is none
    /// (or it runs another model, or does not answer).
    pub fn connect(location: &ModelLocation) -> Option<Embedder> {
        let started = Instant::now();
        let path = socket_path(location)?;
        let stream = UnixStream::connect(&path).ok()?;
        stream.set_read_timeout(Some(ANSWER_TIMEOUT)).ok()?;
        let mut connection = Connection { reader: BufReader::new(stream.try_clone().ok()?), writer: stream };
        let Ok(Answer::Hello { identity, dims, model_dir }) = connection.ask(&Request::Hello) else { return None };
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
}

/// Serve `embedder` (loaded from `location`) on its socket until no request
/// has come for `idle`. Returns quietly when another process already serves
/// this model.
pub fn serve(embedder: Embedder, location: &ModelLocation, idle: Duration) -> Result<(), String> {
    let path = socket_path(location).ok_or("no private runtime directory for the socket")?;
    if UnixStream::connect(&path).is_ok() {
        tracing::info!(socket = %path.display(), "a resident model already serves this model");
        return Ok(());
    }
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("cannot make {} private: {e}", path.display()))?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    tracing::info!(socket = %path.display(), idle_seconds = idle.as_secs(), "resident model serving");
    let identity = (embedder.identity().to_string(), embedder.dims(), location.model_dir.clone());
    let model = Arc::new(Mutex::new(embedder));
    let started = Instant::now();
    let last_request = Arc::new(AtomicU64::new(0));
    // Clients connected now: a long-lived one (an MCP server) keeps the model
    // resident while it is connected, however quiet.
    let connected = Arc::new(AtomicU64::new(0));
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                let _ = stream.set_nonblocking(false);
                let (model, identity, touched) = (model.clone(), identity.clone(), last_request.clone());
                let connected = connected.clone();
                connected.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    answer_connection(stream, &model, &identity, || {
                        touched.store(started.elapsed().as_millis() as u64, Ordering::Relaxed)
                    });
                    connected.fetch_sub(1, Ordering::SeqCst);
                });
                last_request.store(started.elapsed().as_millis() as u64, Ordering::Relaxed);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let quiet =
                    started.elapsed().saturating_sub(Duration::from_millis(last_request.load(Ordering::Relaxed)));
                if quiet >= idle && connected.load(Ordering::SeqCst) == 0 {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(format!("accepting on {}: {e}", path.display())),
        }
    }
    // Only our own socket is removed: a newer server may have replaced it.
    if std::fs::metadata(&path).is_ok_and(|m| m.ino() == listener_inode(&listener)) {
        let _ = std::fs::remove_file(&path);
    }
    tracing::info!(socket = %path.display(), "resident model idle; exiting");
    Ok(())
}

fn listener_inode(listener: &UnixListener) -> u64 {
    listener
        .local_addr()
        .ok()
        .and_then(|a| a.as_pathname().and_then(|p| std::fs::metadata(p).ok()))
        .map_or(0, |m| m.ino())
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
