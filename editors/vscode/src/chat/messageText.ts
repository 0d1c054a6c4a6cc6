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

/** A tool result's text; images are mentioned rather than shown. */
export function toolResultText(content: unknown): string {
  return blocks(content)
    .map((block) => (block.type === 'text' ? String(block.text ?? '') : block.type === 'image' ? '[image]' : ''))
    .filter((part) => part !== '')
    .join('\n');
}
