// The projects each test session opens, built before its window opens
// (Node, outside VS Code): git repositories with source files, notes
// written through the CLI as an agent would, the mirror enabled. Each
// session gets its own folder(s), so the journeys do not see each other's
// notes; they share one store, as projects on one machine do.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

function project(base, name, files = {}) {
  fs.mkdirSync(path.join(base, name, 'src'), { recursive: true });
  const root = path.join(base, name);
  fs.mkdirSync(path.join(root, '.git'), { recursive: true });
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
  return root;
}

const LOCK_RS = 'fn main() {}\nlet guard = lock();\nrestart(guard);\n';

/// Every session: its name, its suite files (test/journeys), and `setup`
/// returning what the window opens ({ folder } or { workspace }).
exports.sessions = [
  {
    name: 'basics',
    suites: ['basics.test.js'],
    setup(base, cli) {
      const root = project(base, 'basics', { 'src/lock.rs': LOCK_RS });
      cli(root, 'remember', '--kind', 'gotcha', '--priority', 'high', '--title', 'Release the lock before restarting',
        '--body', 'Restarting with the lock held deadlocks the new daemon.', '--anchor', 'src/lock.rs:2-3');
      cli(root, 'remember', '--kind', 'finding', '--title', 'Index rebuild takes 40 s on the full corpus');
      cli(root, 'remember', '--kind', 'operational', '--title', 'The nightly build needs 8 GB of RAM');
      cli(root, 'remember', '--kind', 'decision', '--title', 'Store dates in UTC');
      cli(root, 'export', '--enable');
      return { folder: root };
    },
  },
  {
    name: 'autosave',
    suites: ['autosave.test.js'],
    setup(base, cli) {
      const root = project(base, 'autosave');
      cli(root, 'remember', '--kind', 'finding', '--title', 'The parser is quadratic on nested lists');
      cli(root, 'export', '--enable');
      return { folder: root };
    },
  },
  {
    // Two windows on one folder, one after the other: a draft autosaved in
    // the first is what the second shows (a reload of the window).
    name: 'reload-1',
    suites: ['reload1.test.js'],
    setup(base, cli) {
      const root = project(base, 'reload');
      cli(root, 'remember', '--kind', 'decision', '--title', 'Ship the beta on Fridays');
      cli(root, 'export', '--enable');
      return { folder: root };
    },
  },
  {
    name: 'reload-2',
    suites: ['reload2.test.js'],
    setup(base) {
      return { folder: path.join(base, 'reload') };
    },
  },
  {
    // A project that reviews what agents write: two proposals wait.
    name: 'review',
    suites: ['review.test.js'],
    setup(base, cli) {
      const root = project(base, 'review', { '.mnemo/config.toml': '[review]\nagent = "propose"\n' });
      cli(root, 'remember', '--kind', 'gotcha', '--title', 'Release the lock before restarting',
        '--body', 'Restarting with the lock held deadlocks the new daemon.');
      cli(root, 'remember', '--kind', 'finding', '--title', 'The build is slow on Tuesdays');
      cli(root, 'remember', '--kind', 'decision', '--title', 'Store dates in UTC', '--as-human');
      cli(root, 'export', '--enable');
      return { folder: root };
    },
  },
  {
    // What agents were told (an agent session started) and what they will
    // load (a harness that reads the first 20 lines).
    name: 'ledger',
    suites: ['ledger.test.js'],
    setup(base, cli) {
      const root = project(base, 'ledger', { '.mnemo/config.toml': '[load_budget]\nharness = "Claude Code"\nlines = 20\n' });
      cli(root, 'remember', '--kind', 'directive', '--title', 'Run the tests inside the venv', '--as-human');
      for (let i = 1; i <= 12; i++) cli(root, 'remember', '--kind', 'finding', '--title', `Finding number ${i}`);
      cli(root, 'hook', 'session-start');
      cli(root, 'remember', '--kind', 'finding', '--title', 'Written after the session started');
      cli(root, 'export', '--enable');
      return { folder: root };
    },
  },
  {
    name: 'conflicts',
    suites: ['conflicts.test.js', 'unapplied.test.js'],
    setup(base, cli) {
      const root = project(base, 'conflicts');
      for (const title of ['Mine wins here', 'Theirs wins here', 'Left unapplied', 'Edited from a file']) {
        cli(root, 'remember', '--kind', 'gotcha', '--priority', 'medium', '--title', title);
      }
      cli(root, 'export', '--enable');
      return { folder: root };
    },
  },
  {
    name: 'two-windows',
    suites: ['twoWindows.test.js'],
    setup(base, cli) {
      const root = project(base, 'two-windows');
      cli(root, 'remember', '--kind', 'decision', '--title', 'Edited in the second window');
      cli(root, 'remember', '--kind', 'decision', '--title', 'Both windows edit this');
      cli(root, 'export', '--enable');
      return { folder: root };
    },
  },
  {
    name: 'anchors',
    suites: ['anchors.test.js'],
    setup(base, cli) {
      const root = project(base, 'anchors', {
        'src/retry.py': 'import time\n\n\ndef retry(call):\n    for attempt in range(3):\n        time.sleep(2 ** attempt)\n        call()\n',
      });
      cli(root, 'remember', '--kind', 'gotcha', '--priority', 'high', '--title', 'Retries back off exponentially',
        '--body', 'The third attempt waits 4 s; keep the timeout above 7 s.', '--anchor', 'src/retry.py:5-7');
      cli(root, 'export', '--enable');
      return { folder: root };
    },
  },
  {
    name: 'mirror-path',
    suites: ['mirrorPath.test.js'],
    setup(base, cli) {
      const root = project(base, 'docs-mirror', {
        '.mnemo/config.toml': '[memory_export]\nenabled = true\npath = "docs/MEMORY.md"\n',
        'docs/README.md': '# docs\n',
      });
      const id = cli(root, 'remember', '--kind', 'gotcha', '--title', 'The cache evicts on every config reload').trim();
      fs.writeFileSync(path.join(root, 'src/cache.rs'), `// see ${id} before touching the cache\nfn evict() {}\n`);
      cli(root, 'remember', '--kind', 'finding', '--title', 'Cold start takes 3 s without the cache');
      cli(root, 'export');
      return { folder: root };
    },
  },
  {
    name: 'multi-root',
    suites: ['multiRoot.test.js'],
    setup(base, cli) {
      const a = project(base, 'repo-a', { 'src/a.rs': 'fn alpha() {}\nlet a = 1;\nlet b = 2;\n' });
      const b = project(base, 'repo-b', {
        'src/b.rs': 'fn beta() {}\nlet c = 3;\nlet d = 4;\n',
        'notes/README.md': '# notes\n',
        // B keeps its mirror under another name: its client must attach to it all the same.
        '.mnemo/config.toml': '[memory_export]\nenabled = true\npath = "notes/memory.md"\n',
      });
      const idA = cli(a, 'remember', '--kind', 'gotcha', '--title', 'Alpha repo secret: the A schema is frozen', '--anchor', 'src/a.rs:2-3').trim();
      const idB = cli(b, 'remember', '--kind', 'gotcha', '--title', 'Beta repo rule: B builds with nightly', '--anchor', 'src/b.rs:2-3').trim();
      // Each repository mentions both ids; only its own may resolve.
      fs.writeFileSync(path.join(a, 'src/refs.rs'), `// ours: ${idA}, theirs: ${idB}\n`);
      fs.writeFileSync(path.join(b, 'src/refs.rs'), `// ours: ${idB}, theirs: ${idA}\n`);
      cli(a, 'export', '--enable');
      cli(b, 'export');
      const workspace = path.join(base, 'two-repos.code-workspace');
      fs.writeFileSync(workspace, JSON.stringify({ folders: [{ path: a }, { path: b }] }));
      return { workspace };
    },
  },
];

/// The CLI as the runner uses it (`cli(cwd, ...args)`).
exports.cliIn = (binary, env) => (cwd, ...args) => execFileSync(binary, args, { cwd, env, encoding: 'utf8' });
