// The text an overwriting `write` replaced, for its card's "Open diff": the call's `content` is
// the text after, and its patch (the card's diff lines) goes from before to after, so undoing the
// patch on the content gives the text before exactly. jsdiff parses, reverses and applies it.
import { applyPatch, parsePatch, reversePatch } from 'diff';

/** The text before the write, or undefined when the patch does not fit the content. */
export function textBeforeWrite(content: string, diff: readonly string[]): string | undefined {
  // The server worked the patch out without a byte-order mark and with \n line breaks.
  const after = content.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  try {
    const patches = parsePatch(`${diff.join('\n')}\n`);
    if (patches.length !== 1 || !patches[0].hunks.length) return undefined;
    const before = applyPatch(after, reversePatch(patches[0]));
    return before === false ? undefined : before;
  } catch {
    return undefined; // not a unified diff
  }
}
