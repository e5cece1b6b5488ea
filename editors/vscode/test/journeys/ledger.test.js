// Journey: what agents were told and what they will load. Hovering a note
// in the memory document says how often it was delivered to agents, when,
// at which moment and to which session (or that it never was); the entries
// past what the agent's harness loads are marked on the first of them.
const assert = require('node:assert');
const vscode = require('vscode');
const h = require('../helpers');

async function hoverOn(doc, id) {
  const position = new vscode.Position(h.lineOf(doc, id), 4);
  const hovers = await vscode.commands.executeCommand('vscode.executeHoverProvider', doc.uri, position);
  return hovers.flatMap((hover) => hover.contents.map((c) => c.value || String(c))).join('\n');
}

describe('journey: what agents were told, and what they will load', function () {
  let root;
  before(async () => {
    root = h.folder();
    await vscode.extensions.all.find((e) => e.packageJSON.name === 'mnemo').activate();
  });

  it('hover says when a note was delivered to agents, or that it never was', async () => {
    const rule = h.idOf(root, 'Run the tests inside the venv');
    const late = h.idOf(root, 'Written after the session started');
    const { doc, editor } = await h.openMemory();
    await h.until('the hover of the directive', async () =>
      /Delivered to agents 1 time, last (just now|\d+min ago) \(session-start, session default\)/.test(await hoverOn(doc, rule)));
    assert.ok((await hoverOn(doc, late)).includes('Never delivered to an agent'));
    // As a person sees it: the hover over the id, on screen.
    const position = new vscode.Position(h.lineOf(doc, rule), 4);
    editor.selection = new vscode.Selection(position, position);
    await vscode.commands.executeCommand('workbench.action.focusActiveEditorGroup');
    await vscode.commands.executeCommand('editor.action.showHover');
    const shown = await h.until('the hover on screen', async () => {
      const texts = await h.onScreen('.monaco-hover-content');
      return texts.some((t) => t.includes('Delivered to agents 1 time')) && texts;
    });
    assert.ok(shown);
    await h.screenshot('ledger-hover');
    await h.browser([{ press: 'Escape' }]);
  });

  it('the first entry past the harness\'s 20 lines says which entries will not load', async () => {
    const { doc } = await h.openMemory();
    const warning = await h.until('the load-budget warning', () =>
      vscode.languages.getDiagnostics(doc.uri).find((d) => d.code === 'load-budget'));
    const entries = doc.getText().split('\n').map((l, n) => [l, n]).filter(([l]) => l.startsWith('- [#'));
    const [firstPastLine] = entries.find(([, n]) => n >= 20);
    const firstPast = Number(firstPastLine.match(/^- \[#(\d+)\]/)[1]);
    const last = h.idOf(root, 'Written after the session started');
    assert.strictEqual(warning.range.start.line, h.lineOf(doc, firstPast));
    assert.strictEqual(warning.severity, vscode.DiagnosticSeverity.Warning);
    assert.ok(warning.message.includes(`(#${firstPast} … #${last}) will not load in Claude Code, which reads the first 20 lines of MEMORY.md`), warning.message);
    await h.screenshot('ledger-load-budget');
  });
});
