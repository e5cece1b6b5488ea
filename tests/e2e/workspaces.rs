//! Stable workspace identity end to end, with real git repositories: two
//! clones at different paths and a worktree share one memory (by the origin
//! remote, or by a committed `.mnemo/workspace.toml`), an unrelated
//! repository never does, notes written under the old path-keyed id move
//! with their history (and `store verify` stays clean), a checkout taken
//! before the move still checks in, and a repository that copies another's
//! committed id is refused — by the CLI, the hooks and the language server —
//! until a person joins it or gives it an id of its own.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::lsp::Client;
use crate::support::{Env, parse_id};

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A repository at `home/name` with `origin` (if any) and one commit.
fn repository(env: &Env, name: &str, origin: Option<&str>) -> PathBuf {
    let dir = env.home.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q", "-b", "main"]);
    if let Some(url) = origin {
        git(&dir, &["remote", "add", "origin", url]);
    }
    git(&dir, &["commit", "-q", "--allow-empty", "-m", "start"]);
    dir
}

/// `mnemo args` run in `dir`: (exit status, stdout, stderr).
fn run_in(env: &Env, dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = env.command(args).current_dir(dir).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

fn ok_in(env: &Env, dir: &Path, args: &[&str]) -> String {
    let (code, out, err) = run_in(env, dir, args);
    assert_eq!(code, 0, "mnemo {args:?} in {}: {err}", dir.display());
    out
}

fn titles_in(env: &Env, dir: &Path) -> Vec<String> {
    let listed: serde_json::Value = serde_json::from_str(&ok_in(env, dir, &["--json", "list"])).unwrap();
    listed["notes"].as_array().unwrap().iter().map(|n| n["title"].as_str().unwrap().to_string()).collect()
}

#[test]
fn clones_and_worktrees_of_one_repository_share_a_memory_and_path_era_notes_move_with_their_history() {
    let env = Env::new();
    let a = repository(&env, "app", None);
    // Written before the repository had a remote: keyed by its path.
    let early = parse_id(&ok_in(&env, &a, &["remember", "--kind", "gotcha", "--title", "Path-era gotcha"]));
    let dropped = parse_id(&ok_in(&env, &a, &["remember", "--kind", "finding", "--title", "Dropped finding"]));
    ok_in(&env, &a, &["revoke", &dropped.to_string(), "--reason", "wrong"]);
    let checkout = env.home.join("before-the-move.md");
    ok_in(&env, &a, &["checkout", "--out", checkout.to_str().unwrap()]);
    git(&a, &["remote", "add", "origin", "git@github.com:Org/App.git"]);
    let shown: serde_json::Value = serde_json::from_str(&ok_in(&env, &a, &["--json", "workspace"])).unwrap();
    assert_eq!(shown["id"], "git:github.com/Org/App", "{shown}");
    assert_eq!(shown["found"], "the repository's origin remote");
    assert_eq!(shown["moved_in"][0]["from"], a.to_str().unwrap(), "{shown}");
    // Another clone at another path, with another spelling of the same remote, and a worktree.
    let b = repository(&env, "elsewhere/app-copy", Some("https://github.com/Org/App"));
    git(&a, &["worktree", "add", "-q", env.home.join("app-feature").to_str().unwrap()]);
    let feature = env.home.join("app-feature");
    ok_in(&env, &b, &["remember", "--kind", "finding", "--title", "Written in the second clone"]);
    for dir in [&a, &b, &feature] {
        let titles = titles_in(&env, dir);
        assert_eq!(titles, ["Path-era gotcha", "Dropped finding", "Written in the second clone"], "{}", dir.display());
    }
    let history = ok_in(&env, &b, &["history", &dropped.to_string()]);
    assert!(history.contains("created") && history.contains("revoked"), "the history moved too: {history}");
    // An unrelated repository never shares.
    let other = repository(&env, "lib", Some("git@github.com:Org/Lib.git"));
    assert!(titles_in(&env, &other).is_empty());
    assert!(run_in(&env, &other, &["show", &early.to_string()]).2.contains("belongs to another workspace"));
    // The checkout taken under the old id checks in under the new one.
    let text = std::fs::read_to_string(&checkout).unwrap().replace("Path-era gotcha", "Path-era gotcha, fixed");
    std::fs::write(&checkout, text).unwrap();
    let checked = ok_in(&env, &feature, &["checkin", checkout.to_str().unwrap()]);
    assert!(checked.contains(&format!("#{early} superseded by")), "{checked}");
    let verify = ok_in(&env, &a, &["store", "verify"]);
    assert!(verify.starts_with("clean:"), "moving notes keeps the log and the chain: {verify}");
}

#[test]
fn a_committed_id_is_shared_by_clones_of_the_repository_and_refused_to_another() {
    let env = Env::new();
    let app = repository(&env, "app", Some("git@github.com:org/app.git"));
    ok_in(&env, &app, &["remember", "--kind", "directive", "--title", "Never push to main", "--as-human"]);
    let (_, _, said) = run_in(&env, &app, &["workspace", "init"]);
    assert!(said.contains("commit it") && said.contains("the notes of git:github.com/org/app are in it now"), "{said}");
    let id = std::fs::read_to_string(app.join(".mnemo/workspace.toml")).unwrap();
    let id = id.lines().find_map(|l| l.strip_prefix("id = \"")).unwrap().trim_end_matches('"').to_string();
    assert!(id.starts_with("ws-"));
    assert_eq!(
        run_in(&env, &app, &["workspace", "init"]).1.trim(),
        format!(".mnemo/workspace.toml already holds id {id}; nothing changed (`--new` replaces it)")
    );
    // A clone of the same repository (same origin, the file committed) shares it.
    let clone = repository(&env, "clone", Some("https://github.com/org/app"));
    std::fs::create_dir_all(clone.join(".mnemo")).unwrap();
    std::fs::copy(app.join(".mnemo/workspace.toml"), clone.join(".mnemo/workspace.toml")).unwrap();
    assert_eq!(titles_in(&env, &clone), ["Never push to main"]);

    // A hostile repository copies the id: every way in is refused, and says what to do.
    let evil = repository(&env, "evil", Some("https://github.com/evil/tool"));
    std::fs::create_dir_all(evil.join(".mnemo")).unwrap();
    std::fs::copy(app.join(".mnemo/workspace.toml"), evil.join(".mnemo/workspace.toml")).unwrap();
    let (code, out, err) = run_in(&env, &evil, &["list"]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(
        err.contains(&format!("claims workspace {id}"))
            && err.contains("origin is github.com/evil/tool")
            && err.contains("mnemo workspace join"),
        "{err}"
    );
    let hook = env
        .command(&["hook", "session-start"])
        .current_dir(&evil)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let delivered = hook.wait_with_output().unwrap();
    assert_eq!(delivered.status.code(), Some(1), "the hook fails loudly");
    assert!(String::from_utf8_lossy(&delivered.stderr).contains("mnemo workspace join"));
    assert!(
        !String::from_utf8_lossy(&delivered.stdout).contains("Never push to main"),
        "no directive reaches the hostile repository's agent"
    );
    let mut client = Client::start(&env);
    let answer = client
        .request("initialize", json!({ "processId": null, "rootUri": crate::lsp::uri(&evil), "capabilities": {} }));
    assert!(answer["error"]["message"].as_str().unwrap_or_default().contains("mnemo workspace join"), "{answer}");
    drop(client);
    // Its own id makes it a workspace of its own; the original is untouched.
    let (code, _, said) = run_in(&env, &evil, &["workspace", "init", "--new"]);
    assert_eq!(code, 0, "{said}");
    assert!(titles_in(&env, &evil).is_empty());
    assert_eq!(titles_in(&env, &app), ["Never push to main"]);
}

#[test]
fn a_person_can_join_a_clone_whose_origin_differs_and_a_bad_committed_id_says_what_to_write() {
    let env = Env::new();
    let app = repository(&env, "app", Some("git@github.com:org/app.git"));
    ok_in(&env, &app, &["workspace", "init"]);
    ok_in(&env, &app, &["remember", "--kind", "finding", "--title", "Shared finding"]);
    let fork = repository(&env, "fork", Some("git@github.com:me/app.git"));
    std::fs::create_dir_all(fork.join(".mnemo")).unwrap();
    std::fs::copy(app.join(".mnemo/workspace.toml"), fork.join(".mnemo/workspace.toml")).unwrap();
    assert_eq!(run_in(&env, &fork, &["list"]).0, 1);
    let joined = ok_in(&env, &fork, &["workspace", "join"]);
    assert!(joined.contains(&format!("also checked out at {}", app.display())), "{joined}");
    assert_eq!(titles_in(&env, &fork), ["Shared finding"]);
    // A committed id that names a path or another repository is no id.
    std::fs::write(fork.join(".mnemo/workspace.toml"), "id = \"/home/someone/project\"\n").unwrap();
    let (code, _, err) = run_in(&env, &fork, &["list"]);
    assert_eq!(code, 1);
    assert!(err.contains(".mnemo/workspace.toml holds no usable id") && err.contains("mnemo workspace init"), "{err}");
    // Which `init --new` mends (a broken file cannot be read, so it does not stand in the way).
    let (code, _, said) = run_in(&env, &fork, &["workspace", "init", "--new"]);
    assert_eq!(code, 0, "{said}");
    assert!(titles_in(&env, &fork).is_empty(), "an id of its own now");
    assert_eq!(titles_in(&env, &app), ["Shared finding"], "leaving a shared id leaves its notes with the others");
}
