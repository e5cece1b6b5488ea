// Journey, second window on the same folder: the draft autosaved in the
// first (reload1.test.js) is what the memory document shows, still not
// checked in, until Ctrl+S checks it in.
const assert = require('node:assert');
const vscode = require('vscode');
const h = require('../helpers');

describe('journey: a draft across a reload (after)', function () {
  it('the reopened window shows the draft, and Ctrl+S checks it in', async () => {
    const root = h.folder();
    await vscode.extensions.all.find((e) => e.packageJSON.name === 'mnemo').activate();
    const { doc } = await h.openMemory();
    assert.ok(doc.getText().includes('Ship the beta on Fridays before noon'), `the draft is back:\n${doc.getText()}`);
    assert.ok(!h.notesIn(root).some((n) => n.title.includes('before noon')), 'still nothing checked in');
    await h.screenshot('reload-draft');
    await h.browser([{ press: 'Control+s' }]);
    await h.until('the check-in', () => h.notesIn(root).some((n) => n.title === 'Ship the beta on Fridays before noon'));
  });
});
