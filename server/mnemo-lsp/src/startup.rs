//! What the server sets up once the client has spoken: the settings
//! (`initializationOptions`, `workspace/didChangeConfiguration`), the store
//! watch, and the model — loaded after `initialized` with work-done progress
//! (it may embed notes written without a model), and announced once with
//! `window/showMessage` when recall can only run lexical-only.

use std::sync::atomic::Ordering;

use serde_json::Value;
use tower_lsp_server::ls_types::{MessageType, NumberOrString};

use crate::Ranking;
use crate::server::Backend;
use crate::settings::Settings;

/// What applying settings changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Changed {
    store: bool,
    model: bool,
}

impl Backend {
    /// Apply settings sent by the client; an error names what was wrong.
    /// Apply what fits; a setting of the wrong type is returned as the problem.
    pub(crate) fn apply_settings(&self, value: Option<&Value>) -> (Changed, Option<String>) {
        let (settings, problem) = Settings::lenient(value);
        let mut changed = Changed::default();
        if let Some(pause) = settings.debounce() {
            *self.pause.lock().unwrap_or_else(|e| e.into_inner()) = pause;
        }
        if let Some(path) = settings.store_path {
            let mut current = self.store_path.write().unwrap_or_else(|e| e.into_inner());
            changed.store = *current != path;
            *current = path;
        }
        if let Some(dir) = settings.model_dir {
            let mut current = self.model_dir.write().unwrap_or_else(|e| e.into_inner());
            changed.model = current.as_ref() != Some(&dir);
            *current = Some(dir);
        }
        (changed, problem)
    }

    /// `workspace/didChangeConfiguration`: apply, then restart what depends on it.
    pub(crate) async fn change_settings(&self, value: Value) {
        let (changed, problem) = self.apply_settings(Some(&value));
        if let Some(problem) = problem {
            self.client.show_message(MessageType::ERROR, problem).await;
        }
        if changed.store {
            // The old store's mirror caught up and let go before the new one is stood for.
            self.stop_standing().await;
            self.start_watch();
        }
        if changed.store || changed.model {
            *self.ranking.lock().await = None;
            self.preload_ranking();
        }
    }

    /// The ranking, loaded on first need (waits for a load in progress).
    pub(crate) async fn load_ranking(&self) -> Ranking {
        self.ranking_loader().get().await
    }

    /// Start loading the ranking in the background, so requests and
    /// notifications after `initialized` are not held up by the model.
    pub(crate) fn preload_ranking(&self) {
        let loader = self.ranking_loader();
        tokio::spawn(async move { loader.get().await });
    }

    fn ranking_loader(&self) -> RankingSlot {
        RankingSlot {
            client: self.client.clone(),
            slot: self.ranking.clone(),
            loader: self.config.load_ranking.clone(),
            store: self.store_path.read().unwrap_or_else(|e| e.into_inner()).clone(),
            model: self.model_dir.read().unwrap_or_else(|e| e.into_inner()).clone(),
            progress: self.progress.load(Ordering::Relaxed),
        }
    }
}

/// What loading the ranking needs, owned, so it can run on its own task.
struct RankingSlot {
    client: tower_lsp_server::Client,
    slot: std::sync::Arc<tokio::sync::Mutex<Option<Ranking>>>,
    loader: crate::RankingLoader,
    store: std::path::PathBuf,
    model: Option<std::path::PathBuf>,
    progress: bool,
}

impl RankingSlot {
    /// Load once; say once when recall can only be lexical.
    async fn get(self) -> Ranking {
        let mut slot = self.slot.lock().await;
        if let Some(ranking) = slot.as_ref() {
            return ranking.clone();
        }
        let progress = match self.progress {
            true => {
                let token = NumberOrString::String("mnemo/loadModel".into());
                // A client that never answers must not stall the model.
                let created = tokio::time::timeout(
                    std::time::Duration::from_secs(2),
                    self.client.create_work_done_progress(token.clone()),
                )
                .await;
                match created {
                    Ok(Ok(())) => Some(
                        self.client
                            .progress(token, "mnemo: loading the model")
                            .with_message("embedding notes written without a model")
                            .begin()
                            .await,
                    ),
                    _ => None,
                }
            }
            false => None,
        };
        let (loader, store, model) = (self.loader.clone(), self.store.clone(), self.model.clone());
        let ranking = tokio::task::spawn_blocking(move || loader(&store, model.as_deref())).await.unwrap_or_else(|e| {
            Ranking { embed: None, lexical_reason: Some(format!("loading the model failed: {e}")) }
        });
        if let Some(progress) = progress {
            progress
                .finish_with_message(if ranking.embed.is_some() { "hybrid recall" } else { "lexical-only recall" })
                .await;
        }
        if ranking.embed.is_none() {
            let reason = ranking.lexical_reason.as_deref().unwrap_or("no model is loaded");
            let message =
                format!("mnemo: recall runs lexical-only ({reason}); run scripts/install-model or set modelDir");
            self.client.show_message(MessageType::WARNING, message).await;
        }
        *slot = Some(ranking.clone());
        ranking
    }
}
