// The extension's tests in a real VS Code: code-server (VS Code 1.100 from
// npm) serves a workbench with this extension under development, Debian's
// chromium (driven by playwright-core) opens it, the mocha suite runs in the
// extension host against the real mnemo binary, and the workbench hands the
// result back through window.codeAutomationExit. Screenshots the suite asks
// for land in target/vscode-test-artifacts; input boxes the suite needs
// answered are typed into by the browser, as a person would.
// Usage: node test/run.js   (MNEMO_BINARY, CODE_SERVER, CHROMIUM override the defaults)
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');

const extension = path.resolve(__dirname, '..');
const repo = path.resolve(extension, '../..');
const binary = path.resolve(process.env.MNEMO_BINARY || path.join(repo, 'target/debug/mnemo'));
const codeServer = process.env.CODE_SERVER || path.join(repo, 'target/tools/code-server/node_modules/.bin/code-server');
const browserPath = process.env.CHROMIUM || '/usr/bin/chromium';
const artifacts = path.join(repo, 'target/vscode-test-artifacts');

function fail(message) {
  console.error(`vscode tests: ${message}`);
  process.exit(1);
}

for (const [what, file] of [['mnemo', binary], ['code-server', codeServer], ['chromium', browserPath]]) {
  if (!fs.existsSync(file)) fail(`no ${what} at ${file}; run scripts/install-vscode-test (and cargo build)`);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mnemo-vscode-'));
const root = path.join(tmp, 'project');
fs.mkdirSync(path.join(root, '.git'), { recursive: true });
fs.mkdirSync(path.join(root, 'src'));
fs.writeFileSync(path.join(root, 'src/lock.rs'), 'fn main() {}\nlet guard = lock();\nrestart(guard);\n');
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
  MNEMO_TEST_ROOT: root,
  MNEMO_TEST_ARTIFACTS: artifacts,
};
const cli = (...args) => execFileSync(binary, args, { cwd: root, env, encoding: 'utf8' });
cli('remember', '--kind', 'gotcha', '--priority', 'high', '--title', 'Release the lock before restarting',
  '--body', 'Restarting with the lock held deadlocks the new daemon.', '--anchor', 'src/lock.rs:2-3');
cli('remember', '--kind', 'finding', '--title', 'Index rebuild takes 40 s on the full corpus');
cli('remember', '--kind', 'operational', '--title', 'The nightly build needs 8 GB of RAM');
cli('export', '--enable');

const userData = path.join(tmp, 'user-data');
fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
fs.writeFileSync(path.join(userData, 'User/settings.json'), JSON.stringify({
  'mnemo.server.path': binary,
  'security.workspace.trust.enabled': false,
  'workbench.startupEditor': 'none',
  'telemetry.telemetryLevel': 'off',
}));

const port = 20000 + Math.floor(Math.random() * 20000);
const server = spawn(codeServer, [
  '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--user-data-dir', userData,
  '--extensions-dir', path.join(tmp, 'extensions'), '--disable-telemetry', '--disable-update-check', root,
], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
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

(async () => {
  await ready();
  const browser = await chromium.launch({ executablePath: browserPath, args: ['--no-sandbox', '--disable-gpu'] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  let exited;
  const result = new Promise((resolve) => { exited = resolve; });
  await page.exposeFunction('codeAutomationExit', (code) => exited(code));
  page.on('console', (message) => {
    const text = message.text();
    if (/passing|failing|✔|✓|\d+\) |Error|mnemo in VS Code|^\s+at /.test(text)) console.log(`[vscode] ${text}`);
  });
  // The extension host is code-server's (remote): the paths are vscode-remote URIs.
  const remote = (file) => `vscode-remote://127.0.0.1:${port}${file}`;
  const payload = [
    ['extensionDevelopmentPath', remote(extension)],
    ['extensionTestsPath', remote(path.join(extension, 'test/index.js'))],
  ];
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(root)}&payload=${encodeURIComponent(JSON.stringify(payload))}`);
  // What the suite asks of the browser, through files in the artifacts folder:
  // NAME.request → a screenshot NAME.png; NAME.answer ({text, key}) → the
  // input box that is open gets the text typed and the key pressed, then
  // NAME.answered (or NAME.unanswered with the error).
  async function serve(file) {
    const name = file.replace(/\.(request|answer)$/, '');
    const at = (suffix) => path.join(artifacts, `${name}${suffix}`);
    if (file.endsWith('.request')) {
      fs.rmSync(at('.request'));
      await page.screenshot({ path: at('.png') });
      console.log(`screenshot: target/vscode-test-artifacts/${name}.png`);
      return;
    }
    try {
      const answer = JSON.parse(fs.readFileSync(at('.answer'), 'utf8'));
      fs.rmSync(at('.answer'));
      const input = page.locator('.quick-input-widget .quick-input-box input');
      await input.waitFor({ state: 'visible', timeout: 20000 });
      await input.fill(answer.text);
      await input.press(answer.key);
      fs.writeFileSync(at('.answered'), '');
    } catch (error) {
      fs.writeFileSync(at('.unanswered'), String(error));
    }
  }
  let serving = false;
  const shots = setInterval(async () => {
    if (serving) return;
    serving = true;
    try {
      for (const file of fs.readdirSync(artifacts).filter((f) => /\.(request|answer)$/.test(f))) await serve(file);
    } finally {
      serving = false;
    }
  }, 200);
  const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), 240000));
  const code = await Promise.race([result, timeout]);
  clearInterval(shots);
  if (code === 'timeout') {
    await page.screenshot({ path: path.join(artifacts, 'timeout.png') });
    console.error(`vscode tests: no result within 240 s\n${serverLog.slice(-4000)}`);
  }
  await browser.close();
  console.log(code === 0 ? 'vscode tests: all passed' : `vscode tests: failed (${code})`);
  stop(code === 0 ? 0 : 1);
})().catch((error) => {
  console.error(error);
  stop(1);
});
