// Runs the harness journeys: mnemo installed by its own installer into an
// unmodified Claude Code and Codex (pinned in package.json), each pointed at a
// model stand-in on loopback that records what the model would receive.
//
//   node tests/harness/run.js [path/to/mnemo] [journey…]   (journey: claude, codex, inspector)
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const binary = path.resolve(process.argv[2] || process.env.MNEMO_BINARY || 'target/debug/mnemo');
if (!fs.existsSync(binary)) {
  console.error(`no mnemo binary at ${binary}: build it (cargo build) or pass its path`);
  process.exit(1);
}
const pinned = require('./package.json').devDependencies;
for (const [pkg, version] of Object.entries(pinned)) {
  const manifest = path.join(__dirname, 'node_modules', pkg, 'package.json');
  const installed = fs.existsSync(manifest) ? require(manifest).version : null;
  if (installed !== version) {
    console.error(
      `${pkg} ${version} is pinned but ${installed ? `${installed} is` : 'nothing is'} installed in tests/harness: run scripts/install-harnesses`,
    );
    process.exit(1);
  }
}
const wanted = process.argv.slice(3);
const journeys = fs
  .readdirSync(__dirname)
  .filter((f) => f.endsWith('.test.js'))
  .filter((f) => wanted.length === 0 || wanted.includes(f.replace(/\.test\.js$/, '')))
  .map((f) => path.join(__dirname, f));
if (journeys.length === 0) {
  console.error(`no journey named ${wanted.join(', ')} in tests/harness`);
  process.exit(1);
}
const result = spawnSync(process.execPath, ['--test', '--test-concurrency=1', ...journeys], {
  stdio: 'inherit',
  env: { ...process.env, MNEMO_BINARY: binary },
});
process.exit(result.status ?? 1);
