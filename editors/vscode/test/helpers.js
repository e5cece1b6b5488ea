// What the journeys share (in the extension host): the CLI in a folder,
// waiting on a condition, asking the browser for keys, answers, clicks and
// screenshots (test/browser.js), and reading the memory document, the
// problems and the files on disk as a person would see them.
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const vscode = require('vscode');

const binary = process.env.MNEMO_TEST_BINARY;
const artifacts = process.env.MNEMO_TEST_ARTIFACTS;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/// The workspace folder of the window (the n-th of a multi-root workspace).
const folder = (n = 0) => vscode.workspace.workspaceFolders[n].uri.fsPath;

function cliIn(root, ...args) {
  return execFileSync(binary, args, { cwd: root, encoding: 'utf8' });
}
const jsonIn = (root, ...args) => JSON.parse(cliIn(root, '--json', ...args));
/// Every note of the folder's workspace, in every state.
const STATES = ['active', 'superseded', 'revoked', 'stale_flagged', 'expired', 'proposed'];
function notesIn(root) {
  return STATES.flatMap((state) => jsonIn(root, 'list', '--state', state).notes).sort((a, b) => a.id - b.id);
}
/// Every event of the folder's notes, as `mnemo history` prints them.
function eventsIn(root) {
  return notesIn(root).flatMap((n) => jsonIn(root, 'history', String(n.id)));
}

async function until(what, check, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/// Have the browser run `steps` (test/browser.js) and wait until it has.
let requests = 0;
async function browser(steps) {
  const name = `request-${process.pid}-${++requests}`;
  const at = (suffix) => path.join(artifacts, `${name}${suffix}`);
  // Written whole, then renamed: the runner never reads half a request.
  fs.writeFileSync(at('.steps.part'), JSON.stringify(steps));
  fs.renameSync(at('.steps.part'), at('.steps'));
  await until(`the browser doing ${JSON.stringify(steps).slice(0, 120)}`, () => {
    if (fs.existsSync(at('.failed'))) throw new Error(fs.readFileSync(at('.failed'), 'utf8'));
    return fs.existsSync(at('.done'));
  }, 60000);
  const read = JSON.parse(fs.readFileSync(at('.done'), 'utf8') || '[]');
  fs.rmSync(at('.done'));
  return read;
}
/// The texts on screen of the elements `selector` finds.
const onScreen = async (selector) => (await browser([{ read: selector }]))[0];
const screenshot = (name) => browser([{ wait: 300 }, { screenshot: name }]);
const answerInputBox = (text, key = 'Enter') => browser([{ answer: text, key }]);

/// The memory document of a folder, opened in an editor.
async function openMemory(n = 0) {
  const uri = vscode.Uri.from({ scheme: 'memory', path: `${folder(n)}/MEMORY.md` });
  const doc = await vscode.workspace.openTextDocument(uri);
  const editor = await vscode.window.showTextDocument(doc);
  return { doc, editor };
}

const lineOf = (doc, id) => doc.getText().split('\n').findIndex((l) => l.startsWith(`- [#${id}]`));
const lineWith = (doc, text) => doc.getText().split('\n').findIndex((l) => l.includes(text));
const idOf = (root, title) => {
  const found = notesIn(root).filter((n) => n.title === title && n.state === 'active');
  if (found.length !== 1) throw new Error(`${found.length} active notes titled ${title}`);
  return found[0].id;
};

/// Put the cursor at the end of the line holding `text`, with the keyboard
/// focus in that editor (the command after the selection returns once the
/// workbench has applied both, so the browser types there).
async function cursorAtEndOf(editor, text) {
  const line = lineWith(editor.document, text);
  if (line < 0) throw new Error(`no line with ${text} in\n${editor.document.getText()}`);
  const end = editor.document.lineAt(line).range.end;
  editor.selection = new vscode.Selection(end, end);
  await vscode.commands.executeCommand('workbench.action.focusActiveEditorGroup');
  return line;
}

const problems = (uri) => vscode.languages.getDiagnostics(uri).map((d) => d.message);

/// Close every editor (documents keep their state in VS Code and the extension).
const closeAll = () => vscode.commands.executeCommand('workbench.action.closeAllEditors');

module.exports = {
  sleep, folder, cliIn, onScreen, jsonIn, notesIn, eventsIn, until, browser, screenshot, answerInputBox,
  openMemory, lineOf, lineWith, idOf, cursorAtEndOf, problems, closeAll,
};
