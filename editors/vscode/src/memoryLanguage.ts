// Memory documents (`memory:`) get their own language, "Memory checkout"
// (`mnemo-memory`: markdown's highlighting, mnemo's outline), for one
// reason: package.json sets `files.autoSave` off for that language, so
// autosave — on by default in code-server and VS Code for the Web — leaves
// the memory document modified until the person saves it, and closing it
// asks. A language-specific default outranks a plain user setting. Someone
// who turns autosave on for this language still checks nothing in by it:
// the file system keeps an autosave as a draft (saveReasons.ts).
import * as vscode from 'vscode';
import { isMemory } from './uris';

export const MEMORY_LANGUAGE = 'mnemo-memory';

export function memoryLanguage(): vscode.Disposable {
  const mark = (document: vscode.TextDocument) => {
    if (isMemory(document.uri) && document.languageId !== MEMORY_LANGUAGE) {
      void vscode.languages.setTextDocumentLanguage(document, MEMORY_LANGUAGE);
    }
  };
  vscode.workspace.textDocuments.forEach(mark);
  return vscode.workspace.onDidOpenTextDocument(mark);
}
