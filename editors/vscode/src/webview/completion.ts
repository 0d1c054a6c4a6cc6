// `/skill:` and prompt-template completion for the chat input: which completions match what is
// typed, and what the input becomes when one is accepted. Pure, so the logic is unit tested.
import type { Completion } from '../chat/messages';

/** The completions for `input` with the caret at `caret`: only while typing the first word, after "/". */
export function matchingCompletions(input: string, caret: number, completions: Completion[]): Completion[] {
  const word = input.slice(0, caret);
  if (!word.startsWith('/') || /\s/.test(word)) return [];
  const typed = word.toLowerCase();
  return completions
    .filter((completion) => completion.insert.toLowerCase().startsWith(typed) || completion.insert.toLowerCase().includes(typed.slice(1)))
    .sort((a, b) => Number(!a.insert.toLowerCase().startsWith(typed)) - Number(!b.insert.toLowerCase().startsWith(typed)))
    .slice(0, 20);
}

/** The input with its first word replaced by the completion, followed by one space. */
export function acceptCompletion(input: string, completion: Completion): { text: string; caret: number } {
  const rest = input.replace(/^\S*\s?/, '');
  const text = `${completion.insert} ${rest}`;
  return { text, caret: completion.insert.length + 1 };
}
