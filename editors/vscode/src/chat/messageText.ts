// Reads the parts the chat shows out of pi's message content, which is either a string or a list
// of blocks (`text`, `thinking`, `toolCall`, `image`).

type Block = { type?: unknown; [key: string]: unknown };

function blocks(content: unknown): Block[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content.filter((block): block is Block => typeof block === 'object' && block !== null) : [];
}

function joined(content: unknown, type: string, field: string): string {
  return blocks(content)
    .filter((block) => block.type === type && typeof block[field] === 'string')
    .map((block) => block[field] as string)
    .join('');
}

export function messageText(content: unknown): string {
  return joined(content, 'text', 'text');
}

export function thinkingText(content: unknown): string {
  return joined(content, 'thinking', 'thinking');
}

/** An image of a message, as the chat shows it (a `data:` URL of its bytes). */
export interface ImageView {
  mimeType: string;
  data: string;
}

/** Raster formats only: the view shows them as `data:` URLs, which its CSP allows for images. */
const SHOWN_IMAGE_TYPES = /^image\/(png|jpeg|gif|webp)$/;

/** The images of a message's content (pi's `{type: "image", data, mimeType}` blocks). */
export function messageImages(content: unknown): ImageView[] {
  return blocks(content)
    .filter((block) => block.type === 'image' && typeof block.data === 'string' && SHOWN_IMAGE_TYPES.test(String(block.mimeType)))
    .map((block) => ({ mimeType: String(block.mimeType), data: block.data as string }));
}

export interface ToolCallBlock {
  id: string;
  name: string;
  arguments: unknown;
}

export function toolCalls(content: unknown): ToolCallBlock[] {
  return blocks(content)
    .filter((block) => block.type === 'toolCall')
    .map((block) => ({ id: String(block.id ?? ''), name: String(block.name ?? ''), arguments: block.arguments }));
}

/** A tool result's text; its images are mentioned here and shown apart (`messageImages`). */
export function toolResultText(content: unknown): string {
  return blocks(content)
    .map((block) => (block.type === 'text' ? String(block.text ?? '') : block.type === 'image' ? '[image]' : ''))
    .filter((part) => part !== '')
    .join('\n');
}

export interface SkillInvocation {
  name: string;
  args: string;
  body: string;
}

const SKILL_BLOCK = /^<skill name="([^"]+)"[^>]*>\n?([\s\S]*?)\n?<\/skill>(?:\n\n([\s\S]*))?$/;

/** A prompt the server expanded from `/skill:name args` (pi's `<skill>` block), read back. */
export function skillInvocation(text: string): SkillInvocation | undefined {
  const match = SKILL_BLOCK.exec(text);
  return match ? { name: match[1], body: match[2], args: match[3] ?? '' } : undefined;
}

/** A one-line preview of a skill prompt ("/skill:review app.py") instead of its expanded block. */
export function skillPreview(preview: string): string {
  const match = /^<skill name="([^"]+)"/.exec(preview);
  return match ? `/skill:${match[1]}` : preview;
}
