"""pi's messages as types: what pi-lsp builds and appends has pi's shape, and mypy checks it.

The provider roles follow pi-ai's ``types.ts`` (``UserMessage``, ``AssistantMessage``,
``ToolResultMessage`` and their content blocks); the coding agent's own roles follow pi 0.84.2's
``messages.ts`` (``bashExecution``, ``custom``, ``branchSummary``, ``compactionSummary``). Field
names are pi's JSON keys; a key pi may leave out is ``NotRequired``.

A message read back from a session file is a ``MessageRecord``: pi's shape as far as the file
holds it, never checked (a file written by another tool may lack any key, as pi tolerates), so
code that reads one uses ``.get`` as pi's JavaScript reads properties.
"""

# No ``from __future__ import annotations``: TypedDict reads ``NotRequired`` from evaluated
# annotations (``__required_keys__``), which the shape test relies on.
from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from pi_lsp.protocol import StopReason


class TextContent(TypedDict):
    type: Literal["text"]
    text: str
    textSignature: NotRequired[str]


class ThinkingContent(TypedDict):
    type: Literal["thinking"]
    thinking: str
    thinkingSignature: NotRequired[str]
    redacted: NotRequired[bool]


class ImageContent(TypedDict):
    type: Literal["image"]
    data: str
    """Base64."""
    mimeType: str


class ToolCall(TypedDict):
    type: Literal["toolCall"]
    id: str
    name: str
    arguments: dict[str, Any]
    thoughtSignature: NotRequired[str]


class Cost(TypedDict):
    input: float
    output: float
    cacheRead: float
    cacheWrite: float
    total: float


class Usage(TypedDict):
    input: int
    output: int
    cacheRead: int
    cacheWrite: int
    totalTokens: int
    cost: Cost
    cacheWrite1h: NotRequired[int]
    """Anthropic's 1-hour cache writes, a part of ``cacheWrite`` (priced apart)."""


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[TextContent | ImageContent]
    timestamp: int


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: list[TextContent | ThinkingContent | ToolCall]
    api: str
    provider: str
    model: str
    usage: Usage
    stopReason: StopReason
    errorMessage: NotRequired[str]
    timestamp: int


class ToolResultMessage(TypedDict):
    role: Literal["toolResult"]
    toolCallId: str
    toolName: str
    content: list[TextContent | ImageContent]
    details: NotRequired[Any]
    isError: bool
    timestamp: int


class BashExecutionMessage(TypedDict):
    """A ``!command`` the user ran; ``!!command`` (``excludeFromContext``) stays out of the
    model's context."""

    role: Literal["bashExecution"]
    command: str
    output: str
    exitCode: int | None
    cancelled: bool
    truncated: bool
    fullOutputPath: NotRequired[str]
    excludeFromContext: NotRequired[bool]
    timestamp: int


class CustomMessage(TypedDict):
    """An extension's message (a ``custom_message`` entry) in the context."""

    role: Literal["custom"]
    customType: str
    content: str | list[TextContent | ImageContent]
    display: bool
    details: NotRequired[Any]
    timestamp: int | None


class BranchSummaryMessage(TypedDict):
    role: Literal["branchSummary"]
    summary: str
    fromId: str
    timestamp: int | None


class CompactionSummaryMessage(TypedDict):
    role: Literal["compactionSummary"]
    summary: str
    tokensBefore: int
    timestamp: int | None


LlmMessage: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage
"""What a provider is sent (pi-ai's ``Message``)."""

AgentMessage: TypeAlias = (
    LlmMessage
    | BashExecutionMessage
    | CustomMessage
    | BranchSummaryMessage
    | CompactionSummaryMessage
)
"""Any message of a session's context (pi's ``AgentMessage``)."""

MessageRecord: TypeAlias = Mapping[str, Any]
"""A message as a session file holds it: pi's shape, unchecked (see the module's docstring)."""
