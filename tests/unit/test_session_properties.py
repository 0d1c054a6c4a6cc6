"""Properties of the session file under random operation sequences (hypothesis).

- the file only ever grows by appending: every earlier state is a byte prefix of the later one;
- loading what was written gives back the same entries, leaf and labels (load ∘ save = identity);
- every walk (path, context, tree) terminates, whatever the parent links.
"""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_lsp.session.context import branch_path, build_session_context
from pi_lsp.session.session import Session
from pi_lsp.session.tree import walk_depth_first
from tests.builders import assistant_message, user_text

operations = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.text(max_size=20)),
        st.tuples(st.just("assistant"), st.text(max_size=20)),
        st.tuples(st.just("label"), st.integers(0, 50), st.one_of(st.none(), st.text(max_size=5))),
        st.tuples(st.just("move"), st.integers(0, 50)),
        st.tuples(st.just("reset")),
        st.tuples(st.just("summary"), st.integers(0, 50), st.text(max_size=10)),
        st.tuples(st.just("thinking"), st.sampled_from(["off", "low", "high"])),
        st.tuples(
            st.just("custom"), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)
        ),
        st.tuples(st.just("name"), st.text(max_size=10)),
    ),
    max_size=30,
)


def apply(session: Session, operation: tuple) -> None:
    kind, *arguments = operation
    ids = [entry.id for entry in session.entries]
    if kind == "user":
        session.append_message(user_text(arguments[0]))
    elif kind == "assistant":
        session.append_message(assistant_message(arguments[0]))
    elif kind == "label" and ids:
        session.append_label(ids[arguments[0] % len(ids)], arguments[1])
    elif kind == "move" and ids:
        session.move_leaf(ids[arguments[0] % len(ids)])
    elif kind == "reset":
        session.reset_leaf()
    elif kind == "summary" and ids:
        session.branch_with_summary(ids[arguments[0] % len(ids)], arguments[1])
    elif kind == "thinking":
        session.append_thinking_level_change(arguments[0])
    elif kind == "custom":
        session.append_custom("test", arguments[0])
    elif kind == "name":
        session.append_session_info(arguments[0])


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations)
def test_random_operations_append_only_and_reload_identically(tmp_path_factory, sequence):
    directory = tmp_path_factory.mktemp("sessions")
    previous = b""
    with Session.create(directory, "/w") as session:
        for operation in sequence:
            apply(session, operation)
            # The cached active path must be exactly what a fresh walk from the leaf gives.
            assert [entry.id for entry in session.branch()] == [
                entry.id for entry in branch_path(session.by_id, session.leaf_id)
            ]
            assert session.build_context() == build_session_context(
                session.entries, session.leaf_id, session.by_id
            )
            if session.is_persisted:
                current = session.path.read_bytes()
                assert current.startswith(previous)
                previous = current
        if not session.is_persisted:
            return
        reloaded = Session.open(session.path, writable=False)
        assert [entry.raw for entry in reloaded.entries] == [entry.raw for entry in session.entries]
        assert [entry.body for entry in reloaded.entries] == [
            json.loads(entry.raw) for entry in session.entries
        ]
        assert reloaded.labels == session.labels and reloaded.name == session.name
        assert reloaded.leaf_id == session.entries[-1].id


parent_graphs = st.lists(
    st.tuples(st.integers(0, 8), st.one_of(st.none(), st.integers(0, 8))), min_size=1, max_size=12
)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(parent_graphs)
def test_every_walk_terminates_on_arbitrary_parent_links(tmp_path_factory, graph):
    path = tmp_path_factory.mktemp("graph") / "s.jsonl"
    lines = [
        '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}'
    ]
    for own, parent in graph:
        parent_json = "null" if parent is None else f'"e{parent}"'
        lines.append(
            f'{{"type":"message","id":"e{own}","parentId":{parent_json},"timestamp":"2026-01-01T00:00:0{own}.000Z",'
            f'"message":{{"role":"user","content":"m{own}","timestamp":{own}}}}}'
        )
    path.write_text("\n".join(lines) + "\n")
    session = Session.open(path, writable=False)
    for entry in session.entries:
        branch = session.branch(entry.id)
        assert len(branch) <= len(graph) and branch[-1].id == entry.id
        assert len(session.build_context(entry.id).messages) <= len(graph)
    assert sum(1 for _ in walk_depth_first(session.tree())) <= len(graph)
