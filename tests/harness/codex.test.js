// The Codex journey: the real, unmodified Codex CLI (pinned in package.json)
// runs `codex exec` in a scratch repository where mnemo's hooks and MCP
// server are installed, against a fake OpenAI Responses API on loopback
// that records what the model would receive and answers with a scripted
// conversation: find mnemo's tools, call one, read src/db.py, patch it,
// finish; then a second session that edits what no note is about, and a
// third whose context is compacted. The assertions read the recorded
// requests: what mnemo put into the model's context, where, and when.
//
// Codex 0.171.0 specifics this relies on (see the notes in the report):
// hooks in the project's .codex/hooks.json run only in a trusted project
// ([projects."<root>"] in ~/.codex/config.toml, written by `codex exec
// --trust`) and only once each hook is trusted ([hooks.state."<key>"]
// trusted_hash, what /hooks in the TUI writes; an untrusted hook is skipped
// without a word). Hook output lands as developer messages in the input.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { mnemoBinary, harnessBinary, scratchRepo, mnemo, runHarness } = require('./lib.js');
const {
  fakeOpenAI,
  shell,
  applyPatch,
  toolSearch,
  mcpCall,
  message,
  isCompaction,
  itemText,
  findIndex,
  promptIndex,
  developerMessages,
  toolNames,
  summarize,
} = require('./fake-openai.js');

const RUN_TIMEOUT_MS = 120_000;
const MODEL = 'gpt-5.5'; // in Codex's built-in catalog: gets the freeform apply_patch tool
const MNEMO_TOOLS = ['context', 'expand', 'flag_stale', 'history', 'recall', 'reinstate', 'remember', 'revoke'];

const DB_PY = 'import sqlite3\n\ndef connect():\n    return sqlite3.connect("app.db")\n';
const DB_PATCH = [
  '*** Begin Patch',
  '*** Update File: src/db.py',
  '@@',
  '-    return sqlite3.connect("app.db")',
  '+    return sqlite3.connect("app.db", timeout=30)',
  '*** End Patch',
  '',
].join('\n');

const DB_COMMENT_PATCH = [
  '*** Begin Patch',
  '*** Update File: src/db.py',
  '@@',
  ' import sqlite3',
  '+# connections wait for locks',
  '*** End Patch',
  '',
].join('\n');

const NOTES = {
  directive: { title: 'Run pytest -x before every commit', body: 'The CI runs the same command; a red suite blocks the merge.' },
  gotcha: {
    title: 'sqlite3.connect needs timeout=30',
    body: 'Two writers at once raise OperationalError: locked unless connect() waits; keep timeout=30 on every connection.',
  },
  related: { title: 'The app keeps its database in app.db at the repository root', body: 'Tests copy it to a temporary directory first.' },
  unrelated: [
    { title: 'The CSS bundle is built with esbuild', body: 'npm run css rebuilds it.' },
    { title: 'Release tags are cut from main only', body: 'Never tag a feature branch.' },
  ],
};

// --- Codex's side: config, trust, running it --------------------------------

/** The user config: the fake provider, nothing that reaches past loopback. */
function codexConfig() {
  return `model = "${MODEL}"
model_provider = "mnemo-fake"
check_for_update_on_startup = false

[model_providers.mnemo-fake]
name = "mnemo fake OpenAI"
base_url = "http://127.0.0.1:9/v1" # replaced per run with -c
env_key = "MNEMO_FAKE_OPENAI_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

# The curated plugin marketplace is fetched from github.com at startup.
[features]
plugins = false
apps = false
remote_plugin = false
tool_suggest = false
`;
}

/** Codex's label for a hook event in trust keys: SessionStart → session_start. */
const snake = (event) => event.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();

/** JSON with every object's keys sorted, compact (Codex's canonical form for hashing). */
function canonical(value) {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical(value[k])]));
  }
  return value;
}

/**
 * What trusting the hooks of `hooksFile` in Codex's /hooks writes into the
 * user config: `[hooks.state."<file>:<event>:<group>:<handler>"]
 * trusted_hash = "sha256:…"`, the hash of the normalized handler (timeout
 * defaults to 600, matcher dropped where the event has none).
 */
function hookTrust(hooksFile) {
  const { hooks } = JSON.parse(fs.readFileSync(hooksFile, 'utf8'));
  const entries = [];
  for (const [event, groups] of Object.entries(hooks || {})) {
    groups.forEach((group, g) => {
      (group.hooks || []).forEach((handler, h) => {
        if (handler.type !== 'command') return;
        const normalized = {
          type: 'command',
          command: handler.command,
          timeout: Math.max(1, handler.timeout ?? handler.timeoutSec ?? 600),
          async: Boolean(handler.async),
        };
        if (handler.statusMessage) normalized.statusMessage = handler.statusMessage;
        const identity = { event_name: snake(event), hooks: [normalized] };
        if (group.matcher !== undefined && group.matcher !== null && !['UserPromptSubmit', 'Stop'].includes(event)) {
          identity.matcher = group.matcher;
        }
        const hash = crypto.createHash('sha256').update(JSON.stringify(canonical(identity))).digest('hex');
        entries.push({ key: `${hooksFile}:${snake(event)}:${g}:${h}`, hash: `sha256:${hash}` });
      });
    });
  }
  return entries;
}

/** Trust every hook Codex will find for this project, as a user does once in /hooks. */
function trustHooks(repo) {
  const configFile = path.join(repo.codexHome, 'config.toml');
  let config = fs.readFileSync(configFile, 'utf8');
  const files = [path.join(repo.root, '.codex', 'hooks.json'), path.join(repo.codexHome, 'hooks.json')];
  const trusted = [];
  for (const file of files.filter((f) => fs.existsSync(f))) {
    for (const { key, hash } of hookTrust(fs.realpathSync(file))) {
      trusted.push(key);
      if (config.includes(`[hooks.state."${key}"]`)) continue;
      config += `\n[hooks.state."${key}"]\ntrusted_hash = "${hash}"\n`;
    }
  }
  fs.writeFileSync(configFile, config);
  return trusted;
}

/** Whether this mnemo can install into Codex itself. */
function installerKnowsCodex() {
  return execFileSync(mnemoBinary(), ['hook', 'install', '--help'], { encoding: 'utf8' }).includes('--codex');
}

/**
 * mnemo's hooks and MCP server into the project's .codex/: by
 * `mnemo hook install --codex --absolute` when this mnemo has it, else by
 * hand in the same shape.
 */
function installMnemo(repo) {
  if (installerKnowsCodex()) {
    return mnemo(['hook', 'install', '--codex', '--absolute'], { cwd: repo.root, env: repo.env });
  }
  const bin = mnemoBinary();
  const hook = (moment) => ({ type: 'command', command: `${bin} hook ${moment}` });
  const hooks = {
    hooks: {
      SessionStart: [
        { matcher: 'startup|resume|clear', hooks: [hook('session-start')] },
        { matcher: 'compact', hooks: [hook('post-compaction')] },
      ],
      UserPromptSubmit: [{ hooks: [hook('user-prompt')] }],
      PreToolUse: [{ matcher: 'apply_patch|Edit|Write', hooks: [hook('pre-edit')] }],
    },
  };
  fs.mkdirSync(path.join(repo.root, '.codex'), { recursive: true });
  fs.writeFileSync(path.join(repo.root, '.codex', 'hooks.json'), `${JSON.stringify(hooks, null, 2)}\n`);
  fs.writeFileSync(
    path.join(repo.root, '.codex', 'config.toml'),
    `[mcp_servers.mnemo]\ncommand = ${JSON.stringify(bin)}\nargs = ["mcp"]\n`,
  );
  return 'installed by hand (this mnemo has no `hook install --codex`)';
}

/** The scratch repository, its store, and a Codex home (CODEX_HOME) inside its HOME. */
function setUp() {
  const repo = scratchRepo({ 'src/db.py': DB_PY, 'README.md': '# scratch\n' });
  repo.root = fs.realpathSync(repo.root);
  repo.codexHome = path.join(repo.home, '.codex');
  fs.mkdirSync(repo.codexHome, { recursive: true });
  fs.writeFileSync(path.join(repo.codexHome, 'config.toml'), codexConfig());
  const proxy = 'http://127.0.0.1:9'; // the discard port: anything not on loopback fails here
  repo.env = {
    ...repo.env,
    MNEMO_MODEL_DIR: process.env.MNEMO_MODEL_DIR || path.join(os.homedir(), '.local', 'share', 'mnemo', 'model'),
    CODEX_HOME: repo.codexHome,
    MNEMO_FAKE_OPENAI_KEY: 'sk-fake-loopback',
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    ALL_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    all_proxy: proxy,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    GIT_TERMINAL_PROMPT: '0',
  };
  return repo;
}

/** The notes the journey recalls, in the scratch store. */
function seedStore(repo) {
  const remember = (kind, note, extra = []) =>
    mnemo(['remember', '--kind', kind, '--title', note.title, '--body', note.body, ...extra], {
      cwd: repo.root,
      env: repo.env,
    });
  remember('directive', NOTES.directive, ['--as-human']);
  remember('gotcha', NOTES.gotcha, ['--priority', 'high', '--anchor', 'src/db.py:1-3']);
  remember('finding', NOTES.related);
  for (const note of NOTES.unrelated) remember('finding', note);
}

/**
 * `codex exec PROMPT` in the repository against the fake API; kills it
 * (its whole process group) after RUN_TIMEOUT_MS. Resolves to {code, signal, stdout, stderr, timedOut}.
 */
function runCodex(repo, api, prompt, extra = []) {
  const args = [
    'exec',
    '--trust', // saves [projects."<root>"] trust_level = "trusted": the project's .codex/ is read
    '--sandbox',
    'workspace-write',
    '--color',
    'never',
    '-c',
    `model_providers.mnemo-fake.base_url=${JSON.stringify(api.url)}`,
    ...extra,
    prompt,
  ];
  return runHarness(harnessBinary('codex'), args, { cwd: repo.root, env: repo.env, timeoutMs: RUN_TIMEOUT_MS });
}

/** A run's outcome for failure messages: exit, Codex's output, the recorded requests. */
function report(run, api) {
  return [
    `codex exit ${run.code}${run.signal ? ` (${run.signal})` : ''}${run.timedOut ? `, killed after ${RUN_TIMEOUT_MS} ms` : ''}`,
    '--- codex stderr (tail) ---',
    run.stderr.split('\n').slice(-60).join('\n'),
    '--- codex stdout (tail) ---',
    run.stdout.split('\n').slice(-20).join('\n'),
    '--- recorded requests ---',
    summarize(api.requests),
  ].join('\n');
}

/**
 * Subtests that each name the failure and, once per run, show what was
 * recorded; `state.failed` tells whether any failed.
 */
function checker(t, run, api, state) {
  let shown = false;
  return (name, fn) =>
    t.test(name, () => {
      try {
        fn();
      } catch (e) {
        state.failed = true;
        if (!shown) {
          shown = true;
          e.message += `\n\n${report(run, api)}`;
        }
        throw e;
      }
    });
}

/**
 * The gotcha anchored to src/db.py reached the model, body and all, before
 * the apply_patch call `callId` ran: `request` is the one after the call,
 * where the pre-edit hook's output sits between the call and its result.
 * Delivered in full earlier in the session is enough (mnemo does not repeat
 * it); else the pre-edit hook must have delivered it.
 */
function gotchaBeforeEdit(t, request, callId) {
  const call = findIndex(request, (i) => i.type === 'custom_tool_call' && i.call_id === callId);
  const result = findIndex(request, (i) => i.type === 'custom_tool_call_output' && i.call_id === callId);
  assert.ok(call >= 0 && result > call, `the apply_patch call ${callId} and its output are not in the request after it`);
  const withBody = developerMessages(request).filter((m) => m.index < result && m.text.includes(NOTES.gotcha.body));
  const where = withBody.map((m) => (m.index > call ? 'by the pre-edit hook' : `earlier (input item ${m.index})`));
  t.diagnostic(`${callId}: the gotcha body was delivered ${where.join(', ') || 'nowhere'}`);
  assert.ok(withBody.length > 0, `the gotcha's body reached the model nowhere before ${callId} ran`);
}

/** The `n`-th model request of a run (0-based), failing clearly when the run made fewer. */
function nth(requests, n) {
  assert.ok(requests[n], `the run made ${requests.length} model requests, not ${n + 1} or more`);
  return requests[n];
}

// A PreToolUse hook that holds an edit (mnemo's notes before it is made) is "Blocked"; that is checked where it happens.
const hookFailures = (stderr) =>
  stderr.split('\n').filter((l) => /^hook: \w+ (Failed|Stopped)/.test(l) || /^hook: (?!PreToolUse)\w+ Blocked/.test(l));

// --- the journey --------------------------------------------------------------

test('Codex: mnemo in the model context at session start, prompt, and before an edit', async (t) => {
  harnessBinary('codex'); // fails, saying how to install, when Codex is missing
  const repo = setUp();
  const state = { failed: false, finished: false };
  t.after(() => {
    if (state.failed || !state.finished) t.diagnostic(`scratch kept for inspection: ${repo.dir}`);
    else fs.rmSync(repo.dir, { recursive: true, force: true });
  });
  seedStore(repo);
  const installed = installMnemo(repo);
  t.diagnostic(`install: ${installed.trim().split('\n')[0]}`);
  const trusted = trustHooks(repo);
  assert.ok(trusted.length > 0, 'no hooks.json for Codex to find after installing mnemo');

  // --- run 1: a prompt about the database, an edit of src/db.py ---
  const prompt = 'The database layer is flaky under load; please harden it.';
  const api = await fakeOpenAI([
    [toolSearch('mnemo project memory recall', 'call_search')],
    [mcpCall('mnemo', 'recall', { query: 'database' }, 'call_recall')],
    [shell('cat src/db.py', 'call_read')],
    [applyPatch(DB_PATCH, 'call_patch')],
    [message('Done: connect() now waits up to 30 seconds for a lock.')],
  ]);
  const run = await runCodex(repo, api, prompt);
  await api.close();
  const requests = api.responses();
  const check = checker(t, run, api, state);

  await check('codex exec finished normally, every mnemo hook succeeded', () => {
    assert.equal(run.timedOut, false, 'codex exec timed out');
    assert.equal(run.code, 0, 'codex exec failed');
    assert.deepEqual(hookFailures(run.stderr), [], 'a hook failed');
    assert.equal(requests.length, 5, 'the scripted conversation takes five model requests');
    assert.match(fs.readFileSync(path.join(repo.root, 'src/db.py'), 'utf8'), /timeout=30/, 'the patch was not applied');
  });

  await check('session start: the directive, before the prompt', () => {
    const first = nth(requests, 0);
    const at = promptIndex(first, prompt);
    assert.ok(at >= 0, 'the prompt is not in the first request');
    const directive = developerMessages(first).find((m) => m.text.includes(NOTES.directive.title));
    assert.ok(directive, 'no developer message carries the directive');
    assert.ok(directive.index < at, 'the directive comes after the prompt');
  });

  await check('prompt recall: the relevant note right after the prompt, nothing unrelated', () => {
    const first = nth(requests, 0);
    const at = promptIndex(first, prompt);
    const after = developerMessages(first).filter((m) => m.index > at);
    const recall = after.find((m) => m.text.includes(NOTES.gotcha.title));
    assert.ok(recall, 'no developer message after the prompt carries the gotcha about the database');
    for (const note of NOTES.unrelated) {
      assert.ok(!recall.text.includes(note.title), `prompt recall delivered the unrelated "${note.title}"`);
    }
  });

  await check("mnemo's MCP tools: offered (deferred) and loaded by tool search", () => {
    const first = nth(requests, 0);
    const direct = toolNames(first).filter((n) => n.startsWith('mcp__mnemo.'));
    const deferred = developerMessages(first).some((m) => /Deferred tool namespaces:[\s\S]*- mcp__mnemo:/.test(m.text));
    assert.ok(direct.length > 0 || deferred, 'the first request offers no mcp__mnemo tools, directly or deferred');
    const output = nth(requests, 1).input.find((i) => i.type === 'tool_search_output' && i.call_id === 'call_search');
    assert.ok(output, 'no tool_search_output for the search');
    const namespace = (output.tools || []).find((tool) => tool.name === 'mcp__mnemo');
    assert.ok(namespace, 'tool search did not return the mcp__mnemo namespace');
    const names = (namespace.tools || []).map((tool) => tool.name).sort();
    assert.deepEqual(names, MNEMO_TOOLS);
  });

  await check('an MCP tool call reaches mnemo and is answered', () => {
    const output = nth(requests, 2).input.find((i) => i.type === 'function_call_output' && i.call_id === 'call_recall');
    assert.ok(output, 'no output for the recall call');
    const text = itemText(output);
    assert.doesNotMatch(text, /requires approval/, 'Codex refused the MCP call (default_tools_approval_mode)');
    assert.match(text, /"results"/, 'recall answered without results');
  });

  await check('before the edit: the gotcha anchored to src/db.py, with its body', () => {
    gotchaBeforeEdit(t, nth(requests, 4), 'call_patch');
  });

  // --- run 2: a new session; a prompt and an edit nothing in the store is
  // about, then an edit of src/db.py, which this session was told nothing about ---
  const quiet = 'Add a CHANGELOG.md that says hello.';
  const api2 = await fakeOpenAI([
    [applyPatch('*** Begin Patch\n*** Add File: CHANGELOG.md\n+hello\n*** End Patch\n', 'call_changelog')],
    [applyPatch(DB_COMMENT_PATCH, 'call_db_again')],
    // mnemo held that edit with the gotcha as the reason: the model makes it again.
    [applyPatch(DB_COMMENT_PATCH, 'call_db_retry')],
    [message('Added CHANGELOG.md.')],
  ]);
  const run2 = await runCodex(repo, api2, quiet);
  await api2.close();
  const requests2 = api2.responses();
  const check2 = checker(t, run2, api2, state);

  await check2('second session: finished normally', () => {
    assert.equal(run2.timedOut, false, 'codex exec timed out');
    assert.equal(run2.code, 0, 'codex exec failed');
    assert.deepEqual(hookFailures(run2.stderr), [], 'a hook failed');
    assert.equal(requests2.length, 4, 'the scripted conversation takes four model requests');
    assert.match(fs.readFileSync(path.join(repo.root, 'src/db.py'), 'utf8'), /connections wait for locks/, 'the retried patch was not applied');
  });

  await check2('second session: the directive again at session start', () => {
    const at = promptIndex(nth(requests2, 0), quiet);
    const directive = developerMessages(nth(requests2, 0)).find((m) => m.text.includes(NOTES.directive.title));
    assert.ok(directive && directive.index < at, 'the new session did not get the directive before the prompt');
  });

  await check2('nothing applies: nothing after the prompt, nothing around the edit', () => {
    const at = promptIndex(nth(requests2, 0), quiet);
    const afterPrompt = developerMessages(nth(requests2, 0)).filter((m) => m.index > at);
    assert.deepEqual(afterPrompt, [], 'something was injected after an unrelated prompt');
    const last = nth(requests2, 1);
    const call = findIndex(last, (i) => i.type === 'custom_tool_call' && i.call_id === 'call_changelog');
    const result = findIndex(last, (i) => i.type === 'custom_tool_call_output' && i.call_id === 'call_changelog');
    assert.ok(call >= 0 && result > call, 'the apply_patch call and its output are not in the request after it');
    const around = developerMessages(last).filter((m) => m.index > call && m.index < result);
    assert.deepEqual(around, [], 'something was injected before an edit no note is about');
  });

  await check2('second session, editing src/db.py: held once, the gotcha with its body as the reason', () => {
    const held = nth(requests2, 2).input.find((i) => i.type === 'custom_tool_call_output' && i.call_id === 'call_db_again');
    assert.ok(held, 'no output for the first patch of src/db.py');
    const text = itemText(held);
    assert.ok(text.includes(NOTES.gotcha.body), `the held patch's output does not carry the gotcha's body: ${text}`);
    assert.match(text, /mnemo held this edit once/);
    const retried = nth(requests2, 3).input.find((i) => i.type === 'custom_tool_call_output' && i.call_id === 'call_db_retry');
    assert.ok(retried, 'no output for the retried patch');
    assert.doesNotMatch(itemText(retried), /mnemo held/, 'the same notes held the edit twice');
  });

  // --- run 3: the context fills up mid-turn; Codex compacts it and starts the
  // session again (SessionStart, source "compact") ---
  const busy = 'List the files in this repository.';
  const api3 = await fakeOpenAI([
    { items: [shell('ls', 'call_ls')], totalTokens: 500_000 },
    [message('README.md and src/.')],
  ]);
  const run3 = await runCodex(repo, api3, busy, ['-c', 'model_auto_compact_token_limit=20000']);
  await api3.close();
  const requests3 = api3.responses();
  const check3 = checker(t, run3, api3, state);

  await check3('compaction: finished normally, Codex compacted', () => {
    assert.equal(run3.timedOut, false, 'codex exec timed out');
    assert.equal(run3.code, 0, 'codex exec failed');
    assert.deepEqual(hookFailures(run3.stderr), [], 'a hook failed');
    assert.ok(requests3.some(isCompaction), 'Codex never asked for a compaction');
  });

  await check3('after compaction: the directive again, after the summary', () => {
    const compaction = requests3.findIndex(isCompaction);
    const after = requests3.slice(compaction + 1).find((r) => !isCompaction(r));
    assert.ok(after, 'no request after the compaction');
    const summary = findIndex(after, (i) => i.type === 'message' && itemText(i).includes('Checkpoint summary'));
    assert.ok(summary >= 0, 'the compaction summary is not in the request after it');
    const directives = developerMessages(after).filter((m) => m.text.includes(NOTES.directive.title));
    assert.equal(directives.length, 1, 'the directive should be in the compacted context exactly once');
    assert.ok(directives[0].index > summary, 'the directive comes before the summary');
  });
  state.finished = true;
});
