// Shared by the harness journeys: the mnemo binary under test, a scratch
// repository with its own store, and a recording HTTP server on loopback
// that stands in for a model API.
'use strict';

const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');

/** The mnemo binary the journeys drive (MNEMO_BINARY, set by run.js). */
function mnemoBinary() {
  const binary = process.env.MNEMO_BINARY;
  if (!binary || !fs.existsSync(binary)) {
    throw new Error(`MNEMO_BINARY (${binary}) is not a mnemo binary; run the suite through tests/harness/run.js`);
  }
  return binary;
}

/** A pinned harness binary from this directory's node_modules; throws, saying how to install, when missing. */
function harnessBinary(name) {
  const binary = path.join(__dirname, 'node_modules', '.bin', name);
  if (!fs.existsSync(binary)) {
    throw new Error(`${name} is not installed in ${path.dirname(binary)}: run scripts/install-harnesses`);
  }
  return binary;
}

/**
 * A scratch git repository with `files` ({relative path: text}), a private
 * store and HOME under one temporary directory. Returns {dir, root, home, store, env}.
 */
function scratchRepo(files) {
  // The real path: harnesses key trust by it.
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mnemo-harness-')));
  const root = path.join(dir, 'repo');
  const home = path.join(dir, 'home');
  fs.mkdirSync(root);
  fs.mkdirSync(home);
  for (const [relative, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true });
    fs.writeFileSync(path.join(root, relative), text);
  }
  execFileSync('git', ['init', '-q', root]);
  const git = ['-c', 'user.name=journey', '-c', 'user.email=journey@localhost'];
  execFileSync('git', [...git, '-C', root, 'add', '-A']);
  execFileSync('git', [...git, '-C', root, 'commit', '-q', '--allow-empty', '-m', 'start']);
  // mnemo never creates a store's directory but the default one.
  fs.mkdirSync(path.join(dir, 'data'), { mode: 0o700 });
  const store = path.join(dir, 'data', 'memory.db');
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    MNEMO_STORE: store,
    // The real model: HOME is replaced, so the default location is named here.
    MNEMO_MODEL_DIR: process.env.MNEMO_MODEL_DIR || path.join(os.homedir(), '.local', 'share', 'mnemo', 'model'),
    TMPDIR: os.tmpdir(),
    // Nothing leaves the machine: any proxy-aware client is sent to a closed port; loopback is direct.
    HTTP_PROXY: 'http://127.0.0.1:9',
    HTTPS_PROXY: 'http://127.0.0.1:9',
    http_proxy: 'http://127.0.0.1:9',
    https_proxy: 'http://127.0.0.1:9',
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  };
  return { dir, root, home, store, env };
}

/** Run mnemo in `cwd` with `env`; returns stdout. */
function mnemo(args, { cwd, env, input } = {}) {
  return execFileSync(mnemoBinary(), args, { cwd, env, input, encoding: 'utf8' });
}

/**
 * An HTTP server on 127.0.0.1 that records every request ({method, url,
 * headers, body (parsed JSON when it is JSON)}) and answers with `handler(request, res)`.
 * Resolves to {url, requests, close()}.
 */
function recordingServer(handler) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body = raw;
      try {
        body = JSON.parse(raw);
      } catch {}
      const request = { method: req.method, url: req.url, headers: req.headers, body };
      requests.push(request);
      handler(request, res);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({ url: `http://127.0.0.1:${port}`, requests, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

/**
 * Run a harness: `binary args` in `cwd` with `env`, its output collected;
 * the child and its whole process group (hooks, MCP servers) are killed
 * after `timeoutMs`. Resolves to {code, signal, stdout, stderr, timedOut};
 * a spawn failure resolves with code null and the reason in stderr.
 */
function runHarness(binary, args, { cwd, env, timeoutMs }) {
  return new Promise((resolve) => {
    const child = spawn(binary, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve({ code: null, signal: null, stdout, stderr: `${stderr}\nspawn failed: ${e.message}`, timedOut });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
  });
}

module.exports = { mnemoBinary, harnessBinary, scratchRepo, mnemo, recordingServer, runHarness };
