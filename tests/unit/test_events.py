"""The event stream: in order, numbered without gaps, deltas merged to about 30 a second."""

import asyncio

from pi_lsp.agent.events import EventStream


def make_stream(interval: float = 1 / 30) -> tuple[EventStream, list[dict]]:
    sent: list[dict] = []
    return EventStream("s1", sent.append, interval=interval), sent


async def test_a_burst_of_deltas_becomes_few_notifications_and_loses_nothing():
    stream, sent = make_stream()
    for index in range(1000):
        stream.emit({"type": "text_delta", "delta": f"{index},"})
        if index % 100 == 0:
            await asyncio.sleep(0.01)
    stream.emit({"type": "agent_end", "stopReason": "stop"})
    text = "".join(item["event"]["delta"] for item in sent if item["event"]["type"] == "text_delta")
    assert text == "".join(f"{index}," for index in range(1000))
    assert len(sent) < 20
    assert [item["seq"] for item in sent] == list(range(1, len(sent) + 1))
    assert sent[-1]["event"]["type"] == "agent_end" and all(
        item["sessionId"] == "s1" for item in sent
    )


async def test_other_events_flush_pending_deltas_first_and_keep_their_order():
    stream, sent = make_stream(interval=10)
    stream.emit({"type": "text_delta", "delta": "a"})
    stream.emit({"type": "thinking_delta", "delta": "b"})
    stream.emit({"type": "thinking_delta", "delta": "c"})
    stream.emit({"type": "toolcall_start", "toolCallId": "1", "name": "read"})
    stream.emit({"type": "text_delta", "delta": "d"})
    stream.flush()
    assert [(item["event"]["type"], item["event"].get("delta")) for item in sent] == [
        ("text_delta", "a"),
        ("thinking_delta", "bc"),
        ("toolcall_start", None),
        ("text_delta", "d"),
    ]


async def test_a_lone_delta_is_sent_within_the_interval():
    stream, sent = make_stream(interval=0.05)
    stream.emit({"type": "text_delta", "delta": "x"})
    assert sent == [] or sent[0]["event"]["delta"] == "x"
    await asyncio.sleep(0.12)
    assert [item["event"]["delta"] for item in sent] == ["x"]


async def test_the_rate_stays_near_thirty_a_second():
    stream, sent = make_stream()
    loop = asyncio.get_running_loop()
    start = loop.time()
    while loop.time() - start < 0.5:
        stream.emit({"type": "text_delta", "delta": "."})
        await asyncio.sleep(0.001)
    stream.flush()
    assert len(sent) <= 0.5 * 30 + 3


async def test_a_burst_that_never_yields_still_sends_about_thirty_a_second():
    stream, sent = make_stream()
    loop = asyncio.get_running_loop()
    start = loop.time()
    while loop.time() - start < 0.3:  # no await: like buffered chunks read without yielding
        stream.emit({"type": "text_delta", "delta": "."})
    assert 5 <= len(sent) <= 0.3 * 30 + 3
