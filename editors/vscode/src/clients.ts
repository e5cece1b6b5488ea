// One language server per workspace folder (the server serves one workspace
// per process): each LanguageClient is locked to its folder, started there,
// and its document selector takes only that folder's files and that
// folder's memory document (and its mirror, wherever it is configured), so
// nothing of one repository reaches the other's server. Folders added or
// removed later get or lose their client.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, Middleware, ServerOptions } from 'vscode-languageclient/node';
import { cliEnv, Server } from './server';
import { isMemory, workspaceOf } from './uris';

/// Languages whose files may hold `#id` references and anchors (markdown is
/// left alone except MEMORY.md, so mnemo does not fight markdown servers).
const SOURCE_LANGUAGES = [
  'rust', 'typescript', 'typescriptreact', 'javascript', 'javascriptreact', 'python', 'go', 'java', 'kotlin',
  'c', 'cpp', 'csharp', 'ruby', 'php', 'swift', 'scala', 'lua', 'shellscript', 'toml', 'yaml', 'json', 'plaintext',
  'git-commit', 'sql', 'html', 'css', 'dockerfile', 'makefile',
];

export interface MemoryDidChange {
  uri: string;
  text: string;
  epoch: number;
}

/// A client without its own `workspace/executeCommand` registration: the
/// commands are registered once for all folders (serverCommands.ts), since
/// a second client registering the same names would fail to start.
class FolderClient extends LanguageClient {
  override registerFeature(feature: Parameters<LanguageClient['registerFeature']>[0]): void {
    const method = (feature as { registrationType?: { method?: string } }).registrationType?.method;
    if (method !== 'workspace/executeCommand') {
      super.registerFeature(feature);
    }
  }
}

export class Clients implements vscode.Disposable {
  private readonly clients = new Map<string, Promise<LanguageClient>>();
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly server: Server,
    private readonly middleware: Middleware,
    private readonly onMemoryDidChange: (params: MemoryDidChange) => void,
    private readonly onStarted: (client: LanguageClient) => void,
  ) {
    this.subscriptions.push(
      vscode.workspace.onDidChangeWorkspaceFolders(async (event) => {
        for (const folder of event.removed) {
          const client = this.clients.get(folder.uri.toString());
          this.clients.delete(folder.uri.toString());
          await (await client?.catch(() => undefined))?.stop();
        }
        for (const folder of event.added) {
          void this.forFolder(folder);
        }
      }),
    );
  }

  /// Start a client for every folder of the workspace; a folder whose
  /// server fails to start is reported and does not keep the others from working.
  async startAll(): Promise<void> {
    await Promise.all(
      (vscode.workspace.workspaceFolders ?? []).map((folder) =>
        this.forFolder(folder).catch((error) => {
          void vscode.window.showErrorMessage(`mnemo: the language server for ${folder.name} did not start: ${(error as Error).message}`);
        }),
      ),
    );
  }

  /// The folder's client, started.
  forFolder(folder: vscode.WorkspaceFolder): Promise<LanguageClient> {
    const key = folder.uri.toString();
    let started = this.clients.get(key);
    if (!started) {
      started = this.start(folder);
      this.clients.set(key, started);
      started.catch(() => this.clients.delete(key)); // tried again next time
    }
    return started;
  }

  private async start(folder: vscode.WorkspaceFolder): Promise<LanguageClient> {
    let client = this.create(folder);
    await client.start();
    // The mirror as the folder configures it: a file not named MEMORY.md
    // needs its own filter, so its client is made again with it.
    const mirror = await client
      .sendRequest<{ path: string | null }>('memory/mirror', { workspace: folder.uri.fsPath })
      .catch(() => undefined);
    if (mirror?.path && path.basename(mirror.path) !== 'MEMORY.md') {
      await client.stop();
      client = this.create(folder, mirror.path);
      await client.start();
    }
    this.onStarted(client);
    return client;
  }

  /// The workspace folder a document belongs to (a checkout: by its path).
  static folderOf(uri: vscode.Uri): vscode.WorkspaceFolder | undefined {
    if (isMemory(uri)) {
      return vscode.workspace.getWorkspaceFolder(vscode.Uri.file(workspaceOf(uri)));
    }
    return vscode.workspace.getWorkspaceFolder(uri);
  }

  /// The client of the folder a document belongs to.
  async forUri(uri: vscode.Uri): Promise<LanguageClient> {
    const folder = Clients.folderOf(uri);
    if (!folder) {
      throw new Error(`${uri.fsPath} is in no workspace folder`);
    }
    return this.forFolder(folder);
  }

  private create(folder: vscode.WorkspaceFolder, mirror?: string): LanguageClient {
    const settings = vscode.workspace.getConfiguration('mnemo', folder.uri);
    const serverOptions: ServerOptions = {
      command: this.server.command,
      args: ['lsp'],
      options: { cwd: folder.uri.fsPath, env: cliEnv(folder.uri) },
    };
    const inFolder = (pattern: string) => ({ baseUri: folder.uri.toString(), pattern });
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'memory', pattern: inFolder('MEMORY.md') },
        { scheme: 'file', pattern: inFolder('**/MEMORY.md') },
        ...(mirror ? [{ scheme: 'file', pattern: inFolder(path.relative(folder.uri.fsPath, mirror)) }] : []),
        ...SOURCE_LANGUAGES.map((language) => ({ scheme: 'file', language, pattern: inFolder('**/*') })),
      ],
      workspaceFolder: folder,
      initializationOptions: {
        storePath: settings.get<string>('storePath') || undefined,
        modelDir: settings.get<string>('modelDir') || undefined,
        debounceMs: settings.get<number>('debounceMs'),
      },
      synchronize: { configurationSection: 'mnemo' },
      middleware: this.middleware,
    };
    const client = new FolderClient('mnemo', `mnemo · ${folder.name}`, serverOptions, clientOptions);
    this.subscriptions.push(client.onNotification('memory/didChange', (params: MemoryDidChange) => this.onMemoryDidChange(params)));
    return client;
  }

  async dispose(): Promise<void> {
    this.subscriptions.forEach((s) => s.dispose());
    const started = await Promise.all([...this.clients.values()].map((c) => c.catch(() => undefined)));
    await Promise.all(started.map((c) => c?.stop()));
  }
}
