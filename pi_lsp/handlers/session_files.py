"""Handlers of ``pi/exportSession``, ``pi/importSession`` and ``pi/deleteSession``.

A session is found by id among the open ones, then in the session directories the index covers
(the server's and pi's own for the workspace); nothing outside them is exported or deleted.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pi_lsp import protocol
from pi_lsp.errors import InvalidParamsError, SessionNotFoundError, SessionWriteError, echoed
from pi_lsp.handlers.base import pi_request
from pi_lsp.project_memory.export import EXTENSIONS, export_session
from pi_lsp.project_memory.session_files import import_session, move_to_trash
from pi_lsp.services import Services
from pi_lsp.session.listing import list_sessions


def session_file(services: Services, session_id: str) -> Path:
    """The file of the session ``session_id``: an open session's, else one of the indexed
    directories'."""
    runtime = services.sessions.find(session_id)
    if runtime is not None and runtime.session.path is not None:
        if not runtime.session.is_persisted:
            raise InvalidParamsError(
                f"session {echoed(session_id)} has no file yet (nothing was said in it)"
            )
        return runtime.session.path
    for directory in _session_dirs(services):
        for info in list_sessions(directory):
            if info.id == session_id:
                return Path(info.path)
    raise SessionNotFoundError(f"no session {echoed(session_id)} in this workspace")


def _session_dirs(services: Services) -> list[Path]:
    if services.memory is not None:
        return services.memory.session_dirs()
    return [services.config.session_dir]


@pi_request(protocol.EXPORT_SESSION)
async def on_export_session(
    services: Services, params: protocol.ExportSessionParams
) -> protocol.ExportSessionResult:
    source = session_file(services, params.session_id)
    root = services.config.workspace_root
    if params.path:
        target = Path(params.path)
        target = target if target.is_absolute() else root / target
    else:
        target = root / f"pi-session-{params.session_id}{EXTENSIONS[params.format]}"
    data = await asyncio.to_thread(export_session, source, params.format)
    try:
        await asyncio.to_thread(_write_file, target, data)
    except OSError as error:
        raise SessionWriteError(
            f"could not write the export to {target}: {error.strerror or error}"
        ) from None
    return protocol.ExportSessionResult(str(target))


def _write_file(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.writing")
    temporary.write_bytes(data)
    temporary.replace(target)


@pi_request(protocol.IMPORT_SESSION)
def on_import_session(
    services: Services, params: protocol.ImportSessionParams
) -> protocol.ImportSessionResult:
    source = Path(params.path)
    source = source if source.is_absolute() else services.config.workspace_root / source
    try:
        is_file = source.is_file()
    except OSError as error:  # a name too long for the filesystem, say: its message quotes it whole
        raise InvalidParamsError(
            f"pi/importSession: cannot read {echoed(str(source))}: {error.strerror}"
        ) from None
    if not is_file:
        raise InvalidParamsError(f"pi/importSession: no file at {echoed(str(source))}")
    header, target = import_session(source, services.config.session_dir)
    if services.memory is not None:
        services.memory.notice(target)
    return protocol.ImportSessionResult(header.id, str(target))


@pi_request(protocol.DELETE_SESSION)
def on_delete_session(
    services: Services, params: protocol.DeleteSessionParams
) -> protocol.DeleteSessionResult:
    path = session_file(services, params.session_id)
    runtime = services.sessions.find(params.session_id)
    if runtime is not None:
        runtime.require_idle("delete the session")
    with services.sessions.released(runtime):
        move_to_trash(path)
    if services.memory is not None:
        services.memory.notice(path)  # gone: dropped from the index
    return protocol.DeleteSessionResult(params.session_id, str(path))
