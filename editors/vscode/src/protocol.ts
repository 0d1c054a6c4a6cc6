// The pi-lsp wire protocol as the extension sees it. Every type, the typed request table
// (`Requests`, `ParamsOf`, `ResultOf`) and the method, notification and event names are generated
// from pi_lsp/protocol.py into protocol.generated.ts (`make protocol`; `make protocol-check` fails
// when it is edited by hand); this file re-exports them and adds what the protocol module does not
// define. Interface names are the Python class names.

export * from './protocol.generated';

/** Labels a change set, by entry id (null: the label was cleared). */
export type LabelChanges = Record<string, string | null>;

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
  /** A queued prompt was taken back (pi/clearQueue, pi/removeQueued) before the agent read it. */
  promptTakenBack: -32016,
  noModel: -32020,
  noApiKey: -32022,
  internal: -32603,
} as const;
