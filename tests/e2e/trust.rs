//! What a careless user or an attacker does to the store through the binary
//! (issue 18): a reader that stops early, text that would drive the
//! terminal, notes past the size limits, files and paths that are not what
//! they seem. Each test fails without its fix; docs/reliability.md lists
//! them with the rest of the reliability suite.

use crate::support::Env;

#[test]
fn a_reader_that_stops_early_ends_the_command_quietly() {
    let env = Env::new();
    let records: String = (1..=300)
        .map(|i| format!("{{\"id\":{i},\"kind\":\"finding\",\"title\":\"note {i}\",\"created\":\"2026-08-01\",\"workspace\":\"{}\"}}\n", crate::support::root_id(&env.root)))
        .collect();
    let file = env.home.join("many.jsonl");
    std::fs::write(&file, records).unwrap();
    env.ok(&["import", "jsonl", file.to_str().unwrap()]);
    for command in ["\"$MNEMO\" list --json | head -c 10", "\"$MNEMO\" list | head -1", "\"$MNEMO\" context | head -1"]
    {
        let out = env.shell(&format!("{command} >/dev/null"), &[]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.is_empty(), "{command}: {err}");
    }
}
