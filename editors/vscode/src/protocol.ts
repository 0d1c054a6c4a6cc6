// The pi-lsp wire protocol as the extension sees it: every `pi/*` request with its params and
// result types, and every `pi/event` type with its fields. It mirrors pi_lsp/protocol.py and
// docs/protocol.md; tests/unit/test_protocol_vscode.py fails when they drift apart: a missing or
// extra field, `x?:` for a field the server may leave out, `| null` for one it may send as null.
// Interface names are the Python class names.

export const THINKING_LEVELS = ['off', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
export type ThinkingLevel = (typeof THINKING_LEVELS)[number];
export type StopReason = 'stop' | 'length' | 'toolUse' | 'error' | 'aborted';
export type CompactionReason = 'manual' | 'threshold' | 'overflow';
/** Where a provider's API key came from. */
export type KeySource = 'editor' | 'auth.json' | 'models.json' | 'environment';
export type KeyStatus = 'key' | 'local' | 'missing' | 'unknown';

export interface SessionParams {
  sessionId?: string;
}

export interface ImageContent {
  data: string;
  mimeType: string;
}

export interface PromptParams {
  text: string;
  sessionId?: string;
  images?: ImageContent[];
  streamingBehavior?: 'steer' | 'followUp';
}

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
}

export interface PromptResult {
  sessionId: string;
  leafId: string | null;
  stopReason: StopReason;
  errorMessage: string | null;
  usage: Usage | null;
  contextTokens: number | null;
  contextWindow: number;
}

export interface AbortResult {
  sessionId: string;
  aborted: boolean;
}

/**
 * `contextEdit` on tree and transcript entries: what a context edit (pi 1.6) on the active path
 * did to the entry's part of the model's context.
 */
export const CONTEXT_EDIT_EFFECTS = ['removed', 'replaced'] as const;
export type ContextEditEffect = (typeof CONTEXT_EDIT_EFFECTS)[number];

export interface TreeEntry {
  id: string;
  parentId: string | null;
  type: string;
  role?: string;
  preview: string;
  label?: string;
  contextEdit?: ContextEditEffect;
  timestamp: string | null;
}

export interface TreeResult {
  sessionId: string;
  leafId: string | null;
  name: string | null;
  labels: Record<string, string>;
  activePath: string[];
  roots: string[];
  children: Record<string, string[]>;
  entries: TreeEntry[];
}

/** An entry as a row of the windowed tree (pi/treeWindow, pi/treeChildren, pi/treeSearch, tree_changed). */
export interface TreeNodeRow {
  id: string;
  parentId: string | null;
  type: string;
  role?: string;
  preview: string;
  label?: string;
  contextEdit?: ContextEditEffect;
  timestamp: string | null;
  childCount: number;
  /** One of several children (or roots): the first entry of a branch. */
  branchStart: boolean;
  /** On the path from the root to the leaf. */
  active: boolean;
  /** Has rows under it: its branches, or (for a branch start) the run continuing the branch. */
  expandable: boolean;
}

/** Labels a change set, by entry id (null: the label was cleared). */
export type LabelChanges = Record<string, string | null>;

/** The contextEdit marks a change's context edits changed, by entry id (null: none applies now). */
export type ContextEditChanges = Record<string, ContextEditEffect | null>;

/** A window of the rows under `parentId` (null: the top level): `total` rows, these from `offset` on. */
export interface TreeLevel {
  parentId: string | null;
  total: number;
  offset: number;
  rows: TreeNodeRow[];
}

export interface TreeWindowParams {
  sessionId?: string;
  targetId?: string;
  limit?: number;
}

export interface TreeWindowResult {
  sessionId: string;
  version: number;
  leafId: string | null;
  name: string | null;
  targetId: string | null;
  levels: TreeLevel[];
}

export interface TreeChildrenParams {
  sessionId?: string;
  parentId?: string | null;
  offset?: number;
  aroundId?: string;
  limit?: number;
}

export interface TreeChildrenResult {
  sessionId: string;
  version: number;
  level: TreeLevel;
}

export interface TreeSearchParams {
  sessionId?: string;
  query: string;
  limit?: number;
}

export interface TreeSearchResult {
  sessionId: string;
  version: number;
  total: number;
  rows: TreeNodeRow[];
}

export interface MessagesParams {
  sessionId?: string;
  limit?: number;
  /** Only the entries of the active path before this one: the cursor for earlier pages. */
  before?: string;
}

/** One visible entry of the active path: a message, a compaction or branch summary, a custom message. */
/** What the chats show of a compaction or a branch summary. */
export interface SummaryCard {
  summary: string;
  readFiles: string[];
  modifiedFiles: string[];
  tokensBefore?: number;
  /** The context's size right after it (live events only). */
  tokensAfter?: number;
  /** The model that wrote it, or `extension` (live events only). */
  model?: string;
  /** What the summary cost, in dollars, when its usage was recorded. */
  cost?: number;
}

export interface TranscriptEntry {
  entryId: string;
  type: string;
  timestamp: string | null;
  contextEdit?: ContextEditEffect;
  message?: AgentMessage;
  summary?: string;
  customType?: string;
  content?: unknown;
  /** For compaction and branch_summary entries. */
  card?: SummaryCard;
}

export interface MessagesResult {
  sessionId: string;
  leafId: string | null;
  total: number;
  /** How many visible entries of the path come before `entries`. */
  offset: number;
  entries: TranscriptEntry[];
}

export interface NavigateParams {
  targetId: string;
  sessionId?: string;
  summarize?: boolean;
  instructions?: string;
  workDoneToken?: string | number;
  /** Also put the files the agent changed on the way back to their content there. */
  restoreFiles?: boolean;
  /** With restoreFiles: overwrite files changed since pi-lsp last wrote them. */
  force?: boolean;
}

/** What a restore did (or would do) to a file. */
export const FILE_ACTIONS = ['restored', 'created', 'deleted', 'conflict', 'skipped'] as const;
export type FileAction = (typeof FILE_ACTIONS)[number];

export interface FileOutcome {
  /** Absolute. */
  path: string;
  action: FileAction;
  reason?: string;
}

export interface NavigateResult {
  leafId: string | null;
  summaryEntryId: string | null;
  editorText: string | null;
  /** Only with restoreFiles. */
  files?: FileOutcome[];
}

export interface FileChangesParams {
  toId: string;
  sessionId?: string;
  fromId?: string;
  includeText?: boolean;
}

export interface FilePreview {
  path: string;
  action: FileAction;
  /** Unified diff from the current content to the target's; empty for a skipped file. */
  diff: string;
  reason?: string;
  /** Shell commands on the way that name the file (their changes are not recorded). */
  commands?: string[];
  /** With includeText: the content at the target (absent when deleted there). */
  targetText?: string;
}

export interface FileChangesResult {
  sessionId: string;
  fromId: string | null;
  toId: string | null;
  files: FilePreview[];
}

export interface SessionInfo {
  path: string;
  id: string;
  cwd: string;
  name: string | null;
  parentSessionPath: string | null;
  created: string | null;
  modified: string;
  messageCount: number;
  firstMessage: string;
}

export interface SessionsResult {
  currentSessionId: string;
  sessions: SessionInfo[];
}

export interface NewSessionParams {
  name?: string;
}

export interface NewSessionResult {
  sessionId: string;
  /** Null for a session kept in memory. */
  path: string | null;
}

export interface OpenSessionParams {
  sessionId?: string;
  path?: string;
}

export interface OpenSessionResult {
  sessionId: string;
  path: string | null;
  leafId: string | null;
  readOnly: boolean;
  readOnlyReason?: string;
}

export interface ForkParams {
  /** Left out: the session's leaf when the server handles the request. */
  entryId?: string;
  sessionId?: string;
  restoreFiles?: boolean;
  force?: boolean;
}

export interface ForkResult {
  sessionId: string;
  path: string | null;
  leafId: string | null;
  parentSessionId: string;
  /** Only with restoreFiles. */
  files?: FileOutcome[];
}

export interface LabelParams {
  entryId: string;
  label?: string | null;
  sessionId?: string;
}

export interface LabelResult {
  entryId: string;
  leafId: string | null;
}

/** What a part of the next request is (pi/context). */
export const CONTEXT_PART_KINDS = [
  'base',
  'systemFile',
  'appendSystem',
  'contextFile',
  'skills',
  'environment',
  'extension',
  'tools',
  'compactionSummary',
  'branchSummary',
  'nestedContextFile',
  'message',
  'usageDifference',
] as const;
export type ContextPartKind = (typeof CONTEXT_PART_KINDS)[number];

/** One part of the next request. */
export interface ContextPart {
  kind: ContextPartKind;
  label: string;
  tokens: number;
  /** The session entry it comes from (messages, summaries, nested context files). */
  entryId?: string;
  role?: string;
  preview?: string;
  /** The file it comes from (AGENTS.md and the like). */
  path?: string;
  contextEdit?: ContextEditEffect;
}

export interface ContextResult {
  sessionId: string;
  /** The parts' sum: pi/state's context usage. */
  total: number;
  /** usage: the last answer's reported usage plus estimates; estimate: every part estimated. */
  basis: 'usage' | 'estimate';
  contextWindow: number;
  compactAt: number | null;
  freeToWindow: number;
  freeToCompaction: number | null;
  parts: ContextPart[];
}

export interface ContextEditParams {
  /** A user, assistant, tool-result or custom message on the active branch, in the context. */
  targetId: string;
  /** The target's content in future context; null leaves the target out of it. */
  replacement: string | null;
  sessionId?: string;
}

export interface ContextRestoreParams {
  targetId: string;
  sessionId?: string;
}

export interface ContextEditResult {
  sessionId: string;
  /** The context_edit entry written; it is the new leaf. */
  entryId: string;
  leafId: string | null;
  /** What applies to the target now; left out after a restore. */
  contextEdit?: ContextEditEffect;
}

export interface NameParams {
  name: string;
  sessionId?: string;
}

export interface NameResult {
  entryId: string;
  /** Null when the new name is blank (which clears it). */
  name: string | null;
}

export interface ModelRef {
  model: string;
  provider: string;
  modelId: string;
  /** `missing`: the provider needs a key it does not have (a prompt fails with -32022). */
  keyStatus: KeyStatus;
  keySource: KeySource | null;
  source: 'settings' | 'models.json';
}

export interface ContextUsage {
  tokens: number | null;
  contextWindow: number;
  percent: number | null;
  /** Where automatic compaction starts, in tokens; null when it is turned off. */
  compactAt: number | null;
}

export interface SessionCost {
  total: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cachedPercent: number | null;
}

export interface StateResult {
  sessionId: string;
  path: string | null;
  name: string | null;
  leafId: string | null;
  model: ModelRef | null;
  thinkingLevel: ThinkingLevel;
  contextUsage: ContextUsage | null;
  messageCount: number;
  isStreaming: boolean;
  isCompacting: boolean;
  readOnly: boolean;
  cost: SessionCost;
  readOnlyReason?: string;
}

export interface ModelsParams {
  filter?: string;
  provider?: string;
}

export interface ModelInfo {
  /** What `pi/setModel` takes. */
  model: string;
  provider: string;
  modelId: string;
  name: string | null;
  contextWindow: number | null;
  /** It can be called now: its provider has a key, or it is local. */
  available: boolean;
  keySource: KeySource | null;
  source: 'models.json' | 'litellm';
}

export interface ProviderInfo {
  provider: string;
  keySource: KeySource | null;
  /** The environment variable pi reads the key from. */
  keyVariable: string | null;
  /** auth.json holds pi's subscription login for it, which pi-lsp cannot use. */
  subscription: boolean;
  local: boolean;
}

export interface ModelsResult {
  models: ModelInfo[];
  providers: ProviderInfo[];
}

export interface LoginParams {
  provider: string;
  key: string;
  replaceSubscription?: boolean;
}

export interface LoginResult {
  provider: string;
  path: string;
}

export interface LogoutParams {
  provider: string;
}

export interface LogoutResult {
  provider: string;
  removed: boolean;
  path: string;
}

/** The params of the `pi/setCredentials` notification: every key the editor keeps for pi. */
export interface SetCredentialsParams {
  credentials: Record<string, string>;
}

export interface SetModelParams {
  model: string;
  sessionId?: string;
}

export interface SetModelResult {
  sessionId: string;
  model: string;
  provider: string;
  modelId: string;
}

export interface SetThinkingLevelParams {
  level: ThinkingLevel;
  sessionId?: string;
}

export interface SetThinkingLevelResult {
  sessionId: string;
  thinkingLevel: ThinkingLevel;
}

export interface CompactParams {
  sessionId?: string;
  instructions?: string;
  workDoneToken?: string | number;
}

export interface CompactResult {
  sessionId: string;
  entryId: string;
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  readFiles: string[];
  modifiedFiles: string[];
  reason: CompactionReason;
}

export type NoParams = Record<string, never>;

export interface Skill {
  name: string;
  description: string;
  path: string;
  source: string;
  disableModelInvocation: boolean;
}

export interface Template {
  name: string;
  description: string;
  path: string;
  source: string;
}

export interface ResourceDiagnostic {
  path: string;
  line: number;
  message: string;
  severity: string;
}

export interface NestedContextFile {
  path: string;
  entryId: string;
  current: boolean;
}

export interface ResourcesResult {
  contextFiles: string[];
  systemPrompt: string | null;
  appendSystemPrompt: string | null;
  skills: Skill[];
  templates: Template[];
  diagnostics: ResourceDiagnostic[];
  nestedContextFiles: NestedContextFile[];
}

export interface ResourceChange {
  kind: string;
  name: string;
  path: string;
}

export interface ResourcesChanged {
  added: ResourceChange[];
  changed: ResourceChange[];
  removed: ResourceChange[];
}

/** Every request: its params and result types, keyed by method name. */
export interface Requests {
  'pi/prompt': { params: PromptParams; result: PromptResult };
  'pi/abort': { params: SessionParams; result: AbortResult };
  'pi/tree': { params: SessionParams; result: TreeResult };
  'pi/treeWindow': { params: TreeWindowParams; result: TreeWindowResult };
  'pi/treeChildren': { params: TreeChildrenParams; result: TreeChildrenResult };
  'pi/treeSearch': { params: TreeSearchParams; result: TreeSearchResult };
  'pi/messages': { params: MessagesParams; result: MessagesResult };
  'pi/navigate': { params: NavigateParams; result: NavigateResult };
  'pi/fileChanges': { params: FileChangesParams; result: FileChangesResult };
  'pi/sessions': { params: SessionParams; result: SessionsResult };
  'pi/newSession': { params: NewSessionParams; result: NewSessionResult };
  'pi/openSession': { params: OpenSessionParams; result: OpenSessionResult };
  'pi/fork': { params: ForkParams; result: ForkResult };
  'pi/label': { params: LabelParams; result: LabelResult };
  'pi/context': { params: SessionParams; result: ContextResult };
  'pi/contextEdit': { params: ContextEditParams; result: ContextEditResult };
  'pi/contextRestore': { params: ContextRestoreParams; result: ContextEditResult };
  'pi/name': { params: NameParams; result: NameResult };
  'pi/state': { params: SessionParams; result: StateResult };
  'pi/models': { params: ModelsParams; result: ModelsResult };
  'pi/setModel': { params: SetModelParams; result: SetModelResult };
  'pi/setThinkingLevel': { params: SetThinkingLevelParams; result: SetThinkingLevelResult };
  'pi/compact': { params: CompactParams; result: CompactResult };
  'pi/resources': { params: SessionParams; result: ResourcesResult };
  'pi/reload': { params: NoParams; result: ResourcesChanged };
  'pi/login': { params: LoginParams; result: LoginResult };
  'pi/logout': { params: LogoutParams; result: LogoutResult };
}

export type Method = keyof Requests;
export type ParamsOf<M extends Method> = Requests[M]['params'];
export type ResultOf<M extends Method> = Requests[M]['result'];

export const METHODS: readonly Method[] = [
  'pi/prompt',
  'pi/abort',
  'pi/tree',
  'pi/treeWindow',
  'pi/treeChildren',
  'pi/treeSearch',
  'pi/messages',
  'pi/navigate',
  'pi/fileChanges',
  'pi/sessions',
  'pi/newSession',
  'pi/openSession',
  'pi/fork',
  'pi/label',
  'pi/context',
  'pi/contextEdit',
  'pi/contextRestore',
  'pi/name',
  'pi/state',
  'pi/models',
  'pi/setModel',
  'pi/setThinkingLevel',
  'pi/compact',
  'pi/resources',
  'pi/reload',
  'pi/login',
  'pi/logout',
];

export const EVENT_NOTIFICATION = 'pi/event';
export const RESOURCES_CHANGED_NOTIFICATION = 'pi/resourcesChanged';
/** Client → server. */
export const SET_CREDENTIALS_NOTIFICATION = 'pi/setCredentials';

/** A pi AgentMessage as saved in the session (only the fields the extension reads). */
export interface AgentMessage {
  role: string;
  content?: unknown;
  stopReason?: string;
  errorMessage?: string;
  toolCallId?: string;
  toolName?: string;
  isError?: boolean;
  [key: string]: unknown;
}

/** Every event type carried by `pi/event`, with its fields. */
export interface Events {
  agent_start: Record<never, never>;
  message_start: { role: string };
  text_delta: { delta: string };
  thinking_delta: { delta: string };
  toolcall_start: { toolCallId: string; name: string };
  tool_execution_start: { toolCallId: string; name: string; arguments: Record<string, unknown> };
  tool_execution_update: {
    toolCallId: string;
    name: string;
    content: unknown[];
    details: Record<string, unknown> | null;
  };
  tool_execution_end: {
    toolCallId: string;
    name: string;
    isError: boolean;
    content: unknown[];
    details: Record<string, unknown> | null;
    entryId: string;
  };
  message_end: { entryId: string; message: AgentMessage };
  retry: { attempt: number; maxAttempts: number; delayMs: number; errorMessage: string };
  summarization_retry_scheduled: {
    attempt: number;
    maxAttempts: number;
    delayMs: number;
    errorMessage: string;
  };
  summarization_retry_attempt_start: {
    source: 'compaction' | 'branch_summary';
    reason?: CompactionReason;
  };
  summarization_retry_finished: Record<string, never>;
  auth_error: { provider: string; status: number; keySource: KeySource | null; message: string };
  compaction_start: { reason: CompactionReason };
  compaction_end: {
    reason: CompactionReason;
    aborted: boolean;
    willRetry: boolean;
    entryId?: string;
    tokensBefore?: number;
    errorMessage?: string;
    card?: SummaryCard;
  };
  branch_summary_start: { targetId: string };
  branch_summary_end: { targetId: string; aborted: boolean; entryId?: string; errorMessage?: string; card?: SummaryCard };
  tree_changed: {
    leafId: string | null;
    version: number;
    entries: TreeNodeRow[];
    labels: LabelChanges;
    name: string | null;
    /** Entries whose contextEdit mark the change's context edits changed (null: none applies now). */
    contextEdits: ContextEditChanges;
  };
  agent_end: { stopReason: StopReason; leafId: string | null };
  error: { message: string };
}

export type EventType = keyof Events;
export type PiEvent = { [T in EventType]: { type: T } & Events[T] }[EventType];

export const EVENT_TYPES: readonly EventType[] = [
  'agent_start',
  'message_start',
  'text_delta',
  'thinking_delta',
  'toolcall_start',
  'tool_execution_start',
  'tool_execution_update',
  'tool_execution_end',
  'message_end',
  'retry',
  'summarization_retry_scheduled',
  'summarization_retry_attempt_start',
  'summarization_retry_finished',
  'auth_error',
  'compaction_start',
  'compaction_end',
  'branch_summary_start',
  'branch_summary_end',
  'tree_changed',
  'agent_end',
  'error',
];

/** The params of the `pi/event` notification. */
export interface EventNotification {
  sessionId: string;
  seq: number;
  event: PiEvent;
}

/** The JSON-RPC error codes of pi-lsp (docs/protocol.md "Errors"). */
export const ErrorCodes = {
  invalidParams: -32602,
  noSuchSession: -32001,
  noSuchEntry: -32002,
  notASession: -32003,
  sessionLocked: -32004,
  readOnly: -32005,
  writeFailed: -32006,
  nothingToCompact: -32010,
  busy: -32011,
  summaryFailed: -32012,
  cancelled: -32013,
  filesNotRestored: -32014,
  checkpointMissing: -32015,
  noModel: -32020,
  noApiKey: -32022,
  internal: -32603,
} as const;
