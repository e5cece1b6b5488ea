// Runs inside the VS Code extension host (code-server): the mocha suite in
// extension.test.js; the workbench reports the result to the runner.
const path = require('node:path');
const { Mocha } = require('mocha');

exports.run = function run() {
  const mocha = new Mocha({ ui: 'bdd', timeout: 60000, color: false });
  mocha.addFile(path.join(__dirname, 'extension.test.js'));
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} tests failed`)) : resolve()));
  });
};
