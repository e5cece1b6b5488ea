use super::*;

fn repo(dir: &Path, origin: Option<&str>) {
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    let mut config = String::from("[core]\n\trepositoryformatversion = 0\n");
    if let Some(url) = origin {
        config.push_str(&format!("[remote \"upstream\"]\n\turl = https://elsewhere/x.git\n[remote \"origin\"]\n\turl = {url}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"));
    }
    std::fs::write(dir.join(".git/config"), config).unwrap();
}

/// A linked worktree of `main` at `at`, laid out as `git worktree add` does.
fn worktree(main: &Path, at: &Path) {
    let own = main.join(".git/worktrees/wt");
    std::fs::create_dir_all(&own).unwrap();
    std::fs::write(own.join("commondir"), "../..\n").unwrap();
    std::fs::create_dir_all(at).unwrap();
    std::fs::write(at.join(".git"), format!("gitdir: {}\n", own.display())).unwrap();
}

#[test]
fn every_spelling_of_a_remote_is_one_id_and_credentials_are_dropped() {
    for url in [
        "git@github.com:Org/Repo.git",
        "https://github.com/Org/Repo",
        "https://user:secret@GitHub.com:443/Org/Repo.git/",
        "ssh://git@github.com/Org/Repo.git",
        "git+ssh://git@github.com:22/Org/Repo",
    ] {
        assert_eq!(normalise_remote(url).as_deref(), Some("github.com/Org/Repo"), "{url}");
    }
    assert_eq!(normalise_remote("/srv/git/tools.git").as_deref(), Some("/srv/git/tools"));
    assert_eq!(normalise_remote("file:///srv/git/tools.git").as_deref(), Some("/srv/git/tools"));
    assert_eq!(normalise_remote("https://github.com/"), None);
    assert_eq!(normalise_remote("https://github.com/a\u{1b}[2J"), None, "no control characters");
}

#[test]
fn a_clone_and_its_worktree_claim_the_origin_and_unrelated_repositories_differ() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (a, b, other) = (root.join("a"), root.join("b"), root.join("other"));
    repo(&a, Some("git@github.com:org/app.git"));
    repo(&b, Some("https://github.com/org/app"));
    repo(&other, Some("https://github.com/org/lib"));
    worktree(&a, &root.join("a-feature"));
    let id = |dir: &Path| claim(dir, dir.to_str().unwrap()).unwrap();
    assert_eq!(
        id(&a),
        Claim {
            id: "git:github.com/org/app".into(),
            source: IdSource::Origin,
            origin: Some("github.com/org/app".into())
        }
    );
    assert_eq!(id(&b).id, id(&a).id, "two clones at different paths");
    assert_eq!(id(&root.join("a-feature")).id, id(&a).id, "a linked worktree reads its repository's config");
    assert_ne!(id(&other).id, id(&a).id);
}

#[test]
fn without_a_remote_a_worktree_shares_its_main_worktree_and_a_directory_is_itself() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let main = root.join("main");
    repo(&main, None);
    worktree(&main, &root.join("wt"));
    let wt = root.join("wt");
    let claimed = claim(&wt, wt.to_str().unwrap()).unwrap();
    assert_eq!((claimed.id.as_str(), claimed.source), (main.to_str().unwrap(), IdSource::MainWorktree));
    let plain = claim(&main, main.to_str().unwrap()).unwrap();
    assert_eq!((plain.id.as_str(), plain.source), (main.to_str().unwrap(), IdSource::Directory));
}

#[test]
fn a_committed_id_wins_and_a_bad_one_is_refused_with_what_to_write() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    repo(&root, Some("git@github.com:org/app.git"));
    std::fs::create_dir_all(root.join(".mnemo")).unwrap();
    std::fs::write(root.join(COMMITTED_FILE), "id = \"ws-0123456789abcdef\"\n").unwrap();
    let claimed = claim(&root, "/x").unwrap();
    assert_eq!((claimed.id.as_str(), claimed.source), ("ws-0123456789abcdef", IdSource::Committed));
    assert_eq!(claimed.origin.as_deref(), Some("github.com/org/app"), "kept for admission");
    for bad in [
        "id = \"/home/alice/secret\"",
        "id = \"git:github.com/victim/app\"",
        "id = \"\"",
        "name = \"x\"",
        "id = \"a\\u001bb\"",
    ] {
        std::fs::write(root.join(COMMITTED_FILE), bad).unwrap();
        let said = claim(&root, "/x").unwrap_err().to_string();
        assert!(
            said.contains(".mnemo/workspace.toml holds no usable id") && said.contains("mnemo workspace init"),
            "{bad}: {said}"
        );
    }
    let made = new_committed_id().unwrap();
    assert!(made.starts_with("ws-") && made.len() == 19 && check_committed_id(&made).is_ok(), "{made}");
    assert_ne!(made, new_committed_id().unwrap());
}
