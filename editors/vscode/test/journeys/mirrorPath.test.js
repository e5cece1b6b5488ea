// Journey: a project that keeps its mirror at docs/MEMORY.md
// ([memory_export] path in .mnemo/config.toml). Open Mirror opens that file;
// workspace symbols (what Recall… lists) and go to definition from a `#id`
// in a source file land in it; no MEMORY.md appears at the root.
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const vscode = require('vscode');
const h = require('../helpers');

describe('journey: a configured mirror path', function () {
  let root;
  let mirror;
  before(async () => {
    root = h.folder();
    mirror = path.join(root, 'docs/MEMORY.md');
    await vscode.extensions.all.find((e) => e.packageJSON.name === 'mnemo').activate();
    assert.ok(fs.existsSync(mirror), 'the mirror was exported to docs/MEMORY.md');
  });

  it('Open Mirror opens docs/MEMORY.md', async () => {
    await vscode.commands.executeCommand('mnemo.openMirror');
    const active = vscode.window.activeTextEditor;
    assert.ok(active, 'an editor is open');
    assert.strictEqual(active.document.uri.fsPath, mirror);
    assert.ok(!fs.existsSync(path.join(root, 'MEMORY.md')), 'no mirror at the root');
    await h.screenshot('mirror-path-open');
  });

  it('workspace symbols locate the notes in docs/MEMORY.md', async () => {
    const id = h.idOf(root, 'The cache evicts on every config reload');
    const symbols = await h.until('the symbols', async () => {
      const found = await vscode.commands.executeCommand('vscode.executeWorkspaceSymbolProvider', 'cache evicts');
      return found && found.some((s) => s.name.startsWith(`#${id} `)) && found;
    });
    const symbol = symbols.find((s) => s.name.startsWith(`#${id} `));
    assert.strictEqual(symbol.location.uri.fsPath, mirror);
    const text = fs.readFileSync(mirror, 'utf8').split('\n');
    assert.ok(text[symbol.location.range.start.line].startsWith(`- [#${id}]`), 'at the entry\'s line');
  });

  it('go to definition from a #id in a source file lands in docs/MEMORY.md', async () => {
    const id = h.idOf(root, 'The cache evicts on every config reload');
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(path.join(root, 'src/cache.rs')));
    const editor = await vscode.window.showTextDocument(doc);
    const position = new vscode.Position(0, doc.lineAt(0).text.indexOf(`#${id}`) + 1);
    const locations = await h.until('a definition', async () => {
      const found = await vscode.commands.executeCommand('vscode.executeDefinitionProvider', doc.uri, position);
      return found && found.length > 0 && found;
    });
    const target = locations[0].targetUri ?? locations[0].uri;
    const range = locations[0].targetRange ?? locations[0].range;
    assert.strictEqual(target.fsPath, mirror);
    assert.ok(fs.readFileSync(mirror, 'utf8').split('\n')[range.start.line].startsWith(`- [#${id}]`));
    editor.selection = new vscode.Selection(position, position);
    await vscode.commands.executeCommand('editor.action.revealDefinition');
    await h.until('the mirror in front', () => vscode.window.activeTextEditor?.document.uri.fsPath === mirror);
    await h.screenshot('mirror-path-definition');
  });
});
