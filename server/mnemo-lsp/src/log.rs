//! The language server's diagnostic log: `tracing` events (the binary turns
//! them on with `MNEMO_LOG`) reach the editor as `window/logMessage`, never
//! stdout, where the protocol is.
//!
//! The binary installs [`client_log_layer`] before the server starts; the
//! server hands over its `Client` with [`forward_to`] as soon as it has one.
//! Until then events wait in a bounded queue. Emitting an event never waits
//! for the client: a full queue (a client that does not keep up) drops the
//! event and counts it, and the count is reported once the client catches up.
//!
//! Two kinds of events are never forwarded, because forwarding them would
//! feed the log back into itself: those emitted while a log line is being
//! sent, and tower-lsp-server's trace of the wire (the client's own protocol
//! trace shows every frame).

use std::cell::Cell;
use std::future::Future;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::mpsc;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::MessageType;
use tracing::{Level, Metadata, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::registry::LookupSpan;

/// Log lines held for the client (before it exists, or while it is slow).
const QUEUE_LENGTH: usize = 1024;

/// tower-lsp-server's trace of every frame in and out.
const WIRE_TRACE: &str = "tower_lsp_server::codec";

/// The queue [`client_log_layer`] fills, waiting for [`forward_to`] to drain it.
static BACKLOG: Mutex<Option<Backlog>> = Mutex::new(None);

thread_local! {
    /// Set while this thread sends a log line to the client.
    static FORWARDING: Cell<bool> = const { Cell::new(false) };
}

/// One formatted event.
#[derive(Debug)]
struct LogLine {
    typ: MessageType,
    text: String,
}

/// The sending end: where formatted events go.
struct Queue {
    sender: mpsc::Sender<LogLine>,
    dropped: Arc<AtomicUsize>,
}

/// The receiving end, with the count of events dropped on a full queue.
struct Backlog {
    receiver: mpsc::Receiver<LogLine>,
    dropped: Arc<AtomicUsize>,
}

fn queue(length: usize) -> (Queue, Backlog) {
    let (sender, receiver) = mpsc::channel(length);
    let dropped = Arc::new(AtomicUsize::new(0));
    (Queue { sender, dropped: dropped.clone() }, Backlog { receiver, dropped })
}

/// The layer that sends formatted events to the client of the language
/// server this process will run. Install it (with the filter of your choice)
/// before calling [`crate::run_stdio`]; one server per process receives them.
pub fn client_log_layer<S>() -> impl Layer<S> + Send + Sync + 'static
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    let (queue, backlog) = queue(QUEUE_LENGTH);
    *BACKLOG.lock().unwrap_or_else(PoisonError::into_inner) = Some(backlog);
    layer(queue)
}

fn layer<S>(queue: Queue) -> impl Layer<S> + Send + Sync + 'static
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    // The editor stamps each message with its time; no colours without the `ansi` feature.
    tracing_subscriber::fmt::layer().without_time().with_writer(queue)
}

/// Start sending the queued and future events to `client` (a no-op when no
/// [`client_log_layer`] was installed, or when another server took them).
/// Call from within the server's runtime.
pub(crate) fn forward_to(client: &Client) {
    let backlog = BACKLOG.lock().unwrap_or_else(PoisonError::into_inner).take();
    if let Some(backlog) = backlog {
        tokio::spawn(forward(backlog, client.clone()));
    }
}

async fn forward(mut backlog: Backlog, client: Client) {
    while let Some(line) = backlog.receiver.recv().await {
        send(&client, line.typ, line.text).await;
        let dropped = backlog.dropped.swap(0, Ordering::Relaxed);
        if dropped > 0 {
            let text = format!("{dropped} log events were dropped: the editor did not keep up with the log");
            send(&client, MessageType::WARNING, text).await;
        }
    }
}

/// `window/logMessage`, with every event its sending emits left out.
async fn send(client: &Client, typ: MessageType, text: String) {
    let mut sending = std::pin::pin!(client.log_message(typ, text));
    std::future::poll_fn(|cx| {
        let _forwarding = Forwarding::start();
        sending.as_mut().poll(cx)
    })
    .await;
}

/// Marks this thread as sending a log line until dropped.
struct Forwarding;

impl Forwarding {
    fn start() -> Forwarding {
        FORWARDING.set(true);
        Forwarding
    }
}

impl Drop for Forwarding {
    fn drop(&mut self) {
        FORWARDING.set(false);
    }
}

fn message_type(level: &Level) -> MessageType {
    match *level {
        Level::ERROR => MessageType::ERROR,
        Level::WARN => MessageType::WARNING,
        Level::INFO => MessageType::INFO,
        _ => MessageType::LOG,
    }
}

/// Whether an event may go to the client at all (see the module header).
fn forwardable(meta: &Metadata<'_>) -> bool {
    !FORWARDING.get() && !meta.target().starts_with(WIRE_TRACE)
}

impl<'a> MakeWriter<'a> for Queue {
    type Writer = QueuedLine<'a>;

    fn make_writer(&'a self) -> QueuedLine<'a> {
        QueuedLine { queue: Some(self), typ: MessageType::LOG, text: Vec::new() }
    }

    fn make_writer_for(&'a self, meta: &Metadata<'_>) -> QueuedLine<'a> {
        let queue = forwardable(meta).then_some(self);
        QueuedLine { queue, typ: message_type(meta.level()), text: Vec::new() }
    }
}

/// One event being formatted; queued when dropped (`queue: None` discards it).
pub struct QueuedLine<'a> {
    queue: Option<&'a Queue>,
    typ: MessageType,
    text: Vec<u8>,
}

impl Write for QueuedLine<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.text.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for QueuedLine<'_> {
    fn drop(&mut self) {
        let Some(queue) = self.queue else { return };
        let text = String::from_utf8_lossy(&self.text).trim().to_string();
        if text.is_empty() {
            return;
        }
        if queue.sender.try_send(LogLine { typ: self.typ, text }).is_err() {
            queue.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;
    use tower_lsp_server::jsonrpc::Result;
    use tower_lsp_server::ls_types::{InitializeParams, InitializeResult};
    use tower_lsp_server::{LanguageServer, LspService};
    use tracing_subscriber::layer::SubscriberExt;

    use super::*;

    /// Run `emit` with only a client log layer over `queue` installed.
    fn with_layer(queue: Queue, emit: impl FnOnce()) {
        let subscriber = tracing_subscriber::registry().with(layer(queue));
        tracing::subscriber::with_default(subscriber, emit);
    }

    fn drain(backlog: &mut Backlog) -> Vec<LogLine> {
        std::iter::from_fn(|| backlog.receiver.try_recv().ok()).collect()
    }

    #[test]
    fn events_are_queued_formatted_with_their_level_as_message_type() {
        let (queue, mut backlog) = queue(8);
        with_layer(queue, || {
            tracing::warn!(target: "mnemo_store::mirror", epoch = 3, "mirror skipped");
            tracing::debug!("a detail");
        });
        let lines = drain(&mut backlog);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines[0].typ, MessageType::WARNING);
        assert_eq!(lines[0].text, "WARN mnemo_store::mirror: mirror skipped epoch=3");
        assert_eq!(lines[1].typ, MessageType::LOG);
        assert!(lines[1].text.ends_with("a detail"), "{lines:?}");
    }

    #[test]
    fn a_full_queue_drops_and_counts_instead_of_waiting() {
        let (queue, mut backlog) = queue(1);
        with_layer(queue, || {
            for i in 0..3 {
                tracing::info!(i, "event");
            }
        });
        assert_eq!(drain(&mut backlog).len(), 1);
        assert_eq!(backlog.dropped.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn events_of_sending_a_line_and_the_wire_trace_are_left_out() {
        let (queue, mut backlog) = queue(8);
        with_layer(queue, || {
            tracing::trace!(target: "tower_lsp_server::codec", "-> a frame");
            let forwarding = Forwarding::start();
            tracing::error!("failed to send notification");
            drop(forwarding);
            tracing::info!("kept");
        });
        let lines = drain(&mut backlog);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].text.ends_with("kept"), "{lines:?}");
    }

    struct Silent;

    impl LanguageServer for Silent {
        async fn initialize(&self, _: InitializeParams) -> Result<InitializeResult> {
            Ok(InitializeResult::default())
        }

        async fn shutdown(&self) -> Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn queued_lines_become_log_messages_and_drops_are_reported() {
        let mut client = None;
        let (_service, mut socket) = LspService::new(|c| {
            client = Some(c);
            Silent
        });
        let client = client.expect("the service hands its client over");
        let (queue, backlog) = queue(1);
        with_layer(queue, || {
            tracing::info!("first");
            tracing::info!("dropped");
        });
        tokio::spawn(forward(backlog, client));
        let mut received = Vec::new();
        for _ in 0..2 {
            let request = socket.next().await.expect("a message to the client");
            assert_eq!(request.method(), "window/logMessage");
            received.push(request.params().cloned().unwrap_or_default());
        }
        assert_eq!(received[0]["type"], 3, "{received:?}");
        assert!(received[0]["message"].as_str().unwrap().ends_with("first"), "{received:?}");
        assert_eq!(received[1]["type"], 2, "{received:?}");
        assert_eq!(received[1]["message"], "1 log events were dropped: the editor did not keep up with the log");
    }
}
