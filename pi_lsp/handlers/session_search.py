"""Handler of ``pi/searchSessions``: a search across every session of the workspace."""

from __future__ import annotations

import asyncio

from pi_lsp import protocol
from pi_lsp.errors import InvalidParamsError, echoed
from pi_lsp.handlers.base import pi_request
from pi_lsp.project_memory.search import Hit, SearchFilter
from pi_lsp.project_memory.service import IndexProgress
from pi_lsp.services import Services
from pi_lsp.session.timestamps import epoch_ms_to_iso

DEFAULT_LIMIT = 50
MAX_LIMIT = 200


@pi_request(protocol.SEARCH_SESSIONS)
async def on_search_sessions(
    services: Services, params: protocol.SearchSessionsParams
) -> protocol.SearchSessionsResult:
    limit = DEFAULT_LIMIT if params.limit is None else params.limit
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidParamsError(
            f"pi/searchSessions: limit must be 1–{MAX_LIMIT}, got {echoed(params.limit)}"
        )
    if not params.query.strip():
        raise InvalidParamsError("pi/searchSessions: query is blank")
    memory = services.memory
    if memory is None:
        raise InvalidParamsError("pi/searchSessions: the session index is off")
    # Off the event loop: a search of a big index takes milliseconds the loop should not wait.
    result = await asyncio.to_thread(
        memory.search,
        params.query,
        limit=limit,
        order=params.order or "newest",
        only=SearchFilter(session_id=params.session_id),
    )
    return protocol.SearchSessionsResult(
        result.page.total,
        result.page.capped,
        indexing_progress(result.progress),
        [hit_shape(hit) for hit in result.page.hits],
    )


def indexing_progress(progress: IndexProgress) -> protocol.IndexingProgress:
    return protocol.IndexingProgress(
        progress.complete, progress.indexed_files, progress.known_files
    )


def hit_shape(hit: Hit) -> protocol.SessionSearchHit:
    return protocol.SessionSearchHit(
        session_id=hit.session_id,
        path=hit.path,
        session_name=hit.session_name,
        entry_id=hit.entry_id,
        type=hit.type,
        role=hit.role,
        preview=hit.preview,
        timestamp=None if hit.timestamp_ms is None else epoch_ms_to_iso(hit.timestamp_ms),
        on_active_path=hit.on_active_path,
    )
