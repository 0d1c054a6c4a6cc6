"""The context kept between requests (``session/active_context.py``) is the one a fresh build gives.

Random operation sequences (hypothesis) append messages, summaries, compactions, context edits,
system messages and settings, move the leaf and branch; after each one, and after every request
the cache may have served, the session's context and projection at the leaf must equal
``build_context_from_path`` and ``project_path`` on the walked path.
"""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_lsp.session.context import branch_path, build_context_from_path
from pi_lsp.session.projection import project_path
from pi_lsp.session.session import Session
from tests.builders import assistant_message, user_text

replacements = st.one_of(st.none(), st.fixed_dictionaries({"content": st.text(max_size=5)}))

operations = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.text(max_size=10)),
        st.tuples(st.just("assistant"), st.text(max_size=10), st.sampled_from(["a", "b"])),
        st.tuples(st.just("system"), st.text(max_size=10)),
        st.tuples(st.just("compaction"), st.integers(0, 60), st.text(max_size=10)),
        st.tuples(st.just("edit"), st.integers(0, 60), replacements),
        st.tuples(st.just("move"), st.integers(0, 60)),
        st.tuples(st.just("reset")),
        st.tuples(st.just("summary"), st.integers(0, 60), st.text(max_size=10)),
        st.tuples(st.just("thinking"), st.sampled_from(["off", "low", "high"])),
        st.tuples(st.just("odd thinking"), st.sampled_from([None, 3])),
        st.tuples(st.just("model"), st.sampled_from(["a", "b"])),
        st.tuples(st.just("odd model")),
        st.tuples(st.just("custom message"), st.text(max_size=10)),
        st.tuples(st.just("label"), st.integers(0, 60)),
        st.tuples(st.just("read")),
    ),
    max_size=40,
)


def apply(session: Session, operation: tuple) -> None:
    kind, *arguments = operation
    ids = [entry.id for entry in session.entries]

    def some_id(index: int) -> str:
        return ids[index % len(ids)]

    if kind == "user":
        session.append_message(user_text(arguments[0]))
    elif kind == "assistant":
        session.append_message({**assistant_message(arguments[0]), "provider": arguments[1]})
    elif kind == "system":
        session.append_message({"role": "system", "content": arguments[0], "timestamp": 1})
    elif kind == "compaction" and ids:
        session.append_compaction(arguments[1], some_id(arguments[0]), 100)
    elif kind == "edit" and ids:
        edit = {"type": "context_edit", "targetId": some_id(arguments[0])}
        session.append_raw({**edit, "replacement": arguments[1]})
    elif kind == "move" and ids:
        session.move_leaf(some_id(arguments[0]))
    elif kind == "reset":
        session.reset_leaf()
    elif kind == "summary" and ids:
        session.branch_with_summary(some_id(arguments[0]), arguments[1])
    elif kind == "thinking":
        session.append_thinking_level_change(arguments[0])
    elif kind == "odd thinking":  # a damaged line: a level that is not a string
        session.append_raw({"type": "thinking_level_change", "thinkingLevel": arguments[0]})
    elif kind == "odd model":  # a model change that names no model
        session.append_raw({"type": "model_change"})
    elif kind == "model":
        session.append_model_change(arguments[0], "model")
    elif kind == "custom message":
        session.append_custom_message("note", arguments[0], True)
    elif kind == "label" and ids:
        session.append_label(some_id(arguments[0]), "mark")
    elif kind == "read":
        session.build_context()  # a request in between: the cache is built here, extended later


def named_level(path: list) -> str | None:
    levels = [entry.get("thinkingLevel") for entry in path if entry.type == "thinking_level_change"]
    named = [level for level in levels if isinstance(level, str)]
    return named[-1] if named else None


@settings(max_examples=150, deadline=None)
@given(operations)
def test_the_kept_context_is_what_a_fresh_build_gives(sequence):
    with Session.create(None, "/w") as session:
        for operation in sequence:
            apply(session, operation)
            path = branch_path(session.by_id, session.leaf_id)
            assert session.build_context() == build_context_from_path(path)
            assert session.projection() == project_path(path)
            assert session.named_thinking_level() == named_level(path)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations)
def test_a_reopened_session_keeps_its_context_as_it_grows(tmp_path_factory, sequence):
    directory = tmp_path_factory.mktemp("sessions")
    with Session.create(directory, "/w") as session:
        for operation in sequence:
            apply(session, operation)
            session.build_context()
        path = session.path
    if path is None or not path.exists():
        return
    with Session.open(path) as reopened:
        for operation in [("read",), ("user", "more"), ("assistant", "done", "a"), *sequence]:
            apply(reopened, operation)
            walked = branch_path(reopened.by_id, reopened.leaf_id)
            assert reopened.build_context() == build_context_from_path(walked)
