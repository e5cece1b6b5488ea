//! Bad input through the binary: each gets a one-line error saying what was
//! wrong and what to do, a non-zero exit, and no change to the store.

use crate::support::Env;

fn assert_one_line(err: &str, expected: &str) {
    assert!(err.starts_with("error: ") && err.contains(expected), "expected {expected:?} in {err:?}");
    // clap's usage errors end with its standard pointer to --help; the error itself is one line.
    let own = err.trim_end().trim_end_matches("For more information, try '--help'.").trim_end();
    assert_eq!(own.lines().count(), 1, "one line: {err:?}");
}

#[test]
fn unknown_ids_kinds_priorities_and_anchors() {
    let env = Env::new();
    env.remember("gotcha", "a");
    let before = env.fingerprint();
    assert_one_line(&env.fails(&["show", "42"], 1), "no note #42 in this workspace");
    assert_one_line(&env.fails(&["revoke", "42", "--reason", "x"], 1), "no note #42 in this workspace");
    assert_one_line(&env.fails(&["show", "abc"], 2), "'abc' is not a note id; ids look like 12 or #12");
    assert_one_line(
        &env.fails(&["remember", "--kind", "gotchas", "--title", "x"], 2),
        "unknown kind 'gotchas'; expected one of: directive, task",
    );
    assert_one_line(
        &env.fails(&["remember", "--kind", "task", "--title", "x", "--priority", "urgent"], 2),
        "unknown priority 'urgent'; expected one of: high, medium, low",
    );
    assert_one_line(&env.fails(&["list", "--state", "dead"], 2), "unknown state 'dead'");
    let anchor = |spec: &str| env.fails(&["remember", "--kind", "task", "--title", "x", "--anchor", spec], 1);
    assert_one_line(&anchor("../outside.rs:1-2"), "is outside the workspace");
    assert_one_line(&anchor("/etc/passwd:1-2"), "is outside the workspace");
    assert_one_line(&anchor("src/lock.rs:29-31"), "is past the end of src/lock.rs, which has 30 lines");
    assert_one_line(&anchor("src/missing.rs:1-2"), "anchor file 'src/missing.rs' does not exist");
    assert_one_line(&anchor("src/lock.rs"), "is not PATH:START-END");
    std::os::unix::fs::symlink("/etc/hostname", env.root.join("src/escape.rs")).unwrap();
    assert_one_line(&anchor("src/escape.rs:1"), "is outside the workspace");
    let opaque = env.fails(
        &["--workspace", "larder", "remember", "--kind", "task", "--title", "x", "--anchor", "src/lock.rs:1"],
        1,
    );
    assert_one_line(&opaque, "anchors need a workspace directory");
    assert_one_line(
        &env.fails(&["--workspace", "./no/such/dir", "list"], 1),
        "workspace directory './no/such/dir' does not exist",
    );
    assert_eq!(env.fingerprint(), before);
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_and_left_intact() {
    let env = Env::new().file_store();
    std::fs::create_dir_all(env.store.parent().unwrap()).unwrap();
    let garbage = "not a database\n".repeat(500);
    std::fs::write(&env.store, &garbage).unwrap();
    for args in [&["list"][..], &["remember", "--kind", "task", "--title", "x"][..], &["store", "verify"][..]] {
        let err = env.fails(args, 1);
        assert_one_line(&err, "is not a mnemo store (not an SQLite database); move it aside or pass --store PATH");
    }
    assert_eq!(std::fs::read_to_string(&env.store).unwrap(), garbage);
}

#[test]
fn a_store_from_a_newer_mnemo_is_refused() {
    let env = Env::new().file_store();
    env.remember("gotcha", "a");
    let newer = mnemo_store::SCHEMA_VERSION + 1;
    rusqlite::Connection::open(&env.store).unwrap().pragma_update(None, "user_version", newer).unwrap();
    let err = env.fails(&["list"], 1);
    let expected = format!(
        "has schema version {newer}, newer than this mnemo understands ({}); upgrade mnemo",
        mnemo_store::SCHEMA_VERSION
    );
    assert_one_line(&err, &expected);
}

#[test]
fn an_unwritable_store_location_is_a_clear_error() {
    let env = Env::new();
    let err = env.fails(&["--store", "/proc/mnemo/memory.db", "remember", "--kind", "task", "--title", "x"], 1);
    assert_one_line(&err, "cannot open the store at /proc/mnemo/memory.db: the directory /proc/mnemo does not exist");
    assert_one_line(&err, "pass --store PATH");
    let dir = env.home.join("a-directory");
    std::fs::create_dir_all(&dir).unwrap();
    assert_one_line(&env.fails(&["--store", dir.to_str().unwrap(), "list"], 1), "it is a directory");
}

#[test]
fn a_bad_clock_override_is_reported() {
    let env = Env::new();
    let out = env.command(&["list"]).env("MNEMO_NOW", "yesterday").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_one_line(&String::from_utf8(out.stderr).unwrap(), "MNEMO_NOW 'yesterday' is not RFC 3339 UTC");
}
