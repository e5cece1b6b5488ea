// The status bar item: the workspace's note count and the ranking recall
// runs in (hybrid, or lexical only with the reason in the tooltip).
import * as vscode from 'vscode';
import { runCli, Server } from './server';

export class Status {
  private readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);

  constructor(private readonly server: Server, private readonly root: string | undefined) {
    this.item.command = 'mnemo.recallPick';
    this.item.text = '$(book) mnemo';
    this.item.show();
  }

  async refresh(): Promise<void> {
    try {
      // One process: `store stats` also says which ranking recall runs in.
      const stats = JSON.parse(await runCli(this.server, ['--json', 'store', 'stats'], this.root));
      const notes = stats.stats.notes;
      const mode = stats.ranking === 'hybrid' ? 'hybrid' : 'lexical only';
      this.item.text = `$(book) ${notes} notes · ${mode}`;
      this.item.tooltip = `mnemo ${this.server.version}: recall runs ${mode}${stats.ranking_reason ? ` (${stats.ranking_reason})` : ''}. Click to recall.`;
    } catch (error) {
      this.item.text = '$(warning) mnemo';
      this.item.tooltip = (error as Error).message;
    }
  }

  dispose(): void {
    this.item.dispose();
  }
}
