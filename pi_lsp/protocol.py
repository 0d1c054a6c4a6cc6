"""Every ``pi/*`` method and event of the pi-lsp protocol: names, parameter and result types.

This is the protocol's one source: ``make protocol`` generates from it (through JSON Schema) the
VS Code extension's types and request table, the Neovim plugin's LuaCATS annotations and the
tables of ``docs/protocol.md``, and ``make protocol-check`` fails when a mirror differs from what
it generates. Fields are snake_case here and camelCase on the wire (the converter below
renames them). Params are validated by ``parse_params``: a malformed request gets JSON-RPC
InvalidParams naming the bad field, never silence.
"""

from __future__ import annotations

import re
import typing
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from pi_lsp.errors import InvalidParamsError, echoed

# ----------------------------------------------------------------------- requests (client → server)

PROMPT = "pi/prompt"
ABORT = "pi/abort"
TREE = "pi/tree"
TREE_WINDOW = "pi/treeWindow"
TREE_CHILDREN = "pi/treeChildren"
TREE_SEARCH = "pi/treeSearch"
MESSAGES = "pi/messages"
NAVIGATE = "pi/navigate"
FILE_CHANGES = "pi/fileChanges"
SESSIONS = "pi/sessions"
NEW_SESSION = "pi/newSession"
OPEN_SESSION = "pi/openSession"
FORK = "pi/fork"
LABEL = "pi/label"
NAME = "pi/name"
CONTEXT = "pi/context"
CONTEXT_EDIT = "pi/contextEdit"
CONTEXT_RESTORE = "pi/contextRestore"
STATE = "pi/state"
MODELS = "pi/models"
SET_MODEL = "pi/setModel"
SET_THINKING_LEVEL = "pi/setThinkingLevel"
COMPACT = "pi/compact"
RESOURCES = "pi/resources"
RELOAD = "pi/reload"
LOGIN = "pi/login"
LOGOUT = "pi/logout"
SEARCH_SESSIONS = "pi/searchSessions"
EXPORT_SESSION = "pi/exportSession"
IMPORT_SESSION = "pi/importSession"
DELETE_SESSION = "pi/deleteSession"
MCP = "pi/mcp"
MCP_RECONNECT = "pi/mcpReconnect"
MCP_SET_ENABLED = "pi/mcpSetEnabled"
MCP_LOGIN = "pi/mcpLogin"
MCP_LOGOUT = "pi/mcpLogout"
QUEUE = "pi/queue"
CLEAR_QUEUE = "pi/clearQueue"
REMOVE_QUEUED = "pi/removeQueued"
EDIT_QUEUED = "pi/editQueued"

# ------------------------------------------------------------------ notifications (server → client)

EVENT = "pi/event"
RESOURCES_CHANGED = "pi/resourcesChanged"

# ------------------------------------------------------------------ notifications (client → server)

SET_CREDENTIALS = "pi/setCredentials"
LANGUAGE_MODELS = "pi/languageModels"
LANGUAGE_MODEL_PART = "pi/languageModel/part"

# ----------------------------------------------------------------------- requests (server → client)

LANGUAGE_MODEL_CHAT = "pi/languageModel/chat"

LANGUAGE_MODELS_CAPABILITY = "piLanguageModels"
"""The key of ``capabilities.experimental`` by which a client says it runs
``pi/languageModel/chat`` (its value: ``true``); only such a client gets ``vscode-lm`` models."""

# The JSON-RPC error codes a client answers ``pi/languageModel/chat`` with (others: -32603).
LANGUAGE_MODEL_NO_PERMISSIONS = -32050
"""The user did not allow (or has not yet allowed) pi-lsp to use the model."""
LANGUAGE_MODEL_BLOCKED = -32051
"""The editor blocked the request: a quota or rate limit of the user's plan."""
LANGUAGE_MODEL_NOT_FOUND = -32052
"""The model is gone (its extension was uninstalled or disabled)."""
LANGUAGE_MODEL_CONTEXT_TOO_LONG = -32053
"""The messages do not fit the model's input window."""

# ------------------------------------------------------------------------- workspace/executeCommand

COMMAND_PREFIX = "pi."
"""Each request is also a command: ``pi/prompt`` → ``pi.prompt``, the params object its argument."""

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh"]
THINKING_LEVELS: tuple[str, ...] = typing.get_args(ThinkingLevel)
QueueMode = Literal["all", "one-at-a-time"]
"""pi's ``steeringMode``/``followUpMode``: every queued prompt at once, or one per delivery."""


def command_name(method: str) -> str:
    return COMMAND_PREFIX + method.removeprefix("pi/")


# --------------------------------------------------------------------------- params

OMITTED_WHEN_NONE = "omitted_when_none"
OMITTED = {OMITTED_WHEN_NONE: True}
"""Field metadata: left out of the JSON when None (rather than sent as ``null``)."""


if TYPE_CHECKING:
    ProgressToken = int | str
else:

    class ProgressToken:
        """An LSP progress token: a string or an integer (validated by the converter below).

        A class of its own at run time, so the converter can hook it; ``int | str`` for type
        checkers.
        """


@attrs.frozen
class SessionParams:
    """Any request that only names a session."""

    session_id: str | None = None
    """The session to act on; the workspace's most recent session when omitted."""


@attrs.frozen
class ImageContent:
    data: str
    """Base64-encoded image bytes."""
    mime_type: str


@attrs.frozen
class PromptParams:
    text: str
    session_id: str | None = None
    images: list[ImageContent] = attrs.Factory(list)
    streaming_behavior: Literal["steer", "followUp"] | None = None
    """While a turn runs: ``followUp`` (default) queues the prompt, ``steer`` delivers it after the
    current tool batch."""


@attrs.frozen
class QueuedPromptParams:
    """Names one prompt of a session's queue (``pi/removeQueued``)."""

    id: str
    """The queued prompt's id, as ``pi/queue`` and ``queue_update`` give it."""
    session_id: str | None = None


@attrs.frozen
class EditQueuedParams:
    id: str
    """The queued prompt's id, as ``pi/queue`` and ``queue_update`` give it."""
    text: str
    """Its new text (expanded like a prompt's: ``/skill:name``, ``/template``)."""
    session_id: str | None = None


@attrs.frozen
class MessagesParams:
    session_id: str | None = None
    limit: int | None = None
    """Only the last ``limit`` entries of the active path (at least 1); all of them when omitted."""
    before: str | None = None
    """A cursor for loading earlier pages: only the entries of the active path before this one."""


@attrs.frozen
class TreeWindowParams:
    session_id: str | None = None
    target_id: str | None = None
    """The entry to show, with every level above it (default: the leaf)."""
    limit: int | None = None
    """Rows per level (1–1000, default 100), centred on the path to the target."""


@attrs.frozen
class TreeChildrenParams:
    session_id: str | None = None
    parent_id: str | None = None
    """The node whose rows are wanted; omitted or null: the top level."""
    offset: int | None = None
    """The first row to return (default 0)."""
    around_id: str | None = None
    """Instead of ``offset``: a window centred on this row."""
    limit: int | None = None
    """How many rows (1–1000, default 100)."""


@attrs.frozen
class TreeSearchParams:
    query: str
    session_id: str | None = None
    limit: int | None = None
    """How many results (1–1000, default 100), newest first."""


@attrs.frozen
class SearchSessionsParams:
    query: str
    """Words, ``"a quoted phrase"``, ``-word`` to leave out; anything else is searched literally."""
    limit: int | None = None
    """How many hits (1–200, default 50)."""
    session_id: str | None = None
    """Only this session's entries."""
    order: Literal["newest", "best"] | None = None
    """``newest`` first (the default) or the ``best`` match first."""


@attrs.frozen
class ExportSessionParams:
    session_id: str
    format: Literal["html", "markdown", "jsonl"]
    path: str | None = None
    """Where to write (relative to the workspace root); default ``pi-session-<id>.<ext>`` there."""


@attrs.frozen
class ImportSessionParams:
    path: str
    """The session file to copy in (relative to the workspace root, or absolute)."""


@attrs.frozen
class DeleteSessionParams:
    session_id: str


@attrs.frozen
class NavigateParams:
    target_id: str
    session_id: str | None = None
    summarize: bool = False
    instructions: str | None = None
    work_done_token: ProgressToken | None = None
    """With ``summarize``: an LSP progress token; the server reports ``$/progress`` on it while the
    model writes the summary."""
    restore_files: bool = False
    """Also put the files the agent changed on the way back to their content where the leaf
    lands (see ``pi/fileChanges``)."""
    force: bool = False
    """With ``restoreFiles``: overwrite files changed since pi-lsp last wrote them (conflicts)."""


@attrs.frozen
class FileChangesParams:
    to_id: str
    session_id: str | None = None
    from_id: str | None = None
    """Compare from this entry, as the agent left the files there; default the leaf, against the
    files as they are now (unsaved editor text included)."""
    include_text: bool = False
    """Also send each file's full content at the target (``targetText``), for diff views."""


@attrs.frozen
class OpenSessionParams:
    session_id: str | None = None
    path: str | None = None


@attrs.frozen
class NewSessionParams:
    name: str | None = None


@attrs.frozen
class ForkParams:
    entry_id: str | None = None
    """The entry to fork at; left out (or null): the session's leaf as the server handles the
    request, so a request sent after it without waiting for its answer finds the fork in place."""
    session_id: str | None = None
    restore_files: bool = False
    """Put the files the agent changed back to their content at ``entryId`` first."""
    force: bool = False
    """With ``restoreFiles``: overwrite files changed since pi-lsp last wrote them."""


@attrs.frozen
class LabelParams:
    entry_id: str
    label: str | None = None
    """The label text; empty or null clears the entry's label."""
    session_id: str | None = None


@attrs.frozen
class ContextEditParams:
    target_id: str
    """A user, assistant, tool-result or custom message on the active branch, in the context."""
    replacement: str | None
    """The target's content in future context; null leaves the target out of it."""
    session_id: str | None = None


@attrs.frozen
class ContextRestoreParams:
    target_id: str
    """An entry a context edit left out or replaced."""
    session_id: str | None = None


@attrs.frozen
class NameParams:
    name: str
    session_id: str | None = None


@attrs.frozen
class SetModelParams:
    model: str
    """A litellm model string such as ``openai/gpt-4o`` or ``ollama/llama3``."""
    session_id: str | None = None


@attrs.frozen
class SetThinkingLevelParams:
    level: ThinkingLevel
    session_id: str | None = None


@attrs.frozen
class CompactParams:
    session_id: str | None = None
    instructions: str | None = None
    """What the summary should focus on, in addition to the usual sections."""
    work_done_token: ProgressToken | None = None
    """An LSP progress token (a string or an integer); the server reports ``$/progress`` on it
    while it summarizes."""


@attrs.frozen
class NoParams:
    """A request without parameters."""


@attrs.frozen
class ModelsParams:
    filter: str | None = None
    """Only models whose name contains this text."""
    provider: str | None = None
    """Only this provider's models (pi's name: ``openai``, ``google``, a models.json provider)."""


@attrs.frozen
class LoginParams:
    provider: str
    """pi's provider name, the key of its auth.json entry (``anthropic``, ``openai``…)."""
    key: str
    replace_subscription: bool = False
    """Replace pi's subscription login (an OAuth entry) for the provider, which pi then loses."""


@attrs.frozen
class LogoutParams:
    provider: str


@attrs.frozen
class McpServerParams:
    name: str
    """The server's name in ``mcp.json`` (or the ACP client's, made valid)."""


@attrs.frozen
class McpLoginParams:
    name: str
    """The server's name in ``mcp.json`` (or the ACP client's, made valid)."""
    redirect_url: str | None = None
    """The URL the browser was sent to after the user approved, copied from its address bar
    (pi's fallback when the browser cannot reach the loopback redirect, e.g. over SSH): it
    finishes the sign-in to ``name`` that an earlier ``pi/mcpLogin`` started and is waiting for;
    both requests then answer with the server's status. Without it, a sign-in starts."""


@attrs.frozen
class McpSetEnabledParams:
    name: str
    enabled: bool
    """Start (true) or stop (false) the server while this server runs; ``mcp.json`` is unchanged."""


@attrs.frozen
class SetCredentialsParams:
    """The params of the ``pi/setCredentials`` notification."""

    credentials: dict[str, str]
    """Provider → API key: every key the editor keeps for pi (the previous set is replaced)."""


@attrs.frozen
class LanguageModelInfo:
    """A chat model the editor provides (VS Code: a ``LanguageModelChat``)."""

    id: str
    """The editor's id of the model, which ``pi/languageModel/chat`` names."""
    vendor: str
    """Who provides it (``copilot``…); pi-lsp lists the model as ``vscode-lm/<vendor>/<id>``."""
    family: str
    name: str
    """A name to show."""
    max_input_tokens: int
    """Its input window (the context window pi-lsp compacts for)."""


@attrs.frozen
class LanguageModelsParams:
    """The params of ``pi/languageModels``: every chat model the editor provides now."""

    models: list[LanguageModelInfo]
    """Replaces the previous list (sent after ``initialized`` and whenever it changes)."""


@attrs.frozen
class LanguageModelContent:
    """A piece of a tool result: text, or an image."""

    type: Literal["text", "image"]
    text: str | None = attrs.field(default=None, metadata=OMITTED)
    mime_type: str | None = attrs.field(default=None, metadata=OMITTED)
    data: str | None = attrs.field(default=None, metadata=OMITTED)
    """Base64-encoded image bytes."""


@attrs.frozen
class LanguageModelPart:
    """A part of a message, or of the model's answer (``text``, ``thinking`` and ``toolCall``).

    ``text``/``thinking``: ``text``; ``toolCall``: ``callId``, ``name``, ``input``;
    ``toolResult``: ``callId``, ``content``; ``image``: ``mimeType``, ``data``."""

    type: Literal["text", "thinking", "toolCall", "toolResult", "image"]
    text: str | None = attrs.field(default=None, metadata=OMITTED)
    call_id: str | None = attrs.field(default=None, metadata=OMITTED)
    name: str | None = attrs.field(default=None, metadata=OMITTED)
    input: dict[str, Any] | None = attrs.field(default=None, metadata=OMITTED)
    """The tool call's arguments."""
    content: list[LanguageModelContent] | None = attrs.field(default=None, metadata=OMITTED)
    mime_type: str | None = attrs.field(default=None, metadata=OMITTED)
    data: str | None = attrs.field(default=None, metadata=OMITTED)
    """Base64-encoded image bytes."""


@attrs.frozen
class LanguageModelPartParams:
    """The params of ``pi/languageModel/part``: one streamed part of an answer, sent before the
    request's response."""

    request_id: str
    part: LanguageModelPart


PARAMS_BY_METHOD: dict[str, type] = {
    PROMPT: PromptParams,
    ABORT: SessionParams,
    TREE: SessionParams,
    TREE_WINDOW: TreeWindowParams,
    TREE_CHILDREN: TreeChildrenParams,
    TREE_SEARCH: TreeSearchParams,
    MESSAGES: MessagesParams,
    NAVIGATE: NavigateParams,
    FILE_CHANGES: FileChangesParams,
    SESSIONS: SessionParams,
    NEW_SESSION: NewSessionParams,
    OPEN_SESSION: OpenSessionParams,
    FORK: ForkParams,
    LABEL: LabelParams,
    CONTEXT: SessionParams,
    CONTEXT_EDIT: ContextEditParams,
    CONTEXT_RESTORE: ContextRestoreParams,
    NAME: NameParams,
    STATE: SessionParams,
    MODELS: ModelsParams,
    SET_MODEL: SetModelParams,
    SET_THINKING_LEVEL: SetThinkingLevelParams,
    COMPACT: CompactParams,
    RESOURCES: SessionParams,
    RELOAD: NoParams,
    LOGIN: LoginParams,
    LOGOUT: LogoutParams,
    SEARCH_SESSIONS: SearchSessionsParams,
    EXPORT_SESSION: ExportSessionParams,
    IMPORT_SESSION: ImportSessionParams,
    DELETE_SESSION: DeleteSessionParams,
    MCP: NoParams,
    MCP_RECONNECT: McpServerParams,
    MCP_SET_ENABLED: McpSetEnabledParams,
    MCP_LOGIN: McpLoginParams,
    MCP_LOGOUT: McpServerParams,
    QUEUE: SessionParams,
    CLEAR_QUEUE: SessionParams,
    REMOVE_QUEUED: QueuedPromptParams,
    EDIT_QUEUED: EditQueuedParams,
}
"""Every request method and the type its params are validated against."""

NOTIFICATION_PARAMS: dict[str, type] = {
    SET_CREDENTIALS: SetCredentialsParams,
    LANGUAGE_MODELS: LanguageModelsParams,
    LANGUAGE_MODEL_PART: LanguageModelPartParams,
}
"""Every notification a client sends the server, and the type of its params."""


# ----------------------------------------------------------------------- results and event payloads
#
# Every field is sent. A field typed ``X | None`` is sent as ``null`` when unknown; a field with
# ``metadata=OMITTED`` is left out of the JSON instead (TypeScript ``name?:``). pi's own records
# (messages, usage, tool content and details) travel as the JSON pi writes: ``JsonObject``.

JsonObject = dict[str, Any]
"""A JSON object in pi's own format (an AgentMessage, a usage record, tool details…)."""


@attrs.frozen(eq=False)
class PiRecord:
    """``Annotated`` metadata on a ``JsonObject``: which of pi's records it is, and the JSON Schema
    of the fields clients read from it (the record travels as pi wrote it, unchecked)."""

    name: str
    schema: dict[str, Any]


_TOKEN_COSTS = {
    "type": "object",
    "properties": {
        kind: {"type": "number"} for kind in ("input", "output", "cacheRead", "cacheWrite", "total")
    },
    "required": ["input", "output", "cacheRead", "cacheWrite", "total"],
    "additionalProperties": False,
}

Usage = Annotated[
    JsonObject,
    PiRecord(
        "Usage",
        {
            "description": "pi's usage record of a model answer: tokens by kind, and their cost.",
            "type": "object",
            "properties": {
                **{
                    kind: {"type": "integer"}
                    for kind in ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
                },
                "cost": _TOKEN_COSTS,
            },
            "required": ["input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"],
            "additionalProperties": False,
        },
    ),
]

AgentMessage = Annotated[
    JsonObject,
    PiRecord(
        "AgentMessage",
        {
            "description": "A pi AgentMessage as saved in the session (the fields clients read).",
            "type": "object",
            "properties": {
                "role": {"type": "string"},
                "content": {},
                "stopReason": {"type": "string"},
                "errorMessage": {"type": "string"},
                "toolCallId": {"type": "string"},
                "toolName": {"type": "string"},
                "isError": {"type": "boolean"},
            },
            "required": ["role"],
            "additionalProperties": True,
        },
    ),
]

StopReason = Literal["stop", "length", "toolUse", "error", "aborted"]
KeySource = Literal["editor", "auth.json", "models.json", "environment"]
"""Where a provider's API key came from."""
KeyStatus = Literal["key", "local", "missing", "unknown"]
"""Whether a model can be called: ``key`` — its provider has a key; ``local`` — it needs none;
``missing`` — it needs one it does not have (a prompt fails with -32022); ``unknown`` — litellm
finds the credentials (or not) by itself (a provider pi-lsp knows no key variable of, or a custom
endpoint)."""
ModelSource = Literal["settings", "models.json", "editor"]
"""Where a configured model came from: pi-lsp's or pi's settings, pi's models.json, or the
editor's own models (``vscode-lm``)."""
Scope = Literal["project", "user"]
"""Where a skill or a prompt template was found: the project's ``.pi/`` (or ``.agents/``), or
the user's agent folder."""
CompactionReason = Literal["manual", "threshold", "overflow"]


@attrs.frozen
class PromptResult:
    """How a turn ended (a queued prompt gets its turn's result)."""

    session_id: str
    leaf_id: str | None
    stop_reason: StopReason
    error_message: str | None
    usage: Usage | None
    """pi's usage record of the last answer."""
    context_tokens: int | None
    context_window: int


@attrs.frozen
class QueuedPromptInfo:
    """A prompt waiting in a session's queue."""

    id: str
    text: str
    """Its text as the model will get it (templates and skills expanded)."""


@attrs.frozen
class QueueResult:
    """A session's queue: prompts steered into the running turn (delivered after its current tool
    batch, or after its answer) and follow-ups (delivered when the agent would stop), oldest
    first, with the modes that deliver them."""

    session_id: str
    steering: list[QueuedPromptInfo]
    follow_up: list[QueuedPromptInfo]
    steering_mode: QueueMode
    follow_up_mode: QueueMode


@attrs.frozen
class ClearQueueResult:
    """The texts taken out of the queue (pi's RPC ``clear_queue``), for the input to restore."""

    steering: list[str]
    follow_up: list[str]


@attrs.frozen
class AbortResult:
    session_id: str
    aborted: bool


ContextEditEffect = Literal["removed", "replaced"]
"""The values of ``contextEdit`` on ``pi/tree`` and ``pi/messages`` entries: what a context edit
(an entry pi 1.6 writes) on the active path did to the entry's part of the model's context. The
field is left out when no edit changed the entry."""
CONTEXT_EDIT_EFFECTS: tuple[str, ...] = typing.get_args(ContextEditEffect)


@attrs.frozen
class TreeEntry:
    """One entry of the tree as an editor lists it."""

    id: str
    parent_id: str | None
    type: str
    preview: str
    timestamp: str | None
    role: str | None = attrs.field(default=None, metadata=OMITTED)
    """The message role, for ``message`` entries."""
    label: str | None = attrs.field(default=None, metadata=OMITTED)
    context_edit: ContextEditEffect | None = attrs.field(default=None, metadata=OMITTED)
    """What a context edit on the active path did to the entry's part of the context; left out
    when nothing did."""


@attrs.frozen
class TreeResult:
    session_id: str
    leaf_id: str | None
    name: str | None
    labels: dict[str, str]
    active_path: list[str]
    roots: list[str]
    children: dict[str, list[str]]
    entries: list[TreeEntry]


@attrs.frozen
class TreeNodeRow:
    """An entry as a row of the windowed tree (``pi/treeWindow``, ``pi/treeChildren``)."""

    id: str
    parent_id: str | None
    type: str
    preview: str
    timestamp: str | None
    child_count: int
    branch_start: bool
    """One of several children (or roots): the first entry of a branch."""
    active: bool
    """On the path from the root to the leaf."""
    expandable: bool
    """Has rows under it: its branches, or (for a branch start) the run continuing the branch."""
    role: str | None = attrs.field(default=None, metadata=OMITTED)
    label: str | None = attrs.field(default=None, metadata=OMITTED)
    context_edit: ContextEditEffect | None = attrs.field(default=None, metadata=OMITTED)


@attrs.frozen
class TreeLevel:
    """The rows under one node (``parent_id`` null: the top level): ``total`` rows in all, these
    from ``offset`` on."""

    parent_id: str | None
    total: int
    offset: int
    rows: list[TreeNodeRow]


@attrs.frozen
class TreeWindowResult:
    session_id: str
    version: int
    """The session's tree version: ``tree_changed`` events carry the next ones."""
    leaf_id: str | None
    name: str | None
    target_id: str | None
    levels: list[TreeLevel]


@attrs.frozen
class TreeChildrenResult:
    session_id: str
    version: int
    level: TreeLevel


@attrs.frozen
class TreeSearchResult:
    session_id: str
    version: int
    total: int
    """How many entries match; ``rows`` holds the newest of them."""
    rows: list[TreeNodeRow]


@attrs.frozen
class SessionSearchHit:
    session_id: str
    path: str
    session_name: str | None
    entry_id: str | None
    type: str | None
    role: str | None
    """The message's role (``user``, ``assistant``, ``toolResult``…); null for other entries."""
    preview: str
    """The matched words with a little text around them."""
    timestamp: str | None
    on_active_path: bool
    """Whether the entry is on the path pi resumes the session at (its last entry's)."""


@attrs.frozen
class IndexingProgress:
    complete: bool
    """Every session file is indexed as it was when last seen."""
    indexed_files: int
    known_files: int


@attrs.frozen
class SearchSessionsResult:
    total: int
    """How many entries match; ``hits`` holds the first ``limit`` of them."""
    total_capped: bool
    """Counting stopped at 10,000: there are more matches than ``total``."""
    indexing: IndexingProgress
    hits: list[SessionSearchHit]


@attrs.frozen
class ExportSessionResult:
    path: str


@attrs.frozen
class ImportSessionResult:
    session_id: str
    path: str


@attrs.frozen
class DeleteSessionResult:
    session_id: str
    path: str
    """Where the file was: it is in the system trash now."""


@attrs.frozen
class SummaryCard:
    """What the chats show of a compaction or a branch summary."""

    summary: str
    read_files: list[str]
    modified_files: list[str]
    tokens_before: int | None = attrs.field(default=None, metadata=OMITTED)
    tokens_after: int | None = attrs.field(default=None, metadata=OMITTED)
    """The context's size right after it (live events only)."""
    model: str | None = attrs.field(default=None, metadata=OMITTED)
    """The model that wrote it, or ``extension`` (live events only)."""
    cost: float | None = attrs.field(default=None, metadata=OMITTED)
    """What the summary cost, in dollars, when its usage was recorded."""


ToolCardKind = Literal["read", "edit", "write", "bash", "search", "mcp", "other"]
ToolCardStatus = Literal["running", "done", "failed", "denied"]


@attrs.frozen
class ToolCardArgument:
    """One argument of a tool call, as the chats list it."""

    name: str
    value: str
    """Strings as they are; anything else as compact JSON."""


@attrs.frozen
class ToolCardResult:
    """One thing a search found: a path the chats open (at ``line`` when given)."""

    path: str
    """Workspace-relative when inside the workspace, else absolute."""
    line: int | None = attrs.field(default=None, metadata=OMITTED)
    text: str | None = attrs.field(default=None, metadata=OMITTED)
    """The matching line (``grep``)."""


@attrs.frozen
class ToolCardImage:
    """An image in a tool's result (the chats say ``[image: mime, size]``)."""

    mime_type: str
    size_bytes: int


@attrs.frozen
class ToolCard:
    """What the chats show of one tool call: computed once, on the server, from the call's
    arguments, its result and what the server knows. Only the fields of the card's ``kind``
    are set; the others are left out."""

    kind: ToolCardKind
    title: str
    """A short line naming the work: ``Edited app.py``, ``npm test``, ``grep TODO in src``."""
    status: ToolCardStatus
    arguments: list[ToolCardArgument]
    """The call's arguments in the model's order, readable."""
    raw_arguments: str
    """The arguments as indented JSON, for a "raw" fold."""
    status_reason: str | None = attrs.field(default=None, metadata=OMITTED)
    """Why a call failed or was denied: ``exit 1``, ``timed out``, ``the user denied it``…"""
    path: str | None = attrs.field(default=None, metadata=OMITTED)
    """The file or folder worked on (read, edit, write, search): workspace-relative when inside
    the workspace, else absolute."""
    start_line: int | None = attrs.field(default=None, metadata=OMITTED)
    """First line read (``read``) or first line changed (``edit``)."""
    end_line: int | None = attrs.field(default=None, metadata=OMITTED)
    """Last line read (``read``)."""
    total_lines: int | None = attrs.field(default=None, metadata=OMITTED)
    size_bytes: int | None = attrs.field(default=None, metadata=OMITTED)
    """The size of what was read or written."""
    added: int | None = attrs.field(default=None, metadata=OMITTED)
    removed: int | None = attrs.field(default=None, metadata=OMITTED)
    diff: list[str] | None = attrs.field(default=None, metadata=OMITTED)
    """The change, complete (clients fold it): a unified diff's hunks (``@@``, ``+``, ``-``,
    `` `` lines), or pi's numbered display diff for edits pi made."""
    created: bool | None = attrs.field(default=None, metadata=OMITTED)
    """``write`` made a new file."""
    undo_in_editor: bool | None = attrs.field(default=None, metadata=OMITTED)
    """The change went through the editor (``workspace/applyEdit``): its undo takes it back."""
    command: str | None = attrs.field(default=None, metadata=OMITTED)
    output: str | None = attrs.field(default=None, metadata=OMITTED)
    """``bash``: the output's tail (at most 200 lines, 16 KB), live while it runs."""
    output_bytes: int | None = attrs.field(default=None, metadata=OMITTED)
    """``bash``: the whole output's size."""
    output_truncated: bool | None = attrs.field(default=None, metadata=OMITTED)
    """``output`` is only the output's tail."""
    full_output_path: str | None = attrs.field(default=None, metadata=OMITTED)
    """Where the whole output of a long command was saved."""
    exit_code: int | None = attrs.field(default=None, metadata=OMITTED)
    killed: bool | None = attrs.field(default=None, metadata=OMITTED)
    """The command was killed (by a signal, or aborted)."""
    timed_out: bool | None = attrs.field(default=None, metadata=OMITTED)
    duration_ms: int | None = attrs.field(default=None, metadata=OMITTED)
    """How long the tool ran (live events only: the session does not record it)."""
    query: str | None = attrs.field(default=None, metadata=OMITTED)
    """``grep``'s pattern, ``find``'s glob (``ls``: none)."""
    result_count: int | None = attrs.field(default=None, metadata=OMITTED)
    """Matches (``grep``), paths (``find``) or entries (``ls``) found."""
    results: list[ToolCardResult] | None = attrs.field(default=None, metadata=OMITTED)
    """What the search found, at most 200."""
    more_results: bool | None = attrs.field(default=None, metadata=OMITTED)
    """The tool stopped at its limit, or ``results`` was cut: there is more than shown."""
    server: str | None = attrs.field(default=None, metadata=OMITTED)
    """The MCP server of an ``mcp__<server>__<tool>`` tool."""
    tool: str | None = attrs.field(default=None, metadata=OMITTED)
    """The tool's name (``mcp``: the server's own name for it; ``other``: the tool)."""
    text: str | None = attrs.field(default=None, metadata=OMITTED)
    """The result's text (``read``: the content; ``mcp``/``other``: the answer; a failure: the
    error), at most 16 KB."""
    images: list[ToolCardImage] | None = attrs.field(default=None, metadata=OMITTED)


@attrs.frozen
class TranscriptEntry:
    """One visible entry of the active path: a message, a compaction or branch summary, or a shown
    custom message."""

    entry_id: str
    type: str
    timestamp: str | None
    message: AgentMessage | None = attrs.field(default=None, metadata=OMITTED)
    """pi's AgentMessage, for ``message`` entries."""
    summary: str | None = attrs.field(default=None, metadata=OMITTED)
    """For ``compaction`` and ``branch_summary`` entries."""
    custom_type: str | None = attrs.field(default=None, metadata=OMITTED)
    content: Any = attrs.field(default=None, metadata=OMITTED)
    """For ``custom_message`` entries."""
    context_edit: ContextEditEffect | None = attrs.field(default=None, metadata=OMITTED)
    """What a pi 1.6 context edit did to the entry's part of the context; left out when nothing
    did."""
    card: SummaryCard | None = attrs.field(default=None, metadata=OMITTED)
    """For ``compaction`` and ``branch_summary`` entries: what the chats show of them."""
    tool_card: ToolCard | None = attrs.field(default=None, metadata=OMITTED)
    """For ``toolResult`` messages: the card of the call it answers (its arguments found in the
    assistant message that made the call), so a replayed history renders without matching ids."""


@attrs.frozen
class MessagesResult:
    session_id: str
    leaf_id: str | None
    total: int
    offset: int
    """How many visible entries of the path come before ``entries`` (0: the first page)."""
    entries: list[TranscriptEntry]


FileAction = Literal["restored", "created", "deleted", "conflict", "skipped"]
"""What a restore did to a file: ``conflict`` — changed since pi-lsp last wrote it, left as it
is; ``skipped`` — left as it is for ``reason`` (not restorable, already right, not writable)."""
FILE_ACTIONS: tuple[str, ...] = typing.get_args(FileAction)


@attrs.frozen
class FileOutcome:
    """What a restore did (or a preview says it would do) to one file."""

    path: str
    """Absolute."""
    action: FileAction
    reason: str | None = attrs.field(default=None, metadata=OMITTED)


@attrs.frozen
class FilePreview:
    path: str
    """Absolute."""
    action: FileAction
    """What ``pi/navigate`` with ``restoreFiles`` would do now (without ``force``)."""
    diff: str
    """Unified diff from the current content to the target's; empty for a skipped file."""
    reason: str | None = attrs.field(default=None, metadata=OMITTED)
    commands: list[str] | None = attrs.field(default=None, metadata=OMITTED)
    """Shell commands on the way whose text names the file: what they changed is not recorded."""
    target_text: str | None = attrs.field(default=None, metadata=OMITTED)
    """With ``includeText``: the content at the target (absent when the file is deleted there)."""


@attrs.frozen
class FileChangesResult:
    session_id: str
    from_id: str | None
    to_id: str | None
    """Where the leaf would land (the parent of a user message)."""
    files: list[FilePreview]


@attrs.frozen
class NavigateResult:
    """Where the leaf is now, the summary entry attached there, and text for the editor."""

    leaf_id: str | None
    summary_entry_id: str | None = None
    editor_text: str | None = None
    files: list[FileOutcome] | None = attrs.field(default=None, metadata=OMITTED)
    """With ``restoreFiles``: what happened to each file the agent changed on the way."""


@attrs.frozen
class SessionInfo:
    path: str
    id: str
    cwd: str
    name: str | None
    parent_session_path: str | None
    created: str | None
    modified: str
    message_count: int
    first_message: str


@attrs.frozen
class SessionsResult:
    current_session_id: str
    sessions: list[SessionInfo]


@attrs.frozen
class NewSessionResult:
    session_id: str
    path: str | None
    """Where the file will be written (at the first message); null for a session kept in memory."""


@attrs.frozen
class OpenSessionResult:
    session_id: str
    path: str | None
    leaf_id: str | None
    read_only: bool
    read_only_reason: str | None = attrs.field(default=None, metadata=OMITTED)
    """Why the session cannot be written (another process writes it, the file or disk is
    read-only); omitted when it can."""


@attrs.frozen
class ForkResult:
    session_id: str
    path: str | None
    leaf_id: str | None
    parent_session_id: str
    files: list[FileOutcome] | None = attrs.field(default=None, metadata=OMITTED)
    """With ``restoreFiles``: what happened to each file."""


@attrs.frozen
class LabelResult:
    entry_id: str
    leaf_id: str | None


ContextPartKind = Literal[
    "base",
    "systemFile",
    "appendSystem",
    "contextFile",
    "skills",
    "environment",
    "extension",
    "tools",
    "compactionSummary",
    "branchSummary",
    "nestedContextFile",
    "message",
    "usageDifference",
]
CONTEXT_PART_KINDS = typing.get_args(ContextPartKind)


@attrs.frozen
class ContextPart:
    """One part of the next request (``pi/context``)."""

    kind: ContextPartKind
    label: str
    tokens: int
    entry_id: str | None = attrs.field(default=None, metadata=OMITTED)
    """The session entry it comes from (messages, summaries, nested context files)."""
    role: str | None = attrs.field(default=None, metadata=OMITTED)
    preview: str | None = attrs.field(default=None, metadata=OMITTED)
    path: str | None = attrs.field(default=None, metadata=OMITTED)
    """The file it comes from (AGENTS.md and the like)."""
    context_edit: ContextEditEffect | None = attrs.field(default=None, metadata=OMITTED)


@attrs.frozen
class ContextResult:
    session_id: str
    total: int
    basis: Literal["usage", "estimate"]
    context_window: int
    compact_at: int | None
    free_to_window: int
    free_to_compaction: int | None
    parts: list[ContextPart]


@attrs.frozen
class ContextEditResult:
    session_id: str
    entry_id: str
    """The ``context_edit`` entry written; it is the new leaf."""
    leaf_id: str | None
    context_edit: ContextEditEffect | None = attrs.field(default=None, metadata=OMITTED)
    """What applies to the target now; left out after a restore."""


@attrs.frozen
class NameResult:
    entry_id: str
    name: str | None
    """The name now in force (null when the new name is blank, which clears it)."""


@attrs.frozen
class ModelRef:
    model: str
    provider: str
    model_id: str
    key_status: KeyStatus
    """``key``: its provider has a key; ``local``: it needs none; ``missing``: it needs one it
    does not have; ``unknown``: litellm finds the credentials (or not) by itself."""
    key_source: KeySource | None
    source: ModelSource
    """Where its configuration came from."""


@attrs.frozen
class ContextUsage:
    """How full the model's context is: pi's count (the last answer's reported usage plus
    estimates of the messages after it)."""

    tokens: int | None
    """Unknown (null) right after a compaction, until the model answers again."""
    context_window: int
    percent: float | None
    compact_at: int | None = None
    """The context size in tokens past which automatic compaction starts; null when it is turned
    off."""


@attrs.frozen
class SessionCost:
    """What the session's model calls cost so far: every branch and every summary counted."""

    total: float
    """Dollars, at the prices of litellm's model table (0 for models it does not price)."""
    input: int
    output: int
    cache_read: int
    cache_write: int
    cached_percent: float | None
    """The share of prompt tokens read from the provider's cache; null before any call."""


@attrs.frozen
class StateResult:
    session_id: str
    path: str | None
    name: str | None
    leaf_id: str | None
    model: ModelRef | None
    thinking_level: ThinkingLevel
    context_usage: ContextUsage | None
    message_count: int
    is_streaming: bool
    is_compacting: bool
    read_only: bool
    cost: SessionCost
    steering_mode: QueueMode
    follow_up_mode: QueueMode
    pending_message_count: int
    """Prompts waiting in the queue, steering and follow-ups (pi's ``get_state``); ``pi/queue``
    lists them."""
    read_only_reason: str | None = attrs.field(default=None, metadata=OMITTED)
    """Why the session cannot be written; omitted when it can."""


@attrs.frozen
class ModelInfo:
    """A model ``pi/models`` lists."""

    model: str
    """The reference to give ``pi/setModel``."""
    provider: str
    model_id: str
    name: str | None
    context_window: int | None
    available: bool
    """It can be called now: its provider has a key, or it is a local model."""
    key_source: KeySource | None
    source: Literal["models.json", "litellm", "editor"]
    """Where its configuration came from: pi's models.json, litellm's model table, or the editor
    (a model the editor provides, ``vscode-lm/…``)."""


@attrs.frozen
class ProviderInfo:
    """One provider as ``pi/models`` lists it: whether, and where from, it has a key."""

    provider: str
    key_source: KeySource | None
    """Where its key comes from; null when it has none."""
    key_variable: str | None
    """The environment variable pi reads its key from."""
    subscription: bool
    """auth.json holds pi's subscription login (OAuth) for it, which pi-lsp cannot use."""
    local: bool
    """A models.json provider on this machine (it needs no key)."""


@attrs.frozen
class ModelsResult:
    models: list[ModelInfo]
    providers: list[ProviderInfo]


@attrs.frozen
class LoginResult:
    provider: str
    path: str
    """The auth.json written."""


@attrs.frozen
class LogoutResult:
    provider: str
    removed: bool
    path: str


McpState = Literal["connecting", "connected", "failed", "needs-auth", "disconnected", "disabled"]


@attrs.frozen
class McpServerStatus:
    """One MCP server as it is now."""

    name: str
    source: str
    """The ``mcp.json`` that defines it, or ``ACP session/new``."""
    scope: Literal["user", "project", "acp"]
    transport: Literal["stdio", "http"]
    state: McpState
    exposure: str
    """The server's exposure (``direct``, ``deferred``, ``codemode``, ``hidden``)."""
    tool_count: int
    tool_exposures: dict[str, int]
    """How many of its tools have each exposure (``toolExposure`` applied)."""
    last_error: str | None
    stderr_tail: str
    """The end of what a stdio server wrote to stderr (empty for HTTP servers)."""


@attrs.frozen
class McpLogoutResult:
    removed: bool
    """Whether ``mcp-auth.json`` held a sign-in for the server (it holds none now)."""
    server: McpServerStatus


@attrs.frozen
class McpResult:
    servers: list[McpServerStatus]


@attrs.frozen
class SetModelResult:
    session_id: str
    model: str
    provider: str
    model_id: str


@attrs.frozen
class SetThinkingLevelResult:
    session_id: str
    thinking_level: ThinkingLevel


@attrs.frozen
class CompactResult:
    """The compaction entry that was appended, and what its summary says."""

    session_id: str
    entry_id: str
    summary: str
    first_kept_entry_id: str
    tokens_before: int
    read_files: list[str]
    modified_files: list[str]
    reason: CompactionReason


@attrs.frozen
class Skill:
    name: str
    description: str
    path: str
    source: Scope
    disable_model_invocation: bool


@attrs.frozen
class Template:
    name: str
    description: str
    path: str
    source: Scope


Severity = Literal["error", "warning"]
"""How bad a resource problem is, as the editor's diagnostics show it: ``error`` mostly for a
file that could not be read or parsed, ``warning`` for the rest."""


@attrs.frozen
class ResourceDiagnostic:
    """A problem a resource loader found: loaders return these instead of raising."""

    path: str
    line: int
    """1-based: where the problem can be found, so the server publishes it on that file."""
    message: str
    severity: Severity = "warning"


@attrs.frozen
class NestedContextFile:
    """A context file below the workspace root whose text is in the session's context."""

    path: str
    """Relative to the workspace (``packages/api/AGENTS.md``)."""
    entry_id: str
    """The ``custom_message`` entry that brought it."""
    current: bool
    """False when the file changed (or is gone) since: the next request brings the new text."""


@attrs.frozen
class ResourcesResult:
    context_files: list[str]
    system_prompt: str | None
    append_system_prompt: str | None
    skills: list[Skill]
    templates: list[Template]
    diagnostics: list[ResourceDiagnostic]
    nested_context_files: list[NestedContextFile] = attrs.Factory(list)
    """Loaded on demand into the session's context (``nestedContextFiles`` setting)."""


@attrs.frozen
class ResourceChange:
    """A resource's identity: its kind and name (a path for files without a name)."""

    kind: str
    name: str
    path: str


@attrs.frozen
class ResourcesChanged:
    """The result of ``pi/reload`` and the params of ``pi/resourcesChanged``: what was added,
    changed (same identity, another value) and removed."""

    added: list[ResourceChange] = attrs.Factory(list)
    changed: list[ResourceChange] = attrs.Factory(list)
    removed: list[ResourceChange] = attrs.Factory(list)

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.changed or self.removed)


RESULT_BY_METHOD: dict[str, type] = {
    PROMPT: PromptResult,
    ABORT: AbortResult,
    TREE: TreeResult,
    TREE_WINDOW: TreeWindowResult,
    TREE_CHILDREN: TreeChildrenResult,
    TREE_SEARCH: TreeSearchResult,
    MESSAGES: MessagesResult,
    NAVIGATE: NavigateResult,
    FILE_CHANGES: FileChangesResult,
    SESSIONS: SessionsResult,
    NEW_SESSION: NewSessionResult,
    OPEN_SESSION: OpenSessionResult,
    FORK: ForkResult,
    LABEL: LabelResult,
    CONTEXT: ContextResult,
    CONTEXT_EDIT: ContextEditResult,
    CONTEXT_RESTORE: ContextEditResult,
    NAME: NameResult,
    STATE: StateResult,
    MODELS: ModelsResult,
    SET_MODEL: SetModelResult,
    SET_THINKING_LEVEL: SetThinkingLevelResult,
    COMPACT: CompactResult,
    RESOURCES: ResourcesResult,
    RELOAD: ResourcesChanged,
    LOGIN: LoginResult,
    LOGOUT: LogoutResult,
    SEARCH_SESSIONS: SearchSessionsResult,
    EXPORT_SESSION: ExportSessionResult,
    IMPORT_SESSION: ImportSessionResult,
    DELETE_SESSION: DeleteSessionResult,
    MCP: McpResult,
    MCP_RECONNECT: McpServerStatus,
    MCP_SET_ENABLED: McpServerStatus,
    MCP_LOGIN: McpServerStatus,
    MCP_LOGOUT: McpLogoutResult,
    QUEUE: QueueResult,
    CLEAR_QUEUE: ClearQueueResult,
    REMOVE_QUEUED: QueueResult,
    EDIT_QUEUED: QueueResult,
}
"""Every request method and the type of its result."""


# --------------------------------------------------------------------------- pi/event payloads


@attrs.frozen
class AgentStartEvent:
    """A turn begins."""

    TYPE: ClassVar[str] = "agent_start"


@attrs.frozen
class MessageStartEvent:
    """The model starts an answer."""

    TYPE: ClassVar[str] = "message_start"
    role: str


@attrs.frozen
class TextDeltaEvent:
    """Answer text arrives (consecutive deltas are merged by the event stream)."""

    TYPE: ClassVar[str] = "text_delta"
    delta: str


@attrs.frozen
class ThinkingDeltaEvent:
    """Reasoning text arrives (merged like text)."""

    TYPE: ClassVar[str] = "thinking_delta"
    delta: str


@attrs.frozen
class ToolCallStartEvent:
    """The model starts a tool call."""

    TYPE: ClassVar[str] = "toolcall_start"
    tool_call_id: str
    name: str


@attrs.frozen
class ToolExecutionStartEvent:
    """A tool starts running."""

    TYPE: ClassVar[str] = "tool_execution_start"
    tool_call_id: str
    name: str
    arguments: JsonObject
    tool_card: ToolCard | None = attrs.field(default=None, metadata=OMITTED)
    """What the chats show of the call (status ``running``)."""


@attrs.frozen
class ToolExecutionUpdateEvent:
    """A running tool's output so far (``bash`` sends the tail of its output, at most every
    100 ms, in the shape of its result: ``content`` and ``details``); each update replaces the
    previous one."""

    TYPE: ClassVar[str] = "tool_execution_update"
    tool_call_id: str
    name: str
    content: list[JsonObject]
    details: JsonObject | None
    tool_card: ToolCard | None = attrs.field(default=None, metadata=OMITTED)
    """The whole card again, with the output so far (it replaces the previous one)."""


@attrs.frozen
class ToolExecutionEndEvent:
    """A tool finished; its result was saved as ``entryId``."""

    TYPE: ClassVar[str] = "tool_execution_end"
    tool_call_id: str
    name: str
    is_error: bool
    content: list[JsonObject]
    details: JsonObject | None
    entry_id: str
    tool_card: ToolCard | None = attrs.field(default=None, metadata=OMITTED)
    """The finished call's card (with ``durationMs``)."""


@attrs.frozen
class MessageEndEvent:
    """A message (prompt, answer or tool result) was saved to the session."""

    TYPE: ClassVar[str] = "message_end"
    entry_id: str
    message: AgentMessage


@attrs.frozen
class RetryEvent:
    """A transient provider error; the answer is retried after ``delayMs``."""

    TYPE: ClassVar[str] = "retry"
    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str


SummarizationSource = Literal["compaction", "branch_summary"]


@attrs.frozen
class SummarizationRetryScheduledEvent:
    """A summary (a compaction's or a branch summary's) failed with a transient provider error;
    it is asked again after ``delay_ms`` (pi 1.6's event)."""

    TYPE: ClassVar[str] = "summarization_retry_scheduled"
    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str


@attrs.frozen
class SummarizationRetryAttemptStartEvent:
    """The summary is asked again."""

    TYPE: ClassVar[str] = "summarization_retry_attempt_start"
    source: SummarizationSource
    reason: CompactionReason | None = attrs.field(default=None, metadata=OMITTED)
    """The compaction's reason (left out for a branch summary)."""


@attrs.frozen
class SummarizationRetryFinishedEvent:
    """The retries of a summary ended (with an answer, or the last error)."""

    TYPE: ClassVar[str] = "summarization_retry_finished"


@attrs.frozen
class AuthErrorEvent:
    """The provider refused the key (401) or its rights (403); sent once, after the failed
    answer's ``message_end``. ``message`` says which key (where it came from, never the key);
    show it once, with the client's way to store another key."""

    TYPE: ClassVar[str] = "auth_error"
    provider: str
    status: int
    key_source: KeySource | None
    message: str


@attrs.frozen
class CompactionStartEvent:
    """A compaction begins."""

    TYPE: ClassVar[str] = "compaction_start"
    reason: CompactionReason


@attrs.frozen
class CompactionEndEvent:
    """The compaction ended: with its new entry, or with the error that left the session
    unchanged."""

    TYPE: ClassVar[str] = "compaction_end"
    reason: CompactionReason
    aborted: bool
    will_retry: bool
    entry_id: str | None = attrs.field(default=None, metadata=OMITTED)
    tokens_before: int | None = attrs.field(default=None, metadata=OMITTED)
    error_message: str | None = attrs.field(default=None, metadata=OMITTED)
    card: SummaryCard | None = attrs.field(default=None, metadata=OMITTED)
    """What the chats show of the compaction (with its entry)."""


@attrs.frozen
class BranchSummaryStartEvent:
    """The model starts summarizing the branch being left (``pi/navigate`` with ``summarize``)."""

    TYPE: ClassVar[str] = "branch_summary_start"
    target_id: str


@attrs.frozen
class BranchSummaryEndEvent:
    """The branch summary ended: with its entry where the user landed (no ``entryId`` when
    nothing was left behind to summarize), or with the error that left the leaf where it was."""

    TYPE: ClassVar[str] = "branch_summary_end"
    target_id: str
    aborted: bool
    entry_id: str | None = attrs.field(default=None, metadata=OMITTED)
    error_message: str | None = attrs.field(default=None, metadata=OMITTED)
    card: SummaryCard | None = attrs.field(default=None, metadata=OMITTED)
    """What the chats show of the summary (with its entry)."""


@attrs.frozen
class TreeChangedEvent:
    """The tree or the leaf changed (after a turn, a navigation, a label…): ``version`` rises by
    one per change (a client that sees a gap missed one and fetches ``pi/treeWindow`` again), and
    the event says what changed since the previous ``tree_changed``."""

    TYPE: ClassVar[str] = "tree_changed"
    leaf_id: str | None
    version: int = 0
    entries: list[TreeNodeRow] = attrs.Factory(list)
    """The entries added, as ``pi/treeWindow`` rows, in file order (a window fetched in between
    may already show some)."""
    labels: dict[str, str | None] = attrs.Factory(dict)
    """Labels set (or cleared: null) by the change, by entry id."""
    name: str | None = None
    """The session's name now."""
    context_edits: dict[str, ContextEditEffect | None] = attrs.Factory(dict)
    """Entries whose ``contextEdit`` mark the change's context edits changed, by entry id: what
    applies now (null: nothing, after a restore)."""


@attrs.frozen
class AgentEndEvent:
    """The turn ended."""

    TYPE: ClassVar[str] = "agent_end"
    stop_reason: StopReason
    leaf_id: str | None


@attrs.frozen
class QueueUpdateEvent:
    """The queue changed (a prompt queued, delivered, edited or taken back): both lists whole, as
    pi 1.6's ``queue_update``, with each prompt's id."""

    TYPE: ClassVar[str] = "queue_update"
    steering: list[QueuedPromptInfo]
    follow_up: list[QueuedPromptInfo]


@attrs.frozen
class ErrorEvent:
    """The turn failed unexpectedly (a bug, not a provider error: those end the answer)."""

    TYPE: ClassVar[str] = "error"
    message: str


Event = (
    AgentStartEvent
    | MessageStartEvent
    | TextDeltaEvent
    | ThinkingDeltaEvent
    | ToolCallStartEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
    | MessageEndEvent
    | RetryEvent
    | SummarizationRetryScheduledEvent
    | SummarizationRetryAttemptStartEvent
    | SummarizationRetryFinishedEvent
    | AuthErrorEvent
    | CompactionStartEvent
    | CompactionEndEvent
    | BranchSummaryStartEvent
    | BranchSummaryEndEvent
    | TreeChangedEvent
    | AgentEndEvent
    | QueueUpdateEvent
    | ErrorEvent
)

EVENT_CLASSES: tuple[Any, ...] = typing.get_args(Event)
EVENT_TYPES: tuple[str, ...] = tuple(cls.TYPE for cls in EVENT_CLASSES)
"""The ``type`` of each event carried by ``pi/event``; docs/protocol.md describes their fields."""


@attrs.frozen
class EventNotification:
    """The params of ``pi/event``: ``seq`` rises by one per notification of a session."""

    session_id: str
    seq: int
    event: Event


@attrs.frozen
class LanguageModelMessage:
    """One message of a conversation: the editor's APIs know only these two roles (the system
    prompt is the first user message)."""

    role: Literal["user", "assistant"]
    content: list[LanguageModelPart]


@attrs.frozen
class LanguageModelTool:
    """A tool the model may call."""

    name: str
    description: str
    input_schema: dict[str, Any]
    """The JSON Schema of its arguments."""


@attrs.frozen
class LanguageModelChatParams:
    """The params of ``pi/languageModel/chat``: run one streamed request on an editor's model."""

    request_id: str
    """Names the request in its ``pi/languageModel/part`` notifications."""
    model: str
    """The model's ``id`` as ``pi/languageModels`` listed it."""
    messages: list[LanguageModelMessage]
    tools: list[LanguageModelTool]
    justification: str
    """Why pi-lsp asks, for the editor's consent dialog."""


@attrs.frozen
class LanguageModelChatResult:
    """How the answer ended: its streamed parts were all sent before this result."""

    input_tokens: int | None = attrs.field(default=None, metadata=OMITTED)
    """The prompt's size as the model counts it (VS Code: ``countTokens``)."""
    output_tokens: int | None = attrs.field(default=None, metadata=OMITTED)


SERVER_REQUEST_PARAMS: dict[str, type] = {LANGUAGE_MODEL_CHAT: LanguageModelChatParams}
"""Every request the server sends a client, and the type of its params."""
SERVER_REQUEST_RESULTS: dict[str, type] = {LANGUAGE_MODEL_CHAT: LanguageModelChatResult}

SERVER_NOTIFICATION_PARAMS: dict[str, type] = {
    EVENT: EventNotification,
    RESOURCES_CHANGED: ResourcesChanged,
}
"""Every notification the server sends a client, and the type of its params."""


# --------------------------------------------------------------------------- the converter


def camel_case(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _strict(kind: type):
    def structure(value: Any, _: type) -> Any:
        if type(value) is not kind and not (kind is float and type(value) is int):
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        return value

    return structure


def _make_converter() -> cattrs.Converter:
    converter = cattrs.Converter(forbid_extra_keys=False)
    for kind in (str, bool, int, float):
        converter.register_structure_hook(kind, _strict(kind))

    def structure_factory(cls: type):
        overrides = {
            field.name: override(rename=camel_case(field.name)) for field in attrs.fields(cls)
        }
        # cattrs takes per-field overrides as **kwargs beside its own _cattrs_* options.
        return make_dict_structure_fn(cls, converter, **overrides)  # type: ignore[arg-type]

    def unstructure_factory(cls: type):
        fields = attrs.fields(cls)
        overrides = {field.name: override(rename=camel_case(field.name)) for field in fields}
        unstructure: Any = make_dict_unstructure_fn(cls, converter, **overrides)  # type: ignore[arg-type]
        omitted = [camel_case(f.name) for f in fields if f.metadata.get(OMITTED_WHEN_NONE)]
        event_type = getattr(cls, "TYPE", None)
        if not omitted and event_type is None:
            return unstructure

        def unstructure_wire_shape(value: Any) -> dict[str, Any]:
            data = unstructure(value)
            for key in omitted:
                if data[key] is None:
                    del data[key]
            return data if event_type is None else {"type": event_type, **data}

        return unstructure_wire_shape

    def structure_progress_token(value: Any, _: type) -> Any:
        if type(value) not in (str, int):
            raise TypeError(f"expected a string or an integer, got {type(value).__name__}")
        return value

    def unstructure_context_part(part: ContextPart) -> dict[str, Any]:
        # pi/context sends a part per message (tens of thousands in a long session): written out
        # by hand, as the generated function would, at a fraction of its cost.
        data: dict[str, Any] = {"kind": part.kind, "label": part.label, "tokens": part.tokens}
        for key, value in (
            ("entryId", part.entry_id),
            ("role", part.role),
            ("preview", part.preview),
            ("path", part.path),
            ("contextEdit", part.context_edit),
        ):
            if value is not None:
                data[key] = value
        return data

    tool_card_keys = [(field.name, camel_case(field.name)) for field in attrs.fields(ToolCard)]
    nested = {
        "arguments": lambda value: [{"name": item.name, "value": item.value} for item in value],
        "results": lambda value: [_result_json(item) for item in value],
        "images": lambda value: [
            {"mimeType": item.mime_type, "sizeBytes": item.size_bytes} for item in value
        ],
    }

    def unstructure_tool_card(card: ToolCard) -> dict[str, Any]:
        # pi/messages sends a card per tool result: written out by hand, as the generated
        # function would (the fields left out when None), at a fraction of its cost.
        data: dict[str, Any] = {}
        for name, key in tool_card_keys:
            value = getattr(card, name)
            if value is not None:
                data[key] = nested[name](value) if name in nested else value
        return data

    converter.register_structure_hook(ProgressToken, structure_progress_token)
    converter.register_structure_hook_factory(attrs.has, structure_factory)
    converter.register_unstructure_hook_factory(attrs.has, unstructure_factory)
    converter.register_unstructure_hook(ContextPart, unstructure_context_part)
    converter.register_unstructure_hook(ToolCard, unstructure_tool_card)
    # pi's own records (JsonObject, Any) are JSON already: sent as they are, not copied.
    converter.register_unstructure_hook(dict, lambda value: value)
    converter.register_unstructure_hook(list, lambda value: value)
    return converter


converter = _make_converter()


def _result_json(result: ToolCardResult) -> dict[str, Any]:
    data: dict[str, Any] = {"path": result.path}
    if result.line is not None:
        data["line"] = result.line
    if result.text is not None:
        data["text"] = result.text
    return data


def parse_params(method: str, raw: Any) -> Any:
    """Validate raw JSON params of ``method``; ``InvalidParamsError`` names what is wrong."""
    params_type = PARAMS_BY_METHOD.get(method) or NOTIFICATION_PARAMS[method]
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise InvalidParamsError(f"{method}: params must be an object, got {type(raw).__name__}")
    try:
        return converter.structure(raw, params_type)
    except cattrs.BaseValidationError as error:
        problems = "; ".join(
            _readable(message) for message in cattrs.transform_error(error, path="params")
        )
        raise InvalidParamsError(f"{method}: {problems}") from None
    except (TypeError, ValueError) as error:
        raise InvalidParamsError(f"{method}: {error}") from None


def _readable(message: str) -> str:
    # cattrs paths use the Python field names; clients know the camelCase wire names.
    message = re.sub(
        r"\.([a-z]+(?:_[a-z]+)+)", lambda match: "." + camel_case(match.group(1)), message
    )
    literal = re.match(
        r"unknown error \((.*) not in literal typing\.Literal\[(.*)\]\)(.*)", message
    )
    if literal:
        value, where = echoed(repr(literal.group(1))), literal.group(3)
        return f"must be one of {literal.group(2)}, got {value}{where}"
    return message


def to_json(value: Any) -> Any:
    """A result or notification (attrs) as camelCase JSON-ready data, as it goes on the wire."""
    return converter.unstructure(value)
