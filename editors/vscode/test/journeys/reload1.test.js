// Journey, first window: a person who turned autosave on for the memory
// document types into it, autosave keeps it as a draft, and the window goes
// away (reload2.test.js opens the folder again).
const assert = require('node:assert');
const vscode = require('vscode');
const h = require('../helpers');

describe('journey: a draft across a reload (before)', function () {
  it('an autosaved draft is left behind', async () => {
    const root = h.folder();
    await vscode.extensions.all.find((e) => e.packageJSON.name === 'mnemo').activate();
    const language = vscode.workspace.getConfiguration('files', { languageId: 'mnemo-memory' });
    await language.update('autoSave', 'afterDelay', vscode.ConfigurationTarget.Global, true);
    const { doc, editor } = await h.openMemory();
    await h.cursorAtEndOf(editor, 'Ship the beta on Fridays');
    await h.browser([{ type: ' before noon', delay: 40 }, { wait: 1500 }]);
    await language.update('autoSave', undefined, vscode.ConfigurationTarget.Global, true);
    assert.ok(!doc.isDirty, 'autosaved (turned on for the memory document)');
    assert.ok(doc.getText().includes('Ship the beta on Fridays before noon'));
    assert.ok(!h.notesIn(root).some((n) => n.title.includes('before noon')), 'nothing checked in');
  });
});
