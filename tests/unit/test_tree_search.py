"""Tree search through the search index finds exactly what decoding every entry finds.

The reference decodes each line with the standard library and compares the query with each text
``docs/protocol.md`` names, case-folded — what ``pi/treeSearch`` did before the index. Random
sessions mix every kind of entry, odd shapes (content that is a number, blocks that are strings,
duplicate keys), texts with quotes, backslashes, separators, characters whose case-folding changes
their length, lone surrogates, written raw (as pi writes) or ``\\u``-escaped; small chunks make the
index span several, and entries and labels appended after a search must be found by the next one.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_lsp.session import search_index
from pi_lsp.session.session import Session
from pi_lsp.session.tree_search import search_tree

ALPHABET = [*'aAbBz ."\\/\n\t\x00\x01ßẞİıσςΣéÉ\u00ad\u2028😀', "\ud800", "\u0301"]

texts = st.text(alphabet=st.sampled_from(ALPHABET), max_size=10)
argument_keys = st.sampled_from(["path", "oldText", "edits"]) | texts
json_values = st.recursive(
    texts | st.none() | st.booleans() | st.integers(-5, 5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(argument_keys, inner, max_size=3),
    max_leaves=5,
)
tool_calls = st.builds(
    lambda name, arguments: {"type": "toolCall", "id": "c", "name": name, "arguments": arguments},
    texts,
    st.dictionaries(argument_keys, json_values, max_size=3) | json_values,
)
blocks = st.one_of(
    st.builds(lambda text: {"type": "text", "text": text}, texts | st.integers()),
    tool_calls,
    st.builds(lambda text: {"type": "thinking", "thinking": text}, texts),
    tool_calls,
    st.builds(lambda text: {"type": "image", "data": text}, texts),
)
contents = st.one_of(
    texts,
    st.lists(blocks, max_size=4),
    st.lists(blocks, min_size=1, max_size=4),
    st.lists(blocks | texts, max_size=3),  # a block that is not an object: skipped
    st.integers() | st.none(),
)
messages = st.one_of(
    st.builds(
        lambda role, content: {"role": role, "content": content},
        st.sampled_from(["user", "assistant", "toolResult", "custom"]),
        contents,
    ),
    st.builds(
        lambda command, output: {"role": "bashExecution", "command": command, "output": output},
        texts,
        texts | st.none(),
    ),
    texts,  # a message that is not an object
)
assistant_bodies = st.builds(
    lambda content: {"type": "message", "message": {"role": "assistant", "content": content}},
    st.lists(blocks, min_size=1, max_size=3),
)
bodies = st.one_of(
    assistant_bodies,
    st.builds(lambda message: {"type": "message", "message": message}, messages),
    st.builds(
        lambda kind, summary: {"type": kind, "summary": summary},
        st.sampled_from(["compaction", "branch_summary"]),
        texts,
    ),
    st.builds(lambda content: {"type": "custom_message", "content": content}, contents),
    st.builds(lambda name: {"type": "session_info", "name": name}, texts),
    st.builds(lambda label: {"type": "label", "label": label}, texts | st.none()),
    st.builds(lambda text: {"type": "model_change", "provider": text}, texts),
)
line_styles = st.sampled_from(["raw", "escaped", "duplicate keys"])


def _reference_texts(body: dict) -> list[str]:
    """The texts docs/protocol.md says a search looks in."""
    kind = body.get("type")
    found: list[Any] = []
    if kind == "message" and isinstance(body.get("message"), dict):
        message = body["message"]
        if message.get("role") == "bashExecution":
            found = [message.get("command"), message.get("output")]
        elif isinstance(message.get("content"), str):
            found = [message["content"]]
        elif isinstance(message.get("content"), list):
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "text":
                    found.append(block.get("text"))
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    found.append(block.get("name"))
                    found.extend(_all_strings(block.get("arguments")))
    elif kind in ("compaction", "branch_summary"):
        found = [body.get("summary")]
    elif kind == "custom_message":
        content = body.get("content")
        if isinstance(content, str):
            found = [content]
        elif isinstance(content, list):
            found = [
                block.get("text")
                for block in content
                if isinstance(block, dict) and block.get("type") == "text"
            ]
    elif kind == "session_info":
        found = [body.get("name")]
    elif kind == "label":
        found = [body.get("label")]
    return [text for text in found if isinstance(text, str)]


def _all_strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _all_strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _all_strings(item)]
    return []


def _reference_search(session: Session, query: str, limit: int) -> tuple[int, list[int]]:
    needle = query.casefold()
    labelled = {target for target, label in session.labels.items() if needle in label.casefold()}
    matches = [
        position
        for position, entry in enumerate(session.entries)
        if entry.id in labelled
        or any(needle in text.casefold() for text in _reference_texts(json.loads(entry.raw)))
    ]
    return len(matches), matches[::-1][:limit]


def _found(session: Session, query: str, limit: int) -> tuple[int, list[int]]:
    hits = search_tree(session, query, limit)
    positions = {id(entry): position for position, entry in enumerate(session.entries)}
    return hits.total, [positions[id(entry)] for entry in hits.entries]


def _line(entry: dict, style: str) -> str:
    if style == "duplicate keys":  # an earlier value of the same keys, which the later one wins
        return '{"type":"label","label":"zz","message":"zz",' + json.dumps(entry)[1:]
    if style == "raw":
        try:
            return json.dumps(entry, ensure_ascii=False).encode().decode()
        except UnicodeEncodeError:  # a lone surrogate has no UTF-8: escaped, as pi would
            pass
    return json.dumps(entry)


def _write_session(path: Path, drawn: list[tuple[dict, str]]) -> Session:
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00Z"}
    lines = [json.dumps(header)]
    previous = None
    for index, (body, style) in enumerate(drawn):
        entry = {"id": f"e{index}", "parentId": previous, "timestamp": "2026-01-01T00:00:01Z"}
        entry.update(body)
        if entry["type"] == "label":
            entry["targetId"] = f"e{index // 2}"
        lines.append(_line(entry, style))
        previous = entry["id"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    return Session.open(path)


_BOOKKEEPING = ("id", "parentId", "timestamp", "targetId")


def _drawn_strings(entry: dict) -> list[str]:
    """The strings drawn into a line, searched or not (queries come from them)."""
    return _all_strings({key: value for key, value in entry.items() if key not in _BOOKKEEPING})


def _queries(session: Session, data: st.DataObject) -> list[str]:
    pieces = [
        text
        for text in [
            *(text for entry in session.entries for text in _drawn_strings(json.loads(entry.raw))),
            *session.labels.values(),
        ]
        if text
    ]
    queries = []
    for _ in range(8):
        if pieces and data.draw(st.integers(0, 3)):
            text = data.draw(st.sampled_from(pieces))
            start = data.draw(st.integers(0, len(text) - 1))
            end = data.draw(st.integers(start + 1, len(text)))
            changed = data.draw(st.sampled_from([str, str.upper, str.swapcase, str.casefold]))
            query = changed(text[start:end])
        else:
            query = data.draw(texts)
        if query.casefold():
            queries.append(query)
    return queries


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(search_index, "CHUNK_ENTRIES", 3)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    drawn=st.lists(st.tuples(bodies, line_styles), max_size=14),
    appended=st.lists(texts, max_size=4),
    data=st.data(),
)
def test_the_index_finds_what_decoding_every_entry_finds(tmp_path_factory, drawn, appended, data):
    path = tmp_path_factory.mktemp("search") / "session.jsonl"
    with _write_session(path, drawn) as session:
        limit = data.draw(st.integers(1, 5))
        for query in _queries(session, data):
            assert _found(session, query, limit) == _reference_search(session, query, limit)
        for text in appended:  # after a search: the index is extended, not stale
            session.append_message({"role": "user", "content": text, "timestamp": 1})
            if session.entries and data.draw(st.booleans()):
                session.append_label(session.entries[0].id, text or None)
        for query in _queries(session, data):
            assert _found(session, query, limit) == _reference_search(session, query, limit)


def test_searching_decodes_no_entry_for_good(tmp_path):
    """Indexing reads each line once without keeping it decoded (100k decoded entries would
    stay in memory for as long as the session is open)."""
    entries = [
        {
            "type": "message",
            "id": f"e{n}",
            "parentId": None,
            "message": {"role": "user", "content": f"line {n}"},
        }
        for n in range(10)
    ]
    path = tmp_path / "s.jsonl"
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "t"}
    path.write_text("\n".join(json.dumps(line) for line in [header, *entries]) + "\n")
    with Session.open(path, writable=False) as session:
        assert search_tree(session, "LINE 7", 5).total == 1
        assert search_tree(session, "line", 3).total == 10
        assert not any(entry.is_decoded for entry in session.entries)


def test_an_empty_query_is_refused(tmp_path):
    with Session.create(tmp_path, str(tmp_path)) as session, pytest.raises(ValueError):
        search_tree(session, "", 10)


def _random_text(generator: random.Random) -> str:
    return "".join(generator.choice(ALPHABET) for _ in range(generator.randint(0, 8)))


def _random_value(generator: random.Random, depth: int = 0) -> Any:
    choice = generator.random()
    if depth < 2 and choice < 0.25:
        return [_random_value(generator, depth + 1) for _ in range(generator.randint(0, 3))]
    if depth < 2 and choice < 0.5:
        return {
            _random_text(generator): _random_value(generator, depth + 1)
            for _ in range(generator.randint(0, 3))
        }
    return generator.choice([_random_text(generator), _random_text(generator), 3, None, True])


def _random_block(generator: random.Random) -> Any:
    text = _random_text(generator)
    return generator.choice(
        [
            {"type": "text", "text": text},
            {"type": "toolCall", "id": "c", "name": text, "arguments": _random_value(generator)},
            {"type": "toolCall", "name": text, "arguments": {"path": _random_text(generator)}},
            {"type": "thinking", "thinking": text},
            {"type": "image", "data": text},
            text,
        ]
    )


def _random_body(generator: random.Random) -> dict:
    text = _random_text(generator)
    blocks = [_random_block(generator) for _ in range(generator.randint(0, 4))]
    role = generator.choice(["user", "assistant", "toolResult"])
    return generator.choice(
        [
            {"type": "message", "message": {"role": role, "content": blocks}},
            {"type": "message", "message": {"role": role, "content": blocks}},
            {"type": "message", "message": {"role": role, "content": text}},
            {
                "type": "message",
                "message": {
                    "role": "bashExecution",
                    "command": text,
                    "output": _random_text(generator),
                },
            },
            {"type": "message", "message": text},
            {"type": generator.choice(["compaction", "branch_summary"]), "summary": text},
            {
                "type": "custom_message",
                "customType": text,
                "content": generator.choice([text, blocks]),
            },
            {"type": "session_info", "name": text},
            {"type": "label", "label": generator.choice([text, None])},
            {"type": "model_change", "provider": text},
        ]
    )


@pytest.mark.parametrize("backend", ["stringzilla", "bytes.find"])
@pytest.mark.parametrize("seed", range(40))
def test_random_sessions_give_the_same_matches_as_decoding_every_entry(
    tmp_path, monkeypatch, seed, backend
):
    if backend == "bytes.find":  # StringZilla could not be loaded
        monkeypatch.setattr(search_index, "stringzilla", None)
    generator = random.Random(seed)
    drawn = [
        (_random_body(generator), generator.choice(["raw", "raw", "escaped", "duplicate keys"]))
        for _ in range(generator.randint(1, 40))
    ]
    with _write_session(tmp_path / "s.jsonl", drawn) as session:
        pieces = [
            text
            for entry in session.entries
            for text in _drawn_strings(json.loads(entry.raw))
            if text.casefold()
        ]
        for round_ in range(2):
            for _ in range(40):
                text = generator.choice(pieces) if pieces else "a"
                start = generator.randint(0, len(text) - 1)
                query = text[start : generator.randint(start + 1, len(text))]
                query = generator.choice([query, query.upper(), query.swapcase()])
                if query.casefold():
                    limit = generator.randint(1, 6)
                    expected = _reference_search(session, query, limit)
                    assert _found(session, query, limit) == expected, query
            if round_ == 0:
                for _ in range(generator.randint(1, 5)):
                    session.append_message(
                        {"role": "user", "content": _random_text(generator), "timestamp": 1}
                    )
                session.append_label(session.entries[0].id, _random_text(generator) or None)
