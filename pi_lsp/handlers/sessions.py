"""Handlers of the session requests.

Tree, transcript, navigation, labels, names, forks, listing, opening.
"""

from __future__ import annotations

from pathlib import Path

from pi_lsp import protocol
from pi_lsp.errors import InvalidParamsError, echoed
from pi_lsp.handlers.base import pi_request
from pi_lsp.handlers.configuration import wait_for_client_settings
from pi_lsp.services import Services
from pi_lsp.session.fork import conversation_leaf
from pi_lsp.session.transcript import transcript
from pi_lsp.session.tree_view import tree_view


@pi_request(protocol.TREE)
def on_tree(services: Services, params: protocol.SessionParams) -> protocol.TreeResult:
    runtime = services.sessions.get(params.session_id)
    return tree_view(runtime.session)


@pi_request(protocol.MESSAGES)
def on_messages(services: Services, params: protocol.MessagesParams) -> protocol.MessagesResult:
    if params.limit is not None and params.limit < 1:
        raise InvalidParamsError(
            f"pi/messages: limit must be at least 1, got {echoed(params.limit)}"
        )
    runtime = services.sessions.get(params.session_id)
    return transcript(runtime.session, params.limit, params.before)


@pi_request(protocol.NAVIGATE)
async def on_navigate(
    services: Services, params: protocol.NavigateParams
) -> protocol.NavigateResult:
    if not params.summarize:
        runtime = services.sessions.get(params.session_id)
        return await services.navigator.navigate(
            runtime, params.target_id, restore_files=params.restore_files, force=params.force
        )
    await wait_for_client_settings(services)  # the summary is written by the client's model
    runtime = services.sessions.get(params.session_id)
    progress = services.progress(params.work_done_token, "Summarizing the branch being left")
    try:
        result = await services.navigator.navigate(
            runtime,
            params.target_id,
            summarize=True,
            instructions=params.instructions,
            progress=progress.report,
            restore_files=params.restore_files,
            force=params.force,
        )
    finally:
        progress.end()
    return result


@pi_request(protocol.FILE_CHANGES)
async def on_file_changes(
    services: Services, params: protocol.FileChangesParams
) -> protocol.FileChangesResult:
    runtime = services.sessions.get(params.session_id)
    return await services.navigator.file_changes(
        runtime, params.to_id, params.from_id, include_text=params.include_text
    )


@pi_request(protocol.LABEL)
def on_label(services: Services, params: protocol.LabelParams) -> protocol.LabelResult:
    runtime = services.sessions.get(params.session_id)
    entry_id = services.navigator.set_label(runtime, params.entry_id, params.label)
    return protocol.LabelResult(entry_id, runtime.session.leaf_id)


@pi_request(protocol.NAME)
def on_name(services: Services, params: protocol.NameParams) -> protocol.NameResult:
    runtime = services.sessions.get(params.session_id)
    entry_id = services.navigator.set_name(runtime, params.name)
    return protocol.NameResult(entry_id, runtime.session.name)


@pi_request(protocol.SESSIONS)
def on_sessions(services: Services, params: protocol.SessionParams) -> protocol.SessionsResult:
    current = services.sessions.current()
    return protocol.SessionsResult(current.id, services.sessions.list())


@pi_request(protocol.NEW_SESSION)
def on_new_session(
    services: Services, params: protocol.NewSessionParams
) -> protocol.NewSessionResult:
    runtime = services.sessions.create()
    if params.name:
        runtime.session.append_session_info(params.name)
    return protocol.NewSessionResult(runtime.id, runtime.path)


@pi_request(protocol.OPEN_SESSION)
def on_open_session(
    services: Services, params: protocol.OpenSessionParams
) -> protocol.OpenSessionResult:
    if params.session_id is not None and params.path is None:
        runtime = services.sessions.open(params.session_id)
    elif params.path is not None and params.session_id is None:
        path = Path(params.path)
        runtime = services.sessions.open_path(
            path if path.is_absolute() else services.config.workspace_root / path
        )
    else:
        raise InvalidParamsError("pi/openSession: give exactly one of sessionId and path")
    return protocol.OpenSessionResult(
        runtime.id,
        runtime.path,
        runtime.session.leaf_id,
        runtime.read_only_reason is not None,
        runtime.read_only_reason,
    )


@pi_request(protocol.FORK)
async def on_fork(services: Services, params: protocol.ForkParams) -> protocol.ForkResult:
    source = services.sessions.get(params.session_id)
    # Without an entry, the leaf as this request is handled (before anything awaits), so a
    # request sent right after this one, without waiting for its answer, finds the fork current.
    entry_id = params.entry_id
    if entry_id is None:
        entry_id = conversation_leaf(source.session)
        if entry_id is None:
            raise InvalidParamsError(
                "pi/fork: the session is empty (no user or assistant message up to its leaf); "
                "nothing to fork without an entryId"
            )
    outcome = await services.navigator.fork(
        source, entry_id, restore_files=params.restore_files, force=params.force
    )
    fork = outcome.runtime
    return protocol.ForkResult(fork.id, fork.path, fork.session.leaf_id, source.id, outcome.files)
