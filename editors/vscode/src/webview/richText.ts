// The chat's markdown bodies: the markdown rendered (highlight.js colouring its code blocks),
// each code block given its Copy button, and the paths that exist in the workspace made links.
import { decorateCodeBlocks } from './highlight';
import type { PathLinker } from './links';
import { renderMarkdown } from './markdown';

export class RichText {
  constructor(
    private readonly linker: PathLinker,
    private readonly copy: (text: string) => void,
  ) {}

  markdown(text: string, testid?: string): HTMLElement {
    const body = document.createElement('div');
    body.className = 'text markdown';
    if (testid) body.dataset.testid = testid;
    body.innerHTML = renderMarkdown(text);
    decorateCodeBlocks(body, this.copy);
    this.linker.link(body);
    return body;
  }
}
