// mnemo for VS Code: a thin client of `mnemo lsp` (vscode-languageclient),
// one server per workspace folder (clients.ts). It attaches to memory
// documents (the mirror and `memory:` checkouts) and to the folders' source
// files, never to other markdown; the `memory:` file system checks the
// memory in on an explicit save and keeps autosaved or unapplied text as a
// draft (memoryFs.ts, drafts.ts, saveReasons.ts).
import * as vscode from 'vscode';
import { Middleware } from 'vscode-languageclient/node';
import { Clients } from './clients';
import { askReason, registerCommands } from './commands';
import { Drafts } from './drafts';
import { MemoryFileSystem } from './memoryFs';
import { SaveReasons } from './saveReasons';
import { findServer } from './server';
import { Status } from './status';
import { openDocument } from './uris';

let clients: Clients | undefined;

const ENTRY_ACTIONS = vscode.CodeActionKind.Refactor.append('mnemo');

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

/// "Keep mine", "Take theirs" and "Check in" on a memory document run here,
/// as a check-in of the document's text through the file system, so the
/// document, its draft and the store agree afterwards whatever the buffer's
/// state (the server's own command would hand the new text back through a
/// refresh, which a document holding unapplied text refuses).
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

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const server = await findServer(context);
  if (!server) {
    return;
  }
  const drafts = new Drafts(context.workspaceState);
  const status = new Status(server, drafts);
  const reasons = new SaveReasons();
  const middleware: Middleware = {
    // Commands that need a reason or a confirmation ask the person first.
    executeCommand: async (command, args, next) => {
      if (['mnemo.keepMine', 'mnemo.takeTheirs', 'mnemo.checkin'].includes(command)) {
        const result = await resolveHere(memory, command, args);
        if (result !== undefined) {
          return result;
        }
      }
      const completed = await completeArguments(command, args);
      if (!completed) {
        return undefined; // the person declined
      }
      const result = await next(command, completed);
      void status.refresh();
      return result;
    },
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
  clients = new Clients(server, middleware, (params) => memory.refreshed(params));
  const memory = new MemoryFileSystem(clients, drafts, reasons, () => void status.refresh());
  context.subscriptions.push(
    vscode.workspace.registerFileSystemProvider('memory', memory, { isCaseSensitive: true }),
    reasons,
    status,
  );
  registerCommands(context, server, clients, memory, () => void status.refresh());
  await clients.startAll();
  void status.refresh();
}

export async function deactivate(): Promise<void> {
  await clients?.dispose();
}
