// Journey: a project reviews what agents write. The memory document shows
// each proposal with Accept and Reject… lenses and counts the waiting ones;
// the person clicks Accept on one (it goes live, endorsed by them) and
// Reject… on the other, giving a reason in the input box (it is revoked).
// The store (CLI), the document on screen and the problems agree after each.
const assert = require('node:assert');
const vscode = require('vscode');
const h = require('../helpers');

const proposalsIn = (root) => h.jsonIn(root, 'review').proposals;

/// The code lenses of the document, as "line: title".
async function lensesOf(doc) {
  const lenses = (await vscode.commands.executeCommand('vscode.executeCodeLensProvider', doc.uri)) || [];
  return lenses.filter((l) => l.command).map((l) => `${l.range.start.line}: ${l.command.title}`);
}

describe('journey: reviewing what agents write', function () {
  let root;
  before(async () => {
    root = h.folder();
    await vscode.extensions.all.find((e) => e.packageJSON.name === 'mnemo').activate();
  });

  it('shows the proposals with Accept and Reject… lenses and counts them', async () => {
    const [lock, slow] = proposalsIn(root);
    assert.ok(lock && slow, 'two proposals wait');
    const { doc } = await h.openMemory();
    await h.until('the PROPOSED markers', () => doc.getText().includes(`PROPOSED `));
    const expected = [lock, slow].flatMap((p) => [`${h.lineOf(doc, p.id)}: Accept #${p.id}`, `${h.lineOf(doc, p.id)}: Reject #${p.id}…`]);
    await h.until('the lenses', async () => JSON.stringify(await lensesOf(doc)) === JSON.stringify(expected));
    await h.until('the count of waiting proposals', () =>
      h.problems(doc.uri).some((m) => m.startsWith(`2 proposals wait for review: #${lock.id}, #${slow.id}`)));
    await h.sleep(500);
    await h.screenshot('review-proposal-lenses');
  });

  it('Accept makes the note live, endorsed by the person', async () => {
    const lock = proposalsIn(root).find((p) => p.title === 'Release the lock before restarting');
    const { doc } = await h.openMemory();
    await h.browser([{ click: `Accept #${lock.id}`, in: '.codelens-decoration a' }]);
    const accepted = await h.until('accepted in the store', () => {
      const note = h.jsonIn(root, 'show', String(lock.id));
      return note.state === 'active' && note;
    });
    assert.strictEqual(accepted.provenance, 'human');
    await h.until('the document without its marker', () =>
      doc.getText().split('\n')[h.lineOf(doc, lock.id)].endsWith('· medium · Release the lock before restarting'));
    await h.until('one proposal left in the count', () => h.problems(doc.uri).some((m) => m.startsWith('1 proposal waits')));
    assert.ok(!doc.isDirty);
  });

  it('Reject… asks why and revokes the proposal with that reason', async () => {
    const slow = proposalsIn(root).find((p) => p.title === 'The build is slow on Tuesdays');
    const { doc } = await h.openMemory();
    await h.browser([{ click: `Reject #${slow.id}`, in: '.codelens-decoration a' }, { wait: 300 }, { screenshot: 'review-reject-reason' }]);
    await h.answerInputBox('not a finding, a feeling');
    const rejected = await h.until('revoked in the store', () => {
      const note = h.jsonIn(root, 'show', String(slow.id));
      return note.state === 'revoked' && note;
    });
    assert.strictEqual(rejected.state_reason, 'not a finding, a feeling');
    await h.until('no proposal left', () => !h.problems(doc.uri).some((m) => m.includes('proposal')));
    assert.deepStrictEqual(await lensesOf(doc), []);
    assert.deepStrictEqual(proposalsIn(root), []);
    await h.screenshot('review-done');
  });
});
