// The status bar: the note count and ranking of the active editor's
// workspace folder, and — while a memory document holds text the store does
// not — what that text is (an autosaved draft, or entries not applied) and
// how to check it in or discard it.
import * as vscode from 'vscode';
import { currentFolder } from './commands';
import { Drafts } from './drafts';
import { runCli, Server } from './server';
import { isMemory } from './uris';

export class Status implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('mnemo.status', vscode.StatusBarAlignment.Left, 10);
  private readonly draft = vscode.window.createStatusBarItem('mnemo.draft', vscode.StatusBarAlignment.Left, 9);
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly server: Server, private readonly drafts: Drafts) {
    this.item.name = 'mnemo';
    this.item.command = 'mnemo.recallPick';
    this.item.text = '$(book) mnemo';
    this.item.show();
    this.draft.name = 'mnemo draft';
    this.subscriptions = [
      vscode.window.onDidChangeActiveTextEditor(() => {
        this.showDraft();
        void this.refresh();
      }),
      drafts.onDidChange(() => this.showDraft()),
    ];
    this.showDraft();
  }

  /// The draft item, for the active memory document.
  showDraft(): void {
    const uri = vscode.window.activeTextEditor?.document.uri;
    const draft = uri && isMemory(uri) ? this.drafts.get(uri) : undefined;
    if (!draft) {
      this.draft.hide();
      return;
    }
    if (draft.kind === 'autosaved') {
      this.draft.text = '$(edit) memory draft, not checked in · save to check in';
      this.draft.tooltip = 'Autosave kept this text without checking it in. Save (Ctrl+S) checks it in; "mnemo: Revert to Store" discards it.';
      this.draft.command = 'mnemo.checkIn';
    } else {
      const count = draft.unapplied ?? 1;
      this.draft.text = `$(warning) ${count} not applied`;
      this.draft.tooltip = `${count} ${count === 1 ? 'entry was' : 'entries were'} not applied (see the problems) and stay as typed: resolve and save, or "mnemo: Revert to Store" to discard.`;
      this.draft.command = 'workbench.actions.view.problems';
    }
    this.draft.show();
  }

  async refresh(): Promise<void> {
    let root: string;
    try {
      root = currentFolder().uri.fsPath;
    } catch {
      return;
    }
    try {
      // One process: `store stats` also says which ranking recall runs in.
      const stats = JSON.parse(await runCli(this.server, ['--json', 'store', 'stats'], root));
      const notes = stats.stats.notes;
      const mode = stats.ranking === 'hybrid' ? 'hybrid' : 'lexical only';
      this.item.text = `$(book) ${notes} ${notes === 1 ? 'note' : 'notes'} · ${mode}`;
      this.item.tooltip = `mnemo ${this.server.version}: recall runs ${mode}${stats.ranking_reason ? ` (${stats.ranking_reason})` : ''}. Click to recall.`;
    } catch (error) {
      this.item.text = '$(warning) mnemo';
      this.item.tooltip = (error as Error).message;
    }
  }

  dispose(): void {
    this.subscriptions.forEach((s) => s.dispose());
    this.item.dispose();
    this.draft.dispose();
  }
}
