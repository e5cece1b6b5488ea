//! The one language-server client of mnemo's tests and benchmarks (the
//! end-to-end tests and the benchmark drive `mnemo lsp` as a process; the
//! feature tests drive `mnemo_lsp::serve` in process over a socket pair).
//! An editor's view of the protocol, kept small: Content-Length frames over
//! any byte stream ([`frame`]), requests numbered and matched to their
//! responses, every other message kept for the test to look at.

pub mod frame;

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A client on one connection to a server.
pub struct Client {
    writer: Box<dyn Write + Send>,
    messages: mpsc::Receiver<Value>,
    /// Messages read while waiting for something else, oldest first.
    backlog: Vec<Value>,
    next_id: i64,
    /// How long to wait for any one message.
    timeout: Duration,
    child: Option<Child>,
}

impl Client {
    /// A client on `reader`/`writer` (a socket to an in-process server, a
    /// child's pipes); a thread reads the frames.
    pub fn over(reader: impl Read + Send + 'static, writer: impl Write + Send + 'static) -> Client {
        let (sender, messages) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = std::io::BufReader::new(reader);
            while let Some(message) = frame::read(&mut reader) {
                if sender.send(message).is_err() {
                    return;
                }
            }
        });
        Client {
            writer: Box::new(writer),
            messages,
            backlog: Vec::new(),
            next_id: 1,
            timeout: Duration::from_secs(20),
            child: None,
        }
    }

    /// Start `command` (a `mnemo lsp`) with piped stdio and talk to it.
    pub fn spawn(mut command: Command) -> Client {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start the language server {command:?}: {e}"));
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut client = Client::over(stdout, stdin);
        client.child = Some(child);
        client
    }

    /// Wait at most `timeout` for any one message (default 20 s).
    pub fn with_timeout(mut self, timeout: Duration) -> Client {
        self.timeout = timeout;
        self
    }

    /// `initialize` for the workspace at `root_uri`, then `initialized`, as an editor starts a server.
    pub fn initialize(&mut self, root_uri: &str) -> Value {
        let init = self.request("initialize", json!({ "processId": null, "rootUri": root_uri, "capabilities": {} }));
        self.notify("initialized", json!({}));
        init
    }

    fn send(&mut self, message: &Value) {
        frame::write(&mut self.writer, message).expect("the server reads its input");
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Send a request without waiting for its response; its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        id
    }

    /// Send a request and wait for its whole response message (`result` or
    /// `error`); the messages that came before it go to the backlog.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.wait(|m| m["id"] == id && m.get("method").is_none())
    }

    /// Send a request; its response and the messages that arrived between
    /// the request and its response.
    pub fn request_seeing(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        let id = self.send_request(method, params);
        let mut seen = Vec::new();
        loop {
            let message = self.next();
            if message["id"] == id && message.get("method").is_none() {
                return (message, seen);
            }
            seen.push(message);
        }
    }

    /// Write raw bytes to the server (malformed frames).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).and_then(|()| self.writer.flush()).expect("the server reads its input");
    }

    /// The next message to arrive that `wanted` accepts; the ones before it
    /// are kept in the backlog (see [`Client::find`]).
    pub fn wait(&mut self, mut wanted: impl FnMut(&Value) -> bool) -> Value {
        loop {
            let message = self.next();
            if wanted(&message) {
                return message;
            }
            self.backlog.push(message);
        }
    }

    /// The first message `wanted` accepts, among those already received (the
    /// backlog, oldest first) or, failing that, the next to arrive.
    pub fn find(&mut self, mut wanted: impl FnMut(&Value) -> bool) -> Value {
        match self.backlog.iter().position(&mut wanted) {
            Some(index) => self.backlog.remove(index),
            None => self.wait(wanted),
        }
    }

    fn next(&mut self) -> Value {
        match self.messages.recv_timeout(self.timeout) {
            Ok(message) => message,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("the server sent nothing within {:?}", self.timeout),
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the server closed its output"),
        }
    }

    /// The server process (a spawned client), to signal or inspect it.
    pub fn child(&mut self) -> &mut Child {
        self.child.as_mut().expect("a client of a spawned server")
    }

    /// `shutdown` and `exit`, as an editor closes; the spawned server's exit status.
    pub fn shutdown(mut self) -> Option<std::process::ExitStatus> {
        let answer = self.request("shutdown", Value::Null);
        assert_eq!(answer["result"], Value::Null, "shutdown answered {answer}");
        self.notify("exit", Value::Null);
        self.close()
    }

    /// The editor goes away: input closed. The spawned server's exit status
    /// (it must exit on its own within 20 s).
    pub fn close(self) -> Option<std::process::ExitStatus> {
        let Client { writer, child, .. } = self;
        drop(writer);
        let mut child = child?;
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = child.try_wait().expect("the server's status") {
                return Some(status);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("the server did not exit within 20 s of its client going away");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Take the spawned server's stderr pipe, when the command piped it.
    pub fn stderr(&mut self) -> Option<std::process::ChildStderr> {
        self.child.as_mut()?.stderr.take()
    }
}

/// The `file:` URI of a local path.
pub fn file_uri(path: &std::path::Path) -> String {
    format!("file://{}", path.display())
}
