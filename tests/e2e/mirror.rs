//! The mirror and checkout through the binary: opt-in, re-render after every
//! CLI write, catch-up at start, independence from TZ, failures that never
//! fail the write, path refusals, and the long-lived `export --watch`.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::Env;

fn mirror(env: &Env) -> String {
    std::fs::read_to_string(env.root.join("MEMORY.md")).unwrap()
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn enabling_the_export_writes_the_mirror_and_every_write_keeps_it_current() {
    let env = Env::new();
    let id = env.remember("gotcha", "Release the lock before restart").to_string();
    let out = env.ok(&["export", "--enable"]);
    assert_eq!(out, "wrote MEMORY.md (1 notes, epoch 1)\n");
    let config = std::fs::read_to_string(env.root.join(".mnemo/config.toml")).unwrap();
    assert_eq!(config, "[memory_export]\nenabled = true\npath = \"MEMORY.md\"\ndebounce_seconds = 3.0\n");
    assert_eq!(std::fs::metadata(env.root.join("MEMORY.md")).unwrap().permissions().mode() & 0o777, 0o444);
    let before = mirror(&env);
    env.ok(&["revoke", &id, "--reason", "wrong order"]);
    let after = mirror(&env);
    let changed: Vec<(&str, &str)> = before.lines().zip(after.lines()).filter(|(a, b)| a != b).collect();
    assert_eq!(
        changed,
        [(
            "- [#1] 2026-08-04 · medium · Release the lock before restart",
            "- [#1] 2026-08-04 · medium · REVOKED 2026-08-04 (wrong order) · Release the lock before restart"
        )],
        "the diff is exactly the changed note"
    );
    env.remember("task", "Port the cache");
    assert!(mirror(&env).contains("- [#2] 2026-08-04 · medium · Port the cache\n"));
    assert_eq!(env.ok(&["export"]), "MEMORY.md is up to date (2 notes, epoch 3)\n");
    assert_eq!(
        env.ok(&["export", "--disable"]),
        format!("mirror export disabled for {}; MEMORY.md is left as it is\n", env.root.display())
    );
    env.remember("task", "Not mirrored");
    assert!(!mirror(&env).contains("Not mirrored"));
}

#[test]
fn a_mirror_left_behind_is_re_rendered_by_the_next_process_that_opens_the_workspace() {
    let env = Env::new();
    env.ok(&["export", "--enable"]);
    // Stand-in for a writer that died inside its debounce window: the store
    // moves on while the mirror does not (the config is briefly off).
    std::fs::write(env.root.join(".mnemo/config.toml"), "[memory_export]\nenabled = false\n").unwrap();
    env.remember("finding", "missing from the mirror");
    assert!(!mirror(&env).contains("missing from the mirror"));
    std::fs::write(env.root.join(".mnemo/config.toml"), "[memory_export]\nenabled = true\n").unwrap();
    env.ok(&["list"]);
    assert!(mirror(&env).contains("missing from the mirror"), "a read re-rendered the mirror that was behind");
}

#[test]
fn the_mirror_is_identical_under_any_time_zone() {
    let env = Env::new();
    for (i, kind) in
        ["directive", "task", "gotcha", "finding", "reference", "decision", "operational"].iter().enumerate()
    {
        let late = format!("2026-08-0{}T23:30:00Z", i + 1);
        let out = env
            .command(&["remember", "--kind", kind, "--title", &format!("{kind} note")])
            .env("MNEMO_NOW", &late)
            .output()
            .unwrap();
        assert!(out.status.success());
    }
    env.ok(&["revoke", "3", "--reason", "late-night mistake"]);
    let render = |tz: &str, file: &str| {
        let out = env.command(&["export", "--path", file]).env("TZ", tz).env("LC_ALL", "C").output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        std::fs::read(env.root.join(file)).unwrap()
    };
    let utc = render("UTC", "utc.md");
    assert_eq!(render("Pacific/Kiritimati", "kiritimati.md"), utc);
    assert_eq!(render("America/Adak", "adak.md"), utc);
    assert!(String::from_utf8(utc).unwrap().contains("- [#1] 2026-08-01 · medium · directive note\n"));
}

#[test]
fn a_failing_export_never_fails_the_write() {
    let env = Env::new();
    env.ok(&["export", "--enable"]);
    std::fs::write(env.root.join(".mnemo/config.toml"), "[memory_export]\nenabled = true\npath = \"gone/MEMORY.md\"\n")
        .unwrap();
    let out = env.run(&["remember", "--kind", "task", "--title", "still saved"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "#1\n");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("warning: the mirror was not updated: cannot write the mirror gone/MEMORY.md: the directory"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "reported once: {err}");
    assert_eq!(env.json(&["show", "1"])["title"], "still saved");
    std::fs::create_dir(env.root.join("gone")).unwrap();
    env.remember("task", "retried");
    let text = std::fs::read_to_string(env.root.join("gone/MEMORY.md")).unwrap();
    assert!(text.contains("still saved") && text.contains("retried"));

    std::fs::write(env.root.join(".mnemo/config.toml"), "[memory_export]\nenabled = true\npath = \"/etc/MEMORY.md\"\n")
        .unwrap();
    let out = env.run(&["remember", "--kind", "task", "--title", "outside"]);
    assert!(out.status.success());
    assert!(
        String::from_utf8(out.stderr).unwrap().contains("the mirror path '/etc/MEMORY.md' is outside the workspace")
    );
}

#[test]
fn export_refuses_bad_paths_and_leaves_the_store_and_old_mirror_alone() {
    let env = Env::new();
    env.remember("gotcha", "a");
    env.ok(&["export"]);
    let old_mirror = mirror(&env);
    std::fs::write(env.root.join("copy.md"), &old_mirror).unwrap();
    let before = env.fingerprint();
    let cases = [
        (vec!["export", "--path", "../MEMORY.md"], "is outside the workspace"),
        (vec!["export", "--path", "/tmp/MEMORY.md"], "is outside the workspace"),
        (vec!["export", "--path", "missing/MEMORY.md"], "the directory"),
        (vec!["export", "--path", "src"], "it is a directory"),
        (vec!["--workspace", "larder", "export"], "the mirror needs a workspace directory"),
        (vec!["checkout", "--out", "MEMORY.md"], "is the read-only mirror; write the checkout somewhere else"),
        (vec!["checkout", "--out", "copy.md"], "is the read-only mirror; write the checkout somewhere else"),
    ];
    for (args, expected) in cases {
        let err = env.fails(&args, 1);
        assert!(err.starts_with("error: ") && err.contains(expected), "{args:?}: {err}");
    }
    assert_eq!(env.fingerprint(), before);
    assert_eq!(mirror(&env), old_mirror);
}

#[test]
fn checkout_prints_the_editable_flavour_with_its_epoch() {
    let env = Env::new();
    env.remember("gotcha", "a");
    env.remember("directive", "b");
    let text = env.ok(&["checkout"]);
    assert!(text.starts_with(&format!(
        "<!-- mnemo checkout · workspace {} · epoch 2 -->\n# Memory · project\n",
        env.root.display()
    )));
    assert!(text.contains("## Directives\n\n- [#2] 2026-08-04 · medium · b\n\n## Tasks\n"));
    let out = env.home.join("checkout.md");
    env.ok(&["checkout", "--out", out.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), text);
    assert_eq!(env.json(&["checkout"])["epoch"], 2);
    let empty = Env::new();
    assert!(empty.ok(&["checkout"]).ends_with("## Decisions\n\n## Operational\n"));
}

#[test]
fn export_watch_keeps_a_mirror_current_for_writes_from_other_processes() {
    let env = Env::new();
    std::fs::create_dir_all(env.root.join(".mnemo")).unwrap();
    std::fs::write(env.root.join(".mnemo/config.toml"), "[memory_export]\nenabled = false\ndebounce_seconds = 0.2\n")
        .unwrap();
    let mut watcher = env
        .command(&["export", "--watch", "--path", "WATCHED.md"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let watched = env.root.join("WATCHED.md");
    wait_until("the initial render", || watched.is_file());
    for i in 0..3 {
        env.remember("finding", &format!("burst note {i}"));
    }
    wait_until("the watcher to render the burst", || {
        std::fs::read_to_string(&watched).unwrap_or_default().contains("burst note 2")
    });
    watcher.stdin.take().unwrap().write_all(b"").unwrap();
    let out = watcher.wait_with_output().unwrap();
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!err.contains("panicked") && !err.contains("warning"), "{err}");
    assert!(err.contains("rendered epoch 3"), "{err}");
}

/// A person keeps the workspace's own mirror with `mnemo export --watch` in
/// a terminal: it stands for the mirror as an open editor does, so the
/// agents' commands leave the render to it; closing its stdin (Ctrl-D)
/// catches the mirror up, and writers render again after it.
#[test]
fn export_watch_of_the_workspaces_own_mirror_renders_for_every_writer() {
    let env = Env::new().file_store();
    env.ok(&["export", "--enable"]);
    let mut watcher = env.command(&["export", "--watch"]).stdin(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    wait_until("the watcher stands for the mirror", || someone_stands(&env));
    written_without_rendering(&env, "while watched", 3);
    left_to_whoever_stands(&env, "logged");
    wait_until("the watcher renders the writes", || {
        mirror(&env).contains("while watched 2") && mirror(&env).contains("logged")
    });
    env.remember("finding", "just before Ctrl-D");
    watcher.stdin.take().unwrap().write_all(b"").unwrap();
    let out = watcher.wait_with_output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{err}");
    assert!(err.contains("current for every writer") && !err.contains("warning") && !err.contains("panicked"), "{err}");
    assert!(mirror(&env).contains("just before Ctrl-D"), "caught up as it stopped");
    assert!(!someone_stands(&env));
    env.remember("finding", "rendered by its writer");
    assert!(mirror(&env).contains("rendered by its writer"));
    // The same command twice, in two terminals: the second waits while the
    // first stands, and takes over (within its look, every 2 s) when the
    // first is stopped with Ctrl-C (SIGINT); `kill` (SIGTERM) stops it the
    // same way. Each catches up and ends well, not killed midway.
    let watch = || env.command(&["export", "--watch"]).stdin(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let first = watch();
    wait_until("the first watcher stands", || someone_stands(&env));
    let second = watch();
    env.remember("finding", "while two watch");
    signal(first.id(), "-INT");
    let out = first.wait_with_output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success() && !err.contains("warning"), "{:?}: {err}", out.status);
    assert!(mirror(&env).contains("while two watch"));
    wait_until("the second watcher takes over", || someone_stands(&env));
    left_to_whoever_stands(&env, "left to the second watcher");
    wait_until("the second watcher renders it", || mirror(&env).contains("left to the second watcher"));
    signal(second.id(), "-TERM");
    let out = second.wait_with_output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success() && !err.contains("warning"), "{:?}: {err}", out.status);
    assert!(!someone_stands(&env));
    assert_eq!(env.ok(&["export"]).split(' ').nth(1), Some("is"), "the mirror is up to date");
}

/// Writes from the CLI (`count` of them, titled `prefix` and a number) that
/// return with nothing on stderr: no render of their own failed or ran late.
fn written_without_rendering(env: &Env, prefix: &str, count: usize) {
    for i in 0..count {
        let out = env.run(&["remember", "--kind", "finding", "--title", &format!("{prefix} {i}")]);
        assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    }
}

/// A CLI write whose log says it left the mirror's render to the process
/// standing for it.
fn left_to_whoever_stands(env: &Env, title: &str) {
    let out =
        env.command(&["remember", "--kind", "finding", "--title", title]).env("MNEMO_LOG", "debug").output().unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && log.contains("mirror left to the process standing for it"), "{log}");
}

/// Whether a process stands for a mirror of the store (a standing file
/// beside it is locked).
fn someone_stands(env: &Env) -> bool {
    let data = env.store.parent().unwrap();
    std::fs::read_dir(data).unwrap().map(|e| e.unwrap().path()).any(|p| {
        p.file_name().unwrap().to_string_lossy().starts_with("memory.db-mirror-")
            && p.extension().is_some_and(|e| e == "standing")
            && std::fs::File::open(&p).unwrap().try_lock().is_err()
    })
}

/// A person with the editor open and no agent session: the language server
/// stands for the mirror, so the agents' hooks and commands return without
/// rendering it, a save returns before the mirror is rendered, and the
/// mirror follows both; closing the editor leaves the mirror current.
#[test]
fn an_open_editor_renders_the_mirror_for_every_writer_and_leaves_it_current() {
    let env = Env::new().file_store();
    env.ok(&["export", "--enable"]);
    let mut client = crate::lsp::Client::initialized(&env);
    wait_until("the language server stands for the mirror", || someone_stands(&env));

    written_without_rendering(&env, "written by an agent", 5);
    wait_until("the mirror shows the agent's writes", || mirror(&env).contains("written by an agent 4"));
    // The agent's command left the render to the server (its log says so).
    left_to_whoever_stands(&env, "logged");

    // A save in the editor: checked in, and the mirror follows.
    let (memory, text) = client.open_checkout();
    let edited = text.replace("written by an agent 2", "written by an agent 2, corrected by hand");
    let saved = client.request("memory/checkin", serde_json::json!({ "uri": memory, "text": edited }));
    assert_eq!(saved["result"]["applied"].as_array().map(Vec::len), Some(1), "{saved}");
    wait_until("the mirror shows the save", || mirror(&env).contains("corrected by hand"));

    // A write just before the editor closes is shown once it has (that the
    // worker catches up as it stops is held by mnemo-store's tests/mirror.rs).
    env.remember("finding", "the last word");
    let stderr = client.finish();
    assert!(!stderr.contains("warning"), "{stderr}");
    assert!(mirror(&env).contains("the last word"), "the server caught the mirror up as it stopped");
    assert!(!someone_stands(&env));
    assert_eq!(env.ok(&["export"]).split(' ').nth(1), Some("is"), "the mirror is up to date");
    // With no one standing, a writer renders again before it returns.
    env.remember("finding", "rendered by its writer");
    assert!(mirror(&env).contains("rendered by its writer"));
}

/// Two windows on one workspace: one language server stands for the
/// mirror; when that window closes, the other takes over (within its look,
/// every 2 s), and meanwhile writers render themselves — nothing is left behind.
#[test]
fn a_second_window_takes_over_the_mirror_when_the_first_closes() {
    let env = Env::new().file_store();
    env.ok(&["export", "--enable"]);
    let first = crate::lsp::Client::initialized(&env);
    wait_until("the first window's server stands", || someone_stands(&env));
    let mut second = crate::lsp::Client::initialized(&env);
    env.remember("finding", "while both are open");
    wait_until("the mirror follows", || mirror(&env).contains("while both are open"));
    first.finish();
    // Written before the second stands (or just as it does): never left behind.
    env.remember("finding", "between the two");
    wait_until("the second window's server stands", || someone_stands(&env));
    left_to_whoever_stands(&env, "left to the second");
    wait_until("the second renders it", || mirror(&env).contains("left to the second"));
    assert!(mirror(&env).contains("between the two"));
    let _ = second.request("workspace/symbol", serde_json::json!({ "query": "" }));
    second.finish();
    assert_eq!(env.ok(&["export"]).split(' ').nth(1), Some("is"), "the mirror is up to date");
}

fn signal(pid: u32, signal: &str) {
    assert!(std::process::Command::new("kill").args([signal, &pid.to_string()]).status().unwrap().success());
}

#[test]
fn an_agents_mcp_server_renders_the_mirror_for_every_writer_and_leaves_it_current() {
    let env = Env::new().file_store();
    // The agent's session began before the person turned the mirror on.
    let mcp = crate::mcp::Mcp::start(&env);
    env.ok(&["export", "--enable"]);
    wait_until("the MCP server stands for the mirror turned on", || someone_stands(&env));

    // The person's CLI writes return without rendering; the server renders them.
    written_without_rendering(&env, "written by hand", 5);
    wait_until("the mirror shows the CLI's writes", || mirror(&env).contains("written by hand 4"));

    // Another workspace in the same store has no one standing for its
    // mirror: its writer renders it before it returns, and this one is untouched.
    let other = env.home.join("other");
    std::fs::create_dir_all(other.join(".git")).unwrap();
    let other_dir = other.to_str().unwrap();
    env.ok(&["--workspace", other_dir, "export", "--enable"]);
    env.ok(&["--workspace", other_dir, "remember", "--kind", "finding", "--title", "in the other workspace"]);
    let other_mirror = std::fs::read_to_string(other.join("MEMORY.md")).unwrap();
    assert!(other_mirror.contains("in the other workspace"), "{other_mirror}");
    assert!(!mirror(&env).contains("in the other workspace"));

    // A write just before the server exits is shown once it has.
    env.remember("finding", "the last word");
    mcp.finish();
    assert!(mirror(&env).contains("the last word"), "the server caught the mirror up as it stopped");
    assert!(!someone_stands(&env));
    assert_eq!(env.ok(&["export"]).split(' ').nth(1), Some("is"), "the mirror is up to date");

    // A server stopped (Ctrl-Z) while standing: writes left to it wait, and
    // once it has been quiet a while, writers render again themselves.
    let mcp = crate::mcp::Mcp::start(&env);
    wait_until("the new server stands", || someone_stands(&env));
    signal(mcp.pid(), "-STOP");
    env.remember("finding", "left to a stopped server");
    assert!(!mirror(&env).contains("left to a stopped server"), "left to the server (it showed a sign of life lately)");
    std::thread::sleep(Duration::from_secs(6));
    env.remember("finding", "written once it went quiet");
    let shown = mirror(&env);
    assert!(shown.contains("left to a stopped server") && shown.contains("written once it went quiet"), "{shown}");

    // Killed while stopped, with a write left to it: the next command catches the mirror up.
    signal(mcp.pid(), "-CONT");
    std::thread::sleep(Duration::from_millis(1500)); // a sign of life again
    signal(mcp.pid(), "-STOP");
    env.remember("finding", "left to a server about to die");
    assert!(!mirror(&env).contains("left to a server about to die"));
    mcp.kill();
    env.ok(&["list"]);
    assert!(mirror(&env).contains("left to a server about to die"));
    // With no one standing, a writer renders again before it returns.
    env.remember("finding", "rendered by its writer");
    assert!(mirror(&env).contains("rendered by its writer"));
}
