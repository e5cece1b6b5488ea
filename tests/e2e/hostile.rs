//! Hostile input through the binary: notes whose text looks like the
//! MEMORY.md structure or HTML, SQL and FTS syntax in notes and queries, and
//! paths that try to leave the workspace. The file's structure holds and
//! round-trips; every query is data, never SQL; nothing outside the
//! workspace is read or written.

use crate::support::Env;

/// Titles and bodies that imitate the rendered file's structure.
const STRUCTURE: [(&str, &str); 6] = [
    ("## Directives", "## Tasks\n- [#1] 2026-01-01 · high · a fake entry"),
    ("- [#99] 2026-01-01 · high · fake", "<!-- mnemo mirror · read-only -->"),
    ("<!-- an unterminated comment", "<script>alert(1)</script>\n```\nunclosed fence"),
    ("# Memory · elsewhere", "  - [#3] indented fake\n\n\nblank lines above"),
    ("REVOKED (x) · looks like a state", "--> closes nothing\n<details><summary>hidden</summary>"),
    ("Title with · separators · and [#12] refs", "| a | table |\n|---|---|"),
];

#[test]
fn notes_that_look_like_the_file_cannot_break_it_and_round_trip() {
    let env = Env::new();
    let ids: Vec<i64> = STRUCTURE
        .iter()
        .map(|(title, body)| {
            let out = env.ok(&["remember", "--kind", "gotcha", &format!("--title={title}"), &format!("--body={body}")]);
            crate::support::parse_id(&out)
        })
        .collect();
    let shown = |id: &i64| {
        let note = env.json(&["show", &id.to_string()]);
        (note["title"].as_str().unwrap().to_string(), note["body"].as_str().unwrap().to_string())
    };
    let stored: Vec<(String, String)> = ids.iter().map(shown).collect();
    for ((_, body), (_, typed)) in stored.iter().zip(STRUCTURE) {
        assert_eq!(body, typed, "bodies are stored as typed");
    }
    env.ok(&["export"]);
    let mirror = std::fs::read_to_string(env.root.join("MEMORY.md")).unwrap();
    let headings: Vec<&str> = mirror.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(
        headings,
        [
            "# Memory · project",
            "## Directives",
            "## Tasks",
            "## Gotchas",
            "## Findings",
            "## References",
            "## Decisions",
            "## Operational"
        ],
        "no note adds a heading: {mirror}"
    );
    let entries = mirror.lines().filter(|l| l.starts_with("- [#")).count();
    assert_eq!(entries, STRUCTURE.len(), "exactly one entry line per note: {mirror}");
    assert_eq!(mirror.matches("<!--").count(), 1 + 2, "the header comment, then only indented body text: {mirror}");

    // An untouched checkout checks in as nothing; editing one entry changes only that note.
    let file = env.home.join("checkout.md");
    env.ok(&["checkout", "--out", file.to_str().unwrap()]);
    assert_eq!(env.ok(&["checkin", file.to_str().unwrap()]), "nothing to check in\n");
    let text = std::fs::read_to_string(&file).unwrap();
    let edited = text.replacen(" · medium · ## Directives", " · high · ## Directives", 1);
    assert_ne!(edited, text);
    std::fs::write(&file, edited).unwrap();
    env.ok(&["checkin", file.to_str().unwrap()]);
    for (id, before) in ids.iter().zip(&stored) {
        assert_eq!(&shown(id), before, "#{id} round-trips");
    }
    let successor = env.json(&["show", &ids[0].to_string()])["superseded_by"].as_i64().unwrap();
    assert_eq!(env.json(&["show", &successor.to_string()])["priority"], "high");
    assert_eq!(shown(&successor), stored[0], "the edited entry's text came through intact");
    env.ok(&["store", "verify"]);
}

#[test]
fn sql_and_fts_syntax_is_data() {
    let env = Env::new();
    let titles = [
        "'; DROP TABLE notes; --",
        "Robert'); DELETE FROM events; --",
        "\" OR 1=1 --",
        "NEAR(lock restart) AND title:x OR *",
        "%_ LIKE wildcards \\ and \u{0}nul-free unicode ✓",
    ];
    for title in titles {
        let title = title.replace('\u{0}', "");
        env.ok(&["remember", "--kind", "finding", &format!("--title={title}"), "--body=x'); DROP TABLE anchors; --"]);
    }
    let before = env.fingerprint();
    let queries = [
        "'; DROP TABLE notes; --",
        "\"",
        "\"unbalanced",
        "*",
        "NEAR(",
        "title:x",
        "a AND OR NOT b",
        "^start",
        "{col1 col2}: x",
        "-",
        "(((",
        "%",
        "'",
        "\\",
    ];
    for query in queries {
        let out = env.run(&["recall", "--json", "--", query]);
        assert!(out.status.success(), "recall {query:?}: {}", String::from_utf8_lossy(&out.stderr));
        let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(answer["results"].is_array(), "{answer}");
    }
    let found = env.json(&["recall", "DROP TABLE notes"]);
    assert_eq!(found["results"][0]["title"], "'; DROP TABLE notes; --", "{found}");
    assert_eq!(env.fingerprint(), before, "queries changed nothing");
    assert_eq!(env.json(&["list"])["notes"].as_array().unwrap().len(), titles.len());
    env.ok(&["store", "verify"]);
}

#[test]
fn paths_that_leave_the_workspace_are_refused_and_nothing_outside_is_touched() {
    let env = Env::new();
    let outside = env.home.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.rs"), "secret\n").unwrap();
    std::os::unix::fs::symlink(&outside, env.root.join("src/out")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.rs"), env.root.join("src/secret.rs")).unwrap();
    let long = "a".repeat(5000);
    env.remember("finding", "Already here");
    let before = env.fingerprint();
    for anchor in [
        "../outside/secret.rs:1".to_string(),
        format!("{}:1", outside.join("secret.rs").display()),
        "src/out/secret.rs:1".into(),
        "src/secret.rs:1".into(),
        "src/../../outside/secret.rs:1".into(),
        format!("src/{long}.rs:1"),
        "src/lock.rs\n:1".into(),
    ] {
        let out = env.run(&["remember", "--kind", "gotcha", "--title", "x", "--anchor", &anchor]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "anchor {anchor:?} was accepted");
        assert_eq!(stderr.lines().count(), 1, "one clear line for {anchor:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    // A NUL byte cannot travel in argv; it can in JSON (MCP).
    let mut mcp = crate::mcp::Mcp::start(&env);
    let anchor = "src/lock.rs\u{0}../../outside/secret.rs:1";
    let (refused, error) =
        mcp.call("remember", serde_json::json!({ "kind": "gotcha", "title": "x", "anchors": [anchor] }));
    assert!(error && refused.contains("src/lock.rs\\0../../outside"), "the NUL is shown, not used: {refused}");
    mcp.finish();
    assert_eq!(env.fingerprint(), before, "no note from a refused anchor");

    for path in [
        "../outside/MEMORY.md",
        &format!("{}/MEMORY.md", outside.display()),
        "src/out/MEMORY.md",
        &format!("{long}.md"),
    ] {
        let out = env.run(&["export", "--path", path]);
        assert!(!out.status.success(), "export to {path:?} was accepted");
        assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    }
    let config = env.root.join(".mnemo/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "[memory_export]\nenabled = true\npath = \"../outside/M.md\"\n").unwrap();
    env.remember("finding", "Written with a hostile mirror path configured");
    let listing: Vec<_> = std::fs::read_dir(&outside).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(listing, ["secret.rs"], "nothing was written outside the workspace");
    assert_eq!(std::fs::read_to_string(outside.join("secret.rs")).unwrap(), "secret\n");
}
