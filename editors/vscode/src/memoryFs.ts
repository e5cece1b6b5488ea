// The `memory:` scheme: `memory:/<folder>/MEMORY.md` is the editable
// checkout of a workspace folder. Reading it returns the folder's draft if
// there is one, else asks that folder's server for `memory/checkout`.
// Writing it checks it in (`memory/checkin`) only when the person saved on
// purpose (SaveReasons); an autosave keeps the text as a draft. After a
// check-in the document becomes the new render, in which everything that
// was not applied is kept as typed — and stays a draft until it is applied
// or discarded. The server's `memory/didChange` refreshes a document only
// when it holds no draft and no unsaved edits. The on-disk mirror is never
// written here: only the server's mirror writer writes it.
import * as vscode from 'vscode';
import { Clients, MemoryDidChange } from './clients';
import { Drafts } from './drafts';
import { SaveReasons } from './saveReasons';
import { key, openDocument, workspaceOf } from './uris';

interface CheckoutResult {
  text: string;
}

export interface CheckinResult {
  applied: string[];
  text: string | null;
  epoch: number | null;
  diagnostics: unknown[];
  conflicts: { id: number; line: number; mine: string | null; theirs: string | null }[];
  /// Entries (or stray lines) of the sent text that were not applied and are
  /// carried into `text` as typed (absent from servers before it existed).
  unapplied?: number;
}

/// Conflicts resolved by "Keep mine" / "Take theirs" (note ids).
export interface Resolutions {
  keepMine?: number[];
  takeTheirs?: number[];
}

export class MemoryFileSystem implements vscode.FileSystemProvider, vscode.Disposable {
  /// The text the next read returns (a check-in's new render, a refresh).
  private readonly pending = new Map<string, string>();
  /// The last pure render of the store each document was given.
  private readonly rendered = new Map<string, string>();
  /// Bumped only when the document changes under the editor (a check-in's
  /// new render, a refresh, a discarded draft), so that VS Code's "modified
  /// since" check on save compares like with like; the size is reported as 0
  /// for the same reason.
  private readonly mtimes = new Map<string, number>();
  private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;
  /// Documents whose check-in changed their text while VS Code saved them.
  private readonly reloadAfterSave = new Set<string>();
  private readonly saved = vscode.workspace.onDidSaveTextDocument((document) => {
    if (this.reloadAfterSave.delete(key(document.uri))) {
      this.changed(document.uri);
    }
  });

  constructor(
    private readonly clients: Clients,
    private readonly drafts: Drafts,
    private readonly reasons: SaveReasons,
    private readonly onCheckedIn: () => void = () => undefined,
  ) {}

  /// Tell VS Code the document changed: it reads it again (when unmodified).
  private changed(uri: vscode.Uri): void {
    this.mtimes.set(key(uri), (this.mtimes.get(key(uri)) ?? 1) + 1);
    this.emitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  /// The server's `memory/didChange`: the new render of the store.
  refreshed(params: MemoryDidChange): void {
    const uri = vscode.Uri.parse(params.uri);
    const open = openDocument(uri);
    if (!open || open.isDirty || this.drafts.get(uri)) {
      return; // unsaved edits and drafts are never replaced by the store's text
    }
    this.pending.set(key(uri), params.text);
    this.rendered.set(key(uri), params.text);
    this.changed(uri);
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    return { type: vscode.FileType.File, ctime: 0, mtime: this.mtimes.get(key(uri)) ?? 1, size: 0 };
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    const draft = this.drafts.get(uri);
    if (draft) {
      return Buffer.from(draft.text, 'utf8');
    }
    const waiting = this.pending.get(key(uri));
    if (waiting !== undefined) {
      this.pending.delete(key(uri));
      return Buffer.from(waiting, 'utf8');
    }
    const client = await this.clients.forUri(uri);
    const result: CheckoutResult = await client.sendRequest('memory/checkout', { workspace: workspaceOf(uri) });
    this.rendered.set(key(uri), result.text);
    return Buffer.from(result.text, 'utf8');
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    const text = Buffer.from(content).toString('utf8');
    if (!this.reasons.takeExplicit(uri)) {
      await this.keepDraft(uri, text);
      return;
    }
    await this.checkIn(uri, text);
  }

  /// An autosave: the text is kept, nothing is checked in.
  private async keepDraft(uri: vscode.Uri, text: string): Promise<void> {
    const previous = this.drafts.get(uri);
    if (previous?.kind === 'unapplied') {
      this.drafts.set(uri, { ...previous, text });
    } else if (text === this.rendered.get(key(uri))) {
      this.drafts.drop(uri); // typed back to what the store holds
    } else {
      this.drafts.set(uri, { text, kind: 'autosaved' });
    }
  }

  hasDraft(uri: vscode.Uri): boolean {
    return this.drafts.get(uri) !== undefined;
  }

  /// Check `text` in as the person (with conflicts resolved as given); the
  /// document then shows the new render. `saving`: VS Code is writing the
  /// document, and reads it again once told it changed; otherwise (Keep mine,
  /// Take theirs) an open document is reverted to the new text.
  async checkIn(uri: vscode.Uri, text: string, resolutions: Resolutions = {}, saving = true): Promise<CheckinResult> {
    const client = await this.clients.forUri(uri);
    let result: CheckinResult;
    try {
      result = await client.sendRequest('memory/checkin', { uri: uri.toString(), text, ...resolutions });
    } catch (error) {
      this.drafts.set(uri, { text, kind: this.drafts.get(uri)?.kind ?? 'autosaved' });
      throw vscode.FileSystemError.Unavailable(`mnemo: nothing was checked in: ${(error as Error).message}`);
    }
    const unapplied = result.unapplied ?? result.conflicts.length;
    if (result.text === null) {
      // The header could not be read: nothing applied, the text stays as it is.
      this.drafts.set(uri, { text, kind: 'unapplied', unapplied: Math.max(unapplied, 1) });
    } else if (unapplied > 0) {
      this.drafts.set(uri, { text: result.text, kind: 'unapplied', unapplied });
    } else {
      this.drafts.drop(uri);
      this.pending.set(key(uri), result.text);
      this.rendered.set(key(uri), result.text);
    }
    if (result.text !== null && result.text !== text) {
      if (saving) {
        // Announced once VS Code has recorded the save (onDidSaveTextDocument):
        // told earlier, it would take the change for its own write and never
        // read the new text (a timer lost that race on a slow connection).
        this.reloadAfterSave.add(key(uri));
      } else {
        await this.reload(uri);
      }
    }
    this.onCheckedIn();
    const applied = result.applied.length > 0 ? result.applied.join('; ') : 'nothing to check in';
    if (unapplied > 0) {
      void vscode.window.showWarningMessage(
        `mnemo: ${applied}; ${unapplied} not applied, kept in the document as typed (see the problems; "mnemo: Revert to Store" discards them)`,
      );
    } else {
      void vscode.window.setStatusBarMessage(`mnemo: ${applied}`, 5000);
    }
    return result;
  }

  /// Show the document's new text now, even over unsaved edits (they were
  /// just checked in or carried into it).
  private async reload(uri: vscode.Uri): Promise<void> {
    const open = openDocument(uri);
    if (!open) {
      return;
    }
    this.mtimes.set(key(uri), (this.mtimes.get(key(uri)) ?? 1) + 1);
    if (!open.isDirty) {
      this.changed(uri);
      return;
    }
    await vscode.window.showTextDocument(open);
    await vscode.commands.executeCommand('workbench.action.files.revert');
  }

  /// Drop the document's draft; the next read is a fresh checkout.
  async discard(uri: vscode.Uri): Promise<void> {
    this.drafts.drop(uri);
    this.pending.delete(key(uri));
    this.mtimes.set(key(uri), (this.mtimes.get(key(uri)) ?? 1) + 1);
  }

  dispose(): void {
    this.saved.dispose();
    this.emitter.dispose();
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
