// One language server per workspace folder (the server serves one workspace
// per process): each LanguageClient is locked to its folder, started there,
// and its document selector takes only that folder's files and that
// folder's memory document, so nothing of one repository reaches the other's
// server. Folders added or removed later get or lose their client.
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
  private readonly clients = new Map<string, LanguageClient>();
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
          await client?.stop();
        }
        for (const folder of event.added) {
          void this.forFolder(folder);
        }
      }),
    );
  }

  /// Start a client for every folder of the workspace.
  async startAll(): Promise<void> {
    await Promise.all((vscode.workspace.workspaceFolders ?? []).map((f) => this.forFolder(f)));
  }

  /// The folder's client, started.
  async forFolder(folder: vscode.WorkspaceFolder): Promise<LanguageClient> {
    let client = this.clients.get(folder.uri.toString());
    if (!client) {
      client = this.create(folder);
      this.clients.set(folder.uri.toString(), client);
      const created = client;
      await created.start();
      this.onStarted(created);
    }
    await client.start();
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

  private create(folder: vscode.WorkspaceFolder): LanguageClient {
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

  dispose(): Promise<void> {
    this.subscriptions.forEach((s) => s.dispose());
    return Promise.all([...this.clients.values()].map((c) => c.stop())).then(() => undefined);
  }
}
