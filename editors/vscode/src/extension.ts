// mnemo for VS Code: a thin client of `mnemo lsp` (vscode-languageclient).
// It attaches to memory documents (MEMORY.md and `memory:` checkouts) and to
// the workspace's source files, never to other markdown; the `memory:`
// file system checks the memory in on save.
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';
import { askReason, registerCommands, workspaceRoot } from './commands';
import { MemoryFileSystem } from './memoryFs';
import { cliEnv, findServer } from './server';
import { Status } from './status';

/// Languages whose files may hold `#id` references and anchors (markdown is
/// left alone except MEMORY.md, so mnemo does not fight markdown servers).
const SOURCE_LANGUAGES = [
  'rust', 'typescript', 'typescriptreact', 'javascript', 'javascriptreact', 'python', 'go', 'java', 'kotlin',
  'c', 'cpp', 'csharp', 'ruby', 'php', 'swift', 'scala', 'lua', 'shellscript', 'toml', 'yaml', 'json', 'plaintext',
  'git-commit', 'sql', 'html', 'css', 'dockerfile', 'makefile',
];

let client: LanguageClient | undefined;

/// The arguments of a server command once the person gave what it needs (a
/// reason, a confirmation); undefined when they declined.
async function completeArguments(command: string, args: any[]): Promise<any[] | undefined> {
  if ((command === 'mnemo.revoke' || command === 'mnemo.flagStale') && args.length < 2) {
    const reason = await askReason(command, Number(args[0]));
    return reason ? [args[0], reason] : undefined;
  }
  if (command === 'mnemo.forget' && args.length < 2) {
    const sure = await vscode.window.showWarningMessage(
      `Forget #${args[0]} and its whole history for good?`,
      { modal: true },
      'Forget',
    );
    return sure === 'Forget' ? [args[0], 'confirm'] : undefined;
  }
  return args;
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const server = await findServer(context);
  if (!server) {
    return;
  }
  const settings = vscode.workspace.getConfiguration('mnemo');
  const initializationOptions = {
    storePath: settings.get<string>('storePath') || undefined,
    modelDir: settings.get<string>('modelDir') || undefined,
    debounceMs: settings.get<number>('debounceMs'),
  };
  const serverOptions: ServerOptions = {
    command: server.command,
    args: ['lsp'],
    options: { cwd: workspaceRoot(), env: cliEnv() },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'memory' },
      { scheme: 'file', pattern: '**/MEMORY.md' },
      ...SOURCE_LANGUAGES.map((language) => ({ scheme: 'file', language })),
    ],
    initializationOptions,
    synchronize: { configurationSection: 'mnemo' },
    middleware: {
      // Commands that need a reason or a confirmation ask the person first.
      executeCommand: async (command, args, next) => {
        const completed = await completeArguments(command, args);
        if (!completed) {
          return undefined; // the person declined
        }
        const result = await next(command, completed);
        status.refresh();
        return result;
      },
    },
  };
  client = new LanguageClient('mnemo', 'mnemo', serverOptions, clientOptions);
  const status = new Status(server, workspaceRoot());
  const memory = new MemoryFileSystem(
    async () => {
      await client!.start();
      return client!;
    },
    () => void status.refresh(),
  );
  context.subscriptions.push(
    vscode.workspace.registerFileSystemProvider('memory', memory, { isCaseSensitive: true }),
  );
  context.subscriptions.push(status);
  registerCommands(context, server, async () => {
    await client!.start();
    return client!;
  }, () => void status.refresh());
  await client.start();
  context.subscriptions.push(
    client.onNotification('memory/didChange', (params: { uri: string; text: string }) => {
      const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === params.uri);
      if (!open || !open.isDirty) {
        memory.refreshed(params.uri, params.text);
      }
    }),
  );
  void status.refresh();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
