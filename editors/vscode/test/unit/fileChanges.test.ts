// The words for what a restore of the files would do or did.
import { describe, expect, it } from 'vitest';
import { conflicts, countText, outcomeText, previewLines, writes } from '../../src/files/fileChanges';
import type { FilePreview } from '../../src/protocol';

const relative = (path: string) => path.replace('/project/', '');

function file(path: string, action: FilePreview['action'], extra: Partial<FilePreview> = {}): FilePreview {
  return { path: `/project/${path}`, action, diff: '', ...extra };
}

const FILES = [
  file('a.txt', 'restored'),
  file('sub/new.txt', 'deleted'),
  file('mine.txt', 'conflict', { reason: 'changed since pi-lsp last wrote it' }),
  file('logo.png', 'skipped', { reason: 'binary content' }),
  file('same.txt', 'skipped', { reason: 'already as it was there' }),
  file('old.txt', 'created', { commands: ['sed -i s/a/b/ old.txt'] }),
];

describe('file changes', () => {
  it('tells the files written from the conflicts', () => {
    expect(writes(FILES).map((item) => relative(item.path))).toEqual(['a.txt', 'sub/new.txt', 'old.txt']);
    expect(conflicts(FILES).map((item) => relative(item.path))).toEqual(['mine.txt']);
  });

  it('counts each action in a fixed order', () => {
    expect(countText(FILES)).toBe('1 restored, 1 created, 1 deleted, 1 conflict, 2 skipped');
    expect(countText([])).toBe('no file changed');
  });

  it('names the files left as they are and why, but not those already right', () => {
    expect(outcomeText(FILES, relative)).toBe(
      '1 restored, 1 created, 1 deleted, 1 conflict, 2 skipped; left as they are: '
        + 'mine.txt (changed since pi-lsp last wrote it), logo.png (binary content)',
    );
    expect(outcomeText([file('a.txt', 'restored')], relative)).toBe('1 restored');
  });

  it('lists each file with its reason and the commands that name it', () => {
    expect(previewLines(FILES.slice(2, 3).concat(FILES.slice(5)), relative)).toEqual([
      'conflict: mine.txt (changed since pi-lsp last wrote it)',
      'created: old.txt',
      '  a command on the way names it: sed -i s/a/b/ old.txt',
    ]);
  });
});
