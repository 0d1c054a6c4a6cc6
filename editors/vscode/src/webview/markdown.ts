// Markdown to HTML for the chat, sanitized by construction: markdown-it with raw HTML disabled
// escapes every tag, and its link validation drops javascript:, vbscript: and data: URLs. Fenced
// code is highlighted by highlight.js, which escapes the code it marks up.
import MarkdownIt from 'markdown-it';
import { highlightCode } from './highlight';

const markdown = new MarkdownIt({ html: false, linkify: false, breaks: false, typographer: false, highlight: highlightCode });

// Links open through VS Code (the webview blocks navigation); a title shows where they go.
const defaultLinkOpen = markdown.renderer.rules.link_open ?? ((tokens, index, options, _env, self) => self.renderToken(tokens, index, options));
markdown.renderer.rules.link_open = (tokens, index, options, env, self) => {
  const token = tokens[index];
  token.attrSet('title', token.attrGet('href') ?? '');
  return defaultLinkOpen(tokens, index, options, env, self);
};

export function renderMarkdown(text: string): string {
  return markdown.render(text);
}
