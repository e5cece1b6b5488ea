// The palette commands: Edit Memory, Open Mirror, Recall…, Remember…,
// Revoke / Flag Stale / Reinstate / Promote (asking for the reason), Show
// History, Check Anchors, Check In, Revert to Store. Each acts on the
// workspace folder of the active editor (else the first folder). Reads and
// lifecycle writes go through that folder's language server; Remember and
// Check Anchors run the CLI there.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Clients } from './clients';
import { MemoryFileSystem } from './memoryFs';
import { runCli, Server } from './server';
import { isMemory, memoryUri, openDocument } from './uris';

/// The workspace folder the palette acts on.
export function currentFolder(): vscode.WorkspaceFolder {
  const editor = vscode.window.activeTextEditor;
  const folder = (editor && Clients.folderOf(editor.document.uri)) ?? vscode.workspace.workspaceFolders?.[0];
  if (!folder) {
    throw new Error('open a workspace folder first');
  }
  return folder;
}

/// The note id under the cursor (`#12`, `[#12]`), else asked for.
async function noteId(): Promise<number | undefined> {
  const editor = vscode.window.activeTextEditor;
  if (editor) {
    const range = editor.document.getWordRangeAtPosition(editor.selection.active, /#\d+/);
    if (range) {
      return Number(editor.document.getText(range).slice(1));
    }
    const entry = editor.document.lineAt(editor.selection.active.line).text.match(/^- \[#(\d+)\]/);
    if (entry) {
      return Number(entry[1]);
    }
  }
  const typed = await vscode.window.showInputBox({ prompt: 'Note id', validateInput: (v) => (/^#?\d+$/.test(v) ? null : 'a note id, like 12 or #12') });
  return typed ? Number(typed.replace('#', '')) : undefined;
}

/// Ask why, for the commands that need a reason.
export function askReason(command: string, id: number): Thenable<string | undefined> {
  const verb = command === 'mnemo.revoke' ? 'Revoke' : command === 'mnemo.reject' ? 'Reject' : 'Flag stale';
  return vscode.window.showInputBox({ prompt: `${verb} #${id}, because…`, validateInput: (v) => (v.trim() ? null : 'a reason is needed') });
}

/// The memory document a command acts on: the given one, else the active one.
function memoryDocument(uri?: vscode.Uri): vscode.Uri {
  const target = uri ?? vscode.window.activeTextEditor?.document.uri;
  if (!target || !isMemory(target)) {
    throw new Error('open the memory document (mnemo: Edit Memory) first');
  }
  return target;
}

/// The folder's mirror file as the server reads the configuration.
export async function mirrorPath(clients: Clients, folder: vscode.WorkspaceFolder): Promise<{ path: string | null; enabled: boolean }> {
  const client = await clients.forFolder(folder);
  return client.sendRequest('memory/mirror', { workspace: folder.uri.fsPath });
}

export function registerCommands(
  context: vscode.ExtensionContext,
  server: Server,
  clients: Clients,
  memory: MemoryFileSystem,
  refresh: () => void,
): void {
  const register = (name: string, run: (...args: any[]) => Promise<unknown>) =>
    context.subscriptions.push(
      vscode.commands.registerCommand(name, async (...args: any[]) => {
        try {
          return await run(...args);
        } catch (error) {
          void vscode.window.showErrorMessage(`mnemo: ${(error as Error).message}`);
          return undefined;
        }
      }),
    );
  const execute = async (command: string, args: unknown[]) => {
    const client = await clients.forFolder(currentFolder());
    const result = await client.sendRequest('workspace/executeCommand', { command, arguments: args });
    refresh();
    return result;
  };

  register('mnemo.editMemory', async () => {
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(memoryUri(currentFolder().uri.fsPath)));
  });
  register('mnemo.openMirror', async () => {
    const folder = currentFolder();
    const mirror = await mirrorPath(clients, folder);
    if (!mirror.path) {
      throw new Error(`${folder.name} has no mirror file (its [memory_export] path is outside the folder)`);
    }
    if (!fs.existsSync(mirror.path)) {
      throw new Error(`there is no mirror at ${mirror.path} yet; \`mnemo export --enable\` writes it and keeps it current`);
    }
    await vscode.window.showTextDocument(vscode.Uri.file(mirror.path));
  });
  register('mnemo.checkIn', async (uri?: vscode.Uri) => {
    // An explicit save: the file system checks the text in (also when autosave already wrote it).
    const target = memoryDocument(uri);
    await vscode.window.showTextDocument(target);
    await vscode.commands.executeCommand('workbench.action.files.save');
  });
  register('mnemo.discardDraft', async (uri?: vscode.Uri) => {
    const target = memoryDocument(uri);
    const open = openDocument(target);
    if (memory.hasDraft(target) || open?.isDirty) {
      // A quick pick, not a modal dialog: it names what is lost, and Escape keeps it.
      const sure = await vscode.window.showQuickPick(
        [
          { label: 'Revert to Store', detail: 'Discard what this document holds that the store does not (typed, autosaved or not applied) and show the store as it is now' },
          { label: 'Keep the draft', detail: 'Change nothing' },
        ],
        { title: 'mnemo: discard the memory draft?' },
      );
      if (sure?.label !== 'Revert to Store') {
        return;
      }
    }
    await memory.discard(target);
    await vscode.window.showTextDocument(target);
    await vscode.commands.executeCommand('workbench.action.files.revert');
  });
  register('mnemo.recallPick', async () => {
    const query = await vscode.window.showInputBox({ prompt: 'Recall: what are you about to do?' });
    if (!query) {
      return;
    }
    const client = await clients.forFolder(currentFolder());
    const symbols: { name: string; containerName?: string; location: { uri: string; range: { start: { line: number } } } }[] =
      (await client.sendRequest('workspace/symbol', { query })) ?? [];
    const summary = symbols[0]?.containerName?.replace(/^[^·]*· /, '') ?? 'nothing matched (filters may have hidden notes; see the mnemo output)';
    const pick = await vscode.window.showQuickPick(
      symbols.map((s) => ({ label: s.name, description: s.containerName?.split(' · ')[0], symbol: s })),
      { title: `Recall "${query}" — ${summary}`, matchOnDescription: true },
    );
    if (pick) {
      const uri = vscode.Uri.parse(pick.symbol.location.uri);
      const line = pick.symbol.location.range.start.line;
      await vscode.window.showTextDocument(uri, { selection: new vscode.Range(line, 0, line, 0) });
    }
  });
  register('mnemo.rememberPick', async () => {
    const root = currentFolder().uri.fsPath;
    const kind = await vscode.window.showQuickPick(['gotcha', 'finding', 'decision', 'directive', 'task', 'reference', 'operational'], { title: 'Kind' });
    const priority = kind && (await vscode.window.showQuickPick(['high', 'medium', 'low'], { title: 'Priority' }));
    const title = priority && (await vscode.window.showInputBox({ prompt: 'Title' }));
    if (!kind || !priority || !title) {
      return;
    }
    const args = ['remember', '--as-human', '--kind', kind, '--priority', priority, '--title', title];
    const editor = vscode.window.activeTextEditor;
    if (editor && !editor.selection.isEmpty && editor.document.uri.scheme === 'file') {
      const file = path.relative(root, editor.document.uri.fsPath);
      args.push('--anchor', `${file}:${editor.selection.start.line + 1}-${editor.selection.end.line + 1}`);
    }
    const out = await runCli(server, args, root);
    refresh();
    void vscode.window.showInformationMessage(`mnemo: remembered ${out.trim()}`);
  });
  for (const [name, command, needsReason] of [
    ['mnemo.revokePick', 'mnemo.revoke', true],
    ['mnemo.flagStalePick', 'mnemo.flagStale', true],
    ['mnemo.reinstatePick', 'mnemo.reinstate', false],
    ['mnemo.promotePick', 'mnemo.promote', false],
    ['mnemo.acceptPick', 'mnemo.accept', false],
    ['mnemo.rejectPick', 'mnemo.reject', true],
  ] as const) {
    register(name, async () => {
      const id = await noteId();
      if (id === undefined) {
        return;
      }
      const reason = needsReason ? await askReason(command, id) : undefined;
      if (needsReason && !reason) {
        return;
      }
      const result = (await execute(command, reason ? [id, reason] : [id])) as { state: string };
      void vscode.window.showInformationMessage(`mnemo: #${id} is ${result.state}`);
    });
  }
  register('mnemo.historyPick', async () => {
    const id = await noteId();
    if (id === undefined) {
      return;
    }
    const result = (await execute('mnemo.showHistory', [id])) as { markdown: string };
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: result.markdown });
    await vscode.window.showTextDocument(doc, { preview: true, viewColumn: vscode.ViewColumn.Beside });
  });
  register('mnemo.checkAnchors', async () => {
    const out = await runCli(server, ['check'], currentFolder().uri.fsPath);
    refresh();
    void vscode.window.showInformationMessage(`mnemo: ${out.trim().split('\n').pop()}`);
  });
}
