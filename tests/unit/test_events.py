"""The event stream: in order, numbered without gaps, deltas merged to about 30 a second."""

import asyncio

from pi_lsp import protocol
from pi_lsp.agent.events import EventStream
from pi_lsp.protocol import (
    AgentEndEvent,
    EventNotification,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallStartEvent,
)


def make_stream(interval: float = 1 / 30) -> tuple[EventStream, list[EventNotification]]:
    sent: list[EventNotification] = []
    return EventStream("s1", sent.append, interval=interval), sent


def deltas(sent: list[EventNotification]) -> list[tuple[str, str | None]]:
    return [(item.event.TYPE, getattr(item.event, "delta", None)) for item in sent]


async def test_a_burst_of_deltas_becomes_few_notifications_and_loses_nothing():
    stream, sent = make_stream()
    for index in range(1000):
        stream.emit(TextDeltaEvent(f"{index},"))
        if index % 100 == 0:
            await asyncio.sleep(0.01)
    stream.emit(AgentEndEvent("stop", None))
    text = "".join(item.event.delta for item in sent if isinstance(item.event, TextDeltaEvent))
    assert text == "".join(f"{index}," for index in range(1000))
    assert len(sent) < 20
    assert [item.seq for item in sent] == list(range(1, len(sent) + 1))
    assert isinstance(sent[-1].event, AgentEndEvent)
    assert all(item.session_id == "s1" for item in sent)


async def test_other_events_flush_pending_deltas_first_and_keep_their_order():
    stream, sent = make_stream(interval=10)
    stream.emit(TextDeltaEvent("a"))
    stream.emit(ThinkingDeltaEvent("b"))
    stream.emit(ThinkingDeltaEvent("c"))
    stream.emit(ToolCallStartEvent("1", "read"))
    stream.emit(TextDeltaEvent("d"))
    stream.flush()
    assert deltas(sent) == [
        ("text_delta", "a"),
        ("thinking_delta", "bc"),
        ("toolcall_start", None),
        ("text_delta", "d"),
    ]


async def test_a_lone_delta_is_sent_within_the_interval():
    stream, sent = make_stream(interval=0.05)
    stream.emit(TextDeltaEvent("x"))
    assert sent == [] or sent[0].event.delta == "x"
    await asyncio.sleep(0.12)
    assert deltas(sent) == [("text_delta", "x")]


async def test_the_rate_stays_near_thirty_a_second():
    stream, sent = make_stream()
    loop = asyncio.get_running_loop()
    start = loop.time()
    while loop.time() - start < 0.5:
        stream.emit(TextDeltaEvent("."))
        await asyncio.sleep(0.001)
    stream.flush()
    assert len(sent) <= 0.5 * 30 + 3


async def test_a_burst_that_never_yields_still_sends_about_thirty_a_second():
    stream, sent = make_stream()
    loop = asyncio.get_running_loop()
    start = loop.time()
    while loop.time() - start < 0.3:  # no await: like buffered chunks read without yielding
        stream.emit(TextDeltaEvent("."))
    assert 5 <= len(sent) <= 0.3 * 30 + 3


def test_a_notification_goes_on_the_wire_camel_cased_with_its_type_first():
    stream, sent = make_stream()
    stream.emit(ToolCallStartEvent("call-1", "read"))
    assert protocol.to_json(sent[0]) == {
        "sessionId": "s1",
        "seq": 1,
        "event": {"type": "toolcall_start", "toolCallId": "call-1", "name": "read"},
    }


def update(call_id: str, text: str) -> protocol.ToolExecutionUpdateEvent:
    return protocol.ToolExecutionUpdateEvent(
        call_id, "bash", [{"type": "text", "text": text}], None
    )


async def test_updates_of_one_tool_call_replace_each_other_and_others_flush_them():
    stream, sent = make_stream(interval=10)
    stream.emit(AgentEndEvent("stop", None))  # sent at once: the interval starts now
    stream.emit(update("c1", "a"))
    stream.emit(update("c1", "a\nb"))
    stream.emit(update("c2", "x"))
    stream.emit(TextDeltaEvent("t"))
    stream.emit(update("c2", "x\ny"))
    stream.flush()
    assert [(item.event.TYPE, getattr(item.event, "tool_call_id", None)) for item in sent[1:]] == [
        ("tool_execution_update", "c1"),
        ("tool_execution_update", "c2"),
        ("text_delta", None),
        ("tool_execution_update", "c2"),
    ]
    assert sent[1].event.content[0]["text"] == "a\nb"
    assert sent[-1].event.content[0]["text"] == "x\ny"
