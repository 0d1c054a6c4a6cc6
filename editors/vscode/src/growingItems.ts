// The items of a quick pick fetched again as the user types (the model, provider and local model
// pickers). VS Code reports a choice as the index of the chosen item in the list it shows, and
// that report may cross a replacement of the items (the server's answer to what was typed
// arriving as the user clicks): the index would then name another item, or none, and another
// model would be set, or the click lost. So such a list only grows while the pick is open: an
// item keeps its index, an item fetched again is updated in place, and VS Code's own filter on
// the typed text hides those the latest fetch no longer returned.

/**
 * `shown` with the items of `next` put in: one with the key of a shown item takes its place, the
 * others are added at the end, in their order. Shown items `next` lacks go through `stale`.
 */
export function growItems<T>(shown: readonly T[], next: readonly T[], key: (item: T) => string, stale: (item: T) => T = (item) => item): T[] {
  const fresh = new Map<string, T>();
  for (const item of next) if (!fresh.has(key(item))) fresh.set(key(item), item);
  const grown = shown.map((item) => fresh.get(key(item)) ?? stale(item));
  const present = new Set(shown.map(key));
  for (const [itemKey, item] of fresh) {
    if (!present.has(itemKey)) grown.push(item);
  }
  return grown;
}
