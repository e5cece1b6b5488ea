//! The embedding side of the binary: load the model once per process (from
//! `MNEMO_MODEL_DIR`/`ORT_DYLIB_PATH`, `[recall]` in the workspace config, or
//! the directory `scripts/install-model` fills), embed notes as they are
//! written, embed notes written while no model was available, and say which
//! ranking recall can run and why.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use mnemo_core::model::{normalize_body, normalize_title};
use mnemo_core::recall::RankingMode;
use mnemo_core::recall::embedding_chunks;
use mnemo_core::recall::token_signs::QueryTokens;
use mnemo_embed::{Embedder, ModelLocation, default_model_dir};
use mnemo_store::config::WorkspaceConfig;
use mnemo_store::{NoteEmbedding, Scope, Store};

use crate::context::Context;

/// Where the model is: `model_dir` when given, else `MNEMO_MODEL_DIR` /
/// `ORT_DYLIB_PATH`, `[recall]` in the workspace config, or the default data
/// directory. A broken config is a reason for lexical-only recall.
pub fn location_of(
    config: Result<&WorkspaceConfig, String>,
    model_dir: Option<&std::path::Path>,
) -> Result<ModelLocation, String> {
    let config = config?;
    let env = |name: &str| std::env::var(name).ok();
    let default = default_model_dir(env("XDG_DATA_HOME").as_deref(), env("HOME").as_deref());
    let given = model_dir.map(|d| d.display().to_string());
    ModelLocation::resolve(
        given.as_deref().or(env("MNEMO_MODEL_DIR").as_deref()),
        env("ORT_DYLIB_PATH").as_deref(),
        config.recall.model_dir.as_deref(),
        config.recall.onnxruntime.as_deref(),
        default,
    )
    .ok_or_else(|| "no model location: set MNEMO_MODEL_DIR or HOME".to_string())
}

/// The model, or why there is none.
pub struct Semantic {
    embedder: Result<Embedder, String>,
}

impl Semantic {
    /// Load the model this context is configured with. Never fails: a missing
    /// or broken model makes recall lexical-only, with the reason. Asks the
    /// resident model when one runs (`mnemo daemon`), and otherwise starts
    /// one for the next process and loads its own ([`crate::resident`]).
    pub fn load(ctx: &Context) -> Semantic {
        let location = match location_of(ctx.config().map_err(|e| e.to_string()), None) {
            Ok(location) => location,
            Err(reason) => return Semantic { embedder: Err(reason) },
        };
        if let Some(embedder) = crate::resident::connect_or_start(&location) {
            return Semantic { embedder: Ok(embedder) };
        }
        Semantic { embedder: Embedder::load(&location).map_err(|e| e.to_string()) }
    }

    /// Load the model as configured in this process, never asking the
    /// resident model: for the commands that embed in bulk (import, reindex,
    /// eval), which would hold the resident model from everyone else's
    /// queries, and whose run dwarfs the load.
    pub fn load_here(ctx: &Context) -> Semantic {
        Semantic::load_from(ctx.config().map_err(|e| e.to_string()), None)
    }

    /// Load the model from `model_dir` when given (an editor's setting, which
    /// wins over everything), else as configured, in this process (the
    /// language server and `eval --model` keep their own).
    pub fn load_from(config: Result<&WorkspaceConfig, String>, model_dir: Option<&std::path::Path>) -> Semantic {
        let embedder = location_of(config, model_dir).and_then(|l| Embedder::load(&l).map_err(|e| e.to_string()));
        Semantic { embedder }
    }

    /// Which ranking can run against `store`, and the reason when it is not hybrid.
    pub fn ranking(&self, store: &Store) -> (RankingMode, Option<String>) {
        let embedder = match &self.embedder {
            Ok(embedder) => embedder,
            Err(reason) => return (RankingMode::LexicalOnly, Some(reason.clone())),
        };
        match store.vector_model() {
            Ok(Some(model)) if model.identity != embedder.identity() => (
                RankingMode::LexicalOnly,
                Some(format!(
                    "the stored vectors were made by '{}', the loaded model is '{}'; run `mnemo reindex`",
                    model.identity,
                    embedder.identity()
                )),
            ),
            Ok(_) => (RankingMode::Hybrid, None),
            Err(e) => (RankingMode::LexicalOnly, Some(e.to_string())),
        }
    }

    pub fn embedder(&mut self) -> Option<&mut Embedder> {
        self.embedder.as_mut().ok()
    }

    /// The vectors of a note about to be written to `store`: `None` without a
    /// model, when the store's vectors come from another model, or on failure
    /// (the note is then embedded later by `catch_up` or `reindex`).
    pub fn vectors_for_new_note(&mut self, store: &Store, title: &str, body: &str) -> Option<(NoteEmbedding, String)> {
        if self.ranking(store).0 != RankingMode::Hybrid {
            return None;
        }
        let (title, body) = (normalize_title(title), normalize_body(body));
        self.embed_notes(&[(&title, &body)]).ok().flatten().and_then(|(mut v, model)| Some((v.pop()?, model)))
    }

    /// Embed each note (title, body): its chunks' vectors and token signs,
    /// with a progress bar on a terminal. `None` without a model.
    pub fn embed_notes(&mut self, notes: &[(&str, &str)]) -> Result<Option<(Vec<NoteEmbedding>, String)>, String> {
        let Ok(embedder) = self.embedder.as_mut() else { return Ok(None) };
        let chunks = notes.iter().map(|(title, body)| embedding_chunks(title, body).len()).sum();
        let progress = progress_bar(chunks);
        let embedded = embedder.embed_notes(notes, |done, _| progress.set_position(done as u64));
        progress.finish_and_clear();
        Ok(Some((embedded.map_err(|e| e.to_string())?, embedder.identity().to_string())))
    }

    /// The query's token vectors, ready to rerank with (`None` without a
    /// model or when the model fails: the first stage then stands).
    pub fn query_tokens(&mut self, text: &str) -> Option<QueryTokens> {
        let embedder = self.embedder.as_mut().ok()?;
        match embedder.query_token_vectors(text) {
            Ok(tokens) => Some(QueryTokens::new(&tokens, embedder.dims())),
            Err(e) => {
                tracing::debug!(error = %e, "the query's token vectors failed; the first stage stands");
                None
            }
        }
    }

    /// [`Semantic::embed_notes`] for an import: `None` (and a warning) when
    /// embedding fails, so the import goes on and `mnemo reindex` embeds later.
    pub fn embed_for_import(&mut self, store: &Store, notes: &[(&str, &str)]) -> Option<(Vec<NoteEmbedding>, String)> {
        if self.ranking(store).0 != RankingMode::Hybrid {
            return None;
        }
        self.embed_notes(notes).unwrap_or_else(|e| {
            eprintln!("warning: the notes are imported without vectors ({e}); `mnemo reindex` embeds them later");
            None
        })
    }

    /// Embed every note in `scope` that has no vector yet (written while no
    /// model was available). Returns how many were embedded.
    pub fn catch_up(&mut self, store: &mut Store, scope: &Scope) -> Result<usize, String> {
        if self.embedder.is_err() || self.ranking(store).0 != RankingMode::Hybrid {
            return Ok(0);
        }
        let missing = store.notes_without_vectors(scope).map_err(|e| e.to_string())?;
        if missing.is_empty() {
            return Ok(0);
        }
        let texts: Vec<(&str, &str)> = missing.iter().map(|n| (n.title.as_str(), n.body.as_str())).collect();
        let Some((vectors, model)) = self.embed_notes(&texts)? else { return Ok(0) };
        store
            .write(|w| {
                for (note, vector) in missing.iter().zip(&vectors) {
                    w.put_vectors(note.id, &note.workspace, vector, &model)?;
                }
                Ok(())
            })
            .map_err(|e| e.to_string())?;
        Ok(missing.len())
    }
}

/// The embedding progress bar, with its rate and time left: drawn on stderr
/// when it is a terminal and there are more chunks than a few batches;
/// hidden otherwise, so logs and CI output carry no `\r` or escape codes.
fn progress_bar(chunks: usize) -> ProgressBar {
    if chunks <= mnemo_embed::BATCH_SIZE * 4 || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(chunks as u64), ProgressDrawTarget::stderr());
    bar.set_style(progress_style());
    bar
}

const PROGRESS_TEMPLATE: &str = "embedding [{bar:30}] {pos}/{len} chunks, {rate} chunks/s, {eta} left";

fn progress_style() -> ProgressStyle {
    let style = ProgressStyle::with_template(PROGRESS_TEMPLATE).unwrap_or_else(|_| ProgressStyle::default_bar());
    style.with_key("rate", |state: &ProgressState, out: &mut dyn std::fmt::Write| {
        let _ = write!(out, "{:.0}", state.per_sec());
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_template_is_valid() {
        // Drawn only on a terminal: tests/e2e/logging.rs reads it through `script`.
        assert!(ProgressStyle::with_template(PROGRESS_TEMPLATE).is_ok());
    }

    #[test]
    fn a_few_batches_get_no_bar() {
        assert!(progress_bar(mnemo_embed::BATCH_SIZE * 4).is_hidden());
    }
}
