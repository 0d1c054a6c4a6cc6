// The chat's markdown bodies, built lazily: a body far from view holds its plain text (so the
// transcript's text is all there at once, cheaply), and gets its markdown, highlighted code,
// Copy buttons and file links when it comes near the view, or before, a few at a time while the
// view is idle. With hundreds of messages loaded, opening the chat costs only what it shows, and
// scrolling finds the bodies built.
import { decorateCodeBlocks } from './highlight';
import type { PathLinker } from './links';
import { renderMarkdown } from './markdown';

/** How far outside the view a body is built ahead of being scrolled to. */
const AHEAD = '1200px 0px';
/**
 * An idle slice builds bodies for at most this long (ms): the layout they cause comes after, and
 * slice and layout together must stay well under a long task (50 ms) so a scroll is never held up.
 */
const IDLE_BUDGET_MS = 8;

export class RichText {
  /** Bodies not built yet, in the order drawn; the idle builder takes the newest first. */
  private readonly pending = new Map<HTMLElement, string>();
  private readonly observer: IntersectionObserver;
  private idle: number | undefined;

  constructor(
    root: HTMLElement,
    private readonly linker: PathLinker,
    private readonly copy: (text: string) => void,
  ) {
    this.observer = new IntersectionObserver((entries) => this.onSeen(entries), { root, rootMargin: AHEAD });
  }

  /** A markdown body: built now when `eager` (the newest items), else when it nears the view. */
  markdown(text: string, eager: boolean, testid?: string): HTMLElement {
    const body = document.createElement('div');
    body.className = 'text markdown';
    if (testid) body.dataset.testid = testid;
    if (eager) {
      this.fill(body, text);
    } else {
      body.classList.add('pending');
      body.textContent = text;
      this.pending.set(body, text);
      this.observer.observe(body);
      this.idle ??= requestIdleCallback((deadline) => this.buildWhileIdle(deadline));
    }
    return body;
  }

  /** Links the existing files named in `root` (a part drawn outside markdown, such as a card). */
  link(root: HTMLElement): void {
    this.linker.link(root);
  }

  private fill(body: HTMLElement, text: string): void {
    body.innerHTML = renderMarkdown(text);
    decorateCodeBlocks(body, this.copy);
    this.linker.link(body);
  }

  private onSeen(entries: IntersectionObserverEntry[]): void {
    for (const entry of entries) if (entry.isIntersecting) this.build(entry.target as HTMLElement);
  }

  private build(body: HTMLElement): void {
    const text = this.pending.get(body);
    this.observer.unobserve(body);
    if (text === undefined) return;
    this.pending.delete(body);
    body.classList.remove('pending');
    if (body.isConnected) this.fill(body, text);
  }

  private buildWhileIdle(deadline: IdleDeadline): void {
    this.idle = undefined;
    const stop = performance.now() + Math.min(IDLE_BUDGET_MS, deadline.timeRemaining());
    const newestFirst = [...this.pending.keys()].reverse();
    for (const body of newestFirst) {
      if (performance.now() >= stop) break;
      this.build(body);
    }
    if (this.pending.size) this.idle = requestIdleCallback((next) => this.buildWhileIdle(next));
  }
}
