//! Standard input for the MCP server, handed out in whole lines.
//!
//! rmcp's stdio transport reads a message with `read_until(b'\n')` inside a
//! `tokio::select!` that also sends our notifications. `read_until` is not
//! cancel-safe: when a client writes a message in two pieces (the JSON, then
//! the newline — an unbuffered `writeln!` does) and a notification goes out
//! in between, the half-read line is dropped and the request is never
//! answered (found by the e2e test under load). This reader only returns
//! data up to a newline, so a read is never left waiting in the middle of a
//! line and cancelling it loses nothing.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// The longest message a client may send, in bytes: far above any note
/// (a body is at most 64 KiB), far below what would cost the server memory.
pub const MAX_LINE_BYTES: usize = 4 << 20;

/// The stand-in resource of a refused request (never a real resource).
pub const REFUSED_URI: &str = "mnemo:refused-request-too-large";

/// What the client is told about a refused request.
pub fn refusal_message() -> String {
    format!(
        "the request was refused: it is longer than {} MB, the most this server reads in one message; send less (a note's body is at most 64 KiB)",
        MAX_LINE_BYTES >> 20
    )
}

/// Wraps a reader; yields only complete lines (and, at the end, whatever
/// is left). Linear in the input: each byte is scanned for a newline once.
/// A line past [`MAX_LINE_BYTES`] is not kept: it is replaced by a request
/// with the same id that the server refuses (so the client gets an error,
/// not silence), or dropped when it has no id.
pub struct WholeLines<R> {
    inner: R,
    pending: Vec<u8>,
    /// Bytes of `pending` already handed out.
    start: usize,
    /// Bytes at the front of `pending[start..]` that end with a newline (or end the stream).
    ready: usize,
    /// Where the line being read begins in `pending`.
    line_start: usize,
    /// Inside a line that went past the limit: its bytes are skipped up to its newline.
    skipping: bool,
    ended: bool,
}

impl<R> WholeLines<R> {
    pub fn new(inner: R) -> WholeLines<R> {
        WholeLines { inner, pending: Vec::new(), start: 0, ready: 0, line_start: 0, skipping: false, ended: false }
    }

    /// What stands in for a line that was too long: a read of the resource
    /// [`REFUSED_URI`], which the server answers with an error for that id.
    fn refusal(head: &[u8]) -> Vec<u8> {
        let head = String::from_utf8_lossy(&head[..head.len().min(4096)]);
        let id = head.find("\"id\"").and_then(|at| {
            let rest = head[at + 4..].trim_start().strip_prefix(':')?.trim_start();
            let end = if let Some(quoted) = rest.strip_prefix('"') {
                quoted.find('"').map(|e| e + 2)?
            } else {
                rest.find(|c: char| !c.is_ascii_digit() && c != '-').unwrap_or(rest.len())
            };
            Some(rest[..end].to_string()).filter(|id| !id.is_empty())
        });
        match id {
            Some(id) => format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"resources/read\",\"params\":{{\"uri\":\"{REFUSED_URI}\"}}}}\n"
            )
            .into_bytes(),
            None => Vec::new(),
        }
    }
}

impl<R> WholeLines<R> {
    /// Take in a chunk: complete lines become ready, a line past the limit
    /// becomes its refusal, and the rest of it is skipped.
    fn take(&mut self, mut filled: &[u8]) {
        while !filled.is_empty() {
            let newline = filled.iter().position(|b| *b == b'\n');
            let (part, rest) = match newline {
                Some(at) => (&filled[..=at], &filled[at + 1..]),
                None => (filled, &filled[filled.len()..]),
            };
            filled = rest;
            if self.skipping {
                self.skipping = newline.is_none();
                continue;
            }
            self.pending.extend_from_slice(part);
            if self.pending.len() - self.line_start > MAX_LINE_BYTES {
                let refusal = Self::refusal(&self.pending[self.line_start..]);
                self.pending.truncate(self.line_start);
                self.pending.extend_from_slice(&refusal);
                self.skipping = newline.is_none();
                self.line_start = self.pending.len();
                self.ready = self.pending.len() - self.start;
            } else if newline.is_some() {
                self.line_start = self.pending.len();
                self.ready = self.pending.len() - self.start;
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for WholeLines<R> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, out: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.ready > 0 {
                let n = this.ready.min(out.remaining());
                out.put_slice(&this.pending[this.start..this.start + n]);
                this.start += n;
                this.ready -= n;
                if this.start > this.pending.len() / 2 {
                    this.pending.drain(..this.start);
                    this.line_start = this.line_start.saturating_sub(this.start);
                    this.start = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; 65536];
            let mut chunk = ReadBuf::new(&mut chunk);
            match Pin::new(&mut this.inner).poll_read(cx, &mut chunk) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) if chunk.filled().is_empty() => {
                    this.ended = true;
                    this.ready = this.pending.len() - this.start;
                }
                Poll::Ready(Ok(())) => this.take(chunk.filled()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn a_line_written_in_pieces_is_read_whole() {
        let (mut client, server) = tokio::io::duplex(64);
        let mut lines = WholeLines::new(server);
        let mut buf = [0u8; 64];
        client.write_all(b"{\"id\":1}").await.unwrap();
        let early = tokio::time::timeout(std::time::Duration::from_millis(50), lines.read(&mut buf)).await;
        assert!(early.is_err(), "nothing before the newline");
        client.write_all(b"\n{\"id\":2}\n{\"id\"").await.unwrap();
        let n = lines.read(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"{\"id\":1}\n{\"id\":2}\n");
        client.write_all(b":3}").await.unwrap();
        drop(client);
        let n = lines.read(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"{\"id\":3}", "the unterminated rest at the end");
        assert_eq!(lines.read(&mut buf).await.unwrap(), 0);
    }

    #[tokio::test]
    async fn a_line_past_the_limit_becomes_a_refused_request_with_its_id() {
        let (mut client, server) = tokio::io::duplex(1 << 16);
        let mut lines = WholeLines::new(server);
        let writer = tokio::spawn(async move {
            let huge = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{{\"x\":\"{}\"}}}}\n",
                "a".repeat(MAX_LINE_BYTES + 10)
            );
            client.write_all(huge.as_bytes()).await.unwrap();
            client.write_all(b"{\"id\":8}\n").await.unwrap();
        });
        let mut got = Vec::new();
        lines.read_to_end(&mut got).await.unwrap();
        writer.await.unwrap();
        let text = String::from_utf8(got).unwrap();
        assert!(
            text.starts_with("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/read\""),
            "{}",
            &text[..200.min(text.len())]
        );
        assert!(text.ends_with("}\n{\"id\":8}\n"), "the next message is intact");
        assert!(text.len() < 1000, "{} bytes: {}", text.len(), &text[..300.min(text.len())]);
    }

    #[tokio::test]
    async fn lines_longer_than_the_callers_buffer_come_in_several_reads() {
        let (mut client, server) = tokio::io::duplex(64);
        let mut lines = WholeLines::new(server);
        client.write_all(b"0123456789\n").await.unwrap();
        let mut small = [0u8; 4];
        let mut got = Vec::new();
        while got.len() < 11 {
            let n = lines.read(&mut small).await.unwrap();
            got.extend_from_slice(&small[..n]);
        }
        assert_eq!(got, b"0123456789\n");
    }
}
