// Finding the mnemo binary: the `mnemo.server.path` setting, then a binary
// bundled in the extension (`bin/mnemo`), then `mnemo` on PATH; each checked
// with `mnemo --version`. When none works, the person is told how to fix it.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

export interface Server {
  command: string;
  version: string;
}

function version(command: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(command, ['--version'], { timeout: 10_000 }, (error, stdout) => {
      resolve(error ? undefined : stdout.trim());
    });
  });
}

export async function findServer(context: vscode.ExtensionContext): Promise<Server | undefined> {
  const configured = vscode.workspace.getConfiguration('mnemo').get<string>('server.path')?.trim();
  const bundled = path.join(context.extensionPath, 'bin', 'mnemo');
  const candidates = [
    ...(configured ? [configured] : []),
    ...(fs.existsSync(bundled) ? [bundled] : []),
    'mnemo',
  ];
  for (const command of candidates) {
    const found = await version(command);
    if (found) {
      return { command, version: found };
    }
  }
  const fix = 'Install it with scripts/setup, or set "mnemo.server.path" to the mnemo binary.';
  const choice = await vscode.window.showErrorMessage(
    `mnemo: no working mnemo binary (tried ${candidates.join(', ')}). ${fix}`,
    'Open Settings',
  );
  if (choice === 'Open Settings') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'mnemo.server.path');
  }
  return undefined;
}

/// Run the CLI in a workspace folder; resolves with stdout, rejects with stderr.
export function runCli(server: Server, args: string[], cwd: string | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const scope = cwd ? vscode.Uri.file(cwd) : undefined;
    execFile(server.command, args, { cwd, timeout: 60_000, env: cliEnv(scope) }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(stderr.trim() || error.message));
      } else {
        resolve(stdout);
      }
    });
  });
}

/// The settings the CLI honours too (the store, the model), as its
/// environment; `scope` is the workspace folder whose settings apply.
export function cliEnv(scope?: vscode.Uri): NodeJS.ProcessEnv {
  const config = vscode.workspace.getConfiguration('mnemo', scope);
  const env = { ...process.env };
  const store = config.get<string>('storePath');
  if (store) {
    env.MNEMO_STORE = store;
  }
  const model = config.get<string>('modelDir');
  if (model) {
    env.MNEMO_MODEL_DIR = model;
  }
  return env;
}
