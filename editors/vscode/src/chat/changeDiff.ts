// A tool card's "Open diff": the file as it is now next to the file before the agent's change, in
// VS Code's diff editor. The text before is rebuilt from the file now by undoing the edit's
// replacements (newText back to oldText, last first); a created file had none. A file changed
// since so that a replacement is no longer found cannot be shown, and the user is told so.
import * as vscode from 'vscode';
import { describeError } from '../server';
import { type Replacement, textBefore } from './editCalls';
import type { WorkspaceFiles } from './workspaceFiles';

export const BEFORE_SCHEME = 'pi-before';

export class ChangeDiffs implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private opened = 0;
  /** Registered at the first diff opened. */
  private registration: vscode.Disposable | undefined;

  constructor(private readonly files: WorkspaceFiles) {}

  async open(path: string, replacements: readonly Replacement[], created: boolean): Promise<void> {
    const file = this.files.uri(path);
    if (!file) return;
    let before: string | undefined = '';
    try {
      // The document as the editor has it: an edit applied there may not be saved yet.
      if (!created) before = textBefore((await vscode.workspace.openTextDocument(file)).getText(), replacements);
    } catch (error) {
      void vscode.window.showWarningMessage(`Cannot read ${path}: ${describeError(error)}`);
      return;
    }
    if (before === undefined) {
      void vscode.window.showWarningMessage(`${path} changed since this edit: its text before the edit cannot be rebuilt.`);
      return;
    }
    this.registration ??= vscode.workspace.registerTextDocumentContentProvider(BEFORE_SCHEME, this);
    this.opened += 1;
    const left = vscode.Uri.from({ scheme: BEFORE_SCHEME, path: file.path, query: String(this.opened) });
    this.texts.set(left.toString(), before);
    const name = path.split(/[\\/]/).pop() ?? path;
    await vscode.commands.executeCommand('vscode.diff', left, file, `${name} (before the edit ↔ now)`, { preview: true });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  dispose(): void {
    this.registration?.dispose();
  }
}
