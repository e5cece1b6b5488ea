//! The embedder against the real packaged model (installed by
//! scripts/install-model; `MNEMO_MODEL_DIR` or the default directory), the
//! declarations it is run by, and the error paths that must never panic.

use std::path::Path;

use mnemo_core::recall::token_signs::QueryTokens;
use mnemo_embed::{DECLARATION_FILE, EmbedError, Embedder, ModelLocation, default_model_dir};

fn installed() -> ModelLocation {
    let dir = std::env::var("MNEMO_MODEL_DIR").ok();
    let default =
        default_model_dir(std::env::var("XDG_DATA_HOME").ok().as_deref(), std::env::var("HOME").ok().as_deref());
    ModelLocation::resolve(dir.as_deref(), None, None, None, default).expect("a model location")
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn the_packaged_model_embeds_related_texts_closer_than_unrelated_ones() {
    let location = installed();
    let mut embedder = Embedder::load(&location)
        .unwrap_or_else(|e| panic!("{e}: the test suite installs the model first (scripts/test)"));
    assert_eq!(embedder.dims(), 384);
    assert!(embedder.identity().contains("MiniLM"), "{}", embedder.identity());
    let texts = [
        "restart the daemon after releasing the workspace lock",
        "the daemon must not be restarted while holding the lock",
        "bananas are rich in potassium",
    ];
    let v = embedder.embed_passages(&texts).unwrap();
    assert_eq!(v.len(), 3);
    for vector in &v {
        let norm: f32 = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "unit length, got {norm}");
    }
    let related = cosine(&v[0], &v[1]);
    let unrelated = cosine(&v[0], &v[2]);
    assert!(related > 0.5 && unrelated < 0.2, "related {related}, unrelated {unrelated}");
    let batch: Vec<String> = (0..150).map(|i| format!("note number {i} about caches")).collect();
    assert_eq!(embedder.embed_passages(&batch).unwrap().len(), 150, "more than one batch");
    assert!(embedder.embed::<&str>(&[]).unwrap().is_empty());
}

#[test]
fn a_text_embeds_the_same_alone_and_in_a_batch_with_longer_texts() {
    let mut embedder = Embedder::load(&installed()).unwrap();
    let short = "restart the daemon";
    let long = "a much longer text about caches, segments, eviction policies, upstream timeouts and the proxy's configuration reload path, padded well beyond the short one";
    let alone = embedder.embed_passages(&[short]).unwrap().pop().unwrap();
    let batched = embedder.embed_passages(&[long, short]).unwrap().pop().unwrap();
    let similarity = cosine(&alone, &batched);
    assert!(similarity > 0.999, "padding leaks into the pooled vector: cosine {similarity}");
}

#[test]
fn vectors_come_back_in_the_order_of_the_texts_though_batched_by_length() {
    let mut embedder = Embedder::load(&installed()).unwrap();
    // Lengths deliberately out of order and spanning several batches.
    let texts: Vec<String> = (0..40).map(|i| format!("note {i} {}", "about caches ".repeat((i * 7) % 13))).collect();
    let together = embedder.embed_passages(&texts).unwrap();
    for (index, text) in texts.iter().enumerate() {
        let alone = embedder.embed_passages(&[text]).unwrap().pop().unwrap();
        let nearest =
            (0..texts.len()).max_by(|&a, &b| cosine(&alone, &together[a]).total_cmp(&cosine(&alone, &together[b])));
        assert_eq!(nearest, Some(index), "the vector of {text:?} is another text's");
        assert!(cosine(&alone, &together[index]) > 0.999);
    }
}

#[test]
fn late_interaction_scores_the_note_that_shares_the_point_highest() {
    let mut embedder = Embedder::load(&installed()).unwrap();
    let notes = [
        "Metric names follow larder_<subsystem>_<name>_<unit>",
        "No per-path labels on metrics: only route, upstream and status class, or series explode",
        "The release workflow runs on tags",
    ];
    let embedded = embedder.embed_passages_with_signs(&notes, |_, _| {}).unwrap();
    let query = embedder.query_token_vectors("which labels may I attach to a new counter?").unwrap();
    let tables = QueryTokens::new(&query, embedder.dims());
    let scores: Vec<f64> = embedded.iter().map(|p| tables.max_sim(&p.token_signs).unwrap()).collect();
    assert!(scores[1] > scores[0] && scores[1] > scores[2], "{scores:?}");

    // The same run pools the vector: the pooled side is what embed_passages gives.
    let pooled = embedder.embed_passages(&notes).unwrap();
    for (with_signs, alone) in embedded.iter().zip(&pooled) {
        assert!(cosine(&with_signs.vector, alone) > 0.9999);
    }
    let tokens = embedder.embed_passages_with_signs(&["a b", "restart the daemon"], |_, _| {}).unwrap();
    let bytes_per_token = embedder.dims() / 8;
    assert_eq!(
        (tokens[0].token_signs.len(), tokens[1].token_signs.len()),
        (2 * bytes_per_token, 3 * bytes_per_token),
        "one token's signs per real token, no [CLS]/[SEP]"
    );
    let token = embedder.query_token_vectors("restart").unwrap();
    let norm: f32 = token[0].iter().map(|x| x * x).sum();
    assert!((norm - 1.0).abs() < 1e-4);
}

#[test]
fn a_missing_model_or_runtime_is_an_error_not_a_panic() {
    let empty = tempfile::tempdir().unwrap();
    let err = Embedder::load(&ModelLocation {
        model_dir: empty.path().into(),
        onnxruntime: empty.path().join("libonnxruntime.so"),
    })
    .unwrap_err();
    assert!(matches!(err, EmbedError::NoModel { .. }), "{err}");
    assert!(err.to_string().contains("run scripts/install-model"));

    let broken = tempfile::tempdir().unwrap();
    let real = installed().model_dir;
    for file in ["tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json"] {
        std::fs::copy(real.join(file), broken.path().join(file)).unwrap();
    }
    std::fs::write(broken.path().join("model.onnx"), b"not an onnx graph").unwrap();
    let no_runtime = ModelLocation { model_dir: broken.path().into(), onnxruntime: broken.path().join("missing.so") };
    let err = Embedder::load(&no_runtime).unwrap_err();
    assert!(matches!(err, EmbedError::Runtime { .. }), "{err}");
    assert!(err.to_string().contains("the library file does not exist"), "{err}");

    let broken_model = ModelLocation { model_dir: broken.path().into(), onnxruntime: installed().onnxruntime };
    let err = Embedder::load(&broken_model).unwrap_err();
    assert!(matches!(err, EmbedError::Model { .. }), "{err}");
}

/// A model directory of the installed model's files (symlinked), with
/// `declaration` as its `mnemo-model.toml` (none when `None`) and `identity`.
fn declared_copy(declaration: Option<&str>, identity: Option<&str>) -> (tempfile::TempDir, ModelLocation) {
    let real = installed();
    let dir = tempfile::tempdir().unwrap();
    for file in ["model.onnx", "tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json"] {
        std::os::unix::fs::symlink(std::fs::canonicalize(real.model_dir.join(file)).unwrap(), dir.path().join(file))
            .unwrap();
    }
    if let Some(text) = declaration {
        std::fs::write(dir.path().join(DECLARATION_FILE), text).unwrap();
    }
    if let Some(text) = identity {
        std::fs::write(dir.path().join("identity"), text).unwrap();
    }
    let location = ModelLocation { model_dir: dir.path().into(), onnxruntime: real.onnxruntime };
    (dir, location)
}

const MINILM: &str = "pooling = \"mean\"\nnormalize = true\nmax_length = 256\ndimensions = 384\n";

fn file_of(dir: &tempfile::TempDir) -> String {
    Path::new(dir.path()).join(DECLARATION_FILE).display().to_string()
}

#[test]
fn cls_pooling_makes_other_vectors_under_another_identity() {
    let mut mean = Embedder::load(&installed()).unwrap();
    let (_dir, location) = declared_copy(Some(&MINILM.replace("mean", "cls")), Some("all-MiniLM-L6-v2-int8 (test)"));
    let mut cls = Embedder::load(&location).unwrap();
    assert_eq!(cls.identity(), "all-MiniLM-L6-v2-int8 (test) [pooling cls]");
    assert_ne!(cls.identity(), mean.identity());
    let text = ["restart the daemon after releasing the workspace lock"];
    let (a, b) =
        (mean.embed_passages(&text).unwrap().pop().unwrap(), cls.embed_passages(&text).unwrap().pop().unwrap());
    assert_eq!(b.len(), 384);
    assert!(cosine(&a, &b) < 0.99, "CLS pooling made the mean's vector: {}", cosine(&a, &b));
    let norm: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4);
}

#[test]
fn prefixes_go_before_queries_and_passages_only() {
    let declaration =
        format!("{MINILM}query_prefix = \"query: \"\npassage_prefix = \"passage: \"\nname = \"minilm-e5-style\"\n");
    let (_dir, location) = declared_copy(Some(&declaration), None);
    let mut prefixed = Embedder::load(&location).unwrap();
    assert_eq!(prefixed.identity(), r#"minilm-e5-style [query_prefix "query: ", passage_prefix "passage: "]"#);
    let mut plain = Embedder::load(&installed()).unwrap();
    let text = "the workspace lock";
    let query = prefixed.embed_queries(&[text]).unwrap().pop().unwrap();
    let passage = prefixed.embed_passages(&[text]).unwrap().pop().unwrap();
    let as_query = plain.embed_passages(&["query: the workspace lock"]).unwrap().pop().unwrap();
    let as_passage = plain.embed_passages(&["passage: the workspace lock"]).unwrap().pop().unwrap();
    assert!(cosine(&query, &as_query) > 0.999 && cosine(&passage, &as_passage) > 0.999);
    assert!(cosine(&query, &passage) < 0.999, "the two sides got the same text");
    let tokens = prefixed.query_token_vectors("a b").unwrap();
    assert_eq!(tokens.len(), 4, "query, :, a, b");
    let signs = prefixed.embed_passages_with_signs(&["a b"], |_, _| {}).unwrap();
    assert_eq!(signs[0].token_signs.len(), 4 * prefixed.dims() / 8, "passage, :, a, b");
}

#[test]
fn normalize_false_keeps_the_pooled_length() {
    let (_dir, location) = declared_copy(Some(&MINILM.replace("true", "false")), Some("all-MiniLM-L6-v2-int8 (test)"));
    let mut raw = Embedder::load(&location).unwrap();
    assert!(raw.identity().ends_with("[normalize false]"), "{}", raw.identity());
    let vector = raw.embed_passages(&["the workspace lock"]).unwrap().pop().unwrap();
    let norm: f32 = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() > 1e-3, "normalised anyway: {norm}");
}

#[test]
fn a_declaration_with_the_wrong_dimensions_is_refused() {
    let (dir, location) = declared_copy(Some(&MINILM.replace("384", "768")), None);
    let err = Embedder::load(&location).unwrap_err();
    assert!(matches!(err, EmbedError::Mismatch { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        format!(
            "{} does not match the model: it declares 768 dimensions, model.onnx produces 384; fix the declaration",
            file_of(&dir)
        )
    );
}

#[test]
fn a_max_length_beyond_the_tokenizers_is_refused() {
    let (dir, location) = declared_copy(Some(&MINILM.replace("256", "512")), None);
    let err = Embedder::load(&location).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "{} does not match the model: it declares max_length = 512, but tokenizer_config.json has \
             model_max_length = 256; declare at most 256; fix the declaration",
            file_of(&dir)
        )
    );
}

#[test]
fn an_unknown_pooling_or_a_typo_key_is_refused_naming_the_file_and_key() {
    let (dir, location) = declared_copy(Some(&MINILM.replace("\"mean\"", "\"max\"")), None);
    let err = Embedder::load(&location).unwrap_err();
    assert!(matches!(err, EmbedError::BadDeclaration { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        format!(
            "{}: line 1 (`pooling`): unknown variant `max`, expected `mean` or `cls`; fix the declaration (docs/models.md)",
            file_of(&dir)
        )
    );
    let (dir, location) = declared_copy(Some(&format!("{MINILM}normalise = true\n")), None);
    let err = Embedder::load(&location).unwrap_err().to_string();
    assert!(err.starts_with(&format!("{}: line 5 (`normalise`): unknown field `normalise`", file_of(&dir))), "{err}");
}

#[test]
fn an_undeclared_model_is_refused_unless_it_is_the_installed_minilm() {
    let (dir, location) = declared_copy(None, Some("a retrained model\n"));
    let err = Embedder::load(&location).unwrap_err();
    assert!(matches!(err, EmbedError::Undeclared { .. }), "{err}");
    assert!(err.to_string().contains(&format!("write {}/mnemo-model.toml", dir.path().display())), "{err}");
    let (_dir, location) = declared_copy(None, Some("all-MiniLM-L6-v2-int8 (before declarations)\n"));
    assert_eq!(Embedder::load(&location).unwrap().identity(), "all-MiniLM-L6-v2-int8 (before declarations)");
}

#[test]
fn a_model_without_the_inputs_fastembed_feeds_is_refused_by_name() {
    let (dir, location) = declared_copy(Some(MINILM), None);
    let model = dir.path().join("model.onnx");
    std::fs::remove_file(&model).unwrap();
    // A graph taking input_ids and position_ids, no attention_mask.
    let field = |number: u8, content: &[u8]| [vec![(number << 3) | 2, content.len() as u8], content.to_vec()].concat();
    let input = |name: &str| field(11, &field(1, name.as_bytes()));
    let graph = [input("input_ids"), input("position_ids"), field(12, &field(1, b"last_hidden_state"))].concat();
    std::fs::write(&model, [vec![8, 7], field(7, &graph)].concat()).unwrap();
    let err = Embedder::load(&location).unwrap_err();
    assert!(matches!(err, EmbedError::Unsupported { .. }), "{err}");
    assert!(
        err.to_string().contains(
            "cannot be used: model.onnx takes the inputs input_ids, position_ids; mnemo feeds input_ids, attention_mask"
        ),
        "{err}"
    );
}
