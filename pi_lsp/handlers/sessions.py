"""Handlers of the session requests: tree, transcript,
navigation, labels, names, forks, listing, opening."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_lsp import protocol
from pi_lsp.agent import navigation
from pi_lsp.errors import InvalidParamsError
from pi_lsp.handlers.base import pi_request
from pi_lsp.services import Services
from pi_lsp.session.transcript import transcript_document
from pi_lsp.session.tree_view import tree_document


@pi_request(protocol.TREE)
def on_tree(services: Services, params: protocol.SessionParams) -> dict[str, Any]:
    runtime = services.sessions.get(params.session_id)
    return {"sessionId": runtime.id, **tree_document(runtime.session)}


@pi_request(protocol.MESSAGES)
def on_messages(services: Services, params: protocol.MessagesParams) -> dict[str, Any]:
    if params.limit is not None and params.limit < 1:
        raise InvalidParamsError(f"pi/messages: limit must be at least 1, got {params.limit}")
    runtime = services.sessions.get(params.session_id)
    return {"sessionId": runtime.id, **transcript_document(runtime.session, params.limit)}


@pi_request(protocol.NAVIGATE)
async def on_navigate(services: Services, params: protocol.NavigateParams) -> dict[str, Any]:
    runtime = services.sessions.get(params.session_id)
    return await services.agent.compactor.navigate(
        runtime, params.target_id, params.summarize, params.instructions
    )


@pi_request(protocol.LABEL)
def on_label(services: Services, params: protocol.LabelParams) -> dict[str, Any]:
    return navigation.set_label(
        services.sessions.get(params.session_id), params.entry_id, params.label
    )


@pi_request(protocol.NAME)
def on_name(services: Services, params: protocol.NameParams) -> dict[str, Any]:
    return navigation.set_name(services.sessions.get(params.session_id), params.name)


@pi_request(protocol.SESSIONS)
def on_sessions(services: Services, params: protocol.SessionParams) -> dict[str, Any]:
    current = services.sessions.current()
    return {
        "currentSessionId": current.id,
        "sessions": [info.to_json() for info in services.sessions.list()],
    }


@pi_request(protocol.NEW_SESSION)
def on_new_session(services: Services, params: protocol.NewSessionParams) -> dict[str, Any]:
    runtime = services.sessions.create()
    if params.name:
        runtime.session.append_session_info(params.name)
    return runtime.describe()


@pi_request(protocol.OPEN_SESSION)
def on_open_session(services: Services, params: protocol.OpenSessionParams) -> dict[str, Any]:
    if params.session_id is not None and params.path is None:
        runtime = services.sessions.open(params.session_id)
    elif params.path is not None and params.session_id is None:
        path = Path(params.path)
        runtime = services.sessions.open_path(
            path if path.is_absolute() else services.config.workspace_root / path
        )
    else:
        raise InvalidParamsError("pi/openSession: give exactly one of sessionId and path")
    return {
        **runtime.describe(),
        "leafId": runtime.session.leaf_id,
        "readOnly": runtime.read_only_reason is not None,
    }


@pi_request(protocol.FORK)
def on_fork(services: Services, params: protocol.ForkParams) -> dict[str, Any]:
    source = services.sessions.get(params.session_id)
    source.session.require_entry(params.entry_id)
    fork = services.sessions.fork(source, params.entry_id)
    return {**fork.describe(), "leafId": fork.session.leaf_id, "parentSessionId": source.id}
