"""Handlers of the windowed tree requests: a window down to an entry, a node's rows, search.

They answer for what an editor shows of a big session (``session/tree_window.py``) and carry the
session's tree version, which ``tree_changed`` events continue.
"""

from __future__ import annotations

from pi_lsp import protocol
from pi_lsp.agent.tree_changes import tree_node_row
from pi_lsp.errors import InvalidParamsError
from pi_lsp.handlers import shapes
from pi_lsp.handlers.base import pi_request
from pi_lsp.services import Services
from pi_lsp.session.path_index import active_path_index
from pi_lsp.session.tree_search import search_tree
from pi_lsp.session.tree_window import check_limit, tree_children, tree_levels, tree_node


@pi_request(protocol.TREE_WINDOW)
def on_tree_window(
    services: Services, params: protocol.TreeWindowParams
) -> protocol.TreeWindowResult:
    limit = check_limit(params.limit, protocol.TREE_WINDOW)
    runtime = services.sessions.get(params.session_id)
    session = runtime.session
    levels = tree_levels(session, params.target_id, limit)
    return protocol.TreeWindowResult(
        session_id=runtime.id,
        version=runtime.tree_changes.version,
        leaf_id=session.leaf_id,
        name=session.name,
        target_id=params.target_id or session.leaf_id,
        levels=[shapes.tree_level(level) for level in levels],
    )


@pi_request(protocol.TREE_CHILDREN)
def on_tree_children(
    services: Services, params: protocol.TreeChildrenParams
) -> protocol.TreeChildrenResult:
    limit = check_limit(params.limit, protocol.TREE_CHILDREN)
    if params.offset is not None and params.offset < 0:
        raise InvalidParamsError(f"{protocol.TREE_CHILDREN}: offset must be at least 0")
    if params.offset is not None and params.around_id is not None:
        raise InvalidParamsError(f"{protocol.TREE_CHILDREN}: give offset or aroundId, not both")
    runtime = services.sessions.get(params.session_id)
    level = tree_children(
        runtime.session,
        params.parent_id,
        offset=params.offset,
        around_id=params.around_id,
        limit=limit,
    )
    return protocol.TreeChildrenResult(
        runtime.id, runtime.tree_changes.version, shapes.tree_level(level)
    )


@pi_request(protocol.TREE_SEARCH)
def on_tree_search(
    services: Services, params: protocol.TreeSearchParams
) -> protocol.TreeSearchResult:
    limit = check_limit(params.limit, protocol.TREE_SEARCH)
    if not params.query.strip():
        raise InvalidParamsError(f"{protocol.TREE_SEARCH}: query must not be empty")
    runtime = services.sessions.get(params.session_id)
    session = runtime.session
    hits = search_tree(session, params.query, limit)
    paths = active_path_index(session)
    return protocol.TreeSearchResult(
        session_id=runtime.id,
        version=runtime.tree_changes.version,
        total=hits.total,
        rows=[tree_node_row(tree_node(session, entry, paths)) for entry in hits.entries],
    )
