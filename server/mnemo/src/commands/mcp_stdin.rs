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

/// Wraps a reader; yields only complete lines (and, at the end, whatever
/// is left).
pub struct WholeLines<R> {
    inner: R,
    pending: Vec<u8>,
    /// Bytes at the front of `pending` that end with a newline (or end the stream).
    ready: usize,
    ended: bool,
}

impl<R> WholeLines<R> {
    pub fn new(inner: R) -> WholeLines<R> {
        WholeLines { inner, pending: Vec::new(), ready: 0, ended: false }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for WholeLines<R> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, out: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.ready > 0 {
                let n = this.ready.min(out.remaining());
                out.put_slice(&this.pending[..n]);
                this.pending.drain(..n);
                this.ready -= n;
                return Poll::Ready(Ok(()));
            }
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; 8192];
            let mut chunk = ReadBuf::new(&mut chunk);
            match Pin::new(&mut this.inner).poll_read(cx, &mut chunk) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) if chunk.filled().is_empty() => {
                    this.ended = true;
                    this.ready = this.pending.len();
                }
                Poll::Ready(Ok(())) => {
                    this.pending.extend_from_slice(chunk.filled());
                    this.ready = this.pending.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
                }
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
