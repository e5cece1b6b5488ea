//! Recall through the binary: lexical-only without a model (and saying so),
//! hybrid with the real packaged model, hidden counts, successors, workspace
//! isolation, catch-up embedding, model changes, `expand`, `context` and the
//! miss-rate harness on the public eval set.

use std::path::Path;

use serde_json::Value;

use crate::pg_server::PgServer;
use crate::support::{Env, parse_id};

fn titles(answer: &Value) -> Vec<String> {
    answer["results"].as_array().unwrap().iter().map(|n| n["title"].as_str().unwrap().to_string()).collect()
}

fn seed(env: &Env) -> (i64, i64, i64) {
    let lock = parse_id(&env.ok(&[
        "remember",
        "--kind",
        "gotcha",
        "--title",
        "Release the workspace lock before restarting the daemon",
        "--body",
        "Restarting while the lock is held deadlocks the new daemon process.",
    ]));
    let cache = parse_id(&env.ok(&[
        "remember",
        "--kind",
        "finding",
        "--title",
        "Segment cache eviction is LRU by bytes",
        "--body",
        "Measured on the 480 GB store.",
    ]));
    let tls = parse_id(&env.ok(&[
        "remember",
        "--kind",
        "decision",
        "--title",
        "Use rustls for TLS termination",
        "--body",
        "Static builds, no openssl.",
    ]));
    (lock, cache, tls)
}

#[test]
fn without_a_model_recall_is_lexical_and_says_why_in_every_answer() {
    let env = Env::new();
    seed(&env);
    let out = env.ok(&["recall", "daemon", "lock"]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("[#1] gotcha/medium · agent · Release the workspace lock"), "{out}");
    assert_eq!(lines[1], "hidden: nothing");
    assert!(lines[2].starts_with("ranking: lexical only (no embedding model at "), "{out}");
    assert!(lines[2].contains("run scripts/install-model"), "{out}");
    let json = env.json(&["recall", "rustls"]);
    assert_eq!(json["ranking"], "lexical only");
    assert!(json["ranking_reason"].as_str().unwrap().contains("model.onnx is missing"));
    assert_eq!(titles(&json), ["Use rustls for TLS termination"]);
    assert_eq!(json["results"][0]["trust"], "recorded by an agent session; verify before relying on it");
    std::fs::create_dir_all(env.root.join(".mnemo")).unwrap();
    std::fs::write(env.root.join(".mnemo/config.toml"), "[recall]\nmodel_dir = 'vendor/model'\n").unwrap();
    let refused = env.json(&["recall", "rustls"]);
    assert!(refused["ranking_reason"].as_str().unwrap().contains("points inside the workspace"), "{refused}");
    std::fs::remove_file(env.root.join(".mnemo/config.toml")).unwrap();
    assert_eq!(
        env.ok(&["recall", "bananas"]).lines().next().unwrap(),
        format!("no notes match in workspace {}", env.root.display())
    );
}

#[test]
fn filters_count_and_name_what_they_hide() {
    let env = Env::new();
    let (lock, cache, _) = seed(&env);
    env.ok(&["flag-stale", &lock.to_string(), "--reason", "lock.rs changed"]);
    let new =
        parse_id(&env.ok(&["supersede", &cache.to_string(), "--title", "Segment cache eviction is LFU since 0.9"]));
    let other = env.home.join("other");
    std::fs::create_dir_all(&other).unwrap();
    env.ok(&[
        "--workspace",
        other.to_str().unwrap(),
        "remember",
        "--kind",
        "gotcha",
        "--title",
        "Segment cache eviction and the daemon lock, in the other repo",
    ]);
    let json = env.json(&["recall", "daemon lock segment cache eviction"]);
    assert_eq!(json["hidden"]["stale"], 1);
    assert_eq!(json["hidden_stale"], serde_json::json!([lock]));
    assert_eq!(json["hidden"]["superseded"], 1);
    assert_eq!(json["hidden_superseded"][0]["id"], cache);
    assert_eq!(json["hidden_superseded"][0]["successor"], new);
    assert_eq!(json["hidden"]["other workspace"], 1);
    let ids: Vec<i64> = json["results"].as_array().unwrap().iter().map(|n| n["id"].as_i64().unwrap()).collect();
    assert!(ids.contains(&new), "the successor of the matching superseded note surfaces: {ids:?}");
    assert!(!ids.contains(&lock) && !ids.contains(&cache));
    let text = env.ok(&["recall", "daemon lock segment cache eviction"]);
    assert!(
        text.contains(&format!("hidden: 1 other workspace, 1 stale (#{lock}), 1 superseded (#{cache} → #{new})")),
        "{text}"
    );
    assert!(text.contains(&format!("(replaces #{cache}, which matched)")), "{text}");
    let with_stale = env.json(&["recall", "daemon lock", "--include-stale"]);
    assert_eq!(with_stale["results"][0]["id"], lock);
    assert!(with_stale["hidden"].get("stale").is_none());
    let only_decisions = env.json(&["recall", "segment cache eviction rustls", "--kind", "decision"]);
    assert_eq!(titles(&only_decisions), ["Use rustls for TLS termination"]);
    assert_eq!(only_decisions["hidden"]["other kind"], 1, "the active finding #{new}: {only_decisions}");
    assert_eq!(only_decisions["hidden"]["superseded"], 1, "a state filter is named before the kind filter");
}

#[test]
fn expand_and_context() {
    let env = Env::new();
    let (lock, _, _) = seed(&env);
    let directive = parse_id(&env.ok(&[
        "remember",
        "--kind",
        "directive",
        "--title",
        "Always run the tests through cargo nextest",
        "--user-message",
        "always run the tests through cargo nextest please",
    ]));
    let expanded = env.ok(&["expand", &lock.to_string(), &directive.to_string()]);
    assert!(
        expanded.starts_with("(recorded by an agent session; verify before relying on it)\n#1 gotcha/medium"),
        "{expanded}"
    );
    assert!(expanded.contains("(the user said: «always run the tests through cargo nextest»)"), "{expanded}");
    let context = env.ok(&["context", "restart the daemon"]);
    assert!(context.starts_with(&format!("## Standing directives (1)\n- [#{directive}] Always run the tests through cargo nextest — the user said: «always run the tests through cargo nextest»\n")), "{context}");
    assert!(context.contains("## Notes relevant to: restart the daemon\n[#1] gotcha/medium"), "{context}");
    let json = env.json(&["context"]);
    assert_eq!(json["directives"].as_array().unwrap().len(), 1);
    assert_eq!(json["results"].as_array().unwrap().len(), 3, "the most recent non-directive notes");
    env.fails(&["expand", "99"], 1);
}

#[test]
fn with_the_model_recall_is_hybrid_and_notes_written_without_it_are_caught_up() {
    let env = Env::with_model();
    // Written while no model was available.
    let late = env
        .command(&[
            "remember",
            "--kind",
            "gotcha",
            "--title",
            "Never restart the daemon while it holds the workspace lock",
        ])
        .env("MNEMO_MODEL_DIR", env.home.join("none"))
        .output()
        .unwrap();
    assert!(late.status.success());
    let stats = env.json(&["store", "stats"]);
    assert_eq!(stats["stats"]["embedded_notes"], 0);
    seed(&env);
    let json = env.json(&["recall", "what happens if I bounce the background service while it still has the mutex?"]);
    assert_eq!(json["ranking"], "hybrid");
    assert_eq!(json["ranking_reason"], Value::Null);
    assert_eq!(json["reranked"], 4, "late interaction reranked the candidates: {json}");
    let top: Vec<String> = titles(&json).into_iter().take(2).collect();
    assert!(top.iter().all(|t| t.contains("daemon")), "a paraphrase finds both daemon notes first: {top:?}");
    let stats = env.json(&["store", "stats"]);
    assert_eq!(stats["stats"]["embedded_notes"], 4, "recall embedded the note written without a model");
    assert_eq!((stats["ranking"].as_str(), &stats["ranking_reason"]), (Some("hybrid"), &Value::Null));
    assert!(stats["stats"]["embedding_model"].as_str().unwrap().contains("MiniLM"));
}

#[test]
fn a_store_embedded_before_token_signs_gets_them_at_the_next_recall() {
    let env = Env::with_model().file_store();
    seed(&env);
    let signs = || -> i64 {
        rusqlite::Connection::open(&env.store)
            .unwrap()
            .query_row("SELECT count(*) FROM note_token_signs WHERE length(signs) > 0", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(signs(), 3, "remember stores each note's token signs with its vector");
    // A store written by the mnemo before them: vectors, no token signs (the migration adds the table empty).
    rusqlite::Connection::open(&env.store).unwrap().execute("DELETE FROM note_token_signs", []).unwrap();
    let json = env.json(&["recall", "what happens if I bounce the background service while it still has the mutex?"]);
    assert_eq!(signs(), 3, "recall embedded the notes again for their token signs");
    assert_eq!(json["reranked"], 3, "and reranked them by late interaction: {json}");
    let stats = env.json(&["store", "stats"]);
    assert_eq!(stats["stats"]["embedded_notes"], 3);
}

#[test]
fn a_changed_or_broken_model_falls_back_to_lexical_and_reindex_recovers() {
    let env = Env::with_model();
    seed(&env);
    let other_model = env.home.join("other-model");
    std::fs::create_dir_all(&other_model).unwrap();
    for file in [
        "model.onnx",
        "tokenizer.json",
        "config.json",
        "special_tokens_map.json",
        "tokenizer_config.json",
        "libonnxruntime.so",
    ] {
        std::os::unix::fs::symlink(std::fs::canonicalize(env.model_dir.join(file)).unwrap(), other_model.join(file))
            .unwrap();
    }
    std::fs::write(other_model.join("identity"), "a retrained model\n").unwrap();
    std::fs::write(
        other_model.join("mnemo-model.toml"),
        "pooling = \"mean\"\nnormalize = true\nmax_length = 256\ndimensions = 384\n",
    )
    .unwrap();
    let run = |args: &[&str]| env.command(args).env("MNEMO_MODEL_DIR", &other_model).output().unwrap();
    let out = run(&["recall", "daemon", "--json"]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["ranking"], "lexical only");
    assert!(json["ranking_reason"].as_str().unwrap().contains("run `mnemo reindex`"), "{json}");
    let out = run(&["reindex"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "re-embedded 3 notes with a retrained model\n");
    let json: Value = serde_json::from_slice(&run(&["recall", "daemon", "--json"]).stdout).unwrap();
    assert_eq!(json["ranking"], "hybrid");

    let broken = env.home.join("broken-model");
    std::fs::create_dir_all(&broken).unwrap();
    for file in
        ["tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json", "libonnxruntime.so"]
    {
        std::os::unix::fs::symlink(std::fs::canonicalize(env.model_dir.join(file)).unwrap(), broken.join(file))
            .unwrap();
    }
    std::fs::write(broken.join("model.onnx"), b"garbage").unwrap();
    let out = env.command(&["recall", "daemon", "--json"]).env("MNEMO_MODEL_DIR", &broken).output().unwrap();
    assert!(out.status.success());
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["ranking"], "lexical only");
    assert!(json["ranking_reason"].as_str().unwrap().starts_with("cannot load the embedding model"), "{json}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    let no_runtime = env.home.join("no-runtime");
    std::fs::create_dir_all(&no_runtime).unwrap();
    for file in ["model.onnx", "tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json"] {
        std::os::unix::fs::symlink(std::fs::canonicalize(env.model_dir.join(file)).unwrap(), no_runtime.join(file))
            .unwrap();
    }
    let out = env.command(&["recall", "daemon", "--json"]).env("MNEMO_MODEL_DIR", &no_runtime).output().unwrap();
    assert!(out.status.success());
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["ranking"], "lexical only");
    assert!(json["ranking_reason"].as_str().unwrap().starts_with("cannot load ONNX Runtime from"), "{json}");

    let reindex = env.command(&["reindex"]).env("MNEMO_MODEL_DIR", &broken).output().unwrap();
    assert_eq!(reindex.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&reindex.stderr)
            .starts_with("error: cannot reindex without a model: cannot load the embedding model")
    );
}

fn corpus() -> &'static str {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../eval/corpus.jsonl")
}

fn queries() -> &'static str {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../eval/queries.jsonl")
}

#[test]
fn the_miss_rate_harness_on_the_public_set() {
    let env = Env::with_model();
    let report = env.json(&["eval", "--corpus", corpus(), "--queries", queries(), "--k", "5"]);
    for key in [
        "k",
        "queries",
        "recall_at_k",
        "mrr",
        "miss_rate",
        "misses_by_stage",
        "by_category",
        "silent_stale_misses",
        "cross_workspace_leaks",
        "ranking",
        "lexical_only",
        "vector_only",
    ] {
        assert!(report.get(key).is_some(), "missing {key}");
    }
    assert_eq!(report["queries"], 110);
    assert_eq!(report["answerable"], 85);
    assert!(report["ranking"].as_str().unwrap().starts_with("hybrid"));
    assert_eq!(report["silent_stale_misses"], serde_json::json!([]));
    assert_eq!(report["cross_workspace_leaks"], serde_json::json!([]));
    let recall = |r: &Value| r["recall_at_k"].as_f64().unwrap();
    // Measured 0.898 hybrid with the late-interaction rerank of the whole
    // pool (hit@5 0.941; 0.855 without), 0.820 vector only, 0.657 lexical
    // only (README): a ranking change that loses more than a query fails here.
    assert!(recall(&report) >= 0.886, "hybrid recall@5 {}", recall(&report));
    assert!(report["hit_at_k"].as_f64().unwrap() >= 0.929, "hybrid hit@5 {}", report["hit_at_k"]);
    assert!(report["ranking"].as_str().unwrap().contains("reranked by late interaction"), "{}", report["ranking"]);
    assert!(recall(&report) > recall(&report["vector_only"]), "fusion must beat vector only");
    assert!(recall(&report) > recall(&report["lexical_only"]) + 0.1);
    assert!(report["lexical_only"]["by_category"]["lexical"]["recall_at_k"].as_f64().unwrap() >= 0.95);
    let stages = &report["misses_by_stage"];
    let misses: u64 =
        ["filtered", "not_in_candidates", "below_cutoff"].iter().map(|s| stages[s].as_u64().unwrap()).sum();
    assert_eq!(misses as usize, report["misses"].as_array().unwrap().len());
}

/// The harness run on the database of a shared store (`--into`): the same
/// corpus and queries, recall searching PostgreSQL (BM25 over its full-text
/// search, pgvector) instead of FTS5 and sqlite-vec.
#[test]
fn the_harness_scores_a_postgresql_store_as_it_scores_a_file() {
    let env = Env::with_model().file_store();
    let server = PgServer::start();
    let url = server.database("evalset");
    let file = env.json(&["eval", "--corpus", corpus(), "--queries", queries()]);
    let database = env.json(&["eval", "--corpus", corpus(), "--queries", queries(), "--into", &url]);
    assert_eq!(database["ranking"], file["ranking"]);
    let at = |r: &Value, mode: &str, key: &str| {
        let r = if mode == "hybrid" { r } else { &r[mode] };
        r[key].as_f64().unwrap()
    };
    // The goal (README, "A team's store on PostgreSQL"): the same scores
    // within 0.01; vector only is the same to the digit (exact pgvector).
    for key in ["recall_at_k", "hit_at_k", "mrr"] {
        assert_eq!(at(&database, "vector_only", key), at(&file, "vector_only", key), "vector only {key}");
        for mode in ["hybrid", "lexical_only"] {
            let (d, f) = (at(&database, mode, key), at(&file, mode, key));
            // Lexical only may be a little better (Snowball, not Porter), never worse.
            let better = mode == "lexical_only" && d > f && d - f <= 0.03;
            assert!((d - f).abs() <= 0.01 || better, "{mode} {key}: database {d}, file {f}");
        }
    }
    assert_eq!(database["cross_workspace_leaks"], serde_json::json!([]));
    assert_eq!(database["silent_stale_misses"], serde_json::json!([]));

    // The database keeps the corpus; loading it again is refused before any embedding.
    let again = env.fails(&["eval", "--corpus", corpus(), "--queries", queries(), "--into", &url], 1);
    assert!(again.contains("the database holds 260 notes already; give an empty database"), "{again}");
    let typo = env.fails(&["eval", "--corpus", corpus(), "--queries", queries(), "--into", "/tmp/x.db"], 1);
    assert!(typo.contains("--into /tmp/x.db: not a postgres:// URL"), "{typo}");
    let alone = env.fails(&["eval", "--queries", queries(), "--into", &url], 2);
    assert!(alone.contains("--corpus"), "{alone}");
}

#[test]
fn eval_without_a_model_runs_lexical_only_and_bad_query_files_are_reported() {
    let env = Env::new();
    let report = env.json(&["eval", "--corpus", corpus(), "--queries", queries()]);
    assert!(report["ranking"].as_str().unwrap().starts_with("lexical only (no embedding model"));
    assert!(report.get("vector_only").is_none());
    let bad = env.home.join("bad.jsonl");
    std::fs::write(&bad, "{\"qid\": \"x\", \"relevant\": []}\n").unwrap();
    let err = env.fails(&["eval", "--queries", bad.to_str().unwrap()], 1);
    assert!(err.contains("line 1: `query` is missing"), "{err}");
    assert!(Path::new(corpus()).is_file());
}

#[test]
fn an_abstention_names_the_command_that_shows_what_it_held_back_and_that_command_works() {
    let env = Env::with_model();
    seed(&env);
    let workspace = env.root.to_str().unwrap().to_string();
    // Named store and workspace, a kind filter, a limit and a query that starts with a dash.
    let out =
        env.ok(&["--workspace", &workspace, "recall", "--kind", "gotcha", "--limit", "2", "--", "-x zebra quantum"]);
    let first = out.lines().next().unwrap();
    let again = first.split('`').nth(1).unwrap_or_else(|| panic!("no command in {first:?}"));
    assert!(first.starts_with("no confident match: 1 weaker match held back"), "{first}");
    // One shell word: a database URL (the PostgreSQL run) holds `?`, so it is quoted.
    let store = env.store.to_str().unwrap();
    let store = if store.contains('?') { format!("'{store}'") } else { store.to_string() };
    assert_eq!(
        again,
        format!(
            "mnemo --store {store} --workspace {workspace} recall --all --kind gotcha --limit 2 -- -x zebra quantum"
        )
    );
    // Pasted into a shell, it shows the held-back match, marked as a guess.
    let pasted = env.shell(&again.replacen("mnemo", "\"$MNEMO\"", 1), &[]).output().unwrap();
    let shown = String::from_utf8(pasted.stdout).unwrap();
    assert!(pasted.status.success(), "{}", String::from_utf8_lossy(&pasted.stderr));
    assert!(shown.contains("Release the workspace lock before restarting the daemon"), "{shown}");
    assert!(shown.contains("none of these is a confident match (best similarity"), "{shown}");
    assert_eq!(shown.lines().filter(|l| l.starts_with('[')).count(), 1, "{shown}");
    let json = env.json(&["recall", "--all", "zebra quantum"]);
    assert_eq!(json["unconfident"], true, "{json}");

    // A blank query is refused, as MCP refuses it; control characters are never echoed raw.
    let err = env.fails(&["recall", "   "], 1);
    assert!(err.starts_with("error: recall needs a query"), "{err}");
    let out = env.ok(&["recall", "zebra\u{1b}[31mred\u{7}"]);
    assert!(!out.contains('\u{1b}') && !out.contains('\u{7}') && out.contains("zebra␛[31mred␇"), "{out:?}");
}
