// Journey: autosave is on (code-server's default, here every 400 ms). The
// memory document is left out of it (its language turns autosave off): it
// stays modified while the person types. Someone who turns autosave on for
// it too types a title change slowly, with pauses: every pause autosaves,
// and nothing reaches the store — the text is a draft, which survives
// closing and reopening the tab and a write by an agent meanwhile. Ctrl+S
// on the (already autosaved, unmodified) document checks it in: exactly one
// supersession.
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const vscode = require('vscode');
const h = require('../helpers');

const TITLE = 'The parser is quadratic on nested lists';

/// `files.autoSave` for the memory document's language, in the user settings.
function autosaveForMemory(value) {
  return vscode.workspace.getConfiguration('files', { languageId: 'mnemo-memory' })
    .update('autoSave', value, vscode.ConfigurationTarget.Global, true);
}
const TYPED = `${TITLE} beyond depth 8`;

describe('journey: autosave', function () {
  let root;
  let id;
  let eventsBefore;
  let mirrorBefore;
  before(async () => {
    root = h.folder();
    await vscode.extensions.all.find((e) => e.packageJSON.name === 'mnemo').activate();
    assert.strictEqual(vscode.workspace.getConfiguration('files').get('autoSave'), 'afterDelay', 'autosave is on');
    id = h.idOf(root, TITLE);
    eventsBefore = h.eventsIn(root).length;
    mirrorBefore = fs.readFileSync(path.join(root, 'MEMORY.md'));
  });

  after(async () => {
    await autosaveForMemory(undefined);
  });

  it('the memory document is not autosaved: it stays modified until saved', async () => {
    const { doc, editor } = await h.openMemory();
    assert.strictEqual(doc.languageId, 'mnemo-memory');
    const saves = [];
    const listener = vscode.workspace.onDidSaveTextDocument((d) => d === doc && saves.push(Date.now()));
    await h.cursorAtEndOf(editor, TITLE);
    await h.browser([{ type: ' beyond', delay: 60 }, { wait: 1500 }]);
    listener.dispose();
    assert.deepStrictEqual(saves, [], 'no autosave');
    assert.ok(doc.isDirty, 'the document stays modified');
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    assert.ok(tab.isDirty, 'and its tab says so');
    assert.strictEqual(h.eventsIn(root).length, eventsBefore, 'nothing was checked in');
    await h.screenshot('autosave-memory-stays-modified');
  });

  it('with autosave turned on for it, typing with pauses autosaves a draft and checks nothing in', async () => {
    await autosaveForMemory('afterDelay');
    const { doc, editor } = await h.openMemory();
    const saves = [];
    const listener = vscode.workspace.onDidSaveTextDocument((d) => d === doc && saves.push(Date.now()));
    await h.cursorAtEndOf(editor, `${TITLE} beyond`);
    await h.browser([
      { type: ' depth', delay: 60 }, { wait: 1200 },
      { type: ' 8', delay: 60 }, { wait: 1200 },
    ]);
    listener.dispose();
    assert.ok(saves.length >= 2, `autosave saved after each pause (${saves.length} saves)`);
    assert.ok(!doc.isDirty, 'autosave saved the document');
    assert.ok(doc.getText().includes(TYPED), doc.getText());
    assert.strictEqual(h.eventsIn(root).length, eventsBefore, 'nothing was checked in');
    assert.strictEqual(h.jsonIn(root, 'show', String(id)).title, TITLE);
    assert.ok(fs.readFileSync(path.join(root, 'MEMORY.md')).equals(mirrorBefore), 'the mirror is untouched');
    await h.screenshot('autosave-draft');
  });

  it('the draft survives an agent writing and closing and reopening the tab', async () => {
    h.cliIn(root, 'remember', '--kind', 'task', '--title', 'Agent note written while a draft is open');
    await h.sleep(1500); // the server's store watch has fired by now
    let { doc } = await h.openMemory();
    assert.ok(doc.getText().includes(TYPED), 'the draft is still shown');
    await h.closeAll();
    await h.sleep(300);
    ({ doc } = await h.openMemory());
    assert.ok(doc.getText().includes(TYPED), `reopened, the document shows the draft:\n${doc.getText()}`);
    assert.strictEqual(h.jsonIn(root, 'show', String(id)).title, TITLE, 'still nothing checked in');
  });

  it('Ctrl+S on the autosaved document checks the draft in: one supersession', async () => {
    const { doc } = await h.openMemory();
    assert.ok(!doc.isDirty);
    await h.browser([{ press: 'Control+s' }]);
    const successor = await h.until('the check-in', () => h.notesIn(root).find((n) => n.title === TYPED));
    const history = h.jsonIn(root, 'history', String(id));
    assert.deepStrictEqual(history.map((e) => e.kind), ['created', 'superseded']);
    assert.strictEqual(history[1].superseded_by, successor.id);
    assert.strictEqual(h.eventsIn(root).length, eventsBefore + 1 /* the agent's note */ + 2, 'one note created, one superseded');
    await h.until('the new render, with the agent\'s note', () =>
      doc.getText().includes(`[#${successor.id}]`) && doc.getText().includes('Agent note written while a draft is open'));
    // The document follows the store again: an agent's write shows at once.
    h.cliIn(root, 'remember', '--kind', 'task', '--title', 'Agent note after the check-in');
    await h.until('the refresh', () => doc.getText().includes('Agent note after the check-in'));
    await h.screenshot('autosave-checked-in');
  });
});
