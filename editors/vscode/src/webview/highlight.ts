// Code blocks in the chat: highlighted per language by highlight.js (bundled into the webview, its
// common languages; no network), coloured by media/chat.css from the theme's own variables so
// light, dark and high-contrast themes all apply, and each given a header with its language and
// a Copy button.
import hljs from 'highlight.js/lib/common';

/** Longer blocks are shown plain: highlighting them would stall the view for little gain. */
const HIGHLIGHT_LIMIT = 100_000;

const ALIASES: Record<string, string> = { sh: 'bash', shell: 'bash', zsh: 'bash', console: 'bash', py: 'python', ts: 'typescript', js: 'javascript' };

/** The highlight.js language for a fence's info string (`python`, `ts {1,3}`), if it knows one. */
export function languageOf(info: string): string | undefined {
  const name = info.trim().split(/\s+/)[0]?.toLowerCase() ?? '';
  if (!name) return undefined;
  const known = ALIASES[name] ?? name;
  return hljs.getLanguage(known) ? known : undefined;
}

/** A fence's body as highlighted HTML (escaped), or '' for markdown-it to escape it as plain text. */
export function highlightCode(code: string, info: string): string {
  const language = languageOf(info);
  if (!language || code.length > HIGHLIGHT_LIMIT) return '';
  try {
    return hljs.highlight(code, { language, ignoreIllegals: true }).value;
  } catch {
    return '';
  }
}

/**
 * Gives each `<pre>` of rendered markdown under `root` a header: the language and a Copy button,
 * which hands the block's text to `copy` (the extension writes it to the clipboard).
 */
export function decorateCodeBlocks(root: HTMLElement, copy: (text: string) => void): void {
  for (const pre of Array.from(root.querySelectorAll<HTMLPreElement>('pre:not([data-decorated])'))) {
    pre.dataset.decorated = 'true';
    const code = pre.querySelector('code');
    const language = /(?:^|\s)language-([\w+#-]+)/.exec(code?.className ?? '')?.[1] ?? '';
    const block = document.createElement('div');
    block.className = 'code-block';
    block.dataset.testid = 'code-block';
    if (language) block.dataset.language = language;
    const header = document.createElement('div');
    header.className = 'code-header';
    const label = document.createElement('span');
    label.className = 'code-language';
    label.textContent = language;
    const button = document.createElement('button');
    button.className = 'code-copy secondary';
    button.dataset.testid = 'code-copy';
    button.textContent = 'Copy';
    button.title = 'Copy the code';
    button.addEventListener('click', () => {
      copy((code ?? pre).textContent ?? '');
      button.textContent = 'Copied';
      setTimeout(() => (button.textContent = 'Copy'), 1500);
    });
    header.append(label, button);
    pre.replaceWith(block);
    block.append(header, pre);
  }
}
