// The palette commands: Edit Memory, Open Mirror, Recall…, Remember…,
// Revoke / Flag Stale / Reinstate / Promote (asking for the reason), Show
// History, Check Anchors. Reads and lifecycle writes go through the
// language server; Remember and Check Anchors run the CLI.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';
import { runCli, Server } from './server';

export function workspaceRoot(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

export function memoryUri(root: string): vscode.Uri {
  return vscode.Uri.from({ scheme: 'memory', path: `${root}/MEMORY.md` });
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
  const verb = command === 'mnemo.revoke' ? 'Revoke' : 'Flag stale';
  return vscode.window.showInputBox({ prompt: `${verb} #${id}, because…`, validateInput: (v) => (v.trim() ? null : 'a reason is needed') });
}

export function registerCommands(
  context: vscode.ExtensionContext,
  server: Server,
  client: () => Promise<LanguageClient>,
  refresh: () => void,
): void {
  const register = (name: string, run: () => Promise<unknown>) =>
    context.subscriptions.push(
      vscode.commands.registerCommand(name, async () => {
        try {
          await run();
        } catch (error) {
          void vscode.window.showErrorMessage(`mnemo: ${(error as Error).message}`);
        }
      }),
    );
  const root = () => {
    const found = workspaceRoot();
    if (!found) {
      throw new Error('open a workspace folder first');
    }
    return found;
  };
  const execute = async (command: string, args: unknown[]) => {
    const result = await (await client()).sendRequest('workspace/executeCommand', { command, arguments: args });
    refresh();
    return result;
  };

  register('mnemo.editMemory', async () => {
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(memoryUri(root())));
  });
  register('mnemo.openMirror', async () => {
    await vscode.window.showTextDocument(vscode.Uri.file(path.join(root(), 'MEMORY.md')));
  });
  register('mnemo.recallPick', async () => {
    const query = await vscode.window.showInputBox({ prompt: 'Recall: what are you about to do?' });
    if (!query) {
      return;
    }
    const symbols: { name: string; containerName?: string; location: { uri: string; range: { start: { line: number } } } }[] =
      (await (await client()).sendRequest('workspace/symbol', { query })) ?? [];
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
    const kind = await vscode.window.showQuickPick(['gotcha', 'finding', 'decision', 'directive', 'task', 'reference', 'operational'], { title: 'Kind' });
    const priority = kind && (await vscode.window.showQuickPick(['high', 'medium', 'low'], { title: 'Priority' }));
    const title = priority && (await vscode.window.showInputBox({ prompt: 'Title' }));
    if (!kind || !priority || !title) {
      return;
    }
    const args = ['remember', '--as-human', '--kind', kind, '--priority', priority, '--title', title];
    const editor = vscode.window.activeTextEditor;
    if (editor && !editor.selection.isEmpty && editor.document.uri.scheme === 'file') {
      const file = path.relative(root(), editor.document.uri.fsPath);
      args.push('--anchor', `${file}:${editor.selection.start.line + 1}-${editor.selection.end.line + 1}`);
    }
    const out = await runCli(server, args, root());
    refresh();
    void vscode.window.showInformationMessage(`mnemo: remembered ${out.trim()}`);
  });
  for (const [name, command, needsReason] of [
    ['mnemo.revokePick', 'mnemo.revoke', true],
    ['mnemo.flagStalePick', 'mnemo.flagStale', true],
    ['mnemo.reinstatePick', 'mnemo.reinstate', false],
    ['mnemo.promotePick', 'mnemo.promote', false],
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
    const out = await runCli(server, ['check'], root());
    refresh();
    void vscode.window.showInformationMessage(`mnemo: ${out.trim().split('\n').pop()}`);
  });
}
