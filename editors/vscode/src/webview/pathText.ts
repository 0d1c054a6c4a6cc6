// Finds what looks like a file path in the chat's text (`src/app.py`, `app.py:42`, `lib/x.ts:3:7`,
// `notes/a.md:10-20`): the candidates the extension then checks against the workspace. Pure, so
// the unit tests run it without a browser.

export interface PathTarget {
  path: string;
  /** 1-based. */
  line?: number;
  /** 1-based, the last line of a range (`:10-20`). */
  endLine?: number;
  /** 1-based. */
  column?: number;
}

export interface PathMatch extends PathTarget {
  start: number;
  end: number;
}

/** At most this many candidates per text, so a listing of thousands of names stays cheap. */
const MAX_CANDIDATES = 200;

// A path: a name with an extension (`app.py`), or names joined by slashes (`src/app`, `./x`,
// `/etc/hosts`), not part of a URL or of a longer word; then `:line`, `:line:column` or `:line-end`.
const SEGMENT = String.raw`[\w@+-][\w.@+-]*`;
const LAST_SEGMENT = String.raw`[\w@+-](?:[\w.@+-]*[\w@+-])?`;
const START = String.raw`(?:\.{1,2}\/|\/)?`;
const PATH_PATTERN = new RegExp(
  String.raw`(?<![\w/.:@~-])(${START}(?:${SEGMENT}\/)*${SEGMENT}\.[A-Za-z0-9]{1,12}|${START}(?:${SEGMENT}\/)+${LAST_SEGMENT})` +
    String.raw`(?::(\d+)(?::(\d+)|-(\d+))?)?(?![\w/])`,
  'g',
);

/** Version numbers, sizes, abbreviations (e.g) and the like, which look like names with an extension. */
const NOT_A_PATH = /^[\d.]+$|^\d+(?:\.\d+)*[a-z]{1,3}$|^[a-z]\.[a-z]$/i;

export function findPathCandidates(text: string): PathMatch[] {
  const found: PathMatch[] = [];
  for (const match of text.matchAll(PATH_PATTERN)) {
    const path = match[1];
    if (NOT_A_PATH.test(path)) continue;
    const start = match.index ?? 0;
    const candidate: PathMatch = { path, start, end: start + match[0].length };
    if (match[2]) candidate.line = Number(match[2]);
    if (match[3]) candidate.column = Number(match[3]);
    if (match[4]) candidate.endLine = Number(match[4]);
    found.push(candidate);
    if (found.length >= MAX_CANDIDATES) break;
  }
  return found;
}
