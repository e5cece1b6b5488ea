// Text of a memory document the store does not hold: what autosave wrote
// (never checked in) and what a check-in could not apply (conflicts,
// malformed entries, carried as typed). A draft is what the document shows —
// on a refresh from the store, on reopening, after a reload of the window
// (it is kept in the workspace state) — until the person checks it in or
// discards it on purpose.
import * as vscode from 'vscode';
import { key } from './uris';

export type DraftKind = 'autosaved' | 'unapplied';

export interface Draft {
  text: string;
  kind: DraftKind;
  /// For an unapplied draft: how many entries were not applied.
  unapplied?: number;
}

const STATE_KEY = 'mnemo.drafts';

export class Drafts {
  private readonly emitter = new vscode.EventEmitter<string>();
  /// Fired with the document key whenever its draft is set or dropped.
  readonly onDidChange = this.emitter.event;

  constructor(private readonly state: vscode.Memento) {}

  private all(): Record<string, Draft> {
    return this.state.get<Record<string, Draft>>(STATE_KEY) ?? {};
  }

  get(uri: string | vscode.Uri): Draft | undefined {
    return this.all()[key(uri)];
  }

  async set(uri: string | vscode.Uri, draft: Draft): Promise<void> {
    await this.state.update(STATE_KEY, { ...this.all(), [key(uri)]: draft });
    this.emitter.fire(key(uri));
  }

  async drop(uri: string | vscode.Uri): Promise<void> {
    const all = this.all();
    if (!(key(uri) in all)) {
      return;
    }
    delete all[key(uri)];
    await this.state.update(STATE_KEY, all);
    this.emitter.fire(key(uri));
  }
}
