// The chat's file links on the extension side: whether a path the chat shows is a file of the
// workspace (inside a workspace folder; stat, cached until the agent's next turn ends, when files
// may have come or gone) and opening one at its lines.
import * as vscode from 'vscode';
import { describeError } from '../server';

export interface FileTarget {
  path: string;
  /** 1-based. */
  line?: number;
  endLine?: number;
  column?: number;
}

/** The paths one `checkPaths` may ask about: more are answered as missing. */
const MAX_CHECKED = 500;

export class WorkspaceFiles {
  private readonly known = new Map<string, Promise<boolean>>();

  /** Relative paths are the first workspace folder's; absolute ones are taken as they are. */
  uri(path: string): vscode.Uri | undefined {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri;
    if (path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path)) return vscode.Uri.file(path);
    return root ? vscode.Uri.joinPath(root, path) : undefined;
  }

  /** Which of `paths` are existing files. */
  async check(paths: string[]): Promise<Record<string, boolean>> {
    const answers = await Promise.all(paths.map((path, index) => (index < MAX_CHECKED ? this.isFile(path) : Promise.resolve(false))));
    return Object.fromEntries(paths.map((path, index) => [path, answers[index]]));
  }

  /** Files may have been created or deleted since: ask again. */
  forget(): void {
    this.known.clear();
  }

  async open(target: FileTarget): Promise<void> {
    const uri = this.uri(target.path);
    if (!uri) {
      void vscode.window.showWarningMessage(`Cannot open ${target.path}: no workspace folder`);
      return;
    }
    try {
      const editor = await vscode.window.showTextDocument(uri, { preview: true });
      const selection = selectionOf(target);
      if (selection) {
        editor.selection = selection;
        editor.revealRange(new vscode.Range(selection.active, selection.active), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      }
    } catch (error) {
      void vscode.window.showWarningMessage(`Cannot open ${target.path}: ${describeError(error)}`);
    }
  }

  /** Whether `path` is a file inside a workspace folder (a path elsewhere is not linked). */
  private isFile(path: string): Promise<boolean> {
    let answer = this.known.get(path);
    if (!answer) {
      const uri = this.uri(path);
      answer = uri && vscode.workspace.getWorkspaceFolder(uri)
        ? Promise.resolve(vscode.workspace.fs.stat(uri)).then(
            (stat) => (stat.type & vscode.FileType.File) !== 0,
            () => false,
          )
        : Promise.resolve(false);
      this.known.set(path, answer);
    }
    return answer;
  }
}

/**
 * The lines `target` names, as a selection whose cursor is on the first (at its column, else its
 * start): a range read is selected from its last line back, so the view shows where it begins.
 */
export function selectionOf(target: FileTarget): vscode.Selection | undefined {
  if (target.line === undefined || target.line < 1) return undefined;
  const start = new vscode.Position(target.line - 1, Math.max(0, (target.column ?? 1) - 1));
  if (target.endLine === undefined || target.endLine <= target.line) return new vscode.Selection(start, start);
  return new vscode.Selection(new vscode.Position(target.endLine, 0), start);
}
