// The messages between the extension host and the chat webview, both directions.
import type { QuestionView } from '../permissions';
import type { EventNotification, KeyStatus } from '../protocol';
import type { Replacement, WrittenChange } from './editCalls';
import type { ChatState, LocalAction } from './reducer';

export interface Completion {
  /** What is inserted: `/skill:name` or `/template`. */
  insert: string;
  description: string;
  kind: 'skill' | 'template';
}

export interface ModelInfo {
  model: string | null;
  thinkingLevel: string | null;
  provider: string | null;
  /** `missing`: the model needs a key it does not have; null: no model (or no state yet). */
  keyStatus: KeyStatus | null;
  /** The server has told the session's state (before that, "no model" means nothing). */
  known: boolean;
}

/** Whether pi-lsp runs; `generation` counts its starts, so a client can tell a restart happened. */
export interface ServerStatus {
  state: 'starting' | 'running' | 'stopped';
  generation: number;
  /** Why the server is stopped, when its start failed (no Python found, a broken pi.server.path). */
  problem?: string;
}

/** How many MCP servers there are and how they are doing (the chat header's MCP button). */
export interface McpSummary {
  total: number;
  connected: number;
  connecting: number;
  failed: number;
}

export type ToWebview =
  | { type: 'reset'; state: ChatState; model: ModelInfo; completions: Completion[] }
  | { type: 'event'; notification: EventNotification }
  | { type: 'action'; action: LocalAction }
  | { type: 'model'; model: ModelInfo }
  | { type: 'completions'; items: Completion[] }
  | { type: 'editorText'; text: string }
  /** Queued prompts taken back by Stop: put before what the input holds (pi's Esc). */
  | { type: 'restoreQueued'; text: string }
  | { type: 'server'; status: ServerStatus }
  /** Scroll to the message of an entry and highlight it (the Context view's "Show in Chat"). */
  | { type: 'revealEntry'; entryId: string }
  | { type: 'mcp'; summary: McpSummary }
  /** Which of the paths the webview asked about (`checkPaths`) are files of the workspace. */
  | { type: 'paths'; existing: Record<string, boolean> }
  /** A permission question is waiting for the user (in the running call's card), or none waits. */
  | { type: 'question'; question?: QuestionView };

export type FromWebview =
  | { type: 'ready' }
  | { type: 'prompt'; text: string; behavior?: 'steer' | 'followUp' }
  /** Esc or Stop: take the queued prompts back into the input, then stop the turn. */
  | { type: 'abort' }
  /** Take one queued prompt back (its ✕ in the queue under the input). */
  | { type: 'removeQueued'; id: string }
  /** Give one queued prompt a new text (edited in the queue under the input). */
  | { type: 'editQueued'; id: string; text: string }
  | { type: 'compact' }
  | { type: 'pickModel' }
  | { type: 'newSession' }
  /** Store an API key (for `provider`, else asking which). */
  | { type: 'setApiKey'; provider?: string }
  | { type: 'useLocalServer' }
  /** "Use a model VS Code provides (Copilot…)": the models of VS Code's Language Model API. */
  | { type: 'useEditorModel' }
  /** The MCP servers' quick pick (the header's MCP button). */
  | { type: 'pickMcp' }
  /** The user scrolled to the top (or clicked "Load earlier messages"): the page before `before`. */
  | { type: 'loadEarlier'; before: string }
  /** The context meter was clicked: open the Context view. */
  | { type: 'openContext' }
  /** A file link was clicked (a path relative to the workspace, or absolute), with its 1-based lines. */
  | { type: 'openFile'; path: string; line?: number; endLine?: number; column?: number }
  /** Paths seen in the chat's text: answered with `paths`, so only existing files become links. */
  | { type: 'checkPaths'; paths: string[] }
  /** A code block's Copy button. */
  | { type: 'copyText'; text: string }
  /** A permission question's button in its card: `answer` is one of the three answers. */
  | { type: 'answerQuestion'; id: number; answer: string }
  /**
   * A change card's "Open diff": the file before the change ↔ now. Before: the edit's replacements
   * undone on the file, the overwrite's patch undone on what it wrote (`written`), or empty.
   */
  | { type: 'openDiff'; path: string; replacements: Replacement[]; created: boolean; written?: WrittenChange };
