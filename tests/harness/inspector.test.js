// The MCP journey through a client no one here wrote: the MCP Inspector's
// CLI (@modelcontextprotocol/inspector, pinned in package.json) spawns
// `mnemo mcp` over stdio in a scratch repository and makes one request per
// run, printing the result as JSON. It lists the tools (each annotated;
// recall and context with an output schema, checked for portability with
// --strict), calls every tool, reads the MEMORY.md resource, gets the
// session-start prompt, and measures what an agent receives for a recall
// of five notes. Loopback only: the server is a child process on a pipe.
//
// The Inspector 2.12.0 declares Node >= 22.19 but its CLI runs on the Node
// 20 the rest of the tests use; the server gets only the environment the
// CLI passes with -e (the SDK's stdio transport starts it with PATH, HOME
// and little else).
//
//   node tests/harness/run.js target/debug/mnemo inspector
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const { mnemoBinary, harnessBinary, scratchRepo, mnemo } = require('./lib.js');

/** The clock the server and the seeding commands see: ages read `now`, byte counts are stable. */
const NOW = '2026-08-04T12:00:00Z';

const DIRECTIVE = { title: 'Run the tests inside the venv', body: 'Always: `. .venv/bin/activate` first.' };

/** Five notes a recall of "restarting the daemon" returns. */
const DAEMON_NOTES = [
  {
    kind: 'gotcha',
    priority: 'high',
    title: 'Release the daemon lock before restarting the daemon',
    body: 'Restarting the daemon with the lock held deadlocks: the new daemon waits on the old lock forever. Release it in shutdown() first.',
  },
  {
    kind: 'finding',
    title: 'The daemon restart takes 3 seconds on a cold cache',
    body: 'Measured on the CI runner; the cache warm-up dominates.',
  },
  {
    kind: 'decision',
    title: 'The daemon restarts through systemd, not a pid file',
    body: 'pid files went stale after crashes; systemd knows the truth.',
  },
  {
    kind: 'operational',
    title: 'Restart the daemon with: systemctl --user restart mnemo-daemon',
    body: 'Needs the user unit installed (scripts/install-unit).',
  },
  {
    kind: 'reference',
    title: 'Daemon lifecycle notes in docs/daemon.md',
    body: 'Start, stop, restart and the lock protocol are described there.',
  },
];

/**
 * What an agent received for that recall from mnemo before issue 21 (fc8e26b,
 * this journey's notes, clock and command): every note's 20 fields and body
 * as pretty-printed JSON text, 4,350 bytes, and no structured content.
 */
const RECALL_OF_FIVE_BEFORE = 4350;

const TOOLS = ['context', 'expand', 'flag_stale', 'history', 'recall', 'reinstate', 'remember', 'revoke'];

/** A scratch repository with mnemo's store seeded through the CLI; its ids by title. */
function seeded() {
  const repo = scratchRepo({ 'src/lock.rs': Array.from({ length: 30 }, (_, i) => `line ${i + 1}\n`).join('') });
  const env = { ...repo.env, MNEMO_NOW: NOW };
  const ids = {};
  const remember = ({ kind, priority, title, body }) => {
    const args = ['remember', '--kind', kind, '--title', title, '--body', body];
    if (priority) args.push('--priority', priority);
    ids[title] = Number(/#(\d+)/.exec(mnemo(args, { cwd: repo.root, env }))[1]);
  };
  DAEMON_NOTES.forEach(remember);
  remember({ kind: 'directive', ...DIRECTIVE });
  return { repo, env, ids };
}

/**
 * One Inspector CLI run against `mnemo mcp` in the repository: `args` are
 * the method's (`--method tools/list`, …). Returns {json, stdout, stderr, status}.
 */
function inspect({ repo, env }, args) {
  const server = ['MNEMO_STORE', 'MNEMO_MODEL_DIR', 'MNEMO_NOW', 'HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME'].flatMap(
    (name) => ['-e', `${name}=${env[name]}`],
  );
  const run = spawnSync(
    harnessBinary('mcp-inspector'),
    ['--cli', ...server, '--cwd', repo.root, mnemoBinary(), 'mcp', ...args],
    { cwd: repo.root, env, encoding: 'utf8', timeout: 60_000 },
  );
  let json = null;
  try {
    json = JSON.parse(run.stdout);
  } catch {}
  return { json, stdout: run.stdout, stderr: run.stderr, status: run.status };
}

/** A tools/call through the Inspector; the result, failing on a protocol error. */
function call(scratch, tool, args = {}) {
  const pairs = Object.entries(args).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  const run = inspect(scratch, ['--method', 'tools/call', '--tool-name', tool, ...(pairs.length ? ['--tool-arg', ...pairs] : [])]);
  assert.ok(run.json, `${tool}: the Inspector printed no result (status ${run.status}):\n${run.stdout}\n${run.stderr}`);
  return run.json;
}

const textOf = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text).join('');

test('the Inspector is installed as pinned', () => {
  const version = execFileSync(harnessBinary('mcp-inspector'), ['--version'], { encoding: 'utf8' }).trim();
  assert.equal(version, require('./package.json').devDependencies['@modelcontextprotocol/inspector']);
});

test('tools/list: every tool annotated, recall and context declare their output, schemas portable', (t) => {
  const scratch = seeded();
  t.after(() => fs.rmSync(scratch.repo.dir, { recursive: true, force: true }));
  const run = inspect(scratch, ['--method', 'tools/list', '--strict']);
  assert.equal(run.status, 0, `tools/list --strict failed:\n${run.stderr}`);
  assert.doesNotMatch(run.stderr, /Warning|unknown format/, 'the Inspector warned about a schema');
  const tools = run.json.tools;
  assert.deepEqual(tools.map((tool) => tool.name).sort(), TOOLS);
  for (const tool of tools) {
    for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
      assert.equal(typeof tool.annotations?.[hint], 'boolean', `${tool.name} has no ${hint}`);
    }
    assert.equal(tool.annotations.openWorldHint, false, `${tool.name} reaches outside the store`);
    const reads = ['recall', 'expand', 'history', 'context'].includes(tool.name);
    assert.equal(tool.annotations.readOnlyHint, reads, `${tool.name} readOnlyHint`);
    assert.equal(tool.annotations.destructiveHint, tool.name === 'revoke', `${tool.name} destructiveHint`);
  }
  for (const name of ['recall', 'context']) {
    const schema = tools.find((tool) => tool.name === name).outputSchema;
    assert.equal(schema?.type, 'object', `${name} declares no output schema`);
  }
});

test('every tool answers through the Inspector, as it says it does', (t) => {
  const scratch = seeded();
  t.after(() => fs.rmSync(scratch.repo.dir, { recursive: true, force: true }));
  const gotcha = scratch.ids[DAEMON_NOTES[0].title];

  const remembered = call(scratch, 'remember', {
    kind: 'gotcha',
    title: 'Lines 2-3 of src/lock.rs take the lock',
    body: 'Keep them together.',
    anchors: ['src/lock.rs:2-3'],
  });
  assert.equal(remembered.isError, false, textOf(remembered));
  const id = remembered.structuredContent.id;
  assert.equal(remembered.structuredContent.provenance, 'agent');
  assert.deepEqual(JSON.parse(textOf(remembered)), remembered.structuredContent, 'the text is the same data');

  const recalled = call(scratch, 'recall', { query: 'restarting the daemon', limit: 3 });
  const lines = textOf(recalled).trimEnd().split('\n');
  assert.match(lines[0], /^\[#\d+\] \w+\/\w+ · agent · .+ \(recorded by an agent session; verify before relying on it\)$/);
  assert.match(lines.at(-2), /^hidden: /);
  assert.match(lines.at(-1), /^ranking: hybrid/);
  assert.equal(recalled.structuredContent.results.length, 3);
  assert.ok(recalled.structuredContent.results.every((note) => note.body === undefined), 'recall returned a body');
  assert.doesNotMatch(JSON.stringify(recalled), /waits on the old lock forever/, 'recall returned a body');

  const expanded = textOf(call(scratch, 'expand', { ids: [gotcha, id] }));
  assert.match(expanded, /waits on the old lock forever/);
  assert.match(expanded, /src\/lock\.rs:2-3/);

  const flagged = call(scratch, 'flag_stale', { id: gotcha, reason: 'the lock code is being rewritten' });
  assert.equal(flagged.structuredContent.state, 'stale_flagged', textOf(flagged));
  assert.equal(call(scratch, 'reinstate', { id: gotcha }).structuredContent.state, 'active');
  const revoked = call(scratch, 'revoke', { id, reason: 'the lock moved to src/daemon.rs' });
  assert.equal(revoked.structuredContent.state, 'revoked', textOf(revoked));

  const history = textOf(call(scratch, 'history', { id: gotcha })).trimEnd().split('\n');
  assert.deepEqual(
    history.map((line) => line.split(/\s+/)[1]),
    ['created', 'stale_flagged', 'reinstated'],
    history.join('\n'),
  );

  const context = call(scratch, 'context', { query: 'restarting the daemon' });
  const bundle = textOf(context);
  assert.ok(bundle.includes(DIRECTIVE.title) && bundle.includes(DIRECTIVE.body), `no directive in full:\n${bundle}`);
  assert.equal(context.structuredContent.directives[0].body, DIRECTIVE.body);
  assert.doesNotMatch(bundle, /waits on the old lock forever/, 'context gave a relevant note its body');

  const refused = call(scratch, 'recall', { query: 'daemon', max_tokens: -1 });
  assert.equal(refused.isError, true);
  assert.match(textOf(refused), /max_tokens must be between 100 and 100000/);
});

test('resources/read: the MEMORY.md mirror; prompts/get: the session-start bundle', (t) => {
  const scratch = seeded();
  t.after(() => fs.rmSync(scratch.repo.dir, { recursive: true, force: true }));
  const listed = inspect(scratch, ['--method', 'resources/list']).json;
  const uri = `memory://${scratch.repo.root}/MEMORY.md`;
  assert.deepEqual(listed.resources.map((r) => r.uri), [uri]);
  const read = inspect(scratch, ['--method', 'resources/read', '--uri', uri]).json;
  assert.match(read.contents[0].text, /^<!-- mnemo mirror/);
  assert.ok(read.contents[0].text.includes(DAEMON_NOTES[0].title));

  const prompts = inspect(scratch, ['--method', 'prompts/list']).json;
  assert.deepEqual(prompts.prompts.map((p) => p.name), ['session-start']);
  const prompt = inspect(scratch, ['--method', 'prompts/get', '--prompt-name', 'session-start', '--prompt-args', 'task=restarting the daemon']).json;
  const text = prompt.messages[0].content.text;
  assert.equal(prompt.messages[0].role, 'user');
  assert.ok(text.includes(DIRECTIVE.title) && text.includes(DIRECTIVE.body), text);
  assert.ok(text.includes(DAEMON_NOTES[0].title), text);
  const context = textOf(call(scratch, 'context', { query: 'restarting the daemon' }));
  assert.ok(text.endsWith(context), 'the prompt is what the context tool returns');
});

test('what an agent receives for a recall of five notes, measured', (t) => {
  const scratch = seeded();
  t.after(() => fs.rmSync(scratch.repo.dir, { recursive: true, force: true }));
  const run = inspect(scratch, ['--method', 'tools/call', '--tool-name', 'recall', '--tool-arg', 'query=restarting the daemon', 'limit=5']);
  const result = run.json;
  assert.equal(result.structuredContent.results.length, 5, run.stdout);
  const text = Buffer.byteLength(textOf(result));
  const structured = Buffer.byteLength(JSON.stringify(result.structuredContent));
  t.diagnostic(
    `recall of 5 notes: text ${text} bytes + structured content ${structured} bytes = ${text + structured} ` +
      `(the Inspector printed ${Buffer.byteLength(run.stdout)}); before: ${RECALL_OF_FIVE_BEFORE} bytes of text`,
  );
  assert.ok(text < RECALL_OF_FIVE_BEFORE / 4, `the text is ${text} bytes`);
  assert.ok(structured < RECALL_OF_FIVE_BEFORE / 2, `the structured content is ${structured} bytes`);
  assert.ok(text + structured < RECALL_OF_FIVE_BEFORE * 0.6, `both together are ${text + structured} bytes`);
});
