// The extension in a real VS Code (code-server), through the extension host:
// it activates; Edit Memory opens the checkout; hover over an entry shows the
// full body; a code action revokes a note and the diagnostic appears; a code
// action that needs a reason asks for it in an input box (typed into by the
// browser) and does nothing when the box is dismissed; an
// edit saved in the memory document becomes events (checked with the CLI);
// a conflicting save shows the conflict diagnostic.
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const vscode = require('vscode');

const binary = process.env.MNEMO_TEST_BINARY;
const root = process.env.MNEMO_TEST_ROOT;
const artifacts = process.env.MNEMO_TEST_ARTIFACTS;

function cli(...args) {
  return execFileSync(binary, args, { cwd: root, encoding: 'utf8' });
}
const json = (...args) => JSON.parse(cli('--json', ...args));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, check, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/// Ask the runner for a screenshot and wait until it is taken.
async function screenshot(name) {
  fs.writeFileSync(path.join(artifacts, `${name}.request`), '');
  await until(`the ${name} screenshot`, () => fs.existsSync(path.join(artifacts, `${name}.png`)), 30000);
}

/// Have the browser type `text` into the open input box and press `key`.
async function answerInputBox(name, text, key = 'Enter') {
  const at = (suffix) => path.join(artifacts, `${name}${suffix}`);
  // Written whole, then renamed: the runner never reads half a request.
  fs.writeFileSync(at('.answer.part'), JSON.stringify({ text, key }));
  fs.renameSync(at('.answer.part'), at('.answer'));
  await until(`the ${name} input box answered`, () => {
    if (fs.existsSync(at('.unanswered'))) throw new Error(fs.readFileSync(at('.unanswered'), 'utf8'));
    return fs.existsSync(at('.answered'));
  }, 30000);
}

const mirror = () => vscode.Uri.file(path.join(root, 'MEMORY.md'));
const lineOf = (doc, id) => doc.getText().split('\n').findIndex((l) => l.startsWith(`- [#${id}]`));

describe('mnemo in VS Code', function () {
  it('activates', async () => {
    const extension = vscode.extensions.all.find((e) => e.packageJSON.name === 'mnemo');
    assert.ok(extension, 'the extension is installed');
    await extension.activate();
    assert.ok(extension.isActive);
  });

  it('hover over an entry shows the whole note', async () => {
    const doc = await vscode.workspace.openTextDocument(mirror());
    const editor = await vscode.window.showTextDocument(doc);
    const line = lineOf(doc, 1);
    const position = new vscode.Position(line, 4);
    const hovers = await until('a hover', async () => {
      const found = await vscode.commands.executeCommand('vscode.executeHoverProvider', doc.uri, position);
      return found && found.length > 0 && found;
    });
    const text = hovers.map((h) => h.contents.map((c) => c.value ?? c).join('\n')).join('\n');
    assert.match(text, /Restarting with the lock held deadlocks the new daemon\./);
    editor.selection = new vscode.Selection(position, position);
    await vscode.commands.executeCommand('editor.action.showHover');
    await sleep(500);
    await screenshot('hover');
  });

  it('a code action revokes a note and the diagnostic appears', async () => {
    const doc = await vscode.workspace.openTextDocument(mirror());
    const line = lineOf(doc, 2);
    const range = new vscode.Range(line, 0, line, 0);
    const actions = await vscode.commands.executeCommand('vscode.executeCodeActionProvider', doc.uri, range);
    const revoke = actions.find((a) => a.command && a.command.command === 'mnemo.revoke');
    assert.ok(revoke, `a Revoke action among ${actions.map((a) => a.title)}`);
    await vscode.commands.executeCommand('mnemo.revoke', ...revoke.command.arguments, 'measured on a debug build');
    assert.strictEqual(json('show', '2').state, 'revoked');
    await until('the revoked diagnostic', () =>
      vscode.languages.getDiagnostics(doc.uri).some((d) => d.message === '#2 was revoked: measured on a debug build'));
  });

  it('a code action asks for the reason, and does nothing without one', async () => {
    const doc = await vscode.workspace.openTextDocument(mirror());
    await vscode.window.showTextDocument(doc);
    const line = lineOf(doc, 3);
    const range = new vscode.Range(line, 0, line, 0);
    const actions = await vscode.commands.executeCommand('vscode.executeCodeActionProvider', doc.uri, range);
    const stale = actions.find((a) => a.command && a.command.command === 'mnemo.flagStale');
    assert.ok(stale, `a Flag stale action among ${actions.map((a) => a.title)}`);
    assert.deepStrictEqual(stale.command.arguments, [3], 'the action carries the id only: the reason is asked');

    const dismissed = vscode.commands.executeCommand('mnemo.flagStale', ...stale.command.arguments);
    await answerInputBox('dismissed', 'half-typed', 'Escape');
    await dismissed;
    assert.strictEqual(json('show', '3').state, 'active', 'a dismissed prompt does nothing');

    const answered = vscode.commands.executeCommand('mnemo.flagStale', ...stale.command.arguments);
    await answerInputBox('reason', 'the build moved to a 16 GB runner');
    await answered;
    assert.strictEqual(json('show', '3').state, 'stale_flagged');
    await until('the stale diagnostic', () =>
      vscode.languages.getDiagnostics(doc.uri).some((d) => d.message.startsWith('#3 is flagged stale: the build moved to a 16 GB runner')));
  });

  it('Edit Memory opens the checkout and a save becomes events', async () => {
    await vscode.commands.executeCommand('mnemo.editMemory');
    const editor = vscode.window.activeTextEditor;
    assert.strictEqual(editor.document.uri.scheme, 'memory');
    assert.match(editor.document.lineAt(0).text, /^<!-- mnemo checkout · workspace /);
    const text = editor.document.getText();
    const edited = text.replace('## Tasks\n', '## Tasks\n\n- low · Typed in VS Code\n');
    const whole = new vscode.Range(0, 0, editor.document.lineCount, 0);
    await editor.edit((e) => e.replace(whole, edited));
    assert.ok(await editor.document.save(), 'saved');
    const listed = json('list').notes;
    const typed = listed.find((n) => n.title === 'Typed in VS Code');
    assert.ok(typed, 'the new note is in the store');
    assert.strictEqual(typed.provenance, 'human');
    await until('the new render', () => vscode.window.activeTextEditor.document.getText().includes(`[#${typed.id}] `));
  });

  it('a conflicting save shows the conflict diagnostic', async () => {
    const editor = vscode.window.activeTextEditor;
    const doc = editor.document;
    const text = doc.getText();
    assert.ok(text.includes('high · Release the lock'), text);
    cli('revoke', '1', '--reason', 'an agent revoked it');
    const whole = new vscode.Range(0, 0, doc.lineCount, 0);
    await editor.edit((e) => e.replace(whole, text.replace('high · Release the lock', 'low · Release the lock')));
    await doc.save();
    const conflict = await until('the conflict diagnostic', () =>
      vscode.languages.getDiagnostics(doc.uri).find((d) => d.code === 'conflict'));
    assert.match(conflict.message, /#1 changed in the store since this checkout/);
    await sleep(1500);
    const shown = vscode.window.activeTextEditor.document.getText();
    assert.ok(shown.includes('low · Release the lock'), `the conflicting edit stays in the document:\n${shown}`);
    assert.ok(
      vscode.languages.getDiagnostics(doc.uri).some((d) => d.code === 'conflict'),
      'the conflict is still shown after the document is re-rendered',
    );
    assert.strictEqual(json('show', '1').state, 'revoked', "the agent's revoke stands");
    await vscode.commands.executeCommand('workbench.actions.view.problems');
    await sleep(500);
    await screenshot('conflict');
  });
});
