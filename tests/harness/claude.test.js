// The Claude Code journey: the real, unmodified Claude Code CLI (pinned in
// package.json) runs `claude -p` in a scratch repository where mnemo was
// installed by its own installer (`mnemo hook install --claude-code`), its
// model API replaced by fake-anthropic.js on loopback, which records every
// request and answers from a script. The assertions are on what the model
// received, where Claude Code 2.1.197 puts each hook's additional context:
//
// - SessionStart and UserPromptSubmit: one `role: "system"` message right
//   after the user's prompt, `SessionStart hook additional context: …`
//   then `UserPromptSubmit hook additional context: …` (after /compact, a
//   system message after the compaction summary);
// - PreToolUse: a `<system-reminder>PreToolUse:Edit hook additional
//   context: …</system-reminder>` text block beside that tool's tool_result,
//   i.e. in the request after the tool ran: the model reads it once the edit
//   is made. Only a denied call's reason is read before it, so mnemo's
//   pre-edit hook holds (denies) the first edit of a file with notes once,
//   the notes as the reason, and the model makes the edit again;
// - an empty additionalContext adds nothing.
//
// A project's .mcp.json server is used by `claude -p` without approval;
// `claude mcp list` calls it pending until it is approved (`--approve-mcp`).
//
//   node tests/harness/run.js target/debug/mnemo claude
//
// HARNESS_DUMP=DIR keeps every run's recorded requests as DIR/<run>.json.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const { mnemoBinary, harnessBinary, scratchRepo, mnemo, runHarness } = require('./lib');
const { fakeAnthropic, toolNames, parts, hookContexts } = require('./fake-anthropic');

const RUN_TIMEOUT_MS = 120_000;
const TEST_TIMEOUT_MS = 6 * RUN_TIMEOUT_MS;

/** The tools mnemo's MCP server offers, as Claude Code names them. */
const MNEMO_TOOLS = ['context', 'expand', 'flag_stale', 'history', 'recall', 'reinstate', 'remember', 'revoke'].map(
  (name) => `mcp__mnemo__${name}`,
);

const DB_PY = 'import sqlite3\n\n\ndef connect(path):\n    return sqlite3.connect(path)\n';

const NOTEBOOK = JSON.stringify({
  cells: [{ cell_type: 'code', execution_count: null, id: 'c1', metadata: {}, outputs: [], source: ['import db\n'] }],
  metadata: {},
  nbformat: 4,
  nbformat_minor: 5,
});

const DIRECTIVE = 'Run the test suite with pytest -q before every commit';
const GOTCHA = {
  title: 'connect() must pass a busy timeout to sqlite3',
  body: "Without timeout= sqlite3 raises 'database is locked' as soon as a second writer holds the lock; pass timeout=5 or more.",
};
const UNRELATED = [
  { kind: 'finding', title: 'The CSS build uses tailwind v3', body: 'Moving to v4 needs the new config format.' },
  { kind: 'reference', title: 'Release checklist lives in docs/RELEASING.md', body: 'Tag, then publish the wheel.' },
];

/** PATH without any directory that holds a `mnemo`: the installed hooks must find mnemo by themselves. */
function pathWithoutMnemo() {
  return (process.env.PATH || '')
    .split(path.delimiter)
    .filter((dir) => dir && !fs.existsSync(path.join(dir, 'mnemo')))
    .join(path.delimiter);
}

/**
 * A scratch repository (src/db.py, a notebook) whose store holds a directive,
 * a gotcha anchored to src/db.py, unrelated notes, and `more` notes
 * ({kind, title, body}). Returns scratchRepo's answer plus `run(args)` (mnemo in it).
 */
function journeyRepo({ files = {}, more = [] } = {}) {
  const repo = scratchRepo({ 'src/db.py': DB_PY, 'analysis.ipynb': NOTEBOOK, ...files });
  repo.env.PATH = pathWithoutMnemo();
  repo.run = (args) => mnemo(args, { cwd: repo.root, env: repo.env });
  repo.run(['remember', '--as-human', '--kind', 'directive', '--title', DIRECTIVE]);
  const gotcha = ['--kind', 'gotcha', '--title', GOTCHA.title, '--body', GOTCHA.body, '--anchor', 'src/db.py:4-5'];
  repo.run(['remember', '--as-human', ...gotcha]);
  for (const note of [...UNRELATED, ...more]) {
    repo.run(['remember', '--as-human', '--kind', note.kind, '--title', note.title, '--body', note.body]);
  }
  return repo;
}

/** Remove a journey's scratch directory (only reached when the journey passed: a failure keeps it). */
function forget(repo) {
  fs.rmSync(repo.dir, { recursive: true, force: true });
}

/** Claude Code's environment: the scratch HOME, the stand-in as its API, nothing that phones home. */
function claudeEnv(repo, api) {
  return {
    ...repo.env,
    ANTHROPIC_BASE_URL: api.url,
    ANTHROPIC_API_KEY: 'sk-ant-harness-not-a-key',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
}

/**
 * `claude -p PROMPT` in the repository against a stand-in answering `script`;
 * the child (and its process group: hooks, the MCP server) is killed after
 * RUN_TIMEOUT_MS. Resolves to {api, code, stdout, stderr, result} (result:
 * the parsed `--output-format json` line, or null); the stand-in is closed.
 */
async function runClaude(repo, name, prompt, script, extraArgs = []) {
  const claude = harnessBinary('claude');
  const api = await fakeAnthropic(script);
  const args = ['-p', prompt, '--output-format', 'json', '--permission-mode', 'acceptEdits', ...extraArgs];
  const { code: status, signal, stdout, stderr, timedOut } = await runHarness(claude, args, {
    cwd: repo.root,
    env: claudeEnv(repo, api),
    timeoutMs: RUN_TIMEOUT_MS,
  });
  const code = status ?? signal;
  await api.close();
  if (process.env.HARNESS_DUMP) {
    fs.mkdirSync(process.env.HARNESS_DUMP, { recursive: true });
    fs.writeFileSync(path.join(process.env.HARNESS_DUMP, `${name}.json`), JSON.stringify(api.requests, null, 1));
  }
  let result = null;
  try {
    result = JSON.parse(stdout.trim().split('\n').pop());
  } catch {}
  const run = { name, dir: repo.dir, api, code, stdout, stderr, result };
  explain(run, () => {
    assert.ok(!timedOut, `claude did not finish within ${RUN_TIMEOUT_MS / 1000} s and was killed`);
    assert.equal(code, 0, `claude exited with ${code}`);
    assert.ok(result && result.is_error === false, 'claude -p did not report success');
  });
  return run;
}

/** Run `check`; when it fails, the failure carries what the model received and what claude printed. */
function explain(run, check) {
  try {
    check();
  } catch (e) {
    e.message +=
      `\n\n--- ${run.name} (scratch directory ${run.dir}, kept): claude exited ${run.code}; stdout: ${run.stdout.slice(0, 2000)}` +
      `\n--- stderr: ${run.stderr.slice(-4000)}` +
      `\n--- requests the model stand-in received:\n${run.api.summary()}`;
    throw e;
  }
}

/** A turn of the stand-in's script: one tool call, or one text. */
const toolUse = (name, input) => [{ type: 'tool_use', name, input }];
const say = (text) => [{ type: 'text', text }];

const JOURNEY = { timeout: TEST_TIMEOUT_MS };

/** The recorded agent request that the stand-in answered with `toolName` (the `nth` such, from 0). */
function answeredWith(run, toolName, nth = 0) {
  const found = run.api
    .agentTurns()
    .filter((r) => r.answer && r.answer.content.some((b) => b.type === 'tool_use' && b.name === toolName));
  assert.ok(found.length > nth, `the model was never asked for turn ${nth + 1} answered with ${toolName}`);
  return found[nth];
}

/** The tool_use id of the `toolName` call the stand-in answered `request` with. */
function toolUseId(request, toolName) {
  return request.answer.content.find((b) => b.type === 'tool_use' && b.name === toolName).id;
}

/** The last agent request: it carries the whole conversation. */
function lastTurn(run) {
  const turns = run.api.agentTurns();
  assert.ok(turns.length > 0, 'Claude Code never asked the model for a turn');
  return turns[turns.length - 1];
}

/** The index in parts(request) of the user's prompt. */
function promptPart(request, prompt) {
  const index = parts(request).findIndex((p) => p.role === 'user' && p.type === 'text' && p.text.includes(prompt));
  assert.ok(index >= 0, 'the prompt is not in the request');
  return index;
}

/** The hook contexts of a request for `event` (and `tool`). */
function contextsOf(request, event, tool) {
  return hookContexts(request).filter((c) => c.event === event && (tool === undefined || c.tool === tool));
}

/** Whether any text of the request's conversation contains `text`. */
function conversationHas(request, text) {
  return parts(request).some((p) => p.text.includes(text));
}

/** The hooks in .claude/settings.json: {event: [{matcher, command}]}. */
function installedHooks(repo) {
  const settings = JSON.parse(fs.readFileSync(path.join(repo.root, '.claude', 'settings.json'), 'utf8'));
  const out = {};
  for (const [event, entries] of Object.entries(settings.hooks || {})) {
    out[event] = entries.flatMap((entry) => entry.hooks.map((h) => ({ matcher: entry.matcher, command: h.command })));
  }
  return out;
}

/** Run an installed hook command (as Claude Code does: a shell line, the payload on stdin) and return its stdout. */
function runHook(repo, command, payload) {
  return execFileSync('/bin/sh', ['-c', command], {
    cwd: repo.root,
    env: repo.env,
    input: JSON.stringify(payload),
    encoding: 'utf8',
  });
}

/** `claude mcp list` in the repository with the scratch HOME. */
function mcpList(repo) {
  return execFileSync(harnessBinary('claude'), ['mcp', 'list'], {
    cwd: repo.root,
    env: claudeEnv(repo, { url: 'http://127.0.0.1:9' }),
    encoding: 'utf8',
    timeout: RUN_TIMEOUT_MS,
  });
}

test('the harness is installed', () => {
  // Fails (never skips) when scripts/install-harnesses was not run.
  assert.ok(fs.existsSync(harnessBinary('claude')));
  assert.ok(fs.existsSync(mnemoBinary()));
});

test('a prompt about the database: directives at session start, the gotcha with its body before the edit, mnemo tools offered', JOURNEY, async () => {
  const repo = journeyRepo();
  const installed = repo.run(['hook', 'install', '--claude-code', '--absolute', '--approve-mcp']);
  assert.match(installed, /Claude Code: 4 hooks added/);

  // The installer's own files, calling this binary by its absolute path with the store named.
  const hooks = installedHooks(repo);
  const binary = fs.realpathSync(mnemoBinary());
  assert.deepEqual(hooks.PreToolUse.map((h) => h.matcher), ['Edit|Write|NotebookEdit']);
  for (const entries of Object.values(hooks)) {
    for (const { command } of entries) {
      assert.ok(command.startsWith(`${binary} `), `hook command ${command} does not call ${binary}`);
    }
  }
  const mcp = JSON.parse(fs.readFileSync(path.join(repo.root, '.mcp.json'), 'utf8'));
  assert.equal(mcp.mcpServers.mnemo.command, binary);
  const local = JSON.parse(fs.readFileSync(path.join(repo.root, '.claude', 'settings.local.json'), 'utf8'));
  assert.deepEqual(local.enabledMcpjsonServers, ['mnemo']);
  assert.match(mcpList(repo), /mnemo: .*✔ Connected/);

  const prompt = 'The database connection in src/db.py fails when two workers write at once; make connect() wait for the lock.';
  const dbPath = path.join(repo.root, 'src', 'db.py');
  const run = await runClaude(repo, 'database-prompt', prompt, [
    toolUse('Read', { file_path: dbPath }),
    toolUse('Edit', { file_path: dbPath, old_string: 'sqlite3.connect(path)', new_string: 'sqlite3.connect(path, timeout=5)' }),
    say('connect() now waits up to five seconds for the lock.'),
  ]);

  explain(run, () => {
    assert.match(fs.readFileSync(dbPath, 'utf8'), /sqlite3\.connect\(path, timeout=5\)/, 'the Edit did not run');
    const first = run.api.agentTurns()[0];

    // The MCP server's tools, offered on every turn.
    for (const request of run.api.agentTurns()) {
      const offered = toolNames(request).filter((name) => name.startsWith('mcp__mnemo__'));
      assert.deepEqual([...offered].sort(), MNEMO_TOOLS, 'the mnemo MCP tools offered');
    }

    // Session start: the directive, after the prompt (a system message of its own).
    const prompted = promptPart(first, prompt);
    const [start, ...moreStarts] = contextsOf(first, 'SessionStart');
    assert.ok(start, 'no SessionStart hook context reached the model');
    assert.equal(moreStarts.length, 0, 'session start was delivered twice');
    assert.ok(start.part > prompted, 'the session-start context comes after the prompt in 2.1.197');
    assert.equal(start.role, 'system');
    assert.match(start.text, /^Standing directives for this project \(mnemo\):/);
    assert.ok(start.text.includes(DIRECTIVE), 'the directive is not in the session-start context');

    // The user's prompt: the gotcha relevant to it, with its body, after the prompt.
    const [recalled] = contextsOf(first, 'UserPromptSubmit');
    assert.ok(recalled, 'no UserPromptSubmit hook context reached the model');
    assert.ok(recalled.part > prompted);
    assert.ok(recalled.text.includes(GOTCHA.title), 'prompt recall lacks the gotcha');
    assert.ok(recalled.text.includes(GOTCHA.body), 'prompt recall lacks the gotcha body');
    assert.ok(!recalled.text.includes(DIRECTIVE), 'prompt recall repeated the directive');

    // The gotcha's body was in what the model had when it chose the Edit.
    const editing = answeredWith(run, 'Edit');
    const told = hookContexts(editing).some((c) => c.text.includes(GOTCHA.body));
    assert.ok(told, 'the gotcha body did not reach the model before the Edit');

    // Delivered in full once: the pre-edit hook has nothing to add for it.
    const last = lastTurn(run);
    assert.deepEqual(contextsOf(last, 'PreToolUse'), [], 'pre-edit repeated a note already delivered in full');
    const times = parts(last).filter((p) => p.text.includes(GOTCHA.body)).length;
    assert.equal(times, 1, 'the gotcha body reached the model more than once');
  });

  // The same session resumed with a prompt nothing new applies to: nothing
  // beyond what session start repeats.
  const thanks = 'Thanks, that is all for now.';
  const resumed = await runClaude(repo, 'database-prompt-resumed', thanks, [say('You are welcome.')], [
    '--resume',
    run.result.session_id,
  ]);
  explain(resumed, () => {
    const last = lastTurn(resumed);
    const after = promptPart(last, thanks);
    const added = hookContexts(last).filter((c) => c.part > after && c.event !== 'SessionStart');
    assert.deepEqual(added, [], 'a hook added context to the resumed session though nothing new applies');
  });
  forget(repo);
});

test('pre-edit: a gotcha only listed at session start holds the first Edit, Write and NotebookEdit once, with its body', JOURNEY, async () => {
  const settings = {
    kind: 'gotcha',
    title: 'src/settings.py must never hold credentials',
    body: 'Read them from the environment (DB_PASSWORD); the file is committed.',
  };
  const notebook = {
    kind: 'operational',
    title: 'Clear the outputs of analysis.ipynb before committing',
    body: 'Run jupyter nbconvert --clear-output --inplace analysis.ipynb.',
  };
  const repo = journeyRepo({
    files: { '.mnemo/config.toml': '[hooks.triggers]\ngotcha = ["pre-edit"]\noperational = ["pre-edit"]\n' },
    more: [settings, notebook],
  });
  repo.run(['hook', 'install', '--claude-code', '--absolute', '--approve-mcp']);
  const db = path.join(repo.root, 'src', 'db.py');
  const nb = path.join(repo.root, 'analysis.ipynb');
  const prompt = 'Tidy up the code base a little.';
  const run = await runClaude(repo, 'pre-edit', prompt, [
    toolUse('Read', { file_path: db }),
    // Each first edit of a file with notes is held once, the notes as the reason; the model makes it again.
    toolUse('Edit', { file_path: db, old_string: 'sqlite3.connect(path)', new_string: 'sqlite3.connect(path, timeout=5)' }),
    toolUse('Edit', { file_path: db, old_string: 'sqlite3.connect(path)', new_string: 'sqlite3.connect(path, timeout=5)' }),
    toolUse('Edit', { file_path: db, old_string: 'import sqlite3\n', new_string: 'import sqlite3  # stdlib\n' }),
    toolUse('Write', { file_path: path.join(repo.root, 'src', 'settings.py'), content: 'import os\n' }),
    toolUse('Write', { file_path: path.join(repo.root, 'src', 'settings.py'), content: 'import os\n' }),
    toolUse('Read', { file_path: nb }),
    toolUse('NotebookEdit', { notebook_path: nb, cell_id: 'c1', new_source: 'import db\nprint(db)\n' }),
    toolUse('NotebookEdit', { notebook_path: nb, cell_id: 'c1', new_source: 'import db\nprint(db)\n' }),
    say('Tidied.'),
  ]);

  explain(run, () => {
    assert.match(fs.readFileSync(db, 'utf8'), /import sqlite3  # stdlib\n[\s\S]*timeout=5/, 'the Edits did not run');
    assert.ok(fs.existsSync(path.join(repo.root, 'src', 'settings.py')), 'the Write did not run');
    assert.match(fs.readFileSync(nb, 'utf8'), /print\(db\)/, 'the NotebookEdit did not run');

    const first = run.api.agentTurns()[0];
    const [start] = contextsOf(first, 'SessionStart');
    assert.ok(start && start.text.includes(GOTCHA.title), 'session start did not list the gotcha');
    assert.ok(!start.text.includes(GOTCHA.body), 'session start delivered the gotcha body (its bundle is pre-edit only)');

    const last = lastTurn(run);
    const resultOf = (toolName, nth) => {
      const id = toolUseId(answeredWith(run, toolName, nth), toolName);
      const result = parts(last).find((p) => p.type === 'tool_result' && p.toolUseId === id);
      assert.ok(result, `no tool_result for the ${toolName} call ${id}`);
      return result;
    };
    const held = (toolName, nth) => {
      const result = resultOf(toolName, nth);
      assert.ok(result.isError, `the ${toolName} call was not held: ${result.text}`);
      assert.match(result.text, /mnemo held this edit once/);
      return result.text;
    };
    const made = (toolName, nth) => {
      const result = resultOf(toolName, nth);
      assert.ok(!result.isError, `the ${toolName} call failed or was held again: ${result.text}`);
      assert.deepEqual(hookContexts(last).filter((c) => c.message === result.message), [], `mnemo context came with the ${toolName}`);
    };

    // Before the first edit of src/db.py: its anchored gotcha, with its body, nothing else — before the edit is made.
    const atEdit = held('Edit', 0);
    assert.match(atEdit, /Before editing src\/db\.py, the project memory says \(mnemo\):/);
    assert.ok(atEdit.includes(GOTCHA.title), 'the gotcha did not come with the Edit');
    assert.ok(atEdit.includes(GOTCHA.body), 'the gotcha body did not come with the Edit');
    for (const other of [settings, notebook]) {
      assert.ok(!atEdit.includes(other.title), `"${other.title}" came with the Edit of src/db.py`);
    }
    // The same edit again, and another edit of the same file: nothing new to say.
    made('Edit', 1);
    made('Edit', 2);

    // Write of a file a gotcha names, NotebookEdit of a notebook an operational note names.
    assert.ok(held('Write', 0).includes(settings.body), 'the Write did not bring the gotcha naming src/settings.py');
    made('Write', 1);
    assert.ok(held('NotebookEdit', 0).includes(notebook.body), 'the NotebookEdit did not bring the note naming analysis.ipynb');
    made('NotebookEdit', 1);
    const times = parts(last).filter((p) => p.text.includes(GOTCHA.body)).length;
    assert.equal(times, 1, 'the gotcha body reached the model more than once');
  });

  // A hook with nothing to add prints nothing at all (Claude Code ignores an
  // empty additionalContext, so this is asked of the installed command itself).
  const sessionId = run.result.session_id;
  const preEdit = installedHooks(repo).PreToolUse[0].command;
  const payload = (file) => ({
    session_id: sessionId,
    transcript_path: path.join(repo.home, '.claude', 'projects', 'x', `${sessionId}.jsonl`),
    cwd: repo.root,
    permission_mode: 'acceptEdits',
    hook_event_name: 'PreToolUse',
    tool_name: 'Edit',
    tool_input: { file_path: file, old_string: 'a', new_string: 'b', replace_all: false },
    tool_use_id: 'toolu_x',
  });
  assert.equal(runHook(repo, preEdit, payload(db)), '', 'pre-edit printed something for a note already delivered');
  const readme = payload(path.join(repo.root, 'README.md'));
  assert.equal(runHook(repo, preEdit, readme), '', 'pre-edit printed something for a file no note concerns');
  forget(repo);
});

test('a fresh session with a prompt no note is about: nothing from mnemo beyond session start', JOURNEY, async () => {
  const repo = journeyRepo();
  repo.run(['hook', 'install', '--claude-code', '--absolute', '--approve-mcp']);
  const prompt = 'What does the word "ephemeral" mean?';
  const run = await runClaude(repo, 'unrelated-prompt', prompt, [say('Short-lived.')]);
  explain(run, () => {
    const events = hookContexts(lastTurn(run)).map((c) => c.event);
    const model = fs.existsSync(repo.env.MNEMO_MODEL_DIR) ? 'the embedding model' : 'no model';
    assert.deepEqual(events, ['SessionStart'], `hooks other than session start added context (recall with ${model})`);
    for (const note of [GOTCHA, ...UNRELATED]) {
      assert.ok(!conversationHas(lastTurn(run), note.body), `the body of "${note.title}" reached the model`);
    }
  });
  forget(repo);
});

test('after /compact the directives are delivered again, after the compaction summary', JOURNEY, async () => {
  const repo = journeyRepo();
  repo.run(['hook', 'install', '--claude-code', '--absolute', '--approve-mcp']);
  const db = path.join(repo.root, 'src', 'db.py');
  const read = toolUse('Read', { file_path: db });
  const first = await runClaude(repo, 'before-compaction', 'Show me src/db.py.', [read, read, read, say('Shown.')]);
  const session = first.result.session_id;
  // `/compact` asks the model for a summary (the stand-in answers "Done."), then SessionStart fires with source "compact".
  const compacted = await runClaude(repo, 'compaction', '/compact', [], ['--resume', session]);
  const after = await runClaude(repo, 'after-compaction', 'Carry on.', [say('Carrying on.')], ['--resume', session]);
  explain(compacted, () => assert.ok(compacted.api.agentTurns().length > 0, '/compact did not ask the model for a summary'));
  explain(after, () => {
    const last = lastTurn(after);
    const summary = parts(last).findIndex((p) => p.text.includes('This session is being continued from a previous conversation'));
    assert.ok(summary >= 0, 'the conversation was not compacted');
    const again = contextsOf(last, 'SessionStart').filter((c) => c.part > summary);
    assert.ok(again.some((c) => c.text.includes(DIRECTIVE)), 'the directive was not delivered again after compaction');
  });
  forget(repo);
});

test('MCP approval: claude -p uses a project server unapproved; --approve-mcp approves it for claude mcp list', JOURNEY, async () => {
  const repo = journeyRepo();
  repo.run(['hook', 'install', '--claude-code', '--absolute']);
  const settingsBefore = fs.readFileSync(path.join(repo.root, '.claude', 'settings.json'), 'utf8');
  assert.ok(!fs.existsSync(path.join(repo.root, '.claude', 'settings.local.json')));
  assert.match(mcpList(repo), /mnemo: .*Pending approval/);

  // Claude Code 2.1.197 starts a project's .mcp.json server in print mode without approval.
  const run = await runClaude(repo, 'mcp-unapproved', 'hello', [say('Hello.')]);
  explain(run, () => {
    const offered = toolNames(lastTurn(run)).filter((name) => name.startsWith('mcp__mnemo__'));
    assert.deepEqual([...offered].sort(), MNEMO_TOOLS);
  });

  // Installing again with --approve-mcp: the hooks unchanged, the approval in settings.local.json.
  const again = repo.run(['hook', 'install', '--claude-code', '--absolute', '--approve-mcp']);
  assert.match(again, /0 hooks added, 0 updated/);
  assert.equal(fs.readFileSync(path.join(repo.root, '.claude', 'settings.json'), 'utf8'), settingsBefore);
  const local = JSON.parse(fs.readFileSync(path.join(repo.root, '.claude', 'settings.local.json'), 'utf8'));
  assert.deepEqual(local.enabledMcpjsonServers, ['mnemo']);
  assert.match(mcpList(repo), /mnemo: .*✔ Connected/);
  forget(repo);
});
