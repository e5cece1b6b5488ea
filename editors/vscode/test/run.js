// The extension's tests in a real VS Code: code-server (VS Code 1.100 from
// npm) serves a workbench with this extension under development, Debian's
// chromium (driven by playwright-core) opens it, the mocha suites run in the
// extension host against the real mnemo binary, and the workbench hands the
// result back through window.codeAutomationExit. One window per session
// (test/fixtures.js: its own project folder, or a multi-root workspace),
// one after the other, with autosave on as code-server has it. What the
// suites ask of the browser (keys, input boxes, dialogs, screenshots) is
// served by test/browser.js; screenshots land in target/vscode-test-artifacts.
// Usage: node test/run.js [session…]   (MNEMO_BINARY, CODE_SERVER, CHROMIUM override the defaults)
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const util = require('node:util');
const { chromium } = require('playwright-core');
const { serve } = require('./browser');
const { sessions, cliIn } = require('./fixtures');

const extension = path.resolve(__dirname, '..');
const repo = path.resolve(extension, '../..');
const binary = path.resolve(process.env.MNEMO_BINARY || path.join(repo, 'target/debug/mnemo'));
const codeServer = process.env.CODE_SERVER || path.join(repo, 'target/tools/code-server/node_modules/.bin/code-server');
const browserPath = process.env.CHROMIUM || '/usr/bin/chromium';
const artifacts = path.join(repo, 'target/vscode-test-artifacts');
/// How long one window's suites may take.
const SESSION_TIMEOUT_MS = 150000;

function fail(message) {
  console.error(`vscode tests: ${message}`);
  process.exit(1);
}

for (const [what, file] of [['mnemo', binary], ['code-server', codeServer], ['chromium', browserPath]]) {
  if (!fs.existsSync(file)) fail(`no ${what} at ${file}; run scripts/install-vscode-test (and cargo build)`);
}
const wanted = process.argv.slice(2);
const chosen = sessions.filter((s) => wanted.length === 0 || wanted.includes(s.name));
if (chosen.length === 0) fail(`no session named ${wanted.join(', ')} (there are ${sessions.map((s) => s.name).join(', ')})`);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mnemo-vscode-'));
fs.rmSync(artifacts, { recursive: true, force: true });
fs.mkdirSync(artifacts, { recursive: true });
const env = {
  ...process.env,
  HOME: path.join(tmp, 'home'),
  XDG_DATA_HOME: path.join(tmp, 'xdg-data'),
  XDG_CONFIG_HOME: path.join(tmp, 'xdg-config'),
  MNEMO_STORE: path.join(tmp, 'memory.db'),
  MNEMO_MODEL_DIR: path.join(tmp, 'no-model'),
  MNEMO_TEST_BINARY: binary,
  MNEMO_TEST_ARTIFACTS: artifacts,
};
const cli = cliIn(binary, env);

const userData = path.join(tmp, 'user-data');
fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
fs.writeFileSync(path.join(userData, 'User/settings.json'), JSON.stringify({
  'mnemo.server.path': binary,
  'security.workspace.trust.enabled': false,
  'workbench.startupEditor': 'none',
  'telemetry.telemetryLevel': 'off',
  // Nothing leaves the machine: no marketplace queries for updates or tips.
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  // code-server's default, made short: every pause in typing saves.
  'files.autoSave': 'afterDelay',
  'files.autoSaveDelay': 400,
}));

const port = 20000 + Math.floor(Math.random() * 20000);
const server = spawn(codeServer, [
  '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--user-data-dir', userData,
  '--extensions-dir', path.join(tmp, 'extensions'), '--disable-telemetry', '--disable-update-check',
], {
  // code-server's marketplace (open-vsx.org) pointed at a closed loopback port.
  env: { ...env, EXTENSIONS_GALLERY: JSON.stringify({ serviceUrl: 'http://127.0.0.1:9/gallery', itemUrl: 'http://127.0.0.1:9/item' }) },
  detached: true,
  stdio: ['ignore', 'pipe', 'pipe'],
});
let serverLog = '';
server.stdout.on('data', (d) => { serverLog += d; });
server.stderr.on('data', (d) => { serverLog += d; });

function stop(code) {
  try { process.kill(-server.pid, 'SIGKILL'); } catch { /* already gone */ }
  if (code === 0) {
    fs.rmSync(tmp, { recursive: true, force: true });
  } else {
    console.error(`vscode tests: kept ${tmp} (logs under user-data/logs)`);
  }
  process.exit(code);
}

async function ready() {
  for (let i = 0; i < 300; i++) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (response.ok) return;
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`code-server did not start:\n${serverLog}`);
}

/// One window: open it on the session's folder or workspace, run its suites.
async function runSession(browser, session) {
  const opened = session.setup(path.join(tmp, 'projects'), cli);
  fs.writeFileSync(path.join(artifacts, 'session.json'), JSON.stringify({ name: session.name, suites: session.suites }));
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  let exited;
  const result = new Promise((resolve) => { exited = resolve; });
  await page.exposeFunction('codeAutomationExit', (code) => exited(code));
  // The extension host's log lines arrive as a format string and its
  // arguments: formatted here (in order), colours dropped, so the output reads
  // like mocha's own.
  let printing = Promise.resolve();
  // Everything the window logged, kept for a failure's post-mortem.
  const consoleLog = path.join(artifacts, `${session.name}-console.log`);
  page.on('console', (message) => {
    printing = printing.then(async () => {
      const values = await Promise.all(message.args().map((a) => a.jsonValue().catch(() => undefined)));
      // The workbench prefixes a level: ['%c INFO', 'color: …', format, ...arguments].
      const logged = typeof values[0] === 'string' && values[0].startsWith('%c') && typeof values[2] === 'string'
        ? values.slice(2)
        : values;
      const text = typeof logged[0] === 'string'
        ? util.format(...logged.map((v) => (v === undefined ? '' : v))).replace(/\x1b\[[0-9;]*m/g, '')
        : message.text();
      // A read the workbench cancels because its window closes or reloads is
      // not a failure (a journey that needs the read fails on its own).
      fs.appendFileSync(consoleLog, `${text}\n`);
      if (/\(Canceled: Canceled\)/.test(text)) return;
      if (/passing|failing|pending|✔|✓|\d+\) |Error|^\s+at |journey:/.test(text)) {
        console.log(`[${session.name}] ${text.replace(/^\s*INFO\s+/, '').trimEnd()}`);
      }
    });
  });
  // The extension host is code-server's (remote): the paths are vscode-remote URIs.
  const remote = (file) => `vscode-remote://127.0.0.1:${port}${file}`;
  const payload = [
    ['extensionDevelopmentPath', remote(extension)],
    ['extensionTestsPath', remote(path.join(extension, 'test/index.js'))],
  ];
  const target = opened.workspace ? `workspace=${encodeURIComponent(opened.workspace)}` : `folder=${encodeURIComponent(opened.folder)}`;
  await page.goto(`http://127.0.0.1:${port}/?${target}&payload=${encodeURIComponent(JSON.stringify(payload))}`);
  // A second window (a second person on the same folder): the extension, no tests.
  const openSecond = async (folder) => {
    const second = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const extensionOnly = encodeURIComponent(JSON.stringify([['extensionDevelopmentPath', remote(extension)]]));
    await second.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(folder)}&payload=${extensionOnly}`);
    await second.locator('.statusbar-item', { hasText: /notes ·/ }).first().waitFor({ state: 'visible', timeout: 60000 });
    return second;
  };
  const stopServing = serve(page, artifacts, openSecond);
  const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), SESSION_TIMEOUT_MS));
  const code = await Promise.race([result, timeout]);
  await stopServing();
  if (code === 'timeout') {
    await page.screenshot({ path: path.join(artifacts, `${session.name}-timeout.png`) });
    console.error(`vscode tests: ${session.name}: no result within ${SESSION_TIMEOUT_MS / 1000} s\n${serverLog.slice(-4000)}`);
  }
  await page.close();
  return code;
}

(async () => {
  await ready();
  const browser = await chromium.launch({ executablePath: browserPath, args: ['--no-sandbox', '--disable-gpu'] });
  const failed = [];
  for (const session of chosen) {
    const started = Date.now();
    const code = await runSession(browser, session);
    console.log(`vscode tests: ${session.name} ${code === 0 ? 'passed' : `failed (${code})`} in ${Math.round((Date.now() - started) / 1000)} s`);
    if (code !== 0) failed.push(session.name);
  }
  await browser.close();
  console.log(failed.length === 0 ? 'vscode tests: all passed' : `vscode tests: failed: ${failed.join(', ')}`);
  stop(failed.length === 0 ? 0 : 1);
})().catch((error) => {
  console.error(error);
  stop(1);
});
