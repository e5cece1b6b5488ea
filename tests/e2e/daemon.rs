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

fn ok(mut cmd: impl std::borrow::BorrowMut<Command>) -> Output {
    let out = cmd.borrow_mut().output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out
}

fn runtime_dir(env: &Env) -> PathBuf {
    env.home.join("run/mnemo")
}

/// The sockets in `env`'s runtime directory (beside them, each daemon's lock file stays).
fn sockets(env: &Env) -> Vec<PathBuf> {
    std::fs::read_dir(runtime_dir(env))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "sock"))
                .collect()
        })
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
    let mut daemon =
        with_daemon(&env, &["daemon", "--idle-seconds", "60"], 60).stderr(std::process::Stdio::null()).spawn().unwrap();
    wait_for("the socket", || sockets(&env).len() == 1);
    let socket = sockets(&env)[0].clone();
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

    // Something else where the socket goes: said once per command, no daemon
    // started (it could not listen there), the same answer.
    std::fs::set_permissions(runtime_dir(&env), std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::create_dir(&socket).unwrap();
    let out = ok(with_daemon(&env, &query, 3));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), alone);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains(&format!("{} is not a socket", socket.display())) && said.contains("remove it"), "{said}");
    std::thread::sleep(Duration::from_millis(500));
    assert!(daemons_of(&env).is_empty(), "no daemon started to fail on a directory");
    std::fs::remove_dir(&socket).unwrap();

    // A typo in MNEMO_DAEMON is said, and taken as off (off costs only speed).
    let out = ok(with_daemon(&env, &query, 3).env("MNEMO_DAEMON", "of"));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), alone);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("MNEMO_DAEMON=\"of\" is neither on nor off"), "{said}");
    std::thread::sleep(Duration::from_millis(500));
    assert!(daemons_of(&env).is_empty() && sockets(&env).is_empty(), "off means none started");
    // An empty idle time is unset: the default, no warning.
    let out = ok(with_daemon(&env, &query, 3).env("MNEMO_DAEMON_IDLE_SECONDS", ""));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("MNEMO_DAEMON_IDLE_SECONDS"));
    wait_for("the started resident model", || sockets(&env).len() == 1);
    for pid in daemons_of(&env) {
        assert!(Command::new("kill").arg(pid.to_string()).status().unwrap().success());
    }
}

/// The `mnemo daemon` processes serving from `env`'s runtime directory.
fn daemons_of(env: &Env) -> Vec<u32> {
    let wanted = format!("XDG_RUNTIME_DIR={}", env.home.join("run").display());
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            args.get(1) == Some(&&b"daemon"[..]) && environ.split(|b| *b == 0).any(|v| v == wanted.as_bytes())
        })
        .collect()
}

#[test]
fn a_burst_of_cold_commands_leaves_one_resident_model_and_a_stopped_one_costs_a_second() {
    let env = Env::with_model();
    env.ok(&["remember", "--kind", "gotcha", "--title", "Retry the upload when S3 answers 503"]);
    let query = ["recall", "--json", "the upload fails with 503"];
    let alone = env.ok(&query);
    let burst: Vec<_> = (0..6)
        .map(|_| {
            let mut cmd = with_daemon(&env, &query, 30);
            cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap()
        })
        .collect();
    for child in burst {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        assert_eq!(String::from_utf8(out.stdout).unwrap(), alone);
    }
    wait_for("the burst's daemons to settle on one", || daemons_of(&env).len() == 1);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(daemons_of(&env).len(), 1, "one resident model, however many commands started one");

    // Stopped (SIGSTOP): it accepts but never answers. A command waits a
    // moment for its hello, then loads its own model; it starts no second one.
    let pid = daemons_of(&env)[0];
    let signal = |name: &str| assert!(Command::new("kill").args([name, &pid.to_string()]).status().unwrap().success());
    wait_for("the resident model to answer", || used_the_resident_model(&ok(with_daemon(&env, &query, 30))));
    signal("-STOP");
    let started = Instant::now();
    let out = ok(with_daemon(&env, &query, 30));
    assert!(started.elapsed() < Duration::from_secs(8), "a stopped daemon cost {:?}", started.elapsed());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), alone);
    assert!(String::from_utf8_lossy(&out.stderr).contains("the resident model does not answer"), "said in the log");
    assert_eq!(daemons_of(&env), vec![pid], "no second daemon while the first holds the lock");
    signal("-CONT");
    signal("-KILL");
}

#[test]
fn an_mcp_server_whose_resident_model_dies_loads_its_own_and_answers_the_same() {
    let env = Env::with_model();
    for title in
        ["Retry the upload when S3 answers 503", "The cache daemon deadlocks when locks are taken out of order"]
    {
        env.ok(&["remember", "--kind", "gotcha", "--title", title]);
    }
    let mut daemon =
        with_daemon(&env, &["daemon", "--idle-seconds", "60"], 60).stderr(std::process::Stdio::null()).spawn().unwrap();
    wait_for("the socket", || sockets(&env).len() == 1);
    let mut mcp = crate::mcp::Mcp::start_command(with_daemon(&env, &["mcp"], 60), Duration::from_secs(120));
    let ask = |mcp: &mut crate::mcp::Mcp| {
        mcp.call_result("recall", serde_json::json!({ "query": "why does the upload fail" }))
    };
    let before = ask(&mut mcp);
    assert_eq!(before["structuredContent"]["ranking"], "hybrid", "{before}");
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    let after = ask(&mut mcp);
    assert_eq!(after["structuredContent"], before["structuredContent"], "the same answer from the server's own model");
    let (text, error) =
        mcp.call("remember", serde_json::json!({ "kind": "finding", "title": "Uploads retry three times" }));
    assert!(!error, "{text}");
    mcp.finish();
    let stats = env.json(&["store", "stats"]);
    assert_eq!(stats["stats"]["embedded_notes"], stats["stats"]["notes"], "the note was embedded: {stats}");
}
