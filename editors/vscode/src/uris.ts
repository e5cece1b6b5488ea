// Memory document URIs, in one place. The checkout of a workspace folder is
// `memory:/<folder>/MEMORY.md`; the server spells it `memory:///<folder>/…`
// and percent-encodes in its own way, so URIs are compared by parsing them
// (`key`), never as raw strings.
import * as vscode from 'vscode';

export const MEMORY_SCHEME = 'memory';

/// The checkout document of a workspace folder (a file-system path).
export function memoryUri(folder: string): vscode.Uri {
  return vscode.Uri.from({ scheme: MEMORY_SCHEME, path: `${folder.replace(/\/+$/, '')}/MEMORY.md` });
}

/// One spelling per document: the parsed URI, printed back by VS Code.
export function key(uri: string | vscode.Uri): string {
  return (typeof uri === 'string' ? vscode.Uri.parse(uri) : uri).toString();
}

export function sameUri(a: string | vscode.Uri, b: string | vscode.Uri): boolean {
  return key(a) === key(b);
}

export function isMemory(uri: vscode.Uri): boolean {
  return uri.scheme === MEMORY_SCHEME;
}

/// The workspace folder path a checkout document belongs to.
export function workspaceOf(uri: vscode.Uri): string {
  return uri.path.replace(/\/MEMORY\.md$/, '');
}

/// The open text document of a URI, whatever its spelling.
export function openDocument(uri: string | vscode.Uri): vscode.TextDocument | undefined {
  const wanted = key(uri);
  return vscode.workspace.textDocuments.find((d) => d.uri.toString() === wanted);
}
