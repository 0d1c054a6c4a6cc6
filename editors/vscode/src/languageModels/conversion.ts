// pi-lsp's `pi/languageModel/chat` messages → VS Code's LanguageModelChatMessage parts, and the
// answer's parts back to `pi/languageModel/part` (pure: the VS Code classes come in as a
// factory, so the mapping is unit-tested without VS Code). The server already put the
// conversation in the two roles VS Code knows (see docs/protocol.md); this is a thin mapping.
import type { LanguageModelContent, LanguageModelMessage, LanguageModelPart } from '../protocol';

/** What the mapping builds, with VS Code's classes (or a test's records). */
export interface PartFactory<Message, Part> {
  user(parts: Part[]): Message;
  assistant(parts: Part[]): Message;
  text(value: string): Part;
  toolCall(callId: string, name: string, input: object): Part;
  toolResult(callId: string, content: Part[]): Part;
  /** An image part, or undefined where this VS Code takes none. */
  image(data: Uint8Array, mimeType: string): Part | undefined;
}

export const IMAGE_PLACEHOLDER = '(image omitted: this VS Code cannot send images to the model)';

export function toChatMessages<Message, Part>(messages: LanguageModelMessage[], make: PartFactory<Message, Part>): Message[] {
  return messages.map((message) => {
    const parts = message.content.map((part) => toPart(part, make));
    return message.role === 'assistant' ? make.assistant(parts) : make.user(parts);
  });
}

function toPart<Message, Part>(part: LanguageModelPart, make: PartFactory<Message, Part>): Part {
  switch (part.type) {
    case 'toolCall':
      return make.toolCall(part.callId ?? '', part.name ?? '', part.input ?? {});
    case 'toolResult':
      return make.toolResult(part.callId ?? '', (part.content ?? []).map((piece) => contentPart(piece, make)));
    case 'image':
      return imagePart(part.data, part.mimeType, make);
    default:
      return make.text(part.text ?? '');
  }
}

function contentPart<Message, Part>(piece: LanguageModelContent, make: PartFactory<Message, Part>): Part {
  return piece.type === 'image' ? imagePart(piece.data, piece.mimeType, make) : make.text(piece.text ?? '');
}

function imagePart<Message, Part>(data: string | undefined, mimeType: string | undefined, make: PartFactory<Message, Part>): Part {
  return make.image(Buffer.from(data ?? '', 'base64'), mimeType ?? 'image/png') ?? make.text(IMAGE_PLACEHOLDER);
}

/** One part of the model's answer, as VS Code streams it. */
export type AnswerPart =
  | { kind: 'text'; value: string }
  | { kind: 'thinking'; value: string }
  | { kind: 'toolCall'; callId: string; name: string; input: object };

/** The `pi/languageModel/part` of an answer's part (undefined for an empty one). */
export function fromAnswerPart(part: AnswerPart): LanguageModelPart | undefined {
  if (part.kind === 'toolCall') return { type: 'toolCall', callId: part.callId, name: part.name, input: part.input as Record<string, unknown> };
  if (!part.value) return undefined;
  return { type: part.kind, text: part.value };
}
