//! Pluggable models through the binary: a second model directory installed
//! by `scripts/install-model --pooling cls` (the real MiniLM declared with
//! CLS pooling), recall falling back to lexical-only until `mnemo reindex`,
//! reindexing to it and back, and a declaration the model contradicts
//! refused with nothing re-embedded.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::{Env, installed_model_dir, parse_id};

const INSTALL_MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/install-model");

/// A model directory at `dir` holding the installed model's files
/// (symlinked, so `scripts/install-model` finds the model installed and
/// only writes the declaration), without a declaration.
fn model_files_at(dir: &Path) {
    let installed = installed_model_dir();
    std::fs::create_dir_all(dir).unwrap();
    for file in [
        "model.onnx",
        "tokenizer.json",
        "config.json",
        "special_tokens_map.json",
        "tokenizer_config.json",
        "libonnxruntime.so.1.31.1",
        "libonnxruntime.so",
        "identity",
    ] {
        let target = std::fs::canonicalize(installed.join(file)).unwrap();
        std::os::unix::fs::symlink(target, dir.join(file)).unwrap();
    }
}

fn install_model(args: &[&str]) -> String {
    let out = std::process::Command::new("bash").arg(INSTALL_MODEL).args(args).output().unwrap();
    assert!(out.status.success(), "install-model {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Run mnemo with the model in `dir`.
fn with_model(env: &Env, dir: &Path, args: &[&str]) -> Output {
    env.command(args).env("MNEMO_MODEL_DIR", dir).output().unwrap()
}

fn json_with_model(env: &Env, dir: &Path, args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.push("--json");
    let out = with_model(env, dir, &args);
    assert!(out.status.success(), "mnemo {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn stdout(out: &Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// Three notes, remembered with the model in `dir`.
fn seed(env: &Env, dir: &Path) -> i64 {
    let remember = |title: &str, body: &str| {
        parse_id(&stdout(&with_model(env, dir, &["remember", "--kind", "gotcha", "--title", title, "--body", body])))
    };
    let lock = remember(
        "Release the workspace lock before restarting the daemon",
        "Restarting while the lock is held deadlocks the new daemon process.",
    );
    remember("Segment cache eviction is LRU by bytes", "Measured on the 480 GB store.");
    remember("Use rustls for TLS termination", "Static builds, no openssl.");
    lock
}

fn stats(env: &Env, dir: &Path) -> Value {
    json_with_model(env, dir, &["store", "stats"])
}

fn two_models(env: &Env) -> (PathBuf, PathBuf) {
    let (mean, cls) = (env.home.join("models/minilm"), env.home.join("models/minilm-cls"));
    model_files_at(&mean);
    model_files_at(&cls);
    let out = install_model(&[mean.to_str().unwrap()]);
    assert!(out.contains("already installed") && out.contains("declared the model with mean pooling"), "{out}");
    let out = install_model(&["--pooling", "cls", cls.to_str().unwrap()]);
    assert!(out.contains("declared the model with cls pooling"), "{out}");
    let declaration = std::fs::read_to_string(cls.join("mnemo-model.toml")).unwrap();
    assert!(declaration.contains("pooling = \"cls\"\n") && declaration.contains("dimensions = 384\n"), "{declaration}");
    (mean, cls)
}

#[test]
fn a_cls_declared_model_is_installed_reindexed_to_and_switched_back_from() {
    let env = Env::with_model();
    let (mean, cls) = two_models(&env);
    let lock = seed(&env, &mean);
    let installed_identity = std::fs::read_to_string(mean.join("identity")).unwrap().trim().to_string();
    let cls_identity = format!("{installed_identity} [pooling cls]");
    let first = stats(&env, &mean);
    assert_eq!(first["ranking"], "hybrid");
    assert_eq!(first["stats"]["embedding_model"], installed_identity.as_str(), "MiniLM as declared keeps its identity");
    assert_eq!(first["stats"]["embedded_notes"], 3);

    // Switched to the CLS model: lexical only, saying why, and nothing re-embedded.
    let before = env.fingerprint();
    let answer = json_with_model(&env, &cls, &["recall", "daemon", "lock"]);
    assert_eq!(answer["ranking"], "lexical only");
    let reason = answer["ranking_reason"].as_str().unwrap();
    assert!(reason.contains(&format!("the loaded model is '{cls_identity}'")), "{reason}");
    assert!(reason.ends_with("run `mnemo reindex`"), "{reason}");
    assert_eq!(answer["results"][0]["id"], lock);
    assert_eq!(env.fingerprint(), before, "recall with another model changed the store");
    let unembedded =
        parse_id(&stdout(&with_model(&env, &cls, &["remember", "--kind", "finding", "--title", "Retries stop at 3"])));
    assert_eq!(stats(&env, &cls)["stats"]["embedded_notes"], 3, "#{unembedded} was embedded by the other model");

    // `mnemo reindex` re-embeds every note with it: hybrid again, under its identity.
    let out = stdout(&with_model(&env, &cls, &["reindex"]));
    assert_eq!(out, format!("re-embedded 4 notes with {cls_identity}\n"));
    let switched = stats(&env, &cls);
    assert_eq!((switched["ranking"].as_str(), &switched["ranking_reason"]), (Some("hybrid"), &Value::Null));
    assert_eq!(switched["stats"]["embedding_model"], cls_identity.as_str());
    assert_eq!(switched["stats"]["embedded_notes"], 4);
    let answer = json_with_model(&env, &cls, &["recall", "restarting", "the", "daemon", "with", "the", "lock", "held"]);
    assert_eq!(answer["ranking"], "hybrid");
    assert_eq!(answer["results"][0]["id"], lock, "{answer}");

    // Back to the mean-pooled model, named by the workspace config this time: a reindex again.
    std::fs::create_dir_all(env.root.join(".mnemo")).unwrap();
    std::fs::write(
        env.root.join(".mnemo/config.toml"),
        format!("[recall]\nmodel_dir = {:?}\n", mean.to_str().unwrap()),
    )
    .unwrap();
    let configured = |args: &[&str]| env.command(args).env_remove("MNEMO_MODEL_DIR").output().unwrap();
    let answer: Value = serde_json::from_slice(&configured(&["recall", "daemon", "--json"]).stdout).unwrap();
    assert_eq!(answer["ranking"], "lexical only");
    assert!(answer["ranking_reason"].as_str().unwrap().contains(&format!("made by '{cls_identity}'")), "{answer}");
    assert_eq!(stdout(&configured(&["reindex"])), format!("re-embedded 4 notes with {installed_identity}\n"));
    let back: Value = serde_json::from_slice(&configured(&["store", "stats", "--json"]).stdout).unwrap();
    assert_eq!(
        (back["ranking"].as_str(), &back["stats"]["embedding_model"]),
        (Some("hybrid"), &Value::from(installed_identity))
    );
    let answer: Value = serde_json::from_slice(&configured(&["recall", "daemon", "lock", "--json"]).stdout).unwrap();
    assert_eq!((answer["ranking"].as_str(), &answer["results"][0]["id"]), (Some("hybrid"), &Value::from(lock)));
}

#[test]
fn a_declaration_the_model_contradicts_is_refused_and_nothing_is_re_embedded() {
    let env = Env::with_model();
    let (mean, _) = two_models(&env);
    seed(&env, &mean);
    let wrong = env.home.join("models/wrong-dimensions");
    model_files_at(&wrong);
    let declaration = std::fs::read_to_string(mean.join("mnemo-model.toml")).unwrap();
    std::fs::write(wrong.join("mnemo-model.toml"), declaration.replace("dimensions = 384", "dimensions = 768"))
        .unwrap();
    let expected = format!(
        "{}/mnemo-model.toml does not match the model: it declares 768 dimensions, model.onnx produces 384; fix the declaration",
        wrong.display()
    );
    let before = env.fingerprint();
    let answer = json_with_model(&env, &wrong, &["recall", "daemon"]);
    assert_eq!(answer["ranking"], "lexical only");
    assert_eq!(answer["ranking_reason"], expected.as_str());
    let out = with_model(&env, &wrong, &["reindex"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(String::from_utf8(out.stderr).unwrap(), format!("error: cannot reindex without a model: {expected}\n"));

    let typo = env.home.join("models/typo");
    model_files_at(&typo);
    std::fs::write(typo.join("mnemo-model.toml"), declaration.replace("pooling =", "poolng =")).unwrap();
    let reason = json_with_model(&env, &typo, &["recall", "daemon"])["ranking_reason"].as_str().unwrap().to_string();
    assert!(
        reason.starts_with(&format!("{}/mnemo-model.toml: line 2 (`poolng`): unknown field `poolng`", typo.display())),
        "{reason}"
    );
    assert_eq!(with_model(&env, &typo, &["reindex"]).status.code(), Some(1));
    assert_eq!(env.fingerprint(), before, "a refused model changed the store");
    assert_eq!(stats(&env, &mean)["ranking"], "hybrid", "the vectors are still the declared model's");
}

#[test]
fn install_model_refuses_an_unknown_pooling() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("bash")
        .arg(INSTALL_MODEL)
        .args(["--pooling", "max", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--pooling must be mean or cls, not 'max'"));
    assert!(!dir.path().join("mnemo-model.toml").exists());
}

#[test]
fn eval_compares_two_model_directories_on_the_same_queries() {
    let env = Env::with_model();
    let (mean, cls) = two_models(&env);
    let note = |id: u32, title: &str, body: &str| {
        format!(
            r#"{{"id": {id}, "kind": "gotcha", "priority": "medium", "title": "{title}", "body": "{body}", "created": "2026-03-06", "workspace": "w", "provenance": "agent"}}"#
        )
    };
    let corpus = env.home.join("corpus.jsonl");
    std::fs::write(
        &corpus,
        [
            note(
                1,
                "Release the workspace lock before restarting the daemon",
                "Restarting with the lock held deadlocks.",
            ),
            note(2, "Segment cache eviction is LRU by bytes", "Measured on the 480 GB store."),
            note(3, "Use rustls for TLS termination", "Static builds, no openssl."),
        ]
        .join("\n"),
    )
    .unwrap();
    let queries = env.home.join("queries.jsonl");
    std::fs::write(
        &queries,
        [
            r#"{"qid": "q1", "query": "bouncing the background service while it holds the mutex", "workspace": "w", "relevant": [1], "category": "paraphrase"}"#,
            r#"{"qid": "q2", "query": "which certificates library terminates https", "workspace": "w", "relevant": [3], "category": "paraphrase"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let (corpus, queries) = (corpus.to_str().unwrap(), queries.to_str().unwrap());
    let eval = ["eval", "--corpus", corpus, "--queries", queries, "--model"];
    let mut args = eval.to_vec();
    args.extend([mean.to_str().unwrap(), "--model", cls.to_str().unwrap(), "--json"]);
    let report: Value = serde_json::from_slice(&stdout(&env.command(&args).output().unwrap()).into_bytes()).unwrap();
    let models = report["models"].as_array().unwrap();
    let installed_identity = std::fs::read_to_string(mean.join("identity")).unwrap().trim().to_string();
    assert_eq!(models.len(), 2);
    assert_eq!(models[0]["model"], installed_identity.as_str());
    assert_eq!(models[1]["model"], format!("{installed_identity} [pooling cls]").as_str());
    for model in models {
        assert_eq!(model["queries"], 2);
        assert!(model["ranking"].as_str().unwrap().starts_with("hybrid"), "{model}");
        assert!(model["hit_at_k"].as_f64().unwrap() > 0.0, "{model}");
    }
    let text = stdout(&env.command(&args[..args.len() - 1]).output().unwrap());
    assert!(text.contains(&format!("| {installed_identity} ({}) |", mean.display())), "{text}");
    assert!(text.contains(&format!("| {installed_identity} [pooling cls] ({}) |", cls.display())), "{text}");

    // Each model must load: a broken one is an error naming it, never a lexical-only row.
    let missing = env.home.join("models/none");
    let out = env
        .command(&[&eval[..], &[mean.to_str().unwrap(), "--model", missing.to_str().unwrap()]].concat())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with(&format!("error: --model {}: no such directory", missing.display())), "{err}");
    let model_file = mean.join("model.onnx");
    let out = env.command(&[&eval[..], &[model_file.to_str().unwrap()]].concat()).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a directory; pass the model's directory"));
    let twice = [&eval[..], &[mean.to_str().unwrap(), "--model", mean.to_str().unwrap()]].concat();
    let out = env.command(&twice).output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is given twice"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = env.command(&["eval", "--queries", queries, "--model", mean.to_str().unwrap()]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("pass --corpus FILE too"));
}

/// The model `scripts/install-model --quantize` made (scripts/test installs
/// it beside the default one and exports `MNEMO_QUANTIZED_MODEL_DIR`).
fn quantized_model_dir() -> PathBuf {
    let dir = std::env::var("MNEMO_QUANTIZED_MODEL_DIR").map(PathBuf::from).unwrap_or_else(|_| {
        let mut dir = installed_model_dir().into_os_string();
        dir.push("-quantized");
        PathBuf::from(dir)
    });
    assert!(
        dir.join("model.onnx").is_file(),
        "no quantized model at {}: run scripts/install-model --quantize {0} (scripts/test does)",
        dir.display()
    );
    dir
}

#[test]
fn the_quantized_model_runs_int8_and_ranks_as_the_shipped_one_after_a_reindex() {
    let env = Env::with_model();
    let (shipped, quantized) = (installed_model_dir(), quantized_model_dir());
    let contains = |file: &Path, what: &[u8]| std::fs::read(file).unwrap().windows(what.len()).any(|w| w == what);
    assert!(contains(&quantized.join("model.onnx"), b"MatMulInteger"), "the quantized model multiplies in int8");
    assert!(!contains(&shipped.join("model.onnx"), b"MatMulInteger"), "the shipped one widens its weights to fp32");
    let identity = std::fs::read_to_string(quantized.join("identity")).unwrap();
    assert!(identity.starts_with("all-MiniLM-L6-v2-dynamic-int8 ("), "{identity}");

    seed(&env, &shipped);
    let query = ["recall", "the new daemon hangs after a restart"];
    let ids =
        |answer: &Value| answer["results"].as_array().unwrap().iter().map(|r| r["id"].clone()).collect::<Vec<_>>();
    let before = json_with_model(&env, &shipped, &query);
    assert_eq!(before["ranking"], "hybrid");
    let stale = stats(&env, &quantized);
    assert_eq!(stale["ranking"], "lexical only", "other vectors until a reindex: {stale}");
    stdout(&with_model(&env, &quantized, &["reindex"]));
    let after = json_with_model(&env, &quantized, &query);
    assert_eq!(after["ranking"], "hybrid", "{after}");
    assert_eq!(ids(&after), ids(&before), "the same ranking: {after}");
}
