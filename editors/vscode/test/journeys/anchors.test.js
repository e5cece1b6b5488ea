// Journey: a source file with an anchored note. The code lens names the note
// on the anchored lines and hover shows it. The person moves the code (two
// lines inserted above it), saves, then edits the anchored text and saves:
// the note is flagged stale, and the re-anchor action offers the lines the
// text is at now; taking it anchors a new note there.
const assert = require('node:assert');
const path = require('node:path');
const vscode = require('vscode');
const h = require('../helpers');

const TITLE = 'Retries back off exponentially';

describe('journey: anchored notes in a source file', function () {
  let root;
  let file;
  let id;
  before(async () => {
    root = h.folder();
    file = vscode.Uri.file(path.join(root, 'src/retry.py'));
    await vscode.extensions.all.find((e) => e.packageJSON.name === 'mnemo').activate();
    id = h.idOf(root, TITLE);
  });

  const lensesOf = async (uri) =>
    ((await vscode.commands.executeCommand('vscode.executeCodeLensProvider', uri)) ?? []).filter((l) => l.command);

  it('a code lens on the anchored lines and hover show the note', async () => {
    const doc = await vscode.workspace.openTextDocument(file);
    const editor = await vscode.window.showTextDocument(doc);
    const lenses = await h.until('the code lens', async () => {
      const found = await lensesOf(doc.uri);
      return found.length > 0 && found;
    });
    assert.deepStrictEqual(lenses.map((l) => [l.range.start.line, l.command.title]), [[4, `1 note: #${id}`]]);
    await h.until('the lens on screen', async () =>
      (await h.onScreen('.contentWidgets .codelens-decoration')).some((t) => t.includes(`1 note: #${id}`)));
    const position = new vscode.Position(5, 8);
    const hovers = await h.until('a hover', async () => {
      const found = await vscode.commands.executeCommand('vscode.executeHoverProvider', doc.uri, position);
      return found && found.length > 0 && found;
    });
    const text = hovers.map((x) => x.contents.map((c) => c.value ?? c).join('\n')).join('\n');
    assert.match(text, new RegExp(TITLE));
    assert.match(text, /keep the timeout above 7 s/);
    editor.selection = new vscode.Selection(position, position);
    await vscode.commands.executeCommand('editor.action.showHover');
    await h.screenshot('anchors-lens-hover');
  });

  it('moved, then edited: the re-anchor action offers the lines the text is at now', async () => {
    const doc = await vscode.workspace.openTextDocument(file);
    const editor = await vscode.window.showTextDocument(doc);
    await editor.edit((e) => e.insert(new vscode.Position(0, 0), '# Helpers for flaky calls.\n# Keep them small.\n'));
    await h.browser([{ press: 'Control+s' }]);
    await h.until('the moved lens', async () => (await lensesOf(doc.uri)).some((l) => l.range.start.line === 6));

    const line = h.lineWith(doc, 'range(3)');
    await editor.edit((e) => e.replace(new vscode.Range(line, 0, line, doc.lineAt(line).text.length), '    for attempt in range(4):'));
    await h.browser([{ press: 'Control+s' }]);
    await h.until('the note flagged stale', () => h.jsonIn(root, 'show', String(id)).state === 'stale_flagged');
    const drift = await h.until('the drift diagnostic', () =>
      vscode.languages.getDiagnostics(doc.uri).find((d) => d.message.includes(`#${id}`)));
    assert.strictEqual(drift.range.start.line, 6, `the diagnostic is over the moved lines: ${drift.message}`);

    const actions = await vscode.commands.executeCommand('vscode.executeCodeActionProvider', doc.uri, new vscode.Range(7, 0, 7, 0));
    const reanchor = actions.find((a) => a.command && a.command.command === 'mnemo.reanchor');
    assert.ok(reanchor, `a re-anchor action among ${actions.map((a) => a.title)}`);
    assert.strictEqual(reanchor.title, `Re-anchor #${id} to the current text (lines 7-9)`);
    assert.deepStrictEqual(reanchor.command.arguments, [id, 0, 7, 9]);
    await vscode.commands.executeCommand(reanchor.command.command, ...reanchor.command.arguments);
    const successor = h.jsonIn(root, 'show', String(id)).superseded_by;
    assert.ok(successor, 'the note is superseded by the re-anchored one');
    const anchored = h.jsonIn(root, 'show', String(successor));
    assert.strictEqual(anchored.title, TITLE);
    assert.deepStrictEqual(anchored.anchors.map((a) => [a.path, a.start_line, a.end_line]), [['src/retry.py', 7, 9]]);
    await h.until('the lens on the new note', async () =>
      (await lensesOf(doc.uri)).some((l) => l.range.start.line === 6 && l.command.title === `1 note: #${successor}`));
    // On screen too: the editor asks for lenses again when the server says they changed.
    await h.until('the lens shown on screen names the new note', async () =>
      (await h.onScreen('.contentWidgets .codelens-decoration')).some((t) => t.includes(`#${successor}`)), 10000);
    await h.until('no drift left', () => !vscode.languages.getDiagnostics(doc.uri).some((d) => d.message.includes('changed since')));
    await h.screenshot('anchors-reanchored');
  });
});
