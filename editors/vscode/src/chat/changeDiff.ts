// A tool card's "Open diff": the file as it is now next to the file before the agent's change, in
// VS Code's diff editor. Before an edit, the text is rebuilt from the file now by undoing the
// edit's replacements (newText back to oldText, last first); a file changed since so that a
// replacement is no longer found cannot be shown, and the user is told so. Before an overwriting
// write, it is the write's patch undone on the text it wrote (writeDiff.ts), whatever the file
// became since; a created file had none.
import * as vscode from 'vscode';
import { describeError } from '../server';
import { type Replacement, textBefore, type WrittenChange } from './editCalls';
import type { WorkspaceFiles } from './workspaceFiles';
import { textBeforeWrite } from './writeDiff';

/** What a card's change was: an edit's replacements, a created file, or an overwrite. */
export interface CardChange {
  replacements: readonly Replacement[];
  created: boolean;
  written?: WrittenChange;
}

export const BEFORE_SCHEME = 'pi-before';

export class ChangeDiffs implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private opened = 0;
  /** Registered at the first diff opened. */
  private registration: vscode.Disposable | undefined;

  constructor(private readonly files: WorkspaceFiles) {}

  async open(path: string, change: CardChange): Promise<void> {
    const file = this.files.uri(path);
    if (!file) return;
    const verb = change.written || change.created ? 'write' : 'edit';
    let before: string | undefined = '';
    try {
      if (change.written) before = textBeforeWrite(change.written.content, change.written.diff);
      // The document as the editor has it: an edit applied there may not be saved yet.
      else if (!change.created) before = textBefore((await vscode.workspace.openTextDocument(file)).getText(), change.replacements);
    } catch (error) {
      void vscode.window.showWarningMessage(`Cannot read ${path}: ${describeError(error)}`);
      return;
    }
    if (before === undefined) {
      const why = change.written ? "the write's patch does not fit what it wrote" : `${path} changed since this edit`;
      void vscode.window.showWarningMessage(`${why}: the text before the ${verb} cannot be rebuilt.`);
      return;
    }
    this.registration ??= vscode.workspace.registerTextDocumentContentProvider(BEFORE_SCHEME, this);
    this.opened += 1;
    const left = vscode.Uri.from({ scheme: BEFORE_SCHEME, path: file.path, query: String(this.opened) });
    this.texts.set(left.toString(), before);
    const name = path.split(/[\\/]/).pop() ?? path;
    await vscode.commands.executeCommand('vscode.diff', left, file, `${name} (before the ${verb} ↔ now)`, { preview: true });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  dispose(): void {
    this.registration?.dispose();
  }
}
