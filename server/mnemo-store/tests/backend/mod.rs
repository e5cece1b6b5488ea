//! Which store a test runs against. The same tests are the conformance
//! suite of both implementations: a SQLite file by default, and a new
//! PostgreSQL database per store when `scripts/with-postgres` provides a
//! server (`MNEMO_TEST_POSTGRES`; each machine's replica in
//! `MNEMO_REPLICA_DIR`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Where the test's store is: `dir/name`, or a new database on the test server.
pub fn store_location(dir: &Path, name: &str) -> PathBuf {
    match std::env::var("MNEMO_TEST_POSTGRES").ok().filter(|s| !s.is_empty()) {
        Some(server) => PathBuf::from(new_database(&server)),
        None => dir.join(name),
    }
}

/// Whether this run is the PostgreSQL one.
#[allow(dead_code)]
pub fn on_postgres() -> bool {
    std::env::var("MNEMO_TEST_POSTGRES").is_ok_and(|s| !s.is_empty())
}

fn new_database(server: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let name = format!("t{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::SeqCst));
    let mut client =
        postgres::Client::connect(server, postgres::NoTls).expect("the test server (scripts/with-postgres)");
    client.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    server.replacen("/postgres?", &format!("/{name}?"), 1)
}
