//! The harness: a temporary git workspace and store, and helpers that run the
//! binary with a pinned clock and a clean environment.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The clock every command sees unless a test overrides it.
pub const NOW: &str = "2026-08-04T12:00:00Z";

pub struct Env {
    _dir: tempfile::TempDir,
    pub home: PathBuf,
    pub root: PathBuf,
    pub store: PathBuf,
    /// The model directory commands see: a missing one unless `with_model`.
    pub model_dir: PathBuf,
    /// The machine its commands say they run on (`MNEMO_MACHINE`).
    pub machine: &'static str,
}

/// The real packaged model, installed by `scripts/install-model` (scripts/test
/// exports `MNEMO_MODEL_DIR`; otherwise the default data directory).
pub fn installed_model_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("MNEMO_MODEL_DIR") {
        return PathBuf::from(dir);
    }
    let home = std::env::var("HOME").expect("HOME");
    let data = std::env::var("XDG_DATA_HOME").unwrap_or_else(|_| format!("{home}/.local/share"));
    PathBuf::from(data).join("mnemo/model")
}

impl Env {
    /// A workspace (a git root with `src/lock.rs`) and a store path beside it.
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().canonicalize().unwrap();
        let root = home.join("project");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        let lock: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        std::fs::write(root.join("src/lock.rs"), lock).unwrap();
        // A store file, or — the conformance run (`scripts/with-postgres`) —
        // a new database on the test server.
        let store = match std::env::var("MNEMO_TEST_POSTGRES").ok().filter(|s| !s.is_empty()) {
            Some(server) => PathBuf::from(new_database(&server)),
            None => home.join("data/memory.db"),
        };
        std::fs::create_dir_all(home.join("data")).unwrap();
        let model_dir = home.join("no-model");
        Env { _dir: dir, home, root, store, model_dir, machine: "ci" }
    }

    /// This environment with a store file even in the PostgreSQL run: for
    /// the tests about the file itself (its bytes, pages, permissions,
    /// triggers, a full disk) and those that make their own database.
    pub fn file_store(mut self) -> Env {
        self.store = self.home.join("data/memory.db");
        self
    }

    /// An environment whose commands load the real embedding model.
    pub fn with_model() -> Env {
        let mut env = Env::new();
        env.model_dir = installed_model_dir();
        assert!(
            env.model_dir.join("model.onnx").is_file(),
            "no model at {}: run scripts/install-model (scripts/test does)",
            env.model_dir.display()
        );
        env
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mnemo"));
        cmd.args(args)
            .current_dir(&self.root)
            .env_remove("MNEMO_WORKSPACE")
            .env_remove("MNEMO_LOG")
            .env_remove("XDG_DATA_HOME")
            .env("HOME", &self.home)
            .env("MNEMO_STORE", &self.store)
            .env("MNEMO_NOW", NOW)
            // Who writes, as history and hover show it (one machine unless a test says otherwise).
            .env("MNEMO_USER", "tester")
            .env("MNEMO_MACHINE", self.machine)
            .env("MNEMO_MODEL_DIR", &self.model_dir)
            .env_remove("ORT_DYLIB_PATH")
            // No resident model unless a test asks for one (daemon.rs), and
            // then in this environment's own runtime directory.
            .env("MNEMO_DAEMON", "off")
            .env("XDG_RUNTIME_DIR", self.home.join("run"));
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// Run and require success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(out.status.success(), "mnemo {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    /// Run and require exit status `code`; returns stderr.
    pub fn fails(&self, args: &[&str], code: i32) -> String {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(code),
            "mnemo {args:?}: stdout {} stderr {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "an error prints nothing on stdout");
        String::from_utf8(out.stderr).unwrap()
    }

    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut args = args.to_vec();
        args.push("--json");
        serde_json::from_str(&self.ok(&args)).unwrap()
    }

    /// `sh -c SCRIPT` with this environment, the binary as `$MNEMO`, and
    /// `args` as `$1`, `$2`, …, in the workspace directory.
    pub fn shell(&self, script: &str, args: &[&str]) -> Command {
        let template = self.command(&[]);
        let mut shell = Command::new("sh");
        shell.arg("-c").arg(script).arg("sh").args(args).current_dir(&self.root);
        for (key, value) in template.get_envs() {
            match value {
                Some(value) => shell.env(key, value),
                None => shell.env_remove(key),
            };
        }
        shell.env("MNEMO", env!("CARGO_BIN_EXE_mnemo"));
        shell
    }

    /// A JSON Lines corpus (eval schema) of `n` findings of this workspace,
    /// titled and bodied by `text(i)`; its path.
    pub fn findings_file(&self, n: usize, text: impl Fn(usize) -> (String, String)) -> PathBuf {
        let workspace = self.root.display().to_string();
        let corpus: String = (1..=n)
            .map(|i| {
                let (title, body) = text(i);
                let record = serde_json::json!({ "id": i, "kind": "finding", "title": title, "body": body,
                    "created": "2026-08-01", "workspace": workspace });
                format!("{record}\n")
            })
            .collect();
        let file = self.home.join(format!("findings-{n}.jsonl"));
        std::fs::write(&file, corpus).unwrap();
        file
    }

    /// Import [`Env::findings_file`].
    pub fn import_findings(&self, n: usize, text: impl Fn(usize) -> (String, String)) {
        let file = self.findings_file(n, text);
        self.ok(&["import", "jsonl", file.to_str().unwrap()]);
    }

    /// `remember` and return the new id.
    pub fn remember(&self, kind: &str, title: &str) -> i64 {
        let out = self.ok(&["remember", "--kind", kind, "--title", title]);
        parse_id(&out)
    }

    /// Where the binary keeps this store's own files (sessions, kept edits),
    /// as `mnemo_store::paths::store_files_dir` says with this environment's HOME.
    pub fn store_files_dir(&self) -> PathBuf {
        match self.store.to_str().filter(|s| mnemo_store::postgres::is_postgres(s)) {
            Some(url) => self.home.join(".local/share/mnemo/shared").join(mnemo_store::postgres::url_digest(url)),
            None => self.store.parent().unwrap().to_path_buf(),
        }
    }

    /// The store's epoch and a digest of all rows, to prove a failure changed nothing.
    /// Every row of every table (the full-text and vector shadow tables
    /// included), except the bookkeeping that reads may write: checkout bases
    /// and their marks, the epoch each mirror was rendered at, and the delivery ledger (a read
    /// that delivers notes to an agent records it, and so moves a replica's
    /// rev on PostgreSQL).
    pub fn fingerprint(&self) -> String {
        let file = match self.store.to_str().filter(|s| mnemo_store::postgres::is_postgres(s)) {
            Some(url) => mnemo_store::postgres::replica_path(url).unwrap(),
            None => self.store.clone(),
        };
        let conn = rusqlite::Connection::open(file).unwrap();
        let mut out = String::new();
        let tables: Vec<String> = conn
            .prepare(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('checkouts', 'checkout_made', 'mirror_exports', 'deliveries', 'delivered_notes', 'replica')
                 AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name",
            )
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(tables.len() >= 13, "{tables:?}");
        for table in &tables {
            let mut stmt = conn.prepare(&format!("SELECT * FROM \"{table}\" ORDER BY 1")).unwrap();
            let columns = stmt.column_count();
            let rows = stmt
                .query_map([], |r| {
                    Ok((0..columns).map(|i| format!("{:?}", r.get_ref(i).unwrap())).collect::<Vec<_>>().join("|"))
                })
                .unwrap();
            for row in rows {
                let row = row.unwrap();
                if table == "sqlite_sequence" && row.contains(&format!("{:?}", b"deliveries")) {
                    continue;
                }
                out.push_str(&format!("{table}: {row}\n"));
            }
        }
        out
    }
}

/// A new database on the PostgreSQL server at `server`; its URL.
fn new_database(server: &str) -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let name = format!("e{}_{}", std::process::id(), NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst));
    let mut client =
        postgres::Client::connect(server, postgres::NoTls).expect("the test server (scripts/with-postgres)");
    client.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    server.replacen("/postgres?", &format!("/{name}?"), 1)
}

pub fn parse_id(stdout: &str) -> i64 {
    stdout.trim().strip_prefix('#').and_then(|id| id.parse().ok()).unwrap_or_else(|| panic!("not an id: {stdout:?}"))
}

pub fn root_id(root: &Path) -> String {
    root.to_str().unwrap().to_string()
}
