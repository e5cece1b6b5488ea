//! The editor clients contribute exactly the settings the server reads
//! (`mnemo_lsp::SETTING_NAMES`): VS Code's `package.json` and Neovim's
//! `vim.g.mnemo` mapping stay in sync with the server.

use std::path::Path;

fn editors() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../editors"))
}

#[test]
fn vscode_contributes_every_server_setting_and_no_other() {
    let text = std::fs::read_to_string(editors().join("vscode/package.json")).unwrap();
    let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
    let properties = manifest["contributes"]["configuration"]["properties"].as_object().unwrap();
    let mut contributed: Vec<&str> = properties
        .keys()
        .filter_map(|k| k.strip_prefix("mnemo."))
        .filter(|k| *k != "server.path") // the client's own: which binary to start
        .collect();
    contributed.sort();
    let mut server: Vec<&str> = mnemo_lsp::SETTING_NAMES.to_vec();
    server.sort();
    assert_eq!(contributed, server);
}

#[test]
fn neovim_passes_every_server_setting() {
    let init = std::fs::read_to_string(editors().join("neovim/lua/mnemo/init.lua")).unwrap();
    for name in mnemo_lsp::SETTING_NAMES {
        assert!(init.contains(&format!("{name} = o.")), "lua/mnemo/init.lua does not pass {name}");
    }
}
