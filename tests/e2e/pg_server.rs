//! A private PostgreSQL server for a test: `initdb` in a temp dir, started
//! on a Unix socket in that dir (no TCP listener), stopped when dropped. The
//! binaries come from `scripts/install-postgres` (`MNEMO_POSTGRES_DIR`, else
//! target/tools/postgres). PostgreSQL refuses to run as root, so under root
//! the server runs as `nobody` (through `setpriv`).

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct PgServer {
    dir: tempfile::TempDir,
    install: PathBuf,
}

/// Where `scripts/install-postgres` put the server.
fn install_dir() -> PathBuf {
    std::env::var("MNEMO_POSTGRES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/tools/postgres"))
}

const PORT: u16 = 55432;

impl PgServer {
    pub fn start() -> PgServer {
        let install = install_dir();
        assert!(
            install.join("bin/postgres").is_file(),
            "no PostgreSQL at {}: run scripts/install-postgres (scripts/test does)",
            install.display()
        );
        let dir = tempfile::tempdir().unwrap();
        let server = PgServer { dir, install };
        std::fs::set_permissions(server.dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        for sub in ["data", "run"] {
            std::fs::create_dir(server.dir.path().join(sub)).unwrap();
        }
        if is_root() {
            let status = Command::new("chown")
                .args(["-R", "nobody"])
                .arg(server.dir.path().join("data"))
                .arg(server.dir.path().join("run"))
                .status()
                .unwrap();
            assert!(status.success());
        }
        let data = server.dir.path().join("data");
        server.run("initdb", &["-D", data.to_str().unwrap(), "-U", "mnemo", "-A", "trust", "--no-sync"]);
        let options = format!("-p {PORT} -k {} -c listen_addresses='' -c fsync=off", server.socket_dir().display());
        let log = server.dir.path().join("run/server.log");
        server
            .run("pg_ctl", &["-D", data.to_str().unwrap(), "-o", &options, "-l", log.to_str().unwrap(), "-w", "start"]);
        server
    }

    /// The directory of the server's Unix socket.
    pub fn socket_dir(&self) -> PathBuf {
        self.dir.path().join("run")
    }

    /// A new database, and its URL.
    pub fn database(&self, name: &str) -> String {
        let mut client = postgres::Client::connect(&self.url("postgres"), postgres::NoTls).unwrap();
        client.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        self.url(name)
    }

    pub fn url(&self, database: &str) -> String {
        format!("postgres://mnemo@localhost:{PORT}/{database}?host={}", self.socket_dir().display())
    }

    /// One of the server's programs, as the user the server runs as.
    fn command(&self, program: &str) -> Command {
        let binary = self.install.join("bin").join(program);
        let libs = format!("{}:{}", self.install.join("libs").display(), self.install.join("lib").display());
        let mut command = if is_root() {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"]).arg(&binary);
            c
        } else {
            Command::new(&binary)
        };
        command.env("LD_LIBRARY_PATH", libs);
        command
    }

    fn run(&self, program: &str, args: &[&str]) {
        let out = self.command(program).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{program} {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        let _ = self.command("pg_ctl").args(["-D", data.to_str().unwrap(), "-m", "immediate", "stop"]).output();
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}
