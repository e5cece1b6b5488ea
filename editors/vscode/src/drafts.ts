// Text of a memory document the store does not hold: what autosave wrote
// (never checked in) and what a check-in could not apply (conflicts,
// malformed entries, carried as typed). A draft is what the document shows —
// on a refresh from the store, on reopening, in the next window on the same
// workspace — until the person checks it in or discards it on purpose. Kept
// in a file in the extension's workspace storage (written whole, then
// renamed), so a closed or crashed window loses nothing.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { key } from './uris';

export type DraftKind = 'autosaved' | 'unapplied';

export interface Draft {
  text: string;
  kind: DraftKind;
  /// For an unapplied draft: how many entries were not applied.
  unapplied?: number;
}

export class Drafts {
  private readonly emitter = new vscode.EventEmitter<string>();
  /// Fired with the document key whenever its draft is set or dropped.
  readonly onDidChange = this.emitter.event;
  private readonly drafts: Record<string, Draft>;

  /// `file`: where drafts are kept; undefined keeps them in memory only
  /// (a window without a workspace has no workspace storage).
  constructor(private readonly file: string | undefined) {
    this.drafts = Drafts.load(file);
  }

  private static load(file: string | undefined): Record<string, Draft> {
    if (!file) {
      return {};
    }
    try {
      return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, Draft>;
    } catch {
      return {}; // none yet (or unreadable: nothing to restore)
    }
  }

  private save(): void {
    if (!this.file) {
      return;
    }
    try {
      fs.mkdirSync(path.dirname(this.file), { recursive: true });
      const temp = `${this.file}.${process.pid}.tmp`;
      fs.writeFileSync(temp, JSON.stringify(this.drafts));
      fs.renameSync(temp, this.file);
    } catch (error) {
      void vscode.window.showWarningMessage(`mnemo: the memory draft could not be kept on disk (${(error as Error).message}); it is kept until the window closes`);
    }
  }

  get(uri: string | vscode.Uri): Draft | undefined {
    return this.drafts[key(uri)];
  }

  set(uri: string | vscode.Uri, draft: Draft): void {
    this.drafts[key(uri)] = draft;
    this.save();
    this.emitter.fire(key(uri));
  }

  drop(uri: string | vscode.Uri): void {
    if (!(key(uri) in this.drafts)) {
      return;
    }
    delete this.drafts[key(uri)];
    this.save();
    this.emitter.fire(key(uri));
  }
}
