//! Notifications the server serialises itself, written between the protocol
//! library's frames.
//!
//! tower-lsp-server turns every outgoing message into a `serde_json::Value`
//! tree before it writes it. For the diagnostics of a 100k-note mirror
//! (79,000 of them) that tree took about 200 MB, more than the rest of the
//! server together. Diagnostics are instead serialised straight from their
//! typed form into one frame ([`DirectOut`]) and written to the client
//! between two of the library's frames, never inside one: the library
//! writes into an in-memory pipe, and [`forward`] copies its bytes to the
//! real output frame by frame, taking a direct frame only at a boundary.

use serde::Serialize;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tower_lsp_server::ls_types::{Diagnostic, Uri};

/// Room kept in front of a body for its header: `Content-Length: ` (16),
/// up to 20 digits, and the blank line (4).
const HEADER_ROOM: usize = 40;

/// The pipe between the library and [`forward`]; what the library writes
/// waits here (it is told to wait when this is full).
pub(crate) const PIPE_CAPACITY: usize = 64 * 1024;

/// A whole frame: header and body, from `start`.
pub(crate) struct Frame {
    bytes: Vec<u8>,
    start: usize,
}

impl Frame {
    /// `message` as one frame, serialised without an intermediate tree.
    fn of(message: &impl Serialize) -> serde_json::Result<Frame> {
        let mut bytes = vec![0u8; HEADER_ROOM];
        serde_json::to_writer(&mut bytes, message)?;
        let header = format!("Content-Length: {}\r\n\r\n", bytes.len() - HEADER_ROOM);
        let start = HEADER_ROOM - header.len();
        bytes[start..HEADER_ROOM].copy_from_slice(header.as_bytes());
        Ok(Frame { bytes, start })
    }

    fn as_bytes(&self) -> &[u8] {
        &self.bytes[self.start..]
    }
}

/// How many direct frames may wait to be written: a sender waits beyond
/// that, paced by the client's reading as the library's senders are (the
/// frames of a 100k mirror are 24 MB each).
const WAITING_FRAMES: usize = 1;

/// Sends notifications around the library (cheap to clone).
#[derive(Clone)]
pub(crate) struct DirectOut {
    frames: mpsc::Sender<Frame>,
}

/// What [`forward`] takes the direct frames from.
pub(crate) struct DirectFrames(mpsc::Receiver<Frame>);

pub(crate) fn channel() -> (DirectOut, DirectFrames) {
    let (frames, receiver) = mpsc::channel(WAITING_FRAMES);
    (DirectOut { frames }, DirectFrames(receiver))
}

#[derive(Serialize)]
struct Notification<P> {
    jsonrpc: &'static str,
    method: &'static str,
    params: P,
}

/// `PublishDiagnosticsParams`, borrowed.
#[derive(Serialize)]
struct PublishDiagnostics<'a> {
    uri: &'a Uri,
    diagnostics: &'a [Diagnostic],
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<i32>,
}

impl DirectOut {
    /// `textDocument/publishDiagnostics`, as the library's
    /// `Client::publish_diagnostics` would send it.
    pub(crate) async fn publish_diagnostics(&self, uri: &Uri, diagnostics: &[Diagnostic], version: Option<i32>) {
        let params = PublishDiagnostics { uri, diagnostics, version };
        self.notify("textDocument/publishDiagnostics", params).await;
    }

    async fn notify(&self, method: &'static str, params: impl Serialize) {
        match Frame::of(&Notification { jsonrpc: "2.0", method, params }) {
            // Closed only when the server has stopped writing.
            Ok(frame) => drop(self.frames.send(frame).await),
            Err(e) => tracing::error!(method, "a notification could not be serialised: {e}"),
        }
    }
}

/// Copy the library's frames from `library` to `out`, and the direct frames
/// between them, until the library's output ends.
pub(crate) async fn forward(
    mut library: impl AsyncRead + Unpin,
    mut direct: DirectFrames,
    mut out: impl AsyncWrite + Unpin,
) -> std::io::Result<()> {
    let mut buf = vec![0u8; PIPE_CAPACITY];
    let (mut from, mut to) = (0, 0);
    let mut frames = Boundaries::default();
    loop {
        if frames.between() {
            while let Ok(frame) = direct.0.try_recv() {
                out.write_all(frame.as_bytes()).await?;
            }
        }
        if from == to {
            out.flush().await?;
            let between = frames.between();
            tokio::select! {
                read = library.read(&mut buf) => {
                    let n = read?;
                    if n == 0 {
                        while let Ok(frame) = direct.0.try_recv() {
                            out.write_all(frame.as_bytes()).await?;
                        }
                        return out.flush().await;
                    }
                    (from, to) = (0, n);
                }
                Some(frame) = direct.0.recv(), if between => {
                    out.write_all(frame.as_bytes()).await?;
                    continue;
                }
            }
        }
        let n = frames.take(&buf[from..to]);
        out.write_all(&buf[from..from + n]).await?;
        from += n;
    }
}

/// Where the library's byte stream is: in a header, in a body, or between
/// two frames.
#[derive(Default)]
struct Boundaries {
    header: Vec<u8>,
    /// Bytes of the current body not yet passed.
    body_left: usize,
}

impl Boundaries {
    fn between(&self) -> bool {
        self.header.is_empty() && self.body_left == 0
    }

    /// How many bytes of `bytes` to pass now: up to the end of the frame
    /// under way (so a direct frame can follow it), else all of them.
    fn take(&mut self, bytes: &[u8]) -> usize {
        let mut taken = 0;
        while taken < bytes.len() {
            if self.body_left > 0 {
                let n = self.body_left.min(bytes.len() - taken);
                self.body_left -= n;
                taken += n;
                if self.body_left == 0 {
                    return taken;
                }
                continue;
            }
            self.header.push(bytes[taken]);
            taken += 1;
            if self.header.ends_with(b"\r\n\r\n") {
                let header = String::from_utf8_lossy(&self.header).into_owned();
                self.header.clear();
                // The library always writes a length; a frame without one
                // (never seen) is taken to end with its header.
                self.body_left = crate::frames::content_length(&header).unwrap_or(0);
                if self.body_left == 0 {
                    return taken;
                }
            }
        }
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::{Position, PublishDiagnosticsParams, Range};

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    #[tokio::test]
    async fn a_direct_frame_is_what_the_library_would_have_sent() {
        let uri: Uri = "file:///w/MEMORY.md".parse().unwrap();
        let diagnostics = vec![Diagnostic {
            range: Range::new(Position::new(3, 0), Position::new(3, 9)),
            message: "#7 was revoked: \"quoted\" ✓".into(),
            ..Diagnostic::default()
        }];
        let (out, mut frames) = channel();
        out.publish_diagnostics(&uri, &diagnostics, Some(4)).await;
        let sent = frames.0.try_recv().unwrap();
        let text = std::str::from_utf8(sent.as_bytes()).unwrap();
        let (header, body) = text.split_once("\r\n\r\n").unwrap();
        assert_eq!(header, format!("Content-Length: {}", body.len()));
        // What `Client::publish_diagnostics` sends: these params, through a value tree.
        let params = PublishDiagnosticsParams::new(uri, diagnostics, Some(4));
        let library = tower_lsp_server::jsonrpc::Request::build("textDocument/publishDiagnostics")
            .params(serde_json::to_value(params).unwrap())
            .finish();
        let ours: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(ours, serde_json::to_value(&library).unwrap());
    }

    #[test]
    fn boundaries_stop_at_the_end_of_each_frame() {
        let stream = format!("{}{}", frame("{\"a\":1}"), frame("[]"));
        let mut at = Boundaries::default();
        let first = at.take(stream.as_bytes());
        assert_eq!(&stream[..first], frame("{\"a\":1}"));
        assert!(at.between());
        // Split anywhere, the same frames come out.
        for split in 1..stream.len() {
            let mut at = Boundaries::default();
            let (mut passed, mut ends) = (0, Vec::new());
            for part in [&stream.as_bytes()[..split], &stream.as_bytes()[split..]] {
                let mut from = 0;
                while from < part.len() {
                    from += at.take(&part[from..]);
                    if at.between() {
                        ends.push(passed + from);
                    }
                }
                passed += part.len();
            }
            assert_eq!(ends, vec![first, stream.len()], "split at {split}");
        }
    }

    #[tokio::test]
    async fn direct_frames_go_between_the_librarys_frames_never_inside() {
        let (mut library, library_out) = tokio::io::duplex(PIPE_CAPACITY);
        let (client_in, mut client) = tokio::io::duplex(1 << 20);
        let (direct, frames) = channel();
        let forwarding = tokio::spawn(forward(library_out, frames, client_in));
        let big = frame(&format!("{{\"x\":\"{}\"}}", "y".repeat(300_000)));
        let (head, tail) = big.split_at(100_000);
        library.write_all(head.as_bytes()).await.unwrap();
        tokio::task::yield_now().await;
        let uri: Uri = "file:///w/MEMORY.md".parse().unwrap();
        direct.publish_diagnostics(&uri, &[], None).await;
        library.write_all(tail.as_bytes()).await.unwrap();
        library.write_all(frame("[1]").as_bytes()).await.unwrap();
        drop(library);
        let mut got = String::new();
        client.read_to_string(&mut got).await.unwrap();
        forwarding.await.unwrap().unwrap();
        let diagnostics = frame(
            r#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"file:///w/MEMORY.md","diagnostics":[]}}"#,
        );
        let at = got.find(&diagnostics).expect("the direct frame is written");
        assert!(at == big.len() || at == big.len() + frame("[1]").len(), "not inside a frame: at {at}");
        assert_eq!(got.len(), big.len() + frame("[1]").len() + diagnostics.len());
        assert!(got.starts_with(&big));
    }
}
