"""A session's chat messages as its previous request sent them, so the next converts only the new.

Every request carries the whole context again, and converting it (``messages.to_chat_messages``)
is most of pi-lsp's own work in a turn of a long session (about a millisecond and a half at 10k
entries), though only the last few messages are new. ``ConvertedHistory`` keeps the previous
conversion up to the last user message or finished assistant answer; when the next request's
messages begin with the same messages (compared by value, in C: equal objects are taken as they
are), only the rest is converted. Cutting in front of such a message changes nothing: the history
cleanup settles every open tool call there (``history.prepare_history``) and the images of tool
results are flushed in front of it (an answer that ended in an error or was aborted is left out
of the history, so a cut in front of one would flush them too early); the renamed tool-call ids
are carried across the cut.

The cached chat messages are shared between requests, so only a sender that never changes them
may use this (``direct``, which encodes them as they are): litellm may rewrite messages in place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pi_lsp.llm.messages import ChatMessage, history_chat_messages
from pi_lsp.session.message_types import LlmMessage

UNFINISHED = frozenset({"error", "aborted"})


class ConvertedHistory:
    """The chat messages of one session's messages, extended request by request."""

    def __init__(self) -> None:
        self._options: tuple[Any, ...] | None = None
        self._messages: list[LlmMessage] = []
        """The messages converted, up to the cut (held, so they are compared, not re-read)."""
        self._chat: list[ChatMessage] = []
        self._renamed_ids: dict[str, str] = {}

    def convert(
        self,
        messages: Sequence[LlmMessage],
        provider: str | None,
        model_id: str | None,
        supports_images: bool,
    ) -> list[ChatMessage]:
        """``history_chat_messages`` of ``messages`` (no system prompt), reusing what it can."""
        options = (provider, model_id, supports_images)
        start = len(self._messages)
        if not self._continues(messages, options):
            self._options, self._messages, self._chat, self._renamed_ids = options, [], [], {}
            start = 0
        cut = _last_cut(messages, start)
        renamed_ids = dict(self._renamed_ids)
        settled = history_chat_messages(messages[start:cut], *options, renamed_ids)
        self._messages.extend(messages[start:cut])
        self._chat.extend(settled)
        self._renamed_ids = dict(renamed_ids)
        return self._chat + history_chat_messages(messages[cut:], *options, renamed_ids)

    def _continues(self, messages: Sequence[LlmMessage], options: tuple[Any, ...]) -> bool:
        done = len(self._messages)
        return (
            options == self._options
            and len(messages) > done
            and (done == 0 or _settles(messages[done]))
            and list(messages[:done]) == self._messages
        )


def _last_cut(messages: Sequence[LlmMessage], start: int) -> int:
    """The index of the last message after ``start`` that settles the history before it;
    ``start`` if there is none."""
    for index in range(len(messages) - 1, start, -1):
        if _settles(messages[index]):
            return index
    return start


def _settles(message: LlmMessage) -> bool:
    """A user message, or an assistant answer the history keeps."""
    role = message.get("role")
    return role == "user" or (role == "assistant" and message.get("stopReason") not in UNFINISHED)
