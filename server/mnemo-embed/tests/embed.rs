//! The embedder against the real packaged model (installed by
//! scripts/install-model; `MNEMO_MODEL_DIR` or the default directory), and
//! the error paths that must never panic.

use mnemo_embed::{EmbedError, Embedder, ModelLocation, default_model_dir};

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
    let v = embedder.embed(&texts).unwrap();
    assert_eq!(v.len(), 3);
    for vector in &v {
        let norm: f32 = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "unit length, got {norm}");
    }
    let related = cosine(&v[0], &v[1]);
    let unrelated = cosine(&v[0], &v[2]);
    assert!(related > 0.5 && unrelated < 0.2, "related {related}, unrelated {unrelated}");
    let batch: Vec<String> = (0..150).map(|i| format!("note number {i} about caches")).collect();
    assert_eq!(embedder.embed(&batch).unwrap().len(), 150, "more than one batch");
    assert!(embedder.embed::<&str>(&[]).unwrap().is_empty());
}

#[test]
fn a_text_embeds_the_same_alone_and_in_a_batch_with_longer_texts() {
    let mut embedder = Embedder::load(&installed()).unwrap();
    let short = "restart the daemon";
    let long = "a much longer text about caches, segments, eviction policies, upstream timeouts and the proxy's configuration reload path, padded well beyond the short one";
    let alone = embedder.embed(&[short]).unwrap().pop().unwrap();
    let batched = embedder.embed(&[long, short]).unwrap().pop().unwrap();
    let similarity = cosine(&alone, &batched);
    assert!(similarity > 0.999, "padding leaks into the pooled vector: cosine {similarity}");
}

#[test]
fn vectors_come_back_in_the_order_of_the_texts_though_batched_by_length() {
    let mut embedder = Embedder::load(&installed()).unwrap();
    // Lengths deliberately out of order and spanning several batches.
    let texts: Vec<String> = (0..40).map(|i| format!("note {i} {}", "about caches ".repeat((i * 7) % 13))).collect();
    let together = embedder.embed(&texts).unwrap();
    for (index, text) in texts.iter().enumerate() {
        let alone = embedder.embed(&[text]).unwrap().pop().unwrap();
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
    let scores = embedder.late_scores("which labels may I attach to a new counter?", &notes).unwrap();
    assert_eq!(scores.len(), 3);
    assert!(scores[1] > scores[0] && scores[1] > scores[2], "{scores:?}");
    let tokens = embedder.token_vectors(&["a b", "restart the daemon"]).unwrap();
    assert_eq!((tokens[0].len(), tokens[1].len()), (2, 3), "one vector per real token, no [CLS]/[SEP]");
    let norm: f32 = tokens[1][0].iter().map(|x| x * x).sum();
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
