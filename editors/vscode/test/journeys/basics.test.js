// Journey: a person reads and edits the memory of one project. Hover over
// an entry of the mirror; Edit Memory opens the checkout, whose tab is told
// apart from the mirror's; a fresh memory document follows the store (its
// own code-action revoke with a reason typed into the input box, a CLI
// flag-stale); a title edited and saved with Ctrl+S is exactly one
// supersession, and the mirror on disk is only ever written by the mirror
// writer (mirror header, mode 0444); a line typed under a section becomes a
// new note.
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const vscode = require('vscode');
const h = require('../helpers');

const MIRROR_HEADER = '<!-- mnemo mirror';

describe('journey: basics', function () {
  let root;
  let mirror;
  before(async () => {
    root = h.folder();
    mirror = path.join(root, 'MEMORY.md');
    const extension = vscode.extensions.all.find((e) => e.packageJSON.name === 'mnemo');
    await extension.activate();
  });

  it('hover over an entry of the mirror shows the whole note', async () => {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(mirror));
    const editor = await vscode.window.showTextDocument(doc);
    const position = new vscode.Position(h.lineWith(doc, 'Release the lock'), 4);
    const hovers = await h.until('a hover', async () => {
      const found = await vscode.commands.executeCommand('vscode.executeHoverProvider', doc.uri, position);
      return found && found.length > 0 && found;
    });
    const text = hovers.map((x) => x.contents.map((c) => c.value ?? c).join('\n')).join('\n');
    assert.match(text, /Restarting with the lock held deadlocks the new daemon\./);
    editor.selection = new vscode.Selection(position, position);
    await vscode.commands.executeCommand('editor.action.showHover');
    await h.screenshot('basics-hover');
  });

  it('Edit Memory opens the checkout; its tab and the mirror\'s have different titles', async () => {
    await vscode.window.showTextDocument(vscode.Uri.file(mirror), { preview: false });
    await vscode.commands.executeCommand('mnemo.editMemory');
    const editor = vscode.window.activeTextEditor;
    assert.strictEqual(editor.document.uri.toString(), vscode.Uri.from({ scheme: 'memory', path: `${root}/MEMORY.md` }).toString());
    assert.match(editor.document.lineAt(0).text, /^<!-- mnemo checkout · workspace /);
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs);
    const labelOf = (scheme) => tabs.find((t) => t.input && t.input.uri && t.input.uri.scheme === scheme)?.label;
    assert.strictEqual(labelOf('file'), 'MEMORY.md');
    assert.ok(labelOf('memory'), 'a memory tab is open');
    assert.notStrictEqual(labelOf('memory'), labelOf('file'), 'the checkout tab is not titled like the mirror');
    assert.match(labelOf('memory'), /checkout/);
    await h.screenshot('basics-tabs');
  });

  it('a code action revokes with the reason typed into the input box; the fresh document and the problems show it at once', async () => {
    await h.closeAll();
    const { doc } = await h.openMemory();
    const id = h.idOf(root, 'Index rebuild takes 40 s on the full corpus');
    const line = h.lineOf(doc, id);
    const actions = await vscode.commands.executeCommand('vscode.executeCodeActionProvider', doc.uri, new vscode.Range(line, 0, line, 0));
    const revoke = actions.find((a) => a.command && a.command.command === 'mnemo.revoke');
    assert.ok(revoke, `a Revoke action among ${actions.map((a) => a.title)}`);
    assert.strictEqual(revoke.kind && revoke.kind.value, 'refactor.mnemo', 'entry actions are refactorings, not quick fixes');
    assert.ok(!actions.some((a) => a.kind && a.kind.value === 'quickfix'), `no quick fix on a plain entry: ${actions.map((a) => `${a.title} (${a.kind && a.kind.value})`)}`);

    const dismissed = vscode.commands.executeCommand(revoke.command.command, ...revoke.command.arguments);
    await h.answerInputBox('half-typed', 'Escape');
    await dismissed;
    assert.strictEqual(h.jsonIn(root, 'show', String(id)).state, 'active', 'a dismissed prompt does nothing');

    const answered = vscode.commands.executeCommand(revoke.command.command, ...revoke.command.arguments);
    await h.answerInputBox('measured on a debug build');
    await answered;
    assert.strictEqual(h.jsonIn(root, 'show', String(id)).state, 'revoked');
    // At once: within a few seconds, not at the next save.
    await h.until('the document shows the revoke', () => doc.getText().includes('(measured on a debug build) · Index rebuild'), 5000);
    await h.until('the revoked problem', () => h.problems(doc.uri).includes(`#${id} was revoked: measured on a debug build`), 5000);
    assert.ok(!doc.isDirty, 'the refreshed document is the store as it is');
    await vscode.commands.executeCommand('workbench.actions.view.problems');
    await h.screenshot('basics-revoked');
  });

  it('a CLI flag-stale refreshes the open memory document', async () => {
    const { doc } = await h.openMemory();
    const id = h.idOf(root, 'The nightly build needs 8 GB of RAM');
    h.cliIn(root, 'flag-stale', String(id), '--reason', 'the runner has 16 GB now');
    await h.until('the document shows the stale flag', () => doc.getText().includes('(the runner has 16 GB now) · The nightly build'), 5000);
    await h.until('the stale problem', () => h.problems(doc.uri).some((m) => m.startsWith(`#${id} is flagged stale: the runner has 16 GB now`)), 5000);
  });

  it('a title edited and saved with Ctrl+S is one supersession; the mirror is written by the mirror writer only', async () => {
    assert.ok(fs.readFileSync(mirror, 'utf8').startsWith(MIRROR_HEADER));
    assert.strictEqual(fs.statSync(mirror).mode & 0o777, 0o444);
    const id = h.idOf(root, 'Store dates in UTC');
    const events = h.eventsIn(root).length;

    const { doc, editor } = await h.openMemory();
    await h.cursorAtEndOf(editor, 'Store dates in UTC');
    await h.browser([{ type: ' and show them in local time' }, { press: 'Control+s' }]);
    const successor = await h.until('the supersession', () =>
      h.notesIn(root).find((n) => n.title === 'Store dates in UTC and show them in local time'));
    await h.until('the new render', () => doc.getText().includes(`[#${successor.id}]`));
    const history = h.jsonIn(root, 'history', String(id));
    assert.deepStrictEqual(history.map((e) => e.kind), ['created', 'superseded'], 'one supersession of the old note');
    assert.strictEqual(history[1].superseded_by, successor.id);
    assert.strictEqual(successor.provenance, 'human');
    assert.strictEqual(h.eventsIn(root).length, events + 2, 'created + superseded, nothing else');

    // The language server stands for the mirror: it follows the check-in.
    const body = (text) => text.slice(text.indexOf('\n'));
    await h.until('the mirror shows the check-in', () => body(fs.readFileSync(mirror, 'utf8')) === body(doc.getText()), 15000);
    const after = fs.readFileSync(mirror, 'utf8');
    assert.strictEqual(fs.statSync(mirror).mode & 0o777, 0o444, 'the mirror stays read-only');
    assert.ok(after.startsWith(MIRROR_HEADER), `the mirror holds the mirror, not the checkout:\n${after.slice(0, 200)}`);
    assert.strictEqual(body(after), body(doc.getText()), 'the mirror is the mirror writer\'s render of the same store');

    // Saving again with nothing changed checks in nothing and leaves the mirror alone.
    const bytes = fs.readFileSync(mirror);
    const mtime = fs.statSync(mirror).mtimeMs;
    await h.browser([{ press: 'Control+s' }, { wait: 1500 }]);
    assert.strictEqual(h.eventsIn(root).length, events + 2, 'nothing more was checked in');
    assert.ok(fs.readFileSync(mirror).equals(bytes), 'the mirror is byte-identical');
    assert.strictEqual(fs.statSync(mirror).mtimeMs, mtime, 'and was not rewritten');
    assert.strictEqual(fs.statSync(mirror).mode & 0o777, 0o444);
    await h.screenshot('basics-saved');
  });

  it('a line typed under a section and saved becomes a new note of that kind, by a human', async () => {
    const { doc, editor } = await h.openMemory();
    await h.cursorAtEndOf(editor, '## Tasks');
    await h.browser([{ press: 'Enter' }, { press: 'Enter' }, { type: '- low · Typed in VS Code' }, { press: 'Control+s' }]);
    const typed = await h.until('the new note', () => h.notesIn(root).find((n) => n.title === 'Typed in VS Code'));
    assert.strictEqual(typed.kind, 'task');
    assert.strictEqual(typed.priority, 'low');
    assert.strictEqual(typed.provenance, 'human');
    await h.until('the new render', () => doc.getText().includes(`[#${typed.id}] `));
  });
});
