// Journey: a person edits an entry while an agent changes the same note;
// the save reports a conflict and keeps the typed text. "Keep mine" (picked
// from the quick-fix menu, Ctrl+.) applies the person's edit on the store's
// version; "Take theirs" drops it. Each time: the store (CLI), the document
// on screen and the problems agree afterwards.
const assert = require('node:assert');
const vscode = require('vscode');
const h = require('../helpers');

/// Type `typed` after the title, let an agent change the note, save: a conflict.
async function conflictOn(root, title, typed, agent) {
  const id = h.idOf(root, title);
  const { doc, editor } = await h.openMemory();
  await h.cursorAtEndOf(editor, title);
  await h.browser([{ type: typed }, { wait: 800 }]);
  agent(id);
  await h.browser([{ press: 'Control+s' }]);
  const conflict = await h.until('the conflict problem', () =>
    vscode.languages.getDiagnostics(doc.uri).find((d) => d.code === 'conflict' && d.message.includes(`#${id} `)));
  await h.sleep(800); // the document has been re-rendered by now
  assert.ok(doc.getText().includes(`${title}${typed}`), `the typed text stays:\n${doc.getText()}`);
  return { id, doc, editor, conflict };
}

describe('journey: conflicts', function () {
  let root;
  before(async () => {
    root = h.folder();
    await vscode.extensions.all.find((e) => e.packageJSON.name === 'mnemo').activate();
  });

  it('Keep mine from the quick-fix menu applies the edit on the store\'s version', async () => {
    const { id, doc, editor, conflict } = await conflictOn(root, 'Mine wins here', ' (measured twice)', (id) =>
      h.cliIn(root, 'flag-stale', String(id), '--reason', 'an agent doubts it'));
    const actions = await vscode.commands.executeCommand('vscode.executeCodeActionProvider', doc.uri, conflict.range);
    const fixes = actions.filter((a) => a.kind && a.kind.value === 'quickfix').map((a) => a.title);
    assert.deepStrictEqual(fixes.sort(), [`Keep mine for #${id}`, `Take theirs for #${id}`]);
    editor.selection = new vscode.Selection(conflict.range.start, conflict.range.start);
    await vscode.commands.executeCommand('workbench.action.focusActiveEditorGroup');
    await h.browser([
      { press: 'Control+.' },
      { wait: 600 },
      { screenshot: 'conflict-quickfix-menu' },
      { choose: `Keep mine for #${id}` },
    ]);
    const mine = await h.until('my edit in the store', () =>
      h.notesIn(root).find((n) => n.title === 'Mine wins here (measured twice)' && n.state === 'active'));
    assert.strictEqual(mine.provenance, 'human');
    assert.strictEqual(h.jsonIn(root, 'show', String(id)).state, 'superseded');
    await h.until('the document shows the new render', () => doc.getText().includes(`[#${mine.id}]`));
    await h.until('the conflict is gone', () => !vscode.languages.getDiagnostics(doc.uri).some((d) => d.code === 'conflict'));
    assert.ok(!doc.isDirty);
    await h.screenshot('conflict-kept-mine');
  });

  it('Take theirs drops the edit and keeps the agent\'s change', async () => {
    const { id, doc, conflict } = await conflictOn(root, 'Theirs wins here', ' (my wording)', (id) =>
      h.cliIn(root, 'revoke', String(id), '--reason', 'an agent found it wrong'));
    const actions = await vscode.commands.executeCommand('vscode.executeCodeActionProvider', doc.uri, conflict.range);
    const theirs = actions.find((a) => a.title === `Take theirs for #${id}`);
    assert.ok(theirs, `Take theirs among ${actions.map((a) => a.title)}`);
    await vscode.commands.executeCommand(theirs.command.command, ...theirs.command.arguments);
    await h.until('the document drops my edit', () => !doc.getText().includes('Theirs wins here (my wording)'));
    assert.ok(doc.getText().includes('REVOKED') && doc.getText().includes('(an agent found it wrong) · Theirs wins here'), doc.getText());
    await h.until('the conflict is gone', () => !vscode.languages.getDiagnostics(doc.uri).some((d) => d.code === 'conflict'));
    assert.strictEqual(h.jsonIn(root, 'show', String(id)).state, 'revoked', "the agent's revoke stands");
    assert.ok(!h.notesIn(root).some((n) => n.title === 'Theirs wins here (my wording)'), 'my edit was not applied');
    assert.ok(!doc.isDirty);
    // Nothing is left over: the document follows the store again.
    h.cliIn(root, 'remember', '--kind', 'task', '--title', 'Agent note after Take theirs');
    await h.until('the refresh', () => doc.getText().includes('Agent note after Take theirs'));
    await h.screenshot('conflict-took-theirs');
  });
});
