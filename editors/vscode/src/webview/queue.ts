// The queue under the chat's input: the prompts waiting for the running turn (steering first,
// then follow-ups, as the agent takes them), each editable in place and removable. pi's own
// interactive mode shows them under its editor the same way.
import type { QueueView } from '../chat/reducer';
import type { QueuedPromptInfo } from '../protocol';

export interface QueueActions {
  remove(id: string): void;
  edit(id: string, text: string): void;
}

/** Draws `queue` into `list` (hidden when empty); a row being edited keeps its editor. */
export function renderQueue(list: HTMLElement, queue: QueueView, actions: QueueActions): void {
  const prompts = [...queue.steering.map((prompt) => ['steer', prompt] as const), ...queue.followUp.map((prompt) => ['followUp', prompt] as const)];
  list.hidden = prompts.length === 0;
  const editing = list.querySelector<HTMLElement>('li.editing');
  const editingId = editing?.dataset.id;
  list.replaceChildren(
    ...prompts.map(([kind, prompt]) =>
      prompt.id === editingId && editing ? editing : queueRow(kind, prompt, actions),
    ),
  );
}

function queueRow(kind: 'steer' | 'followUp', prompt: QueuedPromptInfo, actions: QueueActions): HTMLLIElement {
  const row = document.createElement('li');
  row.className = `queue-item ${kind}`;
  row.dataset.id = prompt.id;
  row.dataset.testid = 'queued-prompt';
  const label = document.createElement('span');
  label.className = 'queued-kind';
  label.textContent = kind === 'steer' ? 'Steer' : 'Follow-up';
  const text = textOf(row, prompt, actions);
  const edit = button('✎', 'Edit this queued prompt', 'queued-edit', () => startEditing(row, prompt, actions));
  const remove = button('✕', 'Take this prompt out of the queue', 'queued-remove', () => actions.remove(prompt.id));
  row.append(label, text, edit, remove);
  return row;
}

function startEditing(row: HTMLLIElement, prompt: QueuedPromptInfo, actions: QueueActions): void {
  row.classList.add('editing');
  const editor = document.createElement('input');
  editor.className = 'queued-editor';
  editor.dataset.testid = 'queued-editor';
  editor.value = prompt.text;
  editor.setAttribute('aria-label', 'Queued prompt (Enter to save, Escape to cancel)');
  const finish = (save: boolean) => {
    row.classList.remove('editing');
    const text = editor.value;
    editor.replaceWith(textOf(row, prompt, actions));
    if (save && text.trim() && text !== prompt.text) actions.edit(prompt.id, text);
  };
  editor.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') finish(true);
    else if (event.key === 'Escape') finish(false);
    else return;
    event.preventDefault();
    event.stopPropagation();
  });
  editor.addEventListener('blur', () => row.classList.contains('editing') && finish(true));
  row.querySelector('.queued-text')?.replaceWith(editor);
  editor.focus();
  editor.select();
}

function textOf(row: HTMLLIElement, prompt: QueuedPromptInfo, actions: QueueActions): HTMLSpanElement {
  const text = document.createElement('span');
  text.className = 'queued-text';
  text.dataset.testid = 'queued-text';
  text.textContent = prompt.text;
  text.title = 'Click to edit';
  text.addEventListener('click', () => startEditing(row, prompt, actions));
  return text;
}

function button(label: string, title: string, className: string, onClick: () => void): HTMLButtonElement {
  const element = document.createElement('button');
  element.className = `secondary ${className}`;
  element.dataset.testid = className;
  element.textContent = label;
  element.title = title;
  element.setAttribute('aria-label', title);
  element.addEventListener('click', onClick);
  return element;
}
