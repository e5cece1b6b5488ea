// Runs inside the VS Code extension host (code-server): the mocha suites of
// the current session (the runner names them in session.json); the
// workbench reports the result to the runner.
const fs = require('node:fs');
const path = require('node:path');
const { Mocha } = require('mocha');

exports.run = function run() {
  const session = JSON.parse(fs.readFileSync(path.join(process.env.MNEMO_TEST_ARTIFACTS, 'session.json'), 'utf8'));
  const mocha = new Mocha({ ui: 'bdd', timeout: 60000, color: false, bail: false });
  for (const suite of session.suites) mocha.addFile(path.join(__dirname, 'journeys', suite));
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} tests failed`)) : resolve()));
  });
};
