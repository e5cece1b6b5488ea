//! Garbage at the protocol layers, through the binary: random and malformed
//! JSON-RPC to the language server, random tool arguments to the MCP server.
//! No panic, the server keeps answering, and garbage writes nothing: every
//! call the server refuses leaves the store exactly as it was. (The checkout
//! parser and check-in are fuzzed by property tests in mnemo-core and
//! mnemo-store.) The generator is seeded; a failure prints its seed.

use serde_json::{Map, Value, json};

use crate::lsp::{Client, uri};
use crate::mcp::Mcp;
use crate::support::Env;

/// xorshift64*: deterministic, no crate.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const KEYS: &[&str] = &[
    "textDocument",
    "uri",
    "position",
    "line",
    "character",
    "range",
    "start",
    "end",
    "query",
    "text",
    "id",
    "ids",
    "reason",
    "command",
    "arguments",
    "kind",
    "kinds",
    "title",
    "body",
    "priority",
    "anchors",
    "supersedes",
    "contradicts",
    "limit",
    "include_stale",
    "user_message",
    "context",
    "diagnostics",
    "version",
    "contentChanges",
];

const STRINGS: &[&str] = &[
    "",
    "gotcha",
    "finding",
    "directive",
    "high",
    "#1",
    "1",
    "-1",
    "src/lock.rs:1-2",
    "../../etc/passwd:1",
    "/etc/passwd",
    "file:///etc/passwd",
    "memory:///nowhere/MEMORY.md",
    "\u{0}",
    "'; DROP TABLE notes; --",
    "## Gotchas\n- [#1] x",
    "é漢🙂",
    "mnemo.revoke",
    "mnemo.forget",
    "confirm",
    "%s%n",
    "{}",
    "[]",
];

fn value(random: &mut Random, depth: usize) -> Value {
    match random.below(if depth > 3 { 5 } else { 8 }) {
        0 => Value::Null,
        1 => json!(random.below(2) == 0),
        2 => json!(*random.pick(&[0i64, 1, 2, -1, i64::MAX, i64::MIN, 4242])),
        3 => json!(*random.pick(&[0.5f64, -1e300, 1e308])),
        4 => json!(random.pick(STRINGS)),
        5 => json!("x".repeat(random.below(3) * 40_000)),
        6 => Value::Array((0..random.below(4)).map(|_| value(random, depth + 1)).collect()),
        _ => object(random, depth + 1),
    }
}

fn object(random: &mut Random, depth: usize) -> Value {
    let mut map = Map::new();
    for _ in 0..random.below(5) {
        map.insert(random.pick(KEYS).to_string(), value(random, depth));
    }
    Value::Object(map)
}

fn seed() -> u64 {
    std::env::var("MNEMO_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5EED_1234_ABCD_0001)
}

fn rounds() -> usize {
    std::env::var("MNEMO_FUZZ_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(150)
}

#[test]
fn the_language_server_survives_garbage_and_garbage_writes_nothing() {
    let seed = seed();
    let mut random = Random(seed);
    let env = Env::new();
    let lock = env.remember("gotcha", "Release the lock before restarting");
    env.ok(&["export"]);
    let before = env.fingerprint();
    let mut client = Client::start(&env);
    client.request("initialize", json!({ "processId": null, "rootUri": uri(&env.root), "capabilities": {} }));
    client.notify("initialized", json!({}));
    let mirror = uri(&env.root.join("MEMORY.md"));
    let methods = [
        "textDocument/hover",
        "textDocument/definition",
        "textDocument/codeAction",
        "textDocument/completion",
        "textDocument/codeLens",
        "textDocument/inlayHint",
        "workspace/symbol",
        "workspace/executeCommand",
        "memory/checkin",
        "memory/checkout",
        "textDocument/didOpen",
        "textDocument/didChange",
        "textDocument/didSave",
        "workspace/didChangeConfiguration",
        "no/such/method",
    ];
    // Malformed frames: bodies that are not JSON-RPC, unknown headers.
    for frame in [
        "Content-Length: 5\r\n\r\nhello",
        "Content-Length: 2\r\n\r\n[]",
        "Content-Length: 4\r\n\r\n1234",
        "Content-Length: 4\r\n\r\nnull",
        "X-Whatever: 1\r\nContent-Length: 2\r\n\r\n{}",
        "Content-Length: 36\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":[],\"method\":7}",
        // Longer than its body: it eats into the next frame, which is lost;
        // the reader resynchronises at the frame after.
        "Content-Length: 9\r\n\r\n{\"a\":1}",
        "Content-Length: 52\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"initialized\",\"params\":{}}",
    ] {
        client.send_raw(frame.as_bytes());
    }
    for _ in 0..rounds() {
        let method = *random.pick(&methods);
        let mut params = object(&mut random, 0);
        if random.below(2) == 0 {
            params["textDocument"] = json!({ "uri": mirror, "version": 1, "text": value(&mut random, 2) });
        }
        if random.below(3) == 0 {
            client.notify(method, params);
        } else {
            let id = client.send_request(method, params.clone());
            client.wait(|m| m["id"] == id); // answered: a result or an error
        }
    }
    // Still serving.
    let hover = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri(&env.root.join("src/lock.rs")) }, "position": { "line": 0, "character": 0 } }),
    );
    assert!(hover.get("error").is_none(), "{hover}");
    let symbols = client.request("workspace/symbol", json!({ "query": "restarting" }));
    assert_eq!(symbols["result"][0]["name"], format!("#{lock} Release the lock before restarting"), "seed {seed}");
    client.finish(); // exits cleanly, no panic on stderr
    assert_eq!(env.fingerprint(), before, "seed {seed}: garbage wrote nothing");
}

#[test]
fn the_mcp_server_refuses_random_tool_arguments_without_writing() {
    let seed = seed() ^ 0xFF;
    let mut random = Random(seed);
    let env = Env::new();
    let lock = env.remember("gotcha", "Release the lock before restarting");
    // The eight tools, and two an agent must never have (refused as unknown).
    let tools = [
        "remember",
        "recall",
        "expand",
        "revoke",
        "reinstate",
        "flag_stale",
        "history",
        "context",
        "promote",
        "forget",
    ];
    let mut mcp = Mcp::start(&env);
    let mut accepted = 0;
    for round in 0..rounds() {
        let tool = *random.pick(&tools);
        let arguments = if random.below(5) == 0 { value(&mut random, 1) } else { object(&mut random, 0) };
        let before = env.fingerprint();
        let answer = mcp.request("tools/call", json!({ "name": tool, "arguments": arguments }));
        let refused = answer.get("error").is_some() || answer["result"]["isError"] == true;
        if refused {
            assert_eq!(env.fingerprint(), before, "seed {seed} round {round}: a refused {tool} wrote: {arguments}");
        } else {
            accepted += 1;
        }
    }
    let (history, error) = mcp.call("history", json!({ "id": lock }));
    assert!(!error && history.contains("created"), "still serving: {history}");
    mcp.finish();
    env.ok(&["store", "verify"]);
    assert!(accepted < rounds(), "seed {seed}: garbage was mostly refused ({accepted} accepted)");
}
