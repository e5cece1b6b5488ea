// The browser side of the suite (Node, in the runner): what the tests in the
// extension host ask the workbench page to do, as a person would — through
// files in the artifacts folder. NAME.steps holds a JSON list of steps, run
// in order on the page; then NAME.done, or NAME.failed with the error.
// Steps: { screenshot } (a PNG kept as an artifact), { type, delay } (typed
// at the keyboard focus), { press } (a key chord, like "Control+s"),
// { wait } (ms), { answer, key } (typed into the open input box, then the
// key), { click, in } (the element showing that text among those `in`
// selects; by default the buttons of an open dialog or notification),
// { choose } (the item of an open menu, by the arrow keys and Enter),
// { read } (the texts of the elements a selector finds, as shown on screen:
// NAME.done holds one list per read step), { openWindow: folder } (a second
// window on a folder, with the extension but no tests: a second person),
// { closeWindow }. A step with `window: 2` runs in that second window.
const fs = require('node:fs');
const path = require('node:path');

async function run(windows, artifacts, step, read) {
  const page = step.window === 2 ? windows.second : windows.main;
  if (step.openWindow) {
    windows.second = await windows.open(step.openWindow);
  } else if (step.closeWindow) {
    await windows.second?.close();
    windows.second = undefined;
  } else if (!page) {
    throw new Error('no second window is open');
  } else if (step.read) {
    read.push(await page.locator(step.read).allInnerTexts());
  } else if (step.screenshot) {
    await page.screenshot({ path: path.join(artifacts, `${step.screenshot}.png`) });
    console.log(`screenshot: target/vscode-test-artifacts/${step.screenshot}.png`);
  } else if (step.type !== undefined) {
    await page.keyboard.type(step.type, { delay: step.delay ?? 20 });
  } else if (step.press) {
    await page.keyboard.press(step.press);
  } else if (step.wait) {
    await page.waitForTimeout(step.wait);
  } else if (step.answer !== undefined) {
    const input = page.locator('.quick-input-widget .quick-input-box input');
    await input.waitFor({ state: 'visible', timeout: 20000 });
    await input.fill(step.answer);
    await input.press(step.key || 'Enter');
  } else if (step.click) {
    const within = step.in || '.monaco-dialog-box .monaco-button, .notifications-toasts .monaco-button';
    const button = page.locator(within, { hasText: step.click }).first();
    await button.waitFor({ state: 'visible', timeout: 20000 });
    await button.click();
  } else if (step.choose) {
    // A menu (the code action widget, a quick pick) chosen from by the keyboard.
    const focused = page.locator('.action-widget .monaco-list-row.focused, .quick-input-list .monaco-list-row.focused');
    await focused.first().waitFor({ state: 'visible', timeout: 20000 });
    for (let i = 0; i < 20 && !(await focused.first().innerText()).includes(step.choose); i++) {
      await page.keyboard.press('ArrowDown');
      await page.waitForTimeout(50);
    }
    if (!(await focused.first().innerText()).includes(step.choose)) throw new Error(`no menu item ${step.choose}`);
    await page.keyboard.press('Enter');
  } else {
    throw new Error(`unknown step ${JSON.stringify(step)}`);
  }
}

/// Serve the requests of one window until `stop()` is called; `open(folder)`
/// opens a second window on a folder and resolves with its page.
exports.serve = function serve(page, artifacts, open) {
  const windows = { main: page, second: undefined, open };
  let busy = false;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      for (const file of fs.readdirSync(artifacts).filter((f) => f.endsWith('.steps'))) {
        const at = (suffix) => path.join(artifacts, file.replace(/\.steps$/, suffix));
        const steps = JSON.parse(fs.readFileSync(at('.steps'), 'utf8'));
        fs.rmSync(at('.steps'));
        try {
          const read = [];
          for (const step of steps) await run(windows, artifacts, step, read);
          fs.writeFileSync(at('.done'), JSON.stringify(read));
        } catch (error) {
          fs.writeFileSync(at('.failed'), String(error));
        }
      }
    } finally {
      busy = false;
    }
  }, 100);
  return async () => {
    clearInterval(timer);
    await windows.second?.close();
  };
};
