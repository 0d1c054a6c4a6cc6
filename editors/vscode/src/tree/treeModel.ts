// How the session tree names and draws an entry: its kind ("You", "Pi", "Compaction", …), its
// codicon, and what a context edit did to it. The tree itself is windowed (treeWindow.ts).
import type { TreeEntry } from '../protocol';

const KIND_TITLES: Record<string, string> = {
  user: 'You',
  assistant: 'Pi',
  toolResult: 'Tool result',
  bashExecution: 'Shell',
  compaction: 'Compaction',
  branch_summary: 'Branch summary',
  model_change: 'Model',
  thinking_level_change: 'Thinking',
  label: 'Label',
  session_info: 'Name',
  custom_message: 'Message',
  system: 'System prompt',
  context_edit: 'Context edit',
  usage: 'Usage',
};

/** The short kind an entry is shown with ("You", "Pi", "Compaction", …). */
export function entryKind(entry: TreeEntry): string {
  const key = entry.type === 'message' ? entry.role ?? 'message' : entry.type;
  return KIND_TITLES[key] ?? key;
}

/** The codicon an entry is shown with. */
export function entryIcon(entry: TreeEntry): string {
  const key = entry.type === 'message' ? entry.role ?? '' : entry.type;
  const icons: Record<string, string> = {
    user: 'account',
    assistant: 'hubot',
    toolResult: 'tools',
    bashExecution: 'terminal',
    compaction: 'fold',
    branch_summary: 'git-merge',
    model_change: 'settings-gear',
    thinking_level_change: 'lightbulb',
    label: 'tag',
    session_info: 'edit',
    system: 'gear',
    context_edit: 'eye-closed',
    usage: 'graph',
  };
  return icons[key] ?? 'circle-small';
}

/** What a context edit (pi 1.6) on the active path did to the entry, in words; undefined if nothing. */
export function contextEditText(entry: TreeEntry): string | undefined {
  switch (entry.contextEdit) {
    case 'removed':
      return 'removed from context';
    case 'replaced':
      return 'replaced in context';
    default:
      return undefined;
  }
}
