// What an edit or write tool call changed, read from its arguments (pure: the webview decides
// whether a card offers "Open diff", the extension rebuilds the text before the change).

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

/** An overwriting write's change: the text it wrote and its patch (the card's diff lines). */
export interface WrittenChange {
  content: string;
  diff: string[];
}

/** A write call's change when its card has the overwrite's patch; else undefined. */
export function writtenChange(args: unknown, card: { kind: string; created?: boolean; diff?: string[] } | undefined): WrittenChange | undefined {
  const content = args && typeof args === 'object' ? (args as Record<string, unknown>).content : undefined;
  if (card?.kind !== 'write' || card.created !== false || !card.diff?.length || typeof content !== 'string') return undefined;
  return { content, diff: card.diff };
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
