// Runs inside the VS Code extension host (code-server): the mocha suites of
// the current session (the runner names them in session.json); the
// workbench reports the result to the runner. A failed test leaves a
// screenshot, FAILED-<session>-<test>.png.
const fs = require('node:fs');
const path = require('node:path');
const { Mocha } = require('mocha');

exports.run = function run() {
  const session = JSON.parse(fs.readFileSync(path.join(process.env.MNEMO_TEST_ARTIFACTS, 'session.json'), 'utf8'));
  const mocha = new Mocha({ ui: 'bdd', timeout: 60000, color: false, bail: false });
  for (const suite of session.suites) mocha.addFile(path.join(__dirname, 'journeys', suite));
  // A failed test leaves a screenshot of the window as it was.
  mocha.suite.afterEach(async function () {
    if (this.currentTest && this.currentTest.state === 'failed') {
      const name = `FAILED-${session.name}-${this.currentTest.title.replace(/[^A-Za-z0-9]+/g, '-').slice(0, 60)}`;
      await require('./helpers').screenshot(name).catch(() => undefined);
    }
  });
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} tests failed`)) : resolve()));
  });
};
