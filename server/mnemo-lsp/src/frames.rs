//! The client's byte stream, passed on only as well-formed LSP frames.
//!
//! tower-lsp-server reads stdin through a `FramedRead`, which ends the stream
//! at the first frame it cannot decode — one malformed message (a body that
//! is not JSON-RPC, a header without a length) made the server exit, and the
//! editor lost its memory view. This reader checks each frame first: a good
//! one passes unchanged; a bad one is replaced by the notification
//! `mnemo/malformedMessage` (the server logs it to the client), so the
//! session goes on and the problem is still reported.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tower_lsp_server::jsonrpc::{Request, Response};

/// The method of the notification that stands in for a malformed frame.
pub const MALFORMED: &str = "mnemo/malformedMessage";

/// A header block longer than this without its blank line is not a header.
const MAX_HEADER: usize = 8 * 1024;

/// Buffers grown past this by a large message (a 20 MB mirror opened at
/// 100k notes) are given back once emptied, not kept for the session.
const KEPT_CAPACITY: usize = 64 * 1024;

pub struct WellFormed<R> {
    inner: R,
    /// Bytes read, not yet a whole frame.
    raw: Vec<u8>,
    /// Checked frames; `out[sent..]` not yet passed on.
    out: Vec<u8>,
    sent: usize,
    ended: bool,
}

impl<R> WellFormed<R> {
    pub fn new(inner: R) -> WellFormed<R> {
        WellFormed { inner, raw: Vec::new(), out: Vec::new(), sent: 0, ended: false }
    }

    /// Move every complete frame of `raw` to `out`, checked.
    fn frames(&mut self) {
        loop {
            let Some(header_end) = find(&self.raw, b"\r\n\r\n") else {
                if self.raw.len() > MAX_HEADER {
                    self.raw.clear();
                    self.push_malformed("a header block without its blank line; the bytes were dropped");
                }
                return;
            };
            let header = String::from_utf8_lossy(&self.raw[..header_end]).into_owned();
            if !header.split("\r\n").all(is_header_line) {
                // Bytes outside any frame (say, after a wrong Content-Length):
                // resynchronise at the last header that starts in them,
                // found in the bytes themselves (the lossy text is longer
                // where they are not UTF-8).
                const LENGTH: &[u8] = b"content-length:";
                let start = self.raw[..header_end].windows(LENGTH.len()).rposition(|w| w.eq_ignore_ascii_case(LENGTH));
                if let Some(start) = start.filter(|i| *i > 0) {
                    self.raw.drain(..start);
                    self.push_malformed("bytes outside any frame were dropped");
                    continue;
                }
            }
            let Some(length) = content_length(&header) else {
                self.raw.drain(..header_end + 4);
                self.push_malformed("a header block without a valid Content-Length; it was dropped");
                continue;
            };
            let body_start = header_end + 4;
            if self.raw.len() < body_start + length {
                return;
            }
            let body = &self.raw[body_start..body_start + length];
            if serde_json::from_slice::<Request>(body).is_ok() || serde_json::from_slice::<Response>(body).is_ok() {
                push_frame(&mut self.out, body);
            } else {
                let shown: String = String::from_utf8_lossy(body).chars().take(80).collect();
                self.push_malformed(&format!("a message that is not JSON-RPC 2.0 was ignored: {shown}"));
            }
            self.raw.drain(..body_start + length);
            give_back_if_grown(&mut self.raw);
        }
    }

    fn push_malformed(&mut self, reason: &str) {
        let body = serde_json::json!({ "jsonrpc": "2.0", "method": MALFORMED, "params": { "reason": reason } });
        push_frame(&mut self.out, body.to_string().as_bytes());
    }
}

fn push_frame(out: &mut Vec<u8>, body: &[u8]) {
    out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    out.extend_from_slice(body);
}

/// Give a buffer's memory back once a large message has gone through it.
fn give_back_if_grown(buffer: &mut Vec<u8>) {
    if buffer.capacity() > KEPT_CAPACITY && buffer.len() <= KEPT_CAPACITY / 2 {
        buffer.shrink_to(KEPT_CAPACITY);
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn is_header_line(line: &str) -> bool {
    line.split_once(':')
        .is_some_and(|(name, _)| !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
}

pub(crate) fn content_length(header: &str) -> Option<usize> {
    header.split("\r\n").find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim().eq_ignore_ascii_case("content-length").then(|| value.trim().parse().ok()).flatten()
    })
}

impl<R: AsyncRead + Unpin> AsyncRead for WellFormed<R> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.sent < this.out.len() {
                // Passed on from a cursor: draining the front of a 20 MB
                // frame at each read would move the rest every time.
                let n = (this.out.len() - this.sent).min(buf.remaining());
                buf.put_slice(&this.out[this.sent..this.sent + n]);
                this.sent += n;
                if this.sent == this.out.len() {
                    this.out.clear();
                    this.sent = 0;
                    give_back_if_grown(&mut this.out);
                }
                return Poll::Ready(Ok(()));
            }
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; 16 * 1024];
            let mut chunk = ReadBuf::new(&mut chunk);
            match Pin::new(&mut this.inner).poll_read(cx, &mut chunk) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) if chunk.filled().is_empty() => this.ended = true,
                Poll::Ready(Ok(())) => {
                    this.raw.extend_from_slice(chunk.filled());
                    this.frames();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn through(input: &[u8]) -> String {
        let (mut client, server) = tokio::io::duplex(1 << 16);
        client.write_all(input).await.unwrap();
        drop(client);
        let mut out = String::new();
        WellFormed::new(server).read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn good_frames_pass_and_bad_ones_become_a_notification() {
        let good = r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;
        let input = format!(
            "Content-Length: 5\r\n\r\nhelloContent-Type: x\r\nContent-Length: {}\r\n\r\n{good}X: 1\r\n\r\nContent-Length: 2\r\n\r\n[]",
            good.len()
        );
        let out = through(input.as_bytes()).await;
        let frames: Vec<&str> = out.split("Content-Length: ").filter(|f| !f.is_empty()).collect();
        assert_eq!(frames.len(), 4, "{out}");
        assert!(frames[0].contains(MALFORMED) && frames[0].contains("hello"), "{out}");
        assert!(frames[1].ends_with(good), "{out}");
        assert!(frames[2].contains("without a valid Content-Length"), "{out}");
        assert!(frames[3].contains("not JSON-RPC 2.0 was ignored: []"), "{out}");
    }

    #[tokio::test]
    async fn a_wrong_length_costs_the_next_frame_and_no_more() {
        let good = r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#;
        let victim = r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
        let input = format!(
            "Content-Length: 12\r\n\r\n{{\"a\":1}}Content-Length: {}\r\n\r\n{victim}Content-Length: {}\r\n\r\n{good}",
            victim.len(),
            good.len()
        );
        let out = through(input.as_bytes()).await;
        assert!(out.ends_with(&format!("Content-Length: {}\r\n\r\n{good}", good.len())), "{out}");
        assert!(out.contains("not JSON-RPC 2.0") && out.contains("bytes outside any frame"), "{out}");
    }

    #[tokio::test]
    async fn bytes_that_are_not_text_before_a_frame_are_dropped_and_the_frame_passes() {
        let good = r#"{"jsonrpc":"2.0","id":3,"method":"shutdown"}"#;
        for junk in [1, 100] {
            let mut input = vec![0xFFu8; junk];
            input.extend_from_slice(format!("Content-Length: {}\r\n\r\n{good}", good.len()).as_bytes());
            let out = through(&input).await;
            assert!(out.contains("bytes outside any frame"), "{out}");
            assert!(out.ends_with(&format!("Content-Length: {}\r\n\r\n{good}", good.len())), "{out}");
        }
    }

    #[tokio::test]
    async fn a_frame_split_across_reads_is_passed_whole() {
        let good = r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
        let (mut client, server) = tokio::io::duplex(1 << 16);
        let mut reader = WellFormed::new(server);
        let frame = format!("Content-Length: {}\r\n\r\n{good}", good.len());
        let (first, rest) = frame.split_at(30);
        client.write_all(first.as_bytes()).await.unwrap();
        let mut buf = vec![0u8; 1024];
        let early = tokio::time::timeout(std::time::Duration::from_millis(50), reader.read(&mut buf)).await;
        assert!(early.is_err(), "nothing before the frame is whole");
        client.write_all(rest.as_bytes()).await.unwrap();
        let n = reader.read(&mut buf).await.unwrap();
        assert_eq!(String::from_utf8_lossy(&buf[..n]), frame);
    }
}
