//! `mnemo check` through the binary: anchored text that moved, drifted or
//! went missing; one stale flag per drift, even from two processes at once;
//! a reinstated note stays fresh until the text changes again.

use crate::support::Env;

fn anchored(env: &Env, title: &str, spec: &str) -> i64 {
    let out = env.ok(&["remember", "--kind", "gotcha", "--title", title, "--anchor", spec]);
    out.trim().trim_start_matches('#').parse().unwrap()
}

/// Two `mnemo check` processes at the same time.
fn check_twice_at_once(env: &Env) {
    std::thread::scope(|s| {
        let a = s.spawn(|| env.ok(&["check"]));
        let b = s.spawn(|| env.ok(&["check"]));
        a.join().unwrap();
        b.join().unwrap();
    });
}

fn stale_events(env: &Env, id: i64) -> Vec<String> {
    env.json(&["history", &id.to_string()])
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "stale_flagged")
        .map(|e| format!("{} {}", e["actor"].as_str().unwrap(), e["reason"].as_str().unwrap()))
        .collect()
}

#[test]
fn check_reports_moved_drifted_and_missing_anchors_and_flags_each_drift_once() {
    let env = Env::new();
    let lock = anchored(&env, "Release the lock before restarting", "src/lock.rs:2-3");
    let moved = anchored(&env, "Line ten is special", "src/lock.rs:10-10");
    std::fs::write(env.root.join("src/gone.rs"), "fn gone() {}\n").unwrap();
    let gone = anchored(&env, "The gone module", "src/gone.rs:1");
    assert_eq!(env.ok(&["check"]), "3 anchors in 2 files: 3 fresh, 0 moved, 0 drifted, 0 missing, 0 not checked\n");

    // Line 2 changes; a line inserted above line 10 moves it; gone.rs is deleted.
    let text: String = (1..=30)
        .map(|i| {
            if i == 2 {
                "line two, edited\n".to_string()
            } else if i == 5 {
                format!("line {i}\ninserted\n")
            } else {
                format!("line {i}\n")
            }
        })
        .collect();
    std::fs::write(env.root.join("src/lock.rs"), text).unwrap();
    std::fs::remove_file(env.root.join("src/gone.rs")).unwrap();
    let out = env.ok(&["check"]);
    assert_eq!(
        out,
        format!(
            "#{lock} src/lock.rs:2-3 drifted: the lines changed since 2026-08-04\n\
             #{moved} src/lock.rs:10-10 moved to lines 11-11 (unchanged text; to follow it, edit the anchor line of the note to 11-11 in `mnemo edit`, or use \"Re-anchor\" on those lines in the editor)\n\
             #{gone} src/gone.rs:1-1 missing: src/gone.rs is gone (deleted or renamed)\n\
             3 anchors in 2 files: 0 fresh, 1 moved, 1 drifted, 1 missing, 0 not checked\n\
             flagged stale: #{lock}, #{gone}\n"
        )
    );
    assert_eq!(stale_events(&env, lock), ["system anchor src/lock.rs:2-3 changed since 2026-08-04"]);
    assert_eq!(stale_events(&env, gone), ["system anchor file src/gone.rs is gone (deleted or renamed)"]);
    assert_eq!(env.json(&["show", &moved.to_string()])["state"], "active", "moved text is not drift");

    // Two processes at once, after a person reinstated: the same drift never flags again.
    env.ok(&["reinstate", &lock.to_string()]);
    check_twice_at_once(&env);
    assert_eq!(stale_events(&env, lock).len(), 1);
    assert_eq!(env.json(&["show", &lock.to_string()])["state"], "active", "reinstated after drift: fresh again");

    // A later change drifts it again, once, even with two checkers.
    let text = std::fs::read_to_string(env.root.join("src/lock.rs"))
        .unwrap()
        .replace("line two, edited", "line two, edited twice");
    std::fs::write(env.root.join("src/lock.rs"), text).unwrap();
    check_twice_at_once(&env);
    assert_eq!(stale_events(&env, lock).len(), 2);
    let json = env.json(&["check"]);
    assert_eq!(json["files"], 2);
    assert_eq!(json["flagged"], serde_json::json!([]));
    env.ok(&["store", "verify"]);
}

/// The language server notices an anchored file changing on disk: the entry
/// in MEMORY.md and the anchored lines in the source get their diagnostics
/// within two seconds; code lens, hover and re-anchor work on the source.
#[test]
fn the_server_shows_drift_in_memory_and_source_and_re_anchors() {
    use crate::lsp::{Client, uri};
    use serde_json::json;

    let env = Env::new();
    let id = anchored(&env, "Release the lock before restarting", "src/lock.rs:2-3");
    env.ok(&["export", "--enable"]);
    let mirror = env.root.join("MEMORY.md");
    let source = env.root.join("src/lock.rs");
    let mut client = Client::start(&env);
    client.request("initialize", json!({ "processId": null, "rootUri": uri(&env.root), "capabilities": {} }));
    client.notify("initialized", json!({}));
    for path in [&mirror, &source] {
        let text = std::fs::read_to_string(path).unwrap();
        client.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri(path), "languageId": "text", "version": 1, "text": text } }),
        );
    }
    // Asked at once, before the first drift check ran: hover and lens wait
    // for it (they were empty for its first 200 ms and more).
    let hover = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri(&source) }, "position": { "line": 1, "character": 0 } }),
    );
    assert!(hover["result"]["contents"]["value"].as_str().is_some_and(|v| v.contains(&format!("#{id}"))), "{hover}");
    // The first drift check finds the anchor fresh: a lens, no diagnostics.
    let lenses = client.request("textDocument/codeLens", json!({ "textDocument": { "uri": uri(&source) } }));
    assert_eq!(lenses["result"][0]["command"]["title"], format!("1 note: #{id}"), "{lenses}");
    assert_eq!(lenses["result"][0]["range"]["start"]["line"], 1);

    let text = std::fs::read_to_string(&source).unwrap().replace("line 2\n", "line 2, edited\n");
    std::fs::write(&source, text).unwrap();
    let edited_at = std::time::Instant::now();
    let drift_warning = format!("#{id}: the text at src/lock.rs:2-3 changed since 2026-08-04");
    let source_info = format!("memory #{id} describes these lines; they changed since 2026-08-04");
    let published = |m: &serde_json::Value, path: &std::path::Path, message: &str| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == uri(path)
            && m["params"]["diagnostics"].as_array().is_some_and(|d| d.iter().any(|d| d["message"] == message))
    };
    // Both documents are republished after the check, in either order.
    let (mut memory, mut in_source) = (None, None);
    while memory.is_none() || in_source.is_none() {
        let m = client.wait(|m| m["method"] == "textDocument/publishDiagnostics");
        if published(&m, &mirror, &drift_warning) {
            memory = Some(m);
        } else if published(&m, &source, &source_info) {
            in_source = Some(m);
        }
    }
    let (memory, in_source) = (memory.unwrap(), in_source.unwrap());
    assert!(edited_at.elapsed() < std::time::Duration::from_secs(2), "{:?}", edited_at.elapsed());
    let warning = memory["params"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["message"] == drift_warning.as_str())
        .unwrap()
        .clone();
    assert_eq!(warning["severity"], 2);
    assert_eq!(warning["relatedInformation"][0]["location"]["uri"], uri(&source));
    assert_eq!(in_source["params"]["diagnostics"][0]["severity"], 3);
    assert_eq!(in_source["params"]["diagnostics"][0]["range"]["start"]["line"], 1);
    assert_eq!(env.json(&["show", &id.to_string()])["state"], "stale_flagged");

    let hover = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri(&source) }, "position": { "line": 2, "character": 0 } }),
    );
    assert!(
        hover["result"]["contents"]["value"].as_str().unwrap().contains("Release the lock before restarting"),
        "{hover}"
    );
    let range = json!({ "start": { "line": 1, "character": 0 }, "end": { "line": 1, "character": 0 } });
    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri(&source) }, "range": range, "context": { "diagnostics": [] } }),
    );
    let titles: Vec<&str> =
        actions["result"].as_array().unwrap().iter().map(|a| a["title"].as_str().unwrap()).collect();
    assert_eq!(
        titles,
        [
            format!("Re-anchor #{id} to the current text (lines 2-3)"),
            format!("Open note #{id}"),
            format!("Revoke #{id}…")
        ]
    );
    let reanchor = actions["result"][0]["command"].clone();
    let (done, seen) = client.request_seeing(
        "workspace/executeCommand",
        json!({ "command": reanchor["command"], "arguments": reanchor["arguments"] }),
    );
    let new_id = done["result"]["supersededBy"].as_i64().expect("re-anchored");
    let cleared = |m: &serde_json::Value| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == uri(&source)
            && m["params"]["diagnostics"] == json!([])
    };
    // Under load the drift check may publish before the command's answer arrives.
    if !seen.iter().any(cleared) {
        client.wait(cleared);
    }
    client.finish();
    assert_eq!(env.json(&["show", &id.to_string()])["state"], "superseded");
    let new = env.json(&["show", &new_id.to_string()]);
    assert_eq!(
        (new["state"].as_str(), new["title"].as_str()),
        (Some("active"), Some("Release the lock before restarting"))
    );
    assert!(env.ok(&["check"]).starts_with("1 anchors in 1 files: 1 fresh"), "the re-anchored note is fresh");
}
