// Journey: text that was not applied never disappears. A save leaves a
// conflict and a malformed entry unapplied; an agent then writes three
// unrelated notes; closing and reopening the tab — the typed text is still
// there and the problems still say why. Only "Revert to Store" (confirmed
// in a dialog) discards it. Then the editor and `mnemo checkin FILE` on the
// same workspace: a clean document follows the file's check-in, a draft is
// kept and its save reports what it collides with.
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const vscode = require('vscode');
const h = require('../helpers');

const MALFORMED = '- urgent · Rotate the signing key';

describe('journey: unapplied text', function () {
  let root;
  before(async () => {
    root = h.folder();
    await vscode.extensions.all.find((e) => e.packageJSON.name === 'mnemo').activate();
    await h.closeAll();
  });

  it('a conflict and a malformed entry stay as typed through three agent writes and reopening', async () => {
    const id = h.idOf(root, 'Left unapplied');
    const { doc, editor } = await h.openMemory();
    await h.cursorAtEndOf(editor, 'Left unapplied');
    await h.browser([{ type: ' (typed by a person)' }]);
    await h.cursorAtEndOf(editor, '## Tasks');
    await h.browser([{ press: 'Enter' }, { press: 'Enter' }, { type: MALFORMED }, { wait: 800 }]);
    h.cliIn(root, 'flag-stale', String(id), '--reason', 'an agent doubts it');
    await h.browser([{ press: 'Control+s' }]);
    await h.until('the conflict problem', () => vscode.languages.getDiagnostics(doc.uri).some((d) => d.code === 'conflict'));
    await h.sleep(800);
    const typed = () => doc.getText().includes('Left unapplied (typed by a person)') && doc.getText().includes(MALFORMED);
    assert.ok(typed(), `the typed text stays:\n${doc.getText()}`);
    const problemsAfterSave = h.problems(doc.uri).length;
    assert.ok(problemsAfterSave >= 2, `the conflict and the malformed entry are problems: ${h.problems(doc.uri)}`);

    for (const title of ['Agent note one', 'Agent note two', 'Agent note three']) {
      h.cliIn(root, 'remember', '--kind', 'finding', '--title', title);
      await h.sleep(600);
    }
    await h.sleep(1000);
    assert.ok(typed(), `three agent writes later, the typed text stays:\n${doc.getText()}`);
    assert.ok(vscode.languages.getDiagnostics(doc.uri).some((d) => d.code === 'conflict'), 'the conflict is still shown');
    await vscode.commands.executeCommand('workbench.actions.view.problems');
    await h.screenshot('unapplied-after-agent-writes');

    await h.closeAll();
    await h.sleep(500);
    const reopened = (await h.openMemory()).doc;
    assert.ok(reopened.getText().includes('Left unapplied (typed by a person)') && reopened.getText().includes(MALFORMED),
      `reopened, the document shows what was typed:\n${reopened.getText()}`);
    await h.until('the problems after reopening', () => vscode.languages.getDiagnostics(reopened.uri).some((d) => d.code === 'conflict'));
    assert.strictEqual(h.jsonIn(root, 'show', String(id)).state, 'stale_flagged', 'the store has only the agent\'s change');
    assert.ok(!h.notesIn(root).some((n) => n.title.includes('typed by a person') || n.title.includes('signing key')));
  });

  it('Revert to Store discards it, after a confirmation', async () => {
    const { doc } = await h.openMemory();
    const kept = vscode.commands.executeCommand('mnemo.discardDraft');
    await h.browser([{ wait: 300 }, { press: 'Escape' }]);
    await kept;
    assert.ok(doc.getText().includes('typed by a person'), 'dismissing the confirmation keeps the draft');
    const reverting = vscode.commands.executeCommand('mnemo.discardDraft');
    await h.browser([{ wait: 300 }, { screenshot: 'unapplied-revert-confirm' }, { choose: 'Revert to Store' }]);
    await reverting;
    await h.until('the fresh checkout', () => doc.getText().includes('Agent note three') && !doc.getText().includes('typed by a person'));
    assert.ok(!doc.getText().includes(MALFORMED));
    await h.until('no problems left of the draft', () => !vscode.languages.getDiagnostics(doc.uri).some((d) => d.severity === vscode.DiagnosticSeverity.Error));
    assert.ok(!doc.isDirty);
    h.cliIn(root, 'remember', '--kind', 'task', '--title', 'Agent note after the revert');
    await h.until('the document follows the store again', () => doc.getText().includes('Agent note after the revert'));
  });

  it('the editor and `mnemo checkin FILE` on the same workspace', async () => {
    const { doc, editor } = await h.openMemory();
    const id = h.idOf(root, 'Edited from a file');
    const file = path.join(root, 'checkout.md');
    h.cliIn(root, 'checkout', '--out', file);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('Edited from a file\n', 'Edited from a file, by the CLI\n'));
    h.cliIn(root, 'checkin', file);
    const successor = h.idOf(root, 'Edited from a file, by the CLI');
    await h.until('the clean document shows the file\'s check-in', () => doc.getText().includes(`[#${successor}]`));

    // A draft over the same note is kept when the file is checked in again, and its save reports the clash.
    await h.cursorAtEndOf(editor, 'Edited from a file, by the CLI');
    await h.browser([{ type: ' and the editor' }, { wait: 800 }]);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('Edited from a file, by the CLI\n', 'Edited from a file, by the CLI again\n'));
    h.cliIn(root, 'checkin', file);
    await h.sleep(1500);
    assert.ok(doc.getText().includes('Edited from a file, by the CLI and the editor'), 'the draft is kept');
    await h.browser([{ press: 'Control+s' }]);
    await h.until('the clash is a problem', () => vscode.languages.getDiagnostics(doc.uri).some((d) => d.severity === vscode.DiagnosticSeverity.Error));
    await h.sleep(800);
    assert.ok(doc.getText().includes('Edited from a file, by the CLI and the editor'), `the typed text stays:\n${doc.getText()}`);
    assert.ok(!h.notesIn(root).some((n) => n.title === 'Edited from a file, by the CLI and the editor'), 'nothing was applied over the newer note');
    assert.strictEqual(h.jsonIn(root, 'show', String(id)).state, 'superseded');
    await h.screenshot('unapplied-editor-and-cli');
  });
});
