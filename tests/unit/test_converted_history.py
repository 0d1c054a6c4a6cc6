"""A session's conversion kept between requests (``pi_lsp.llm.converted_history``): whatever the
history holds and however it grows or changes, the result is ``to_chat_messages``'s."""

from __future__ import annotations

import copy
from typing import Any

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_lsp.llm import converted_history
from pi_lsp.llm.converted_history import ConvertedHistory
from pi_lsp.llm.messages import to_chat_messages
from pi_lsp.llm.stream import CompletionRequest, chat_payload
from tests.builders import text, user_message
from tests.unit.test_llm_direct import model
from tests.unit.test_llm_messages import IMAGE, call, openai_answer, tool_result

OPTIONS = ("openai", "gpt-4o", True)
# A call id another model wrote and OpenAI refuses: renamed, and its result follows the new id.
FOREIGN_ID = "call_1|" + "x" * 60


def expected(messages: list[dict[str, Any]], options: tuple[Any, ...] = OPTIONS) -> list:
    provider, model_id, supports_images = options
    return to_chat_messages(
        "", messages, provider=provider, model_id=model_id, supports_images=supports_images
    )


def message_kinds(index: int) -> st.SearchStrategy[list[dict[str, Any]]]:
    """A few messages as a turn of a session adds them (tool calls, unanswered calls, images,
    an aborted answer, a call id from another model)."""
    call_id = f"call-{index}"
    return st.sampled_from(
        [
            [user_message(f"question {index}")],
            [openai_answer(text(f"answer {index}"))],
            [openai_answer(call(call_id, path=f"f{index}")), tool_result(call_id, text("ok"))],
            [openai_answer(call(call_id)), tool_result(call_id, text("seen"), IMAGE)],
            [openai_answer(call(call_id))],  # never answered: "No result provided"
            [openai_answer(text("half"), stop_reason="aborted")],
            [
                openai_answer(call(FOREIGN_ID + str(index)), provider="other", model="m"),
                tool_result(FOREIGN_ID + str(index), text("ok")),
            ],
            [user_message([text("look"), IMAGE])],
            [tool_result(FOREIGN_ID + str(index - 1), text("late"))],  # after other messages
        ]
    )


@st.composite
def growing_sessions(draw: st.DrawFn) -> list[list[dict[str, Any]]]:
    """The messages of successive requests of one session, each the previous plus a turn."""
    requests, messages = [], []
    for index in range(draw(st.integers(1, 8))):
        for _ in range(draw(st.integers(1, 3))):
            messages = messages + draw(message_kinds(index))
        requests.append(messages)
    return requests


@settings(max_examples=300, deadline=None)
@given(growing_sessions())
def test_each_request_of_a_growing_session_is_converted_as_a_whole(requests):
    history = ConvertedHistory()
    for messages in requests:
        assert history.convert(messages, *OPTIONS) == expected(messages)


@settings(max_examples=200, deadline=None)
@given(growing_sessions(), growing_sessions())
def test_another_branch_or_a_compacted_history_starts_over(first, second):
    history = ConvertedHistory()
    for messages in first + second + first:
        assert history.convert(messages, *OPTIONS) == expected(messages)


def test_messages_equal_to_the_converted_ones_are_reused_changed_ones_are_not():
    history = ConvertedHistory()
    messages = [user_message("a"), openai_answer(text("b")), user_message("c")]
    history.convert(messages, *OPTIONS)
    rebuilt = [*copy.deepcopy(messages), openai_answer(text("d")), user_message("e")]
    assert history.convert(rebuilt, *OPTIONS) == expected(rebuilt)
    edited = [user_message("A"), *rebuilt[1:]]
    assert history.convert(edited, *OPTIONS) == expected(edited)


def test_another_model_or_image_support_converts_everything_again():
    history = ConvertedHistory()
    messages = [
        user_message([text("look"), IMAGE]),
        openai_answer(call(FOREIGN_ID)),
        user_message("next"),
    ]
    history.convert(messages, *OPTIONS)
    for options in (("other", "m", True), ("openai", "gpt-4o", False)):
        assert history.convert(messages, *options) == expected(messages, options)


def test_only_the_messages_after_the_previous_cut_are_converted(monkeypatch):
    converted: list[int] = []
    original = converted_history.history_chat_messages

    def counting(messages, *arguments):
        converted.append(len(messages))
        return original(messages, *arguments)

    monkeypatch.setattr(converted_history, "history_chat_messages", counting)
    history = ConvertedHistory()
    messages = [user_message(f"q{index}") for index in range(100)]
    history.convert(messages, *OPTIONS)
    converted.clear()
    history.convert([*messages, openai_answer(text("a")), user_message("q100")], *OPTIONS)
    assert sum(converted) == 3  # the previous question, the answer and the new question


class CountingHistory(ConvertedHistory):
    def __init__(self) -> None:
        super().__init__()
        self.conversions = 0

    def convert(self, *arguments: Any) -> list:
        self.conversions += 1
        return super().convert(*arguments)


def test_only_requests_sent_directly_reuse_the_conversion():
    """litellm may change the messages it is given in place: it gets a conversion of its own."""
    messages = [user_message("a"), openai_answer(text("b")), user_message("c")]
    for call_model, reused in (("openai/local", True), ("anthropic/claude-sonnet-4-5", False)):
        history = CountingHistory()
        request = CompletionRequest(
            model=model(call_model), system_prompt="be brief", messages=messages, history=history
        )
        without = attrs.evolve(request, history=None)
        assert chat_payload(request) == chat_payload(without)
        assert history.conversions == (1 if reused else 0)
