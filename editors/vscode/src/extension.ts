// mnemo for VS Code: a thin client of `mnemo lsp` (vscode-languageclient),
// one server per workspace folder (clients.ts). It attaches to memory
// documents (the mirror and `memory:` checkouts) and to the folders' source
// files, never to other markdown; the `memory:` file system checks the
// memory in on an explicit save and keeps autosaved or unapplied text as a
// draft (memoryFs.ts, drafts.ts, saveReasons.ts); memory documents are in a
// language of their own that autosave leaves alone (memoryLanguage.ts); the
// server's commands are registered once for all folders (serverCommands.ts).
import * as vscode from 'vscode';
import { Middleware } from 'vscode-languageclient/node';
import { Clients } from './clients';
import { registerCommands } from './commands';
import { Drafts } from './drafts';
import { MemoryFileSystem } from './memoryFs';
import { memoryLanguage } from './memoryLanguage';
import { SaveReasons } from './saveReasons';
import { findServer } from './server';
import { ServerCommands } from './serverCommands';
import { Status } from './status';

let clients: Clients | undefined;

const ENTRY_ACTIONS = vscode.CodeActionKind.Refactor.append('mnemo');

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const server = await findServer(context);
  if (!server) {
    return;
  }
  const drafts = new Drafts(context.storageUri && vscode.Uri.joinPath(context.storageUri, 'drafts.json').fsPath);
  const status = new Status(server, drafts);
  const reasons = new SaveReasons();
  const middleware: Middleware = {
    // The actions on an entry (revoke, supersede, …: `refactor.mnemo`) are
    // offered when asked for (Ctrl+., the Refactor menu), not as a lightbulb
    // on every entry the cursor passes; quick fixes (conflicts, drift) keep it.
    provideCodeActions: async (document, range, context, token, next) => {
      const actions = await next(document, range, context, token);
      if (!actions || context.triggerKind !== vscode.CodeActionTriggerKind.Automatic) {
        return actions;
      }
      return actions.filter((a) => !(a instanceof vscode.CodeAction && a.kind && ENTRY_ACTIONS.contains(a.kind)));
    },
  };
  clients = new Clients(server, middleware, (params) => memory.refreshed(params), (client) => serverCommands.add(client));
  const memory = new MemoryFileSystem(clients, drafts, reasons, () => void status.refresh());
  const serverCommands = new ServerCommands(clients, memory, () => void status.refresh());
  context.subscriptions.push(
    vscode.workspace.registerFileSystemProvider('memory', memory, { isCaseSensitive: true }),
    memory,
    reasons,
    status,
    serverCommands,
  );
  registerCommands(context, server, clients, memory, () => void status.refresh());
  context.subscriptions.push(memoryLanguage());
  await clients.startAll();
  void status.refresh();
}

export async function deactivate(): Promise<void> {
  await clients?.dispose();
}
