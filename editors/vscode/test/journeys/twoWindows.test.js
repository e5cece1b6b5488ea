// Journey: two windows on one workspace, two people. The second window
// (opened by the browser, with the extension and no tests) is driven only
// by the keyboard: the palette's Edit Memory, Go to Line, typing, Ctrl+S.
// A change saved there shows at once in the first window's memory
// document; when both edit the same note, the later save is a conflict in
// its window, with the typed text kept, and Keep mine settles it — which
// the other window then shows too.
const assert = require('node:assert');
const vscode = require('vscode');
const h = require('../helpers');

/// The keys a person presses in the second window to append `text` to line `line` (1-based) and save.
function editInSecondWindow(line, text) {
  return [
    { window: 2, press: 'Control+g' }, { window: 2, wait: 300 },
    { window: 2, type: String(line) }, { window: 2, press: 'Enter' },
    { window: 2, press: 'End' }, { window: 2, type: text },
    { window: 2, press: 'Control+s' }, { window: 2, wait: 500 },
  ];
}

/// The 1-based line of the entry holding `title` in a checkout as the store renders it now.
function lineInCheckout(root, title) {
  return h.cliIn(root, 'checkout').split('\n').findIndex((l) => l.startsWith('- [#') && l.endsWith(title)) + 1;
}

describe('journey: two windows on one workspace', function () {
  let root;
  before(async () => {
    root = h.folder();
    await vscode.extensions.all.find((e) => e.packageJSON.name === 'mnemo').activate();
  });
  after(() => h.browser([{ closeWindow: true }]));

  it('a change saved in the second window shows in the first window at once', async () => {
    const { doc } = await h.openMemory();
    await h.browser([
      { openWindow: root },
      { window: 2, press: 'F1' }, { window: 2, wait: 300 },
      { window: 2, type: 'mnemo: Edit Memory' }, { window: 2, wait: 500 }, { window: 2, press: 'Enter' },
      { window: 2, wait: 1500 },
      ...editInSecondWindow(lineInCheckout(root, 'Edited in the second window'), ' (by the second person)'),
      { window: 2, screenshot: 'two-windows-second-saved' },
    ]);
    const successor = await h.until('the second window\'s check-in', () =>
      h.notesIn(root).find((n) => n.title === 'Edited in the second window (by the second person)'));
    await h.until('the first window shows it', () => doc.getText().includes(`[#${successor.id}]`), 5000);
    await h.screenshot('two-windows-first-refreshed');
  });

  it('both edit one note: the later save is a conflict that keeps the typed text, and Keep mine settles it everywhere', async () => {
    const { doc, editor } = await h.openMemory();
    const id = h.idOf(root, 'Both windows edit this');
    await h.cursorAtEndOf(editor, 'Both windows edit this');
    await h.browser([{ type: ' (first person)' }]);
    assert.ok(doc.isDirty);
    await h.browser(editInSecondWindow(lineInCheckout(root, 'Both windows edit this'), ' (second person)'));
    await h.until('the second person\'s edit in the store', () =>
      h.notesIn(root).some((n) => n.title === 'Both windows edit this (second person)' && n.state === 'active'));

    await h.cursorAtEndOf(editor, 'Both windows edit this (first person)');
    await h.browser([{ press: 'Control+s' }]);
    const conflict = await h.until('the conflict in the first window', () =>
      vscode.languages.getDiagnostics(doc.uri).find((d) => d.code === 'conflict' && d.message.includes(`#${id} `)));
    await h.sleep(800);
    assert.ok(doc.getText().includes('Both windows edit this (first person)'), 'the typed text stays');

    const actions = await vscode.commands.executeCommand('vscode.executeCodeActionProvider', doc.uri, conflict.range);
    const keep = actions.find((a) => a.title === `Keep mine for #${id}`);
    assert.ok(keep, `Keep mine among ${actions.map((a) => a.title)}`);
    const result = await vscode.commands.executeCommand(keep.command.command, ...keep.command.arguments);
    assert.ok(result && result.unapplied === 0,
      `Keep mine applies the edit on top of the second person's version (check-in result: ${JSON.stringify(result && { applied: result.applied, unapplied: result.unapplied, problems: result.diagnostics.map((d) => d.message) })})`);
    const mine = await h.until('the first person\'s edit in the store', () =>
      h.notesIn(root).find((n) => n.title === 'Both windows edit this (first person)' && n.state === 'active'));
    assert.ok(!h.notesIn(root).some((n) => n.title === 'Both windows edit this (second person)' && n.state === 'active'),
      'the second person\'s version is superseded by the kept one');
    await h.until('the first window shows the settled note', () => doc.getText().includes(`[#${mine.id}]`), 5000);
    await h.until('the second window shows it too', async () => {
      const [lines] = await h.browser([{ window: 2, read: '.editor-instance .view-lines' }]);
      return lines.some((text) => text.includes(`[#${mine.id}]`));
    }, 10000);
    await h.browser([{ window: 2, screenshot: 'two-windows-second-settled' }]);
    await h.screenshot('two-windows-first-settled');
  });
});
