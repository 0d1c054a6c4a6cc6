// The chat's markdown bodies, built lazily: a body far from view holds its plain text (so the
// transcript's text is all there at once, cheaply), and gets its markdown, highlighted code,
// Copy buttons and file links only when it comes near the view. With hundreds of messages
// loaded, opening and scrolling the chat stays cheap: offscreen bodies are never parsed.
import { decorateCodeBlocks } from './highlight';
import type { PathLinker } from './links';
import { renderMarkdown } from './markdown';

/** How far outside the view a body is built ahead of being scrolled to. */
const AHEAD = '1200px 0px';

export class RichText {
  private readonly pending = new WeakMap<Element, string>();
  private readonly observer: IntersectionObserver;

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
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      const body = entry.target as HTMLElement;
      const text = this.pending.get(body);
      this.observer.unobserve(body);
      if (text === undefined) continue;
      this.pending.delete(body);
      body.classList.remove('pending');
      this.fill(body, text);
    }
  }
}
