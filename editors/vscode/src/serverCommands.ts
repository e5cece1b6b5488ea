// The server's commands (`workspace/executeCommand`: revoke, keep mine,
// re-anchor, …), registered once for all the folders' clients — each client
// registering them itself would collide in a multi-root window — and sent
// to the server of the folder they concern: the document a resolution
// names, else the active editor's folder. Before sending, the person is
// asked for what the command needs (a reason, a confirmation); Keep mine,
// Take theirs and Check in on a memory document run as a check-in of its
// text through the file system.
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient } from 'vscode-languageclient/node';
import { Clients } from './clients';
import { askReason, currentFolder } from './commands';
import { MemoryFileSystem } from './memoryFs';
import { openDocument } from './uris';

/// The arguments of a server command once the person gave what it needs (a
/// reason, a confirmation); undefined when they declined.
async function completeArguments(command: string, args: any[]): Promise<any[] | undefined> {
  if ((command === 'mnemo.revoke' || command === 'mnemo.flagStale' || command === 'mnemo.reject') && args.length < 2) {
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

/// "Keep mine", "Take theirs" and "Check in" on an open memory document, as
/// a check-in of its text through the file system, so the document, its
/// draft and the store agree afterwards whatever the buffer's state (the
/// server's own command would hand the new text back through a refresh,
/// which a document holding unapplied text refuses).
async function resolveHere(memory: MemoryFileSystem, command: string, args: any[]): Promise<unknown | undefined> {
  const target = args[0] as { uri?: string; id?: number } | undefined;
  const open = target?.uri ? openDocument(target.uri) : undefined;
  if (!open || open.uri.scheme !== 'memory') {
    return undefined;
  }
  const id = Number(target!.id);
  const resolutions =
    command === 'mnemo.keepMine' ? { keepMine: [id] } : command === 'mnemo.takeTheirs' ? { takeTheirs: [id] } : {};
  return memory.checkIn(open.uri, open.getText(), resolutions, false);
}

/// The client a command goes to: the folder of the document it names, else
/// the folder of the active editor.
async function clientFor(clients: Clients, args: any[]): Promise<LanguageClient> {
  const named = args[0] && typeof args[0] === 'object' && typeof args[0].uri === 'string' ? vscode.Uri.parse(args[0].uri) : undefined;
  return named && Clients.folderOf(named) ? clients.forUri(named) : clients.forFolder(currentFolder());
}

export class ServerCommands implements vscode.Disposable {
  private readonly registered = new Map<string, vscode.Disposable>();

  constructor(
    private readonly clients: Clients,
    private readonly memory: MemoryFileSystem,
    private readonly afterWrite: () => void,
  ) {}

  /// Register the commands a started client's server offers (once each).
  add(client: LanguageClient): void {
    const commands = client.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
    for (const command of commands) {
      if (!this.registered.has(command)) {
        this.registered.set(command, vscode.commands.registerCommand(command, (...args: any[]) => this.run(command, args)));
      }
    }
  }

  private async run(command: string, args: any[]): Promise<unknown> {
    try {
      if (['mnemo.keepMine', 'mnemo.takeTheirs', 'mnemo.checkin'].includes(command)) {
        const result = await resolveHere(this.memory, command, args);
        if (result !== undefined) {
          return result;
        }
      }
      const completed = await completeArguments(command, args);
      if (!completed) {
        return undefined; // the person declined
      }
      const client = await clientFor(this.clients, completed);
      const result = await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: completed });
      this.afterWrite();
      return result;
    } catch (error) {
      void vscode.window.showErrorMessage(`mnemo: ${(error as Error).message}`);
      return undefined;
    }
  }

  dispose(): void {
    this.registered.forEach((d) => d.dispose());
  }
}
