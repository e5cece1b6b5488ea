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
      const stats = JSON.parse(await runCli(this.server, ['--json', 'store', 'stats'], this.root));
      const recall = JSON.parse(await runCli(this.server, ['--json', 'recall', 'status'], this.root));
      const notes = stats.stats?.notes ?? 0;
      const mode = recall.ranking === 'hybrid' ? 'hybrid' : 'lexical only';
      this.item.text = `$(book) ${notes} notes · ${mode}`;
      this.item.tooltip = `mnemo ${this.server.version}: recall runs ${mode}${recall.ranking_reason ? ` (${recall.ranking_reason})` : ''}. Click to recall.`;
    } catch (error) {
      this.item.text = '$(warning) mnemo';
      this.item.tooltip = (error as Error).message;
    }
  }

  dispose(): void {
    this.item.dispose();
  }
}
