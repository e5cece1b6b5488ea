// The `memory:` scheme: `memory:///<workspace>/MEMORY.md` is an editable
// checkout. Reading it asks the server for `memory/checkout`; writing it
// (saving) sends `memory/checkin`, and the document becomes the new render,
// in which everything that was not applied is kept as typed. The server's
// `memory/didChange` refreshes an unmodified document.
import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';

interface CheckoutResult {
  text: string;
}

interface CheckinResult {
  applied: string[];
  text: string | null;
  epoch: number | null;
  diagnostics: unknown[];
  conflicts: { id: number; line: number; mine: string | null; theirs: string | null }[];
}

export class MemoryFileSystem implements vscode.FileSystemProvider {
  /// The text the editor must show next (a check-in's new render with what
  /// was not applied carried over, or a refresh): the next read returns it
  /// instead of a fresh checkout, which would drop the carried entries.
  private readonly pending = new Map<string, Uint8Array>();
  /// Bumped only when the document changes under the editor (a check-in's
  /// new render, a refresh), so that VS Code's "modified since" check on
  /// save compares like with like; the size is reported as 0 for the same reason.
  private readonly mtimes = new Map<string, number>();
  private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;

  constructor(
    private readonly client: () => Promise<LanguageClient>,
    private readonly onCheckedIn: () => void = () => undefined,
  ) {}

  static workspaceOf(uri: vscode.Uri): string {
    return uri.path.replace(/\/MEMORY\.md$/, '');
  }

  private next(uri: vscode.Uri, text: string): void {
    this.pending.set(uri.toString(), Buffer.from(text, 'utf8'));
  }

  private changed(uri: vscode.Uri): void {
    this.mtimes.set(uri.toString(), (this.mtimes.get(uri.toString()) ?? 1) + 1);
    this.emitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  /// The server's `memory/didChange`: the new render of an unmodified document.
  refreshed(uri: string, text: string): void {
    const parsed = vscode.Uri.parse(uri);
    this.next(parsed, text);
    this.changed(parsed);
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    return { type: vscode.FileType.File, ctime: 0, mtime: this.mtimes.get(uri.toString()) ?? 1, size: 0 };
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    const waiting = this.pending.get(uri.toString());
    if (waiting) {
      this.pending.delete(uri.toString());
      return waiting;
    }
    const client = await this.client();
    const result: CheckoutResult = await client.sendRequest('memory/checkout', {
      workspace: MemoryFileSystem.workspaceOf(uri),
    });
    return Buffer.from(result.text, 'utf8');
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    const client = await this.client();
    const text = Buffer.from(content).toString('utf8');
    let result: CheckinResult;
    try {
      result = await client.sendRequest('memory/checkin', { uri: uri.toString(), text });
    } catch (error) {
      throw vscode.FileSystemError.Unavailable(`mnemo: nothing was checked in: ${(error as Error).message}`);
    }
    const applied = result.applied.length > 0 ? result.applied.join('; ') : 'nothing to check in';
    const left = result.diagnostics.length;
    if (result.text !== null) {
      this.next(uri, result.text);
      // The saved document becomes the new render (what was not applied is in
      // it, as typed). Announced once VS Code has finished recording the save,
      // or it would take the change for its own write.
      setTimeout(() => this.changed(uri), 300);
    }
    this.onCheckedIn();
    const message = left > 0 ? `mnemo: ${applied}; ${left} left to resolve (see the problems)` : `mnemo: ${applied}`;
    if (left > 0) {
      void vscode.window.showWarningMessage(message);
    } else {
      void vscode.window.setStatusBarMessage(message, 5000);
    }
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }
  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions('the memory has no directories');
  }
  delete(): void {
    throw vscode.FileSystemError.NoPermissions('delete entries inside the memory document instead');
  }
  rename(): void {
    throw vscode.FileSystemError.NoPermissions('the memory document cannot be renamed');
  }
}
