"""The events of one streamed completion, in the order the provider sent them.

Deltas carry only the new text; ``Completed`` carries the complete pi assistant message and is
always the last event. Every event has a ``kind`` string for logging and for the protocol layer.
"""

from __future__ import annotations

import attrs

from pi_lsp.session.message_types import AssistantMessage


@attrs.frozen
class TextDelta:
    text: str
    kind: str = attrs.field(default="text_delta", init=False)


@attrs.frozen
class ThinkingDelta:
    text: str
    kind: str = attrs.field(default="thinking_delta", init=False)


@attrs.frozen
class ToolCallStart:
    """A tool call began; ``index`` is its position among this answer's tool calls."""

    index: int
    id: str
    name: str
    kind: str = attrs.field(default="toolcall_start", init=False)


@attrs.frozen
class ToolCallDelta:
    """More of tool call ``index``'s JSON arguments text."""

    index: int
    arguments_delta: str
    kind: str = attrs.field(default="toolcall_delta", init=False)


@attrs.frozen
class Completed:
    """The stream ended; ``message`` is pi's complete assistant message (possibly an error)."""

    message: AssistantMessage
    kind: str = attrs.field(default="completed", init=False)


StreamEvent = TextDelta | ThinkingDelta | ToolCallStart | ToolCallDelta | Completed
