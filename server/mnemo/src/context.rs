//! What every command needs: the store path, the workspace, the clock, and
//! the write wrapper that sweeps due expiries in the same transaction as the
//! command's own writes ("due notes expire whenever the store is opened for
//! writing"). Also the mapping of errors to one line and an exit status.

use std::cell::OnceCell;
use std::path::PathBuf;

use anyhow::{Context as _, anyhow};
use mnemo_core::review::ReviewPolicy;
use mnemo_core::{Actor, Timestamp};
use mnemo_store::config::{ConfigError, WorkspaceConfig};
use mnemo_store::mirror::{self, MirrorTarget};
use mnemo_store::workspace::Workspace;
use mnemo_store::{Scope, Store, StoreError, Writer};

use crate::cli::Global;
use crate::clock::Clock;

pub struct Context {
    pub store_path: PathBuf,
    /// Where `now` came from; long-lived processes read it again.
    pub clock: Clock,
    pub workspace: Workspace,
    pub now: Timestamp,
    pub json: bool,
    /// Whether the store and the workspace were named (`--store`/`MNEMO_STORE`,
    /// `--workspace`/`MNEMO_WORKSPACE`) rather than found: a command printed
    /// for people to run again names them too.
    pub named: Named,
    /// The mirror target, resolved (and any problem reported) once per
    /// process, or per request in a long-lived one (`read_config_again`).
    mirror: OnceCell<Option<MirrorTarget>>,
    /// The workspace config, read once per process (or per request).
    config: OnceCell<Result<WorkspaceConfig, ConfigError>>,
}

/// Which of the store and the workspace were named rather than found.
#[derive(Debug, Clone, Copy, Default)]
pub struct Named {
    pub store: bool,
    pub workspace: bool,
}

impl Context {
    pub fn new(global: &Global) -> anyhow::Result<Context> {
        let store_path = store_path(global)?;
        let clock = Clock::from_env()?;
        let now = clock.now()?;
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        let claimed = Workspace::resolve(global.workspace.as_deref(), &cwd)?;
        // As the store admits it (`workspace::admission`): a refused committed id is an error.
        let workspace = mnemo_store::workspace::admit_at(&store_path, claimed, now, false)?;
        Ok(Context {
            store_path,
            workspace,
            clock,
            now,
            json: global.json,
            named: Named { store: global.store.is_some(), workspace: global.workspace.is_some() },
            mirror: OnceCell::new(),
            config: OnceCell::new(),
        })
    }

    /// Open the store. When this workspace keeps a mirror that is behind the
    /// store (say a writer crashed inside its debounce window), re-render it now.
    pub fn open(&self) -> anyhow::Result<Store> {
        let store = self.open_without_catch_up()?;
        self.keep_mirror_current(&store);
        Ok(store)
    }

    /// Open the store and nothing else (for commands that render the mirror themselves).
    pub fn open_without_catch_up(&self) -> anyhow::Result<Store> {
        let store = Store::open(&self.store_path)?;
        if let Some(warning) = mnemo_store::paths::openness_warning(&self.store_path) {
            eprintln!("warning: {warning}");
        }
        Ok(store)
    }

    /// `.mnemo/config.toml` of this workspace (defaults when there is none).
    pub fn config(&self) -> Result<&WorkspaceConfig, &ConfigError> {
        self.config.get_or_init(|| WorkspaceConfig::load(self.workspace.root.as_deref())).as_ref()
    }

    /// Forget the config and the mirror target read so far: a long-lived
    /// process reads them again before each request.
    pub fn read_config_again(&mut self) {
        self.config = OnceCell::new();
        self.mirror = OnceCell::new();
    }

    /// The workspace's mirror when `[memory_export] enabled`; a broken setting is
    /// reported (once per process, or per request in a long-lived one) and
    /// treated as disabled so it never blocks the command.
    pub fn mirror_target(&self) -> Option<MirrorTarget> {
        self.mirror.get_or_init(|| self.resolve_mirror_target()).clone()
    }

    fn resolve_mirror_target(&self) -> Option<MirrorTarget> {
        mirror::enabled_target(&self.workspace).unwrap_or_else(|problem| {
            eprintln!("warning: {}", mirror::not_updated(&problem));
            None
        })
    }

    /// The upkeep rule (`mirror::keep_current`); a failure is reported, never an error of the command.
    fn keep_mirror_current(&self, store: &Store) {
        if let Some(target) = self.mirror_target()
            && let Err(e) = mirror::keep_current(store, &target)
        {
            eprintln!("warning: {}", mirror::not_updated(&e));
        }
    }

    /// The scope of this workspace, or every workspace when asked explicitly.
    pub fn scope(&self, all_workspaces: bool) -> Scope {
        if all_workspaces { Scope::All } else { Scope::Workspace(self.workspace.id.clone()) }
    }

    /// Which new notes wait for review. A config that cannot be read holds
    /// agents' notes for review (said once): the safe side of a typo.
    pub fn review(&self) -> ReviewPolicy {
        match self.config() {
            Ok(config) => config.review.clone(),
            Err(e) => {
                eprintln!("warning: {e}; notes agents write now wait for review until it is fixed");
                ReviewPolicy { agent_proposes: true, kinds: Vec::new() }
            }
        }
    }

    pub fn actor(as_human: bool) -> Actor {
        if as_human { Actor::Human } else { Actor::Agent }
    }

    /// Run `f` through the one write path, after expiring this workspace's due notes.
    pub fn write<T>(
        &self,
        store: &mut Store,
        f: impl FnOnce(&mut Writer<'_>) -> Result<T, StoreError>,
    ) -> anyhow::Result<T> {
        // A broken config never blocks a write: without a readable [expiry]
        // nothing expires this time, and the problem is reported.
        let expiry = match self.config() {
            Ok(config) => Some(config.expiry.clone()),
            Err(e) => {
                eprintln!("warning: {e}; due notes were not expired");
                None
            }
        };
        let workspace = self.workspace.id.clone();
        let now = self.now;
        let value = store.write(|w| {
            if let Some(expiry) = &expiry {
                w.expire_due(&workspace, expiry, now)?;
            }
            f(w)
        })?;
        self.after_write(store);
        Ok(value)
    }

    /// The write is committed; the mirror follows it, and a failure to render
    /// is reported without failing the write.
    pub fn after_write(&self, store: &Store) {
        self.keep_mirror_current(store);
    }
}

/// The store named (`--store`, `MNEMO_STORE`), else the default one, whose
/// directory is made (private) when missing.
pub fn store_path(global: &Global) -> anyhow::Result<PathBuf> {
    if let Some(path) = &global.store {
        return Ok(path.clone());
    }
    let path = mnemo_store::paths::default_store_path_from_env()
        .ok_or_else(|| anyhow!("no store location: set XDG_DATA_HOME or HOME, or pass --store PATH"))?;
    // The default store is the one created without asking: its directory too, private.
    if let Some(dir) = path.parent() {
        mnemo_store::paths::ensure_private_dir(dir)
            .with_context(|| format!("cannot create the store's directory {}", dir.display()))?;
    }
    Ok(path)
}

/// The error and its causes on one line, without repeating a cause its parent already says.
pub fn one_line(error: &anyhow::Error) -> String {
    let mut line = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !line.contains(&cause) {
            line.push_str(": ");
            line.push_str(&cause);
        }
    }
    line.replace('\n', " ")
}

/// 2 for a broken lifecycle or creation rule, 1 for everything else.
pub fn exit_status(error: &anyhow::Error) -> u8 {
    match error.downcast_ref::<StoreError>() {
        Some(e) if e.is_rule_violation() => 2,
        _ if error.downcast_ref::<mnemo_core::RuleError>().is_some() => 2,
        _ => 1,
    }
}
