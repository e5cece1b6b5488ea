// Why each memory document is being saved. VS Code runs the save
// participants (onWillSaveTextDocument) before it writes, with the reason:
// Manual for Ctrl+S / File > Save / the palette (even on an unmodified
// document: Save is forced), AfterDelay or FocusOut for autosave. The
// memory file system reads the reason when the write arrives, so only an
// explicit save checks in.
import * as vscode from 'vscode';
import { isMemory, key } from './uris';

/// A reason older than this belongs to a save that never wrote.
const FRESH_MS = 10_000;

export class SaveReasons implements vscode.Disposable {
  private readonly reasons = new Map<string, { reason: vscode.TextDocumentSaveReason; at: number }>();
  private readonly subscription = vscode.workspace.onWillSaveTextDocument((event) => {
    if (isMemory(event.document.uri)) {
      this.reasons.set(key(event.document.uri), { reason: event.reason, at: Date.now() });
    }
  });

  /// Whether the write now arriving for `uri` is one the person asked for.
  /// A write with no recorded reason (a save that skipped the participants,
  /// like "Save without Formatting") counts as explicit: autosave always
  /// runs them.
  takeExplicit(uri: vscode.Uri): boolean {
    const recorded = this.reasons.get(key(uri));
    this.reasons.delete(key(uri));
    if (!recorded || Date.now() - recorded.at > FRESH_MS) {
      return true;
    }
    return recorded.reason === vscode.TextDocumentSaveReason.Manual;
  }

  dispose(): void {
    this.subscription.dispose();
  }
}
