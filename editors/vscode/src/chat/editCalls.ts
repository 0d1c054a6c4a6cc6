// What an edit tool call changed, read from its arguments (pure: the webview decides whether a
// card offers "Open diff", the extension rebuilds the text before the edit).

export interface Replacement {
  oldText: string;
  newText: string;
}

/** An edit call's replacements: pi 1.6's `edits: [{oldText, newText}]` or 0.84's single pair. */
export function editReplacements(args: unknown): Replacement[] {
  if (!args || typeof args !== 'object') return [];
  const record = args as Record<string, unknown>;
  const list = Array.isArray(record.edits) ? record.edits : [record];
  return list.flatMap((edit) => {
    const pair = edit as Record<string, unknown> | null;
    return pair && typeof pair.oldText === 'string' && typeof pair.newText === 'string' ? [{ oldText: pair.oldText, newText: pair.newText }] : [];
  });
}

/** The text before `replacements` were applied to give `after`, or undefined when one is not found. */
export function textBefore(after: string, replacements: readonly Replacement[]): string | undefined {
  let text = after;
  for (const { oldText, newText } of [...replacements].reverse()) {
    const at = newText === '' ? -1 : text.indexOf(newText);
    if (at < 0) return undefined;
    text = text.slice(0, at) + oldText + text.slice(at + newText.length);
  }
  return text;
}
