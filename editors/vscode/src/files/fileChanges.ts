// What a restore of the files would do or did, in words (pure: no vscode import, unit-tested).
import type { FileAction, FileOutcome, FilePreview } from '../protocol';

/** The actions that write a file. */
export const WRITES: ReadonlySet<FileAction> = new Set<FileAction>(['restored', 'created', 'deleted']);
const ORDER: readonly FileAction[] = ['restored', 'created', 'deleted', 'conflict', 'skipped'];
/** The reason the server gives for a file already as it is at the target; not worth a mention. */
const UNCHANGED = 'already as it was there';

export const UNTRACKED_NOTE = 'Changes made by shell commands are not tracked: restoring does not undo them.';

export function writes(files: readonly FilePreview[]): FilePreview[] {
  return files.filter((file) => WRITES.has(file.action));
}

export function conflicts(files: readonly FilePreview[]): FilePreview[] {
  return files.filter((file) => file.action === 'conflict');
}

/** "2 restored, 1 deleted, 1 conflict": how many files of each action, in a fixed order. */
export function countText(files: readonly FileOutcome[]): string {
  const counts = new Map<FileAction, number>();
  for (const file of files) counts.set(file.action, (counts.get(file.action) ?? 0) + 1);
  const parts = ORDER.filter((action) => counts.has(action)).map((action) => `${counts.get(action)} ${action}`);
  return parts.length ? parts.join(', ') : 'no file changed';
}

/** The outcome of a restore for a notification: the counts, then the files left as they are and why. */
export function outcomeText(files: readonly FileOutcome[], relative: (path: string) => string): string {
  const left = files
    .filter((file) => !WRITES.has(file.action) && file.reason !== UNCHANGED)
    .map((file) => `${relative(file.path)} (${file.reason ?? file.action})`);
  const counts = countText(files);
  return left.length ? `${counts}; left as they are: ${left.join(', ')}` : counts;
}

/** One line per file for the confirmation: action, path, why, and the commands that name it. */
export function previewLines(files: readonly FilePreview[], relative: (path: string) => string): string[] {
  const lines: string[] = [];
  for (const file of files) {
    lines.push(`${file.action}: ${relative(file.path)}${file.reason ? ` (${file.reason})` : ''}`);
    for (const command of file.commands ?? []) lines.push(`  a command on the way names it: ${command}`);
  }
  return lines;
}
