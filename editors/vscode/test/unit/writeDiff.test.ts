// An overwriting write's "Open diff": the text before is its patch (made by the server's
// generate_unified_patch, as the card's diff lines) undone on the content it wrote.
import { describe, expect, it } from 'vitest';
import { writtenChange } from '../../src/chat/editCalls';
import { textBeforeWrite } from '../../src/chat/writeDiff';

const TWELVE = 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\ntwelve\n';

describe('a write undone for the diff view', () => {
  it('rebuilds the text before from two hunks, one ending without a line break', () => {
    const after = TWELVE.replace('three', 'THREE') + 'thirteen';
    const diff = ['@@ -1,7 +1,7 @@', ' one', ' two', '-three', '+THREE', ' four', ' five', ' six', ' seven',
      '@@ -9,4 +9,5 @@', ' nine', ' ten', ' eleven', ' twelve', '+thirteen', '\\ No newline at end of file'];
    expect(textBeforeWrite(after, diff)).toBe(TWELVE);
  });

  it('keeps a removed line that starts with dashes, and undoes a write that emptied the file', () => {
    expect(textBeforeWrite('select 1;\n', ['@@ -1,2 +1,1 @@', '--- a comment', ' select 1;'])).toBe('-- a comment\nselect 1;\n');
    expect(textBeforeWrite('', ['@@ -1,1 +0,0 @@', '-gone'])).toBe('gone\n');
  });

  it('reads content written with CRLF line breaks as the server diffed it', () => {
    expect(textBeforeWrite('a\r\nB\r\n', ['@@ -1,2 +1,2 @@', ' a', '-b', '+B'])).toBe('a\nb\n');
  });

  it('gives up when the patch does not fit the content, or is no patch', () => {
    expect(textBeforeWrite('other text\n', ['@@ -1,1 +1,1 @@', '-old', '+new'])).toBeUndefined();
    expect(textBeforeWrite('x\n', ['not a diff'])).toBeUndefined();
  });

  it('is offered for an overwrite whose card has the patch, not for a created file', () => {
    const card = { kind: 'write', created: false, diff: ['@@ -1,1 +1,1 @@', '-a', '+b'] };
    expect(writtenChange({ path: 'f', content: 'b\n' }, card)).toEqual({ content: 'b\n', diff: card.diff });
    expect(writtenChange({ path: 'f', content: 'b\n' }, { ...card, created: true })).toBeUndefined();
    expect(writtenChange({ path: 'f', content: 'b\n' }, { ...card, diff: undefined })).toBeUndefined();
    expect(writtenChange({ path: 'f' }, card)).toBeUndefined();
    expect(writtenChange({ path: 'f', content: 'b\n' }, { ...card, kind: 'edit' })).toBeUndefined();
  });
});
