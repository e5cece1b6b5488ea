//! The resident model (`mnemo daemon`), as a person's commands meet it: the
//! first recall starts it and answers on its own; the next ones ask it and
//! answer exactly the same; it sits in a private directory, exits when idle,
//! and a killed one (its socket left behind) or an unsafe directory never
//! stops a command.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::support::Env;

/// A command of `env` with the resident model allowed, idle after `idle` seconds.
fn with_daemon(env: &Env, args: &[&str], idle: u64) -> Command {
    let mut cmd = env.command(args);
    cmd.env_remove("MNEMO_DAEMON").env("MNEMO_DAEMON_IDLE_SECONDS", idle.to_string()).env("MNEMO_LOG", "info");
    cmd
}

fn ok(mut cmd: Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out
}

fn runtime_dir(env: &Env) -> PathBuf {
    env.home.join("run/mnemo")
}

fn sockets(env: &Env) -> Vec<PathBuf> {
    std::fs::read_dir(runtime_dir(env))
        .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default()
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < Duration::from_secs(30), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn used_the_resident_model(out: &Output) -> bool {
    String::from_utf8_lossy(&out.stderr).contains("using the resident model")
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn the_first_command_starts_the_resident_model_and_the_next_ones_get_the_same_answers_from_it() {
    let env = Env::with_model();
    env.ok(&[
        "remember",
        "--kind",
        "gotcha",
        "--title",
        "The cache daemon deadlocks when locks are taken out of order",
    ]);
    env.ok(&["remember", "--kind", "finding", "--title", "CSS builds with tailwind v3"]);
    let query = ["recall", "--json", "why does the cache daemon hang"];
    let alone = env.ok(&query);

    // The first command with the resident model allowed answers on its own and starts it.
    let first = ok(with_daemon(&env, &query, 5));
    assert!(!used_the_resident_model(&first));
    assert_eq!(String::from_utf8(first.stdout).unwrap(), alone);
    wait_for("the socket", || sockets(&env).len() == 1);
    let socket = sockets(&env).pop().unwrap();
    assert_eq!(mode(&runtime_dir(&env)), 0o700, "only its owner may enter the directory");
    assert_eq!(mode(&socket), 0o600, "only its owner may connect");

    // The next ones ask it, and get byte for byte the same answer.
    let mut asked = None;
    wait_for("a command that asks the resident model", || {
        let out = ok(with_daemon(&env, &query, 5));
        let used = used_the_resident_model(&out);
        asked = Some(out);
        used
    });
    assert_eq!(String::from_utf8(asked.unwrap().stdout).unwrap(), alone);
    // A note written through it is embedded as one written alone: found by meaning.
    let remembered = ok(with_daemon(
        &env,
        &["remember", "--kind", "decision", "--title", "Background jobs run on the RQ worker, not threads"],
        5,
    ));
    assert!(used_the_resident_model(&remembered));
    let found = env.json(&["recall", "which queue processes background work"]);
    assert!(found["results"][0]["title"].as_str().unwrap().contains("RQ worker"), "{found}");
    assert_eq!(found["ranking"], "hybrid", "{found}");

    // Idle, it exits and takes its socket with it.
    wait_for("the idle resident model to exit", || sockets(&env).is_empty());
}

#[test]
fn a_killed_resident_model_or_an_unsafe_directory_never_stops_a_command() {
    let env = Env::with_model();
    env.ok(&["remember", "--kind", "gotcha", "--title", "Retry the upload when S3 answers 503"]);
    let query = ["recall", "--json", "the upload fails with 503"];
    let alone = env.ok(&query);

    // A resident model started by hand, then killed: its socket stays behind.
    let mut daemon = with_daemon(&env, &["daemon", "--idle-seconds", "60"], 60).spawn().unwrap();
    wait_for("the socket", || sockets(&env).len() == 1);
    let out = ok(with_daemon(&env, &query, 60));
    assert!(used_the_resident_model(&out));
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    assert_eq!(sockets(&env).len(), 1, "a killed daemon leaves its socket");
    let out = ok(with_daemon(&env, &query, 3));
    assert!(!used_the_resident_model(&out), "nothing answers on the stale socket; the command loads its own");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), alone);
    // ... and starts a new one, which replaces the stale socket and serves.
    wait_for("a new resident model", || used_the_resident_model(&ok(with_daemon(&env, &query, 3))));
    wait_for("the idle resident model to exit", || sockets(&env).is_empty());

    // A runtime directory others may enter is not used: no socket, same answers.
    std::fs::set_permissions(runtime_dir(&env), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = ok(with_daemon(&env, &query, 3));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), alone);
    std::thread::sleep(Duration::from_millis(500));
    assert!(sockets(&env).is_empty(), "no resident model in a directory others may enter");
}
