"""Every ``pi/*`` method and event of the pi-lsp protocol: names, parameter and result types.

This is the one place the wire protocol is defined on the server side; the VS Code extension's
typed request table, the Neovim ``api.lua`` and ``docs/protocol.md`` mirror it, and a test fails
when they drift apart. Fields are snake_case here and camelCase on the wire (the converter below
renames them). Params are validated by ``parse_params``: a malformed request gets JSON-RPC
InvalidParams naming the bad field, never silence.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from pi_lsp.errors import InvalidParamsError

# ----------------------------------------------------------------------- requests (client → server)

PROMPT = "pi/prompt"
ABORT = "pi/abort"
TREE = "pi/tree"
MESSAGES = "pi/messages"
NAVIGATE = "pi/navigate"
SESSIONS = "pi/sessions"
NEW_SESSION = "pi/newSession"
OPEN_SESSION = "pi/openSession"
FORK = "pi/fork"
LABEL = "pi/label"
NAME = "pi/name"
STATE = "pi/state"
MODELS = "pi/models"
SET_MODEL = "pi/setModel"
SET_THINKING_LEVEL = "pi/setThinkingLevel"
COMPACT = "pi/compact"
RESOURCES = "pi/resources"
RELOAD = "pi/reload"

# ------------------------------------------------------------------ notifications (server → client)

EVENT = "pi/event"
RESOURCES_CHANGED = "pi/resourcesChanged"

EVENT_TYPES = (
    "agent_start",
    "message_start",
    "text_delta",
    "thinking_delta",
    "toolcall_start",
    "tool_execution_start",
    "tool_execution_end",
    "message_end",
    "retry",
    "compaction_start",
    "compaction_end",
    "tree_changed",
    "agent_end",
    "error",
)
"""The ``type`` of each event carried by ``pi/event``; docs/protocol.md describes their fields."""

# ------------------------------------------------------------------------- workspace/executeCommand

COMMAND_PREFIX = "pi."
"""Each request is also a command: ``pi/prompt`` →
``pi.prompt`` with the params object as its one argument."""

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")


def command_name(method: str) -> str:
    return COMMAND_PREFIX + method.removeprefix("pi/")


# --------------------------------------------------------------------------- params


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
    """While a turn runs: ``followUp`` (default) queues the prompt,
    ``steer`` delivers it after the current tool batch."""


@attrs.frozen
class MessagesParams:
    session_id: str | None = None
    limit: int | None = None
    """Only the last ``limit`` entries of the active path (at least 1); all of them when omitted."""


@attrs.frozen
class NavigateParams:
    target_id: str
    session_id: str | None = None
    summarize: bool = False
    instructions: str | None = None


@attrs.frozen
class OpenSessionParams:
    session_id: str | None = None
    path: str | None = None


@attrs.frozen
class NewSessionParams:
    name: str | None = None


@attrs.frozen
class ForkParams:
    entry_id: str
    session_id: str | None = None


@attrs.frozen
class LabelParams:
    entry_id: str
    label: str | None = None
    """The label text; empty or null clears the entry's label."""
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
    level: Literal["off", "minimal", "low", "medium", "high", "xhigh"]
    session_id: str | None = None


@attrs.frozen
class CompactParams:
    session_id: str | None = None
    instructions: str | None = None
    """What the summary should focus on, in addition to the usual sections."""
    work_done_token: ProgressToken | None = None
    """An LSP progress token (a string or an integer); the server
    reports ``$/progress`` on it while it summarizes."""


@attrs.frozen
class NoParams:
    """A request without parameters."""


@attrs.frozen
class ModelsParams:
    filter: str | None = None
    """Only models whose name contains this text."""


PARAMS_BY_METHOD: dict[str, type] = {
    PROMPT: PromptParams,
    ABORT: SessionParams,
    TREE: SessionParams,
    MESSAGES: MessagesParams,
    NAVIGATE: NavigateParams,
    SESSIONS: SessionParams,
    NEW_SESSION: NewSessionParams,
    OPEN_SESSION: OpenSessionParams,
    FORK: ForkParams,
    LABEL: LabelParams,
    NAME: NameParams,
    STATE: SessionParams,
    MODELS: ModelsParams,
    SET_MODEL: SetModelParams,
    SET_THINKING_LEVEL: SetThinkingLevelParams,
    COMPACT: CompactParams,
    RESOURCES: NoParams,
    RELOAD: NoParams,
}
"""Every request method and the type its params are validated against."""


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
        overrides = {
            field.name: override(rename=camel_case(field.name)) for field in attrs.fields(cls)
        }
        return make_dict_unstructure_fn(cls, converter, **overrides)  # type: ignore[arg-type]

    def structure_progress_token(value: Any, _: type) -> Any:
        if type(value) not in (str, int):
            raise TypeError(f"expected a string or an integer, got {type(value).__name__}")
        return value

    converter.register_structure_hook(ProgressToken, structure_progress_token)
    converter.register_structure_hook_factory(attrs.has, structure_factory)
    converter.register_unstructure_hook_factory(attrs.has, unstructure_factory)
    return converter


converter = _make_converter()


def parse_params(method: str, raw: Any) -> Any:
    """Validate raw JSON params of ``method``; ``InvalidParamsError`` names what is wrong."""
    params_type = PARAMS_BY_METHOD[method]
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
        return f"must be one of {literal.group(2)}, got {literal.group(1)!r}{literal.group(3)}"
    return message


def to_wire(value: Any) -> Any:
    """An attrs value as camelCase JSON-ready data."""
    return converter.unstructure(value)
