"""The ``vscode-lm`` provider: a completion run by the editor on one of its own models.

Instead of an HTTP request, the conversation goes to the client as ``pi/languageModel/chat``
(``editor_models.LanguageModelChannel``); the client streams the answer back as parts, which
become the chat-completion chunks every stream turns into events (``stream.AssistantStream``).

The conversion follows pi's rules for a model of another provider (``history.prepare_history``):
the editor's APIs know two roles, so the system prompt is the first user message; user text and
images (a placeholder for a model without images) stay user parts; an assistant message keeps its
text and tool calls, its thinking is dropped; a run of tool results is one user message of
``toolResult`` parts. Back: text → text deltas, thinking → thinking deltas, a tool call → one
complete tool call; the client's ``countTokens`` figures are the usage.

The client's error codes (``protocol.LANGUAGE_MODEL_*``) become ``ProviderError`` texts that the
recovery paths classify (``failed_messages.py``): a context too long reads as an overflow
(compaction, then a retry); a refused consent, a quota and a missing model are not retried and
tell the user what to do.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

from pi_lsp import protocol
from pi_lsp.llm.editor_models import EditorModels, LanguageModelRequestError
from pi_lsp.llm.history import prepare_history
from pi_lsp.llm.messages import ToolSpec, js_json, sanitize, tool_result_blocks
from pi_lsp.llm.provider_errors import ProviderError, timeout_error
from pi_lsp.protocol import (
    LanguageModelChatParams,
    LanguageModelChatResult,
    LanguageModelContent,
    LanguageModelMessage,
    LanguageModelPart,
    LanguageModelTool,
)
from pi_lsp.session.message_types import LlmMessage

API = "vscode-lm"
"""The ``api`` pi records on these answers."""
JUSTIFICATION = "pi-lsp's agent answers your prompts in the Pi chat with this model."
IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
_REQUEST_CANCELLED = -32800


def chat_params(
    model_id: str,
    system_prompt: str,
    messages: Sequence[LlmMessage],
    tools: Sequence[ToolSpec],
    *,
    accepts_images: bool = True,
) -> LanguageModelChatParams:
    """The ``pi/languageModel/chat`` params for one completion (module docstring)."""
    history = prepare_history(messages, "vscode-lm", model_id)
    converted: list[LanguageModelMessage] = []
    if system_prompt:
        converted.append(_message("user", [_text(system_prompt)]))
    for message in history:
        _append(converted, message, accepts_images)
    return LanguageModelChatParams(
        request_id=str(uuid.uuid4()),
        model=model_id.partition("/")[2],
        messages=converted,
        tools=[
            LanguageModelTool(tool.name, tool.description, dict(tool.parameters)) for tool in tools
        ],
        justification=JUSTIFICATION,
    )


def _append(
    converted: list[LanguageModelMessage], message: Mapping[str, Any], images: bool
) -> None:
    role = message.get("role")
    if role == "user":
        parts = _user_parts(message.get("content"), images)
        if parts:
            converted.append(_message("user", parts))
    elif role == "assistant":
        parts = _assistant_parts(message.get("content") or [])
        if parts:
            converted.append(_message("assistant", parts))
    elif role == "toolResult":
        result = _tool_result(message, images)
        previous = converted[-1] if converted else None
        if (
            previous is not None
            and previous.content[-1:]
            and previous.content[-1].type == "toolResult"
        ):
            previous.content.append(result)  # one user message answers the whole batch of calls
        else:
            converted.append(_message("user", [result]))


def _message(role: str, parts: list[LanguageModelPart]) -> LanguageModelMessage:
    return LanguageModelMessage(role=role, content=parts)  # type: ignore[arg-type]


def _text(text: str) -> LanguageModelPart:
    return LanguageModelPart("text", text=sanitize(text))


def _user_parts(content: Any, images: bool) -> list[LanguageModelPart]:
    if isinstance(content, str):
        return [_text(content)] if content else []
    parts: list[LanguageModelPart] = []
    for block in content or []:
        if block.get("type") == "text" and block.get("text"):
            parts.append(_text(str(block["text"])))
        elif block.get("type") == "image" and images:
            parts.append(
                LanguageModelPart("image", mime_type=block.get("mimeType"), data=block.get("data"))
            )
        elif block.get("type") == "image" and not (parts and parts[-1].text == IMAGE_PLACEHOLDER):
            parts.append(_text(IMAGE_PLACEHOLDER))
    return parts


def _assistant_parts(blocks: Sequence[Mapping[str, Any]]) -> list[LanguageModelPart]:
    parts: list[LanguageModelPart] = []
    for block in blocks:
        if block.get("type") == "text" and str(block.get("text", "")).strip():
            parts.append(_text(str(block["text"])))
        elif block.get("type") == "toolCall":
            arguments = block.get("arguments")
            parts.append(
                LanguageModelPart(
                    "toolCall",
                    call_id=str(block.get("id")),
                    name=str(block.get("name")),
                    input=arguments if isinstance(arguments, dict) else {},
                )
            )
    return parts


def _tool_result(message: Mapping[str, Any], images: bool) -> LanguageModelPart:
    pieces: list[LanguageModelContent] = []
    for block in tool_result_blocks(message):
        if block.get("type") == "text":
            pieces.append(LanguageModelContent("text", text=sanitize(str(block.get("text", "")))))
        elif block.get("type") == "image" and images:
            pieces.append(
                LanguageModelContent(
                    "image", mime_type=block.get("mimeType"), data=block.get("data")
                )
            )
        elif block.get("type") == "image":
            pieces.append(LanguageModelContent("text", text=IMAGE_PLACEHOLDER))
    if not any(piece.text or piece.data for piece in pieces):
        pieces = [LanguageModelContent("text", text="(no tool output)")]
    return LanguageModelPart("toolResult", call_id=str(message.get("toolCallId")), content=pieces)


# ------------------------------------------------------------------------------------ the answer


class AnswerChunks:
    """The chat-completion chunks of an answer's parts, numbering its tool calls."""

    def __init__(self) -> None:
        self.tool_calls = 0

    def of_part(self, part: LanguageModelPart) -> dict[str, Any] | None:
        """The chunk of one streamed part (None for a part an answer cannot hold)."""
        if part.type == "text" and part.text:
            return _delta({"content": part.text})
        if part.type == "thinking" and part.text:
            return _delta({"reasoning_content": part.text})
        if part.type == "toolCall" and part.name:
            call = {
                "index": self.tool_calls,
                "id": part.call_id or "",
                "function": {"name": part.name, "arguments": js_json(part.input or {})},
            }
            self.tool_calls += 1
            return _delta({"tool_calls": [call]})
        return None

    def final(self, result: LanguageModelChatResult) -> dict[str, Any]:
        """The last chunk: why the answer stopped, and the model's own token counts."""
        reason = "tool_calls" if self.tool_calls else "stop"
        chunk: dict[str, Any] = {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}
        if result.input_tokens is not None or result.output_tokens is not None:
            chunk["usage"] = {
                "prompt_tokens": result.input_tokens or 0,
                "completion_tokens": result.output_tokens or 0,
            }
        return chunk


def _delta(delta: dict[str, Any]) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta}]}


def provider_error(error: LanguageModelRequestError, model: str) -> ProviderError:
    """The recorded failure of an error answer (module docstring)."""
    code, text = error.code, error.message.strip()
    if code == protocol.LANGUAGE_MODEL_NO_PERMISSIONS:
        return ProviderError(
            403,
            f"NoPermissions: VS Code did not allow pi-lsp to use {model}. Send the prompt again "
            'and choose "Allow" when VS Code asks (or allow Pi under Accounts → Manage Language '
            'Model Access…), or choose another model with "Pi: Select Model…".',
        )
    if code == protocol.LANGUAGE_MODEL_BLOCKED:
        return ProviderError(
            429, f"Blocked: quota exceeded or request blocked by VS Code for {model}: {text}"
        )
    if code == protocol.LANGUAGE_MODEL_NOT_FOUND:
        # The editor's own text is left out: its wording must not make this read as retryable.
        return ProviderError(
            404,
            f"NotFound: {model} is no longer available in VS Code (its extension may be "
            'disabled or signed out): choose another model with "Pi: Select Model…".',
        )
    if code == protocol.LANGUAGE_MODEL_CONTEXT_TOO_LONG:
        return ProviderError(
            400,
            f"ContextWindowExceededError: the prompt exceeds the context window of {model}: {text}",
        )
    if code == _REQUEST_CANCELLED:
        return ProviderError(None, f"Cancelled: VS Code cancelled the request to {model}.")
    return ProviderError(None, f"{API} error: {text}")


async def stream_chunks(
    editor_models: EditorModels,
    params: LanguageModelChatParams,
    model: str,
    timeout: float | None = None,
) -> AsyncGenerator[dict[str, Any], None]:
    """The answer of ``params`` as chunks; a failure raises ``ProviderError``, and so does a
    client silent for ``timeout`` seconds (as a provider's read timeout). Closing the generator
    early (an aborted turn) cancels the client's request."""
    channel = editor_models.channel
    if channel is None or editor_models.find(_local_id(model)) is None:
        raise ProviderError(404, editor_models.missing_message(_local_id(model)))
    parts: asyncio.Queue[LanguageModelPart | None] = asyncio.Queue()
    answer = asyncio.ensure_future(channel.chat(params, parts.put_nowait))
    answer.add_done_callback(lambda task: _ended(task, parts))
    chunks = AnswerChunks()
    try:
        while (part := await _next_part(parts, timeout)) is not None:
            chunk = chunks.of_part(part)
            if chunk is not None:
                yield chunk
        try:
            result = answer.result()
        except LanguageModelRequestError as error:
            raise provider_error(error, model) from None
        yield chunks.final(result)
    finally:
        # Not awaited: the request withdraws itself once cancelled, and awaiting it here could
        # swallow a cancellation of this very task (an aborted turn).
        answer.cancel()


def _ended(answer: asyncio.Future[Any], parts: asyncio.Queue[LanguageModelPart | None]) -> None:
    parts.put_nowait(None)
    if not answer.cancelled():
        answer.exception()  # seen: an answer abandoned early must not log "never retrieved"


async def _next_part(
    parts: asyncio.Queue[LanguageModelPart | None], timeout: float | None
) -> LanguageModelPart | None:
    try:
        async with asyncio.timeout(timeout):
            return await parts.get()
    except TimeoutError:
        raise timeout_error() from None


def _local_id(model: str) -> str:
    return model.removeprefix("vscode-lm/")
