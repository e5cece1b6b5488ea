//! `mnemo checkin` and `mnemo edit` through the binary: edits become
//! events per entry, refusals keep the text, re-running is harmless.

use crate::support::Env;

fn checkout(env: &Env) -> (std::path::PathBuf, String) {
    let file = env.home.join("checkout.md");
    env.ok(&["checkout", "--out", file.to_str().unwrap()]);
    let text = std::fs::read_to_string(&file).unwrap();
    (file, text)
}

#[test]
fn edits_in_a_checkout_become_events_and_rerunning_is_harmless() {
    let env = Env::new();
    let lock = env.remember("gotcha", "Lock order matters");
    let cache = env.remember("finding", "Cache hit ratio is 0.91");
    let old = env.remember("task", "Port the cache");
    let (file, text) = checkout(&env);
    let edited = text
        .replace("medium · Lock order matters", "medium · REVOKED (wrong order) · Lock order matters")
        .replace("Cache hit ratio is 0.91", "Cache hit ratio is 0.93")
        .replace(&format!("- [#{old}] 2026-08-04 · medium · Port the cache\n\n"), "")
        .replace("## Decisions\n", "## Decisions\n\n- high · Use rustls\n  Static builds.\n");
    std::fs::write(&file, &edited).unwrap();
    let out = env.ok(&["checkin", file.to_str().unwrap()]);
    assert_eq!(
        out,
        format!(
            "revoked #{lock} (wrong order)\n#{cache} superseded by #4\ncreated #5\nrevoked #{old} (deleted in MEMORY.md)\n"
        )
    );
    let created = env.json(&["show", "5"]);
    assert_eq!(
        (created["kind"].as_str(), created["provenance"].as_str(), created["body"].as_str()),
        (Some("decision"), Some("human"), Some("Static builds."))
    );
    assert_eq!(env.json(&["history", &lock.to_string()])[1]["actor"], "human");
    assert_eq!(
        env.ok(&["checkin", file.to_str().unwrap()]),
        "nothing to check in\n",
        "a second check-in of the same file"
    );
    env.ok(&["store", "verify"]);
}

#[test]
fn conflicts_and_bad_entries_are_carried_into_the_rewritten_file_until_resolved() {
    let env = Env::new();
    let lock = env.remember("gotcha", "Lock order matters");
    let cache = env.remember("finding", "Cache hit ratio is 0.91");
    let port = env.remember("task", "Port the cache");
    let (file, text) = checkout(&env);
    env.ok(&["revoke", &lock.to_string(), "--reason", "an agent revoked it meanwhile"]);
    env.ok(&["flag-stale", &port.to_string(), "--reason", "an agent doubts it"]);
    let edited = text
        .replace("medium · Lock order matters", "high · Lock order matters")
        .replace("medium · Port the cache", "medium · Port the cache to redis")
        .replace(&format!("[#{cache}] 2026-08-04 · medium"), &format!("[#{cache}] 2026-08-04 · urgent"))
        .replace("## Tasks\n", "## Tasks\n\n- low · Applied anyway\n");
    std::fs::write(&file, &edited).unwrap();
    let path = file.display().to_string();

    let out = env.run(&["checkin", &path]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "created #4\n");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains(&format!("{path}:18: unknown priority 'urgent'")), "{err}");
    assert!(
        err.contains(&format!(
            "{path}:14: #{lock} changed in the store since this checkout; keep mine or take theirs \
             (mine: «high · Lock order matters [Gotchas]»; theirs: «revoked (an agent revoked it meanwhile) · medium · Lock order matters [Gotchas]»)"
        )),
        "{err}"
    );
    assert!(err.contains(&format!("{path}:8: #{port} changed in the store")), "{err}");
    assert_eq!(
        env.json(&["show", &cache.to_string()])["state"],
        "active",
        "a malformed entry is never taken as deleted"
    );
    let rewritten = std::fs::read_to_string(&file).unwrap();
    for typed in ["2026-08-04 · high · Lock order matters", "Port the cache to redis", "2026-08-04 · urgent · Cache"]
    {
        assert!(rewritten.contains(typed), "{typed} is carried over as typed:\n{rewritten}");
    }
    assert!(rewritten.contains("[#4] 2026-08-04 · low · Applied anyway"), "{rewritten}");

    // Saving again without resolving changes nothing and still reports both conflicts.
    let again = env.run(&["--json", "checkin", &path]);
    assert_eq!(again.status.code(), Some(3));
    let report: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(report["applied"], serde_json::json!([]));
    assert_eq!(report["conflicts"].as_array().unwrap().len(), 2, "{report}");

    std::fs::write(&file, std::fs::read_to_string(&file).unwrap().replace("· urgent ·", "· high ·")).unwrap();
    let out = env.run(&["checkin", &path, "--keep-mine", &lock.to_string(), "--take-theirs", &port.to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("reinstated #{lock}\n#{lock} superseded by #5\n#{cache} superseded by #6\n")
    );
    assert_eq!(env.json(&["show", "5"])["priority"], "high");
    assert_eq!(env.json(&["show", &port.to_string()])["title"], "Port the cache", "theirs stands");
    let clean = std::fs::read_to_string(&file).unwrap();
    assert!(clean.contains("STALE") && clean.contains("(an agent doubts it) · Port the cache\n"), "{clean}");
    assert_eq!(env.ok(&["checkin", &path]), "nothing to check in\n");
    env.ok(&["store", "verify"]);
}

#[test]
fn checkin_refuses_the_mirror_a_foreign_checkout_and_an_unknown_epoch() {
    let env = Env::new();
    env.remember("gotcha", "a");
    env.ok(&["export"]);
    let out = env.run(&["checkin", env.root.join("MEMORY.md").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8(out.stderr).unwrap().contains("this is the read-only mirror"));
    let (file, text) = checkout(&env);
    std::fs::write(&file, text.replace("epoch 1", "epoch 99")).unwrap();
    let err = env.fails(&["checkin", file.to_str().unwrap()], 1);
    assert!(err.contains("this checkout (epoch 99) is unknown to this store"), "{err}");
    std::fs::write(&file, text.replace(&env.root.display().to_string(), "/elsewhere")).unwrap();
    let err = env.fails(&["checkin", file.to_str().unwrap()], 1);
    assert!(err.contains("this is a checkout of workspace /elsewhere"), "{err}");
}

#[test]
fn edit_runs_the_editor_and_checks_in_what_it_saved() {
    let env = Env::new();
    let id = env.remember("gotcha", "Lock order matters");
    let editor = env.home.join("editor.sh");
    std::fs::write(&editor, "#!/bin/sh\nsed -i 's/medium · Lock order matters/medium · STALE (lock.rs moved) · Lock order matters/' \"$1\"\n").unwrap();
    std::os::unix::fs::PermissionsExt::set_mode(&mut std::fs::metadata(&editor).unwrap().permissions(), 0o755);
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = env.command(&["edit"]).env("VISUAL", &editor).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), format!("flagged #{id} stale (lock.rs moved)\n"));
    assert_eq!(env.json(&["show", &id.to_string()])["state"], "stale_flagged");
    let failing = env.command(&["edit"]).env("VISUAL", "false").output().unwrap();
    assert_eq!(failing.status.code(), Some(1));
    assert!(String::from_utf8(failing.stderr).unwrap().contains("nothing was checked in and your edit is kept in"));
}

/// An editor script for `mnemo edit` (VISUAL), made executable.
fn editor_script(env: &Env, name: &str, script: &str) -> std::path::PathBuf {
    let editor = env.home.join(name);
    std::fs::write(&editor, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    editor
}

#[test]
fn a_kept_edit_is_never_overwritten_or_removed_before_it_is_applied() {
    let env = Env::new();
    let id = env.remember("gotcha", "Lock order matters");
    // The first edit leaves a malformed entry: nothing applied, the edit is kept.
    let typo =
        editor_script(&env, "typo.sh", "sed -i 's/medium · Lock order matters/urgent · Lock order, mine/' \"$1\"");
    let first = env.command(&["edit"]).env("VISUAL", &typo).output().unwrap();
    assert_eq!(first.status.code(), Some(3), "{}", String::from_utf8_lossy(&first.stderr));
    let edits = env.store_files_dir().join("edits");
    let kept: Vec<_> = std::fs::read_dir(&edits).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let kept_text = std::fs::read_to_string(&kept[0]).unwrap();
    assert!(kept_text.contains("urgent · Lock order, mine"), "{kept_text}");
    // A second `mnemo edit` at the same epoch, quit without a change: its own
    // file, and the kept one is untouched and named.
    let second = env.command(&["edit"]).env("VISUAL", "true").output().unwrap();
    assert!(second.status.success(), "{}", String::from_utf8_lossy(&second.stderr));
    let said = String::from_utf8(second.stderr).unwrap();
    assert!(
        said.contains("earlier edits of this workspace are kept") && said.contains(kept[0].to_str().unwrap()),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&kept[0]).unwrap(), kept_text, "the kept edit is untouched");
    assert_eq!(std::fs::read_dir(&edits).unwrap().count(), 1, "the second edit's own file is gone, the kept one stays");
    assert_eq!(env.json(&["show", &id.to_string()])["state"], "active");
}

#[test]
fn checkin_keeps_the_files_mode() {
    let env = Env::new();
    env.remember("gotcha", "Lock order matters");
    let (file, text) = checkout(&env);
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    std::fs::write(&file, text.replace("## Tasks\n", "## Tasks\n\n- low · Private\n")).unwrap();
    env.ok(&["checkin", file.to_str().unwrap()]);
    let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&file).unwrap().permissions()) & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn anchors_keep_their_hash_through_an_edit_and_imported_anchors_are_hashed() {
    let env = Env::new();
    let id = env.ok(&["remember", "--kind", "gotcha", "--title", "Lock order matters", "--anchor", "src/lock.rs:2-3"]);
    let id = crate::support::parse_id(&id);
    let hash = env.json(&["show", &id.to_string()])["anchors"][0]["content_sha256"].clone();
    // The code under the anchor changes, then the person edits only the title.
    std::fs::write(env.root.join("src/lock.rs"), "changed\nentirely\nnow\n").unwrap();
    let (file, text) = checkout(&env);
    std::fs::write(&file, text.replace("Lock order matters", "Lock order matters a lot")).unwrap();
    env.ok(&["checkin", file.to_str().unwrap()]);
    let titled = |title: &str| {
        env.json(&["list"])["notes"].as_array().unwrap().iter().find(|n| n["title"] == title).unwrap()["id"]
            .as_i64()
            .unwrap()
    };
    let successor = titled("Lock order matters a lot");
    assert_ne!(successor, id);
    let kept = env.json(&["show", &successor.to_string()])["anchors"][0]["content_sha256"].clone();
    assert_eq!(kept, hash, "the unchanged anchor keeps its hash: the changed code is not blessed");
    // A JSONL record anchored in this workspace gets its lines hashed at import.
    let workspace = crate::support::root_id(&env.root);
    let record = serde_json::json!({
        "id": 1, "workspace": workspace, "kind": "finding", "priority": "low", "provenance": "agent",
        "created": "2026-08-01", "title": "Imported with an anchor", "body": "", "status": "active",
        "anchors": [{ "path": "src/lock.rs", "start_line": 1, "end_line": 2 }]
    });
    let jsonl = env.home.join("import.jsonl");
    std::fs::write(&jsonl, format!("{record}\n")).unwrap();
    env.ok(&["import", "jsonl", jsonl.to_str().unwrap()]);
    let imported = titled("Imported with an anchor");
    let anchor = &env.json(&["show", &imported.to_string()])["anchors"][0];
    assert_eq!(anchor["content_sha256"].as_str().map(str::len), Some(64), "{anchor}");
}
