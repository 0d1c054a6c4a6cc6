// Turns the paths in the chat's rendered text into links, but only those that exist in the
// workspace: the webview cannot see files, so it asks the extension (`checkPaths`), which stats
// them, and links each path once the answer says it is there. A click opens it at its line.
import { findPathCandidates, type PathMatch, type PathTarget } from './pathText';

/** Text inside these is left alone: code blocks, links, buttons. */
const SKIPPED = 'pre, a, button, .path-link';

export class PathLinker {
  private readonly existing = new Map<string, boolean>();
  private readonly asked = new Set<string>();
  private readonly waiting = new Set<HTMLElement>();
  private toAsk: string[] = [];

  constructor(
    private readonly ask: (paths: string[]) => void,
    private readonly open: (target: PathTarget) => void,
  ) {}

  /** Links the known paths under `root` and asks about the others (answered by `answer`). */
  link(root: HTMLElement): void {
    let unanswered = false;
    for (const node of textNodes(root)) {
      const candidates = findPathCandidates(node.data);
      const known = candidates.filter((candidate) => {
        const exists = this.existing.get(candidate.path);
        if (exists === undefined) {
          unanswered = true;
          this.queue(candidate.path);
        }
        return exists === true;
      });
      if (known.length) this.wrap(node, known);
    }
    if (unanswered) this.waiting.add(root);
  }

  /** The extension's answer: which of the asked paths exist. */
  answer(existing: Record<string, boolean>): void {
    for (const [path, exists] of Object.entries(existing)) this.existing.set(path, exists);
    const waiting = [...this.waiting];
    this.waiting.clear();
    for (const root of waiting) if (root.isConnected) this.link(root);
  }

  /** An element for a path already known to exist (a tool card's file), opening `target` on click. */
  anchor(text: string, target: PathTarget): HTMLElement {
    const link = document.createElement('a');
    link.className = 'path-link';
    link.dataset.testid = 'path-link';
    link.dataset.path = target.path;
    if (target.line !== undefined) link.dataset.line = String(target.line);
    link.setAttribute('role', 'link');
    link.tabIndex = 0;
    link.title = `Open ${target.path}${target.line !== undefined ? ` at line ${target.line}` : ''}`;
    link.textContent = text;
    const open = (event: Event) => {
      event.preventDefault();
      event.stopPropagation();
      this.open(target);
    };
    link.addEventListener('click', open);
    link.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') open(event);
    });
    return link;
  }

  private queue(path: string): void {
    if (this.asked.has(path)) return;
    this.asked.add(path);
    if (this.toAsk.length === 0) {
      queueMicrotask(() => {
        const paths = this.toAsk;
        this.toAsk = [];
        this.ask(paths);
      });
    }
    this.toAsk.push(path);
  }

  private wrap(node: Text, matches: PathMatch[]): void {
    const text = node.data;
    // Inline code that is just the path (`src/app.py:42`): the code element becomes the link's text.
    const parent = node.parentElement;
    if (parent?.tagName === 'CODE' && matches.length === 1 && text.trim() === text.slice(matches[0].start, matches[0].end)) {
      const link = this.anchor('', targetOf(matches[0]));
      parent.replaceWith(link);
      link.append(parent);
      return;
    }
    const parts: Node[] = [];
    let at = 0;
    for (const match of matches) {
      if (match.start > at) parts.push(document.createTextNode(text.slice(at, match.start)));
      parts.push(this.anchor(text.slice(match.start, match.end), targetOf(match)));
      at = match.end;
    }
    if (at < text.length) parts.push(document.createTextNode(text.slice(at)));
    node.replaceWith(...parts);
  }
}

function targetOf(match: PathMatch): PathTarget {
  const { start: _start, end: _end, ...target } = match;
  return target;
}

function textNodes(root: HTMLElement): Text[] {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => (node.parentElement?.closest(SKIPPED) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  const nodes: Text[] = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node as Text);
  return nodes;
}
