// "Go Back Here with Files…" on a tree entry: the file changes the move would make
// (pi/fileChanges) open in VS Code's multi-file diff editor (or, where that command is missing,
// one diff editor per file), a modal asks to go on, files changed since pi-lsp last wrote them are
// kept unless the user picks "Overwrite" in a second modal, then pi/navigate with restoreFiles.
// The server's workspace edit (one undo) leaves the documents it touched dirty: they are saved.
import * as vscode from 'vscode';
import type { FileChangesResult, FileOutcome, FilePreview } from '../protocol';
import type { PiServer } from '../server';
import type { SessionController } from '../session';
import { conflicts, outcomeText, previewLines, UNTRACKED_NOTE, writes } from './fileChanges';

/** The scheme of the preview's read-only documents (the files' content at the target, or empty). */
export const PREVIEW_SCHEME = 'pi-files';
const FALLBACK_DIFF_LIMIT = 20;

/** Serves the preview's documents: the content each file would get (empty for a deleted file). */
export class PreviewDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private texts = new Map<string, string>();
  private generation = 0;
  private readonly registration = vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, this);

  /** A new preview: the previous preview's documents are dropped. */
  reset(): void {
    this.texts.clear();
    this.generation += 1;
  }

  add(file: FilePreview, side: 'target' | 'empty'): vscode.Uri {
    const uri = vscode.Uri.from({
      scheme: PREVIEW_SCHEME,
      path: file.path,
      query: `${side}-${this.generation}`,
    });
    this.texts.set(uri.toString(), side === 'target' ? file.targetText ?? '' : '');
    return uri;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  dispose(): void {
    this.registration.dispose();
  }
}

export interface RestoreContext {
  server: PiServer;
  session: SessionController;
  previews: PreviewDocuments;
}

function relative(path: string): string {
  return vscode.workspace.asRelativePath(path, false);
}

/** [file shown, left (its content now), right (its content there)] for each file that changes. */
function diffTriples(previews: PreviewDocuments, files: readonly FilePreview[]): [vscode.Uri, vscode.Uri, vscode.Uri][] {
  previews.reset();
  return writes(files).map((file) => {
    const onDisk = vscode.Uri.file(file.path);
    const left = file.action === 'created' ? previews.add(file, 'empty') : onDisk;
    return [onDisk, left, previews.add(file, 'target')];
  });
}

async function showPreview(context: RestoreContext, title: string, files: readonly FilePreview[]): Promise<void> {
  const triples = diffTriples(context.previews, files);
  if (triples.length === 0) return;
  try {
    await vscode.commands.executeCommand('vscode.changes', title, triples);
  } catch (error) {
    // An older VS Code without the multi-file diff editor: one diff editor per file.
    context.server.output.appendLine(`vscode.changes is unavailable (${String(error)}); one diff per file`);
    for (const [file, left, right] of triples.slice(0, FALLBACK_DIFF_LIMIT)) {
      await vscode.commands.executeCommand('vscode.diff', left, right, `${relative(file.fsPath)} (now ↔ there)`, {
        preview: false,
      });
    }
  }
}

async function confirm(targetLabel: string, preview: FileChangesResult): Promise<boolean | undefined> {
  const changing = writes(preview.files);
  const detail = [
    ...(preview.files.length ? previewLines(preview.files, relative) : ['No file the agent changed differs between here and there.']),
    '',
    UNTRACKED_NOTE,
  ].join('\n');
  const go = 'Go Back with the Files';
  const choice = await vscode.window.showInformationMessage(
    `Go back to ${targetLabel} and restore ${changing.length} file(s)?`,
    { modal: true, detail },
    go,
  );
  if (choice !== go) return undefined;
  const conflicting = conflicts(preview.files);
  if (conflicting.length === 0) return false;
  const keep = 'Keep Them';
  const overwrite = 'Overwrite';
  const second = await vscode.window.showWarningMessage(
    `${conflicting.length} file(s) changed since pi-lsp last wrote them: keep them as they are, or overwrite them?`,
    { modal: true, detail: conflicting.map((file) => relative(file.path)).join('\n') },
    keep,
    overwrite,
  );
  if (second === undefined) return undefined;
  return second === overwrite;
}

/** The documents the restore edited are saved, so the files on disk are the restored ones. */
async function saveRestored(files: readonly FileOutcome[]): Promise<void> {
  const written = new Set(files.filter((file) => file.action === 'restored' || file.action === 'created').map((file) => vscode.Uri.file(file.path).toString()));
  const dirty = vscode.workspace.textDocuments.filter((document) => document.isDirty && written.has(document.uri.toString()));
  await Promise.all(dirty.map((document) => document.save()));
}

// The multi-file diff editor's tab has no typed input in the stable API: it is known by its title
// (which VS Code follows with the number of files).
async function closePreview(title: string): Promise<void> {
  const tabs = vscode.window.tabGroups.all.flatMap((group) => group.tabs).filter((tab) =>
    tab.label.startsWith(title) || (tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.scheme === PREVIEW_SCHEME));
  if (tabs.length) await vscode.window.tabGroups.close(tabs);
}

/**
 * Previews, asks and navigates to `targetId` with the files. Returns pi/navigate's result, or
 * undefined when the user cancelled (nothing changed then).
 */
export async function goBackWithFiles(context: RestoreContext, targetId: string, targetLabel: string) {
  const { server, session } = context;
  const sessionParams = session.sessionId ? { sessionId: session.sessionId } : {};
  const preview = await server.request('pi/fileChanges', { ...sessionParams, toId: targetId, includeText: true });
  const title = `pi: the files at ${targetLabel}`;
  await showPreview(context, title, preview.files);
  const force = await confirm(targetLabel, preview);
  if (force === undefined) {
    await closePreview(title);
    return undefined;
  }
  const result = await server.request('pi/navigate', { ...sessionParams, targetId, restoreFiles: true, ...(force ? { force } : {}) });
  await saveRestored(result.files ?? []);
  await closePreview(title);
  void vscode.window.showInformationMessage(`Files: ${outcomeText(result.files ?? [], relative)}`);
  return result;
}
