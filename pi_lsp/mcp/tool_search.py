"""``tool_search``, as pi 1.6's (``extensions/tool-search/tool.js``): it ranks the MCP tools that
are not declared to the model (``deferred`` exposure, and ``codemode``, pi's default, which pi-lsp
reaches this way since it has no codemode sandbox) with pi's BM25 ranker, and loads the matches:
they are declared from the next model request on.

The load is recorded where pi records its tool results: the ``tool_search`` result's details are
``{"loaded": [names]}``, as pi's are, so a session file says which tools its branch loaded and
pi-lsp declares them again on that branch (after a restart, a navigation, a fork). Tools a pi 1.6
system message added on the branch (``toolsAdded``) count as loaded too, until one removes them
(``toolsRemoved``); the turn records pi-lsp's own loads in such a message as well, for pi 1.6.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, ClassVar

import attrs

from pi_lsp.tools.base import Tool, ToolContext, ToolError, ToolResult, text_result

TOOL_SEARCH = "tool_search"
DEFAULT_LIMIT = 8
DESCRIPTION = (
    "# Tool discovery\n\nSearches over deferred tool metadata with BM25 and exposes matching "
    "tools for the next model call.\n\nSome of the tools, such as tools of MCP servers, may not "
    "have been provided to you upfront, and you should use this tool (`tool_search`) to search "
    "for the required tools. For MCP tool discovery, always use `tool_search`."
)
STOP_WORDS = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of",
        "on", "or", "that", "the", "this", "to", "with",
    }
)  # fmt: skip
NAME_WEIGHT = 3.0
NAMESPACE_WEIGHT = 0.5
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_ACRONYM = re.compile(r"([A-Z]+)([A-Z][a-z])")
_NOT_WORD = re.compile(r"[\W_]+")


@attrs.frozen
class SearchDocument:
    name: str
    text: str
    namespace_text: str = ""


def tokenize(text: str) -> list[str]:
    """pi's ``tokenize``: identifier boundaries, lower case, words, no stop words, singulars."""
    normalized = unicodedata.normalize("NFC", text)
    normalized = _ACRONYM.sub(r"\1 \2", _CAMEL.sub(r"\1 \2", normalized)).lower()
    words = _NOT_WORD.sub(" ", normalized).split()
    return [
        _stem(word) if word.isascii() and word.isalnum() else word
        for word in words
        if word not in STOP_WORDS
    ]


def _stem(term: str) -> str:
    if len(term) > 4 and term.endswith("ies"):
        return term[:-3] + "y"
    if len(term) > 4 and term.endswith(("ches", "shes", "sses", "xes", "zes")):
        return term[:-2]
    if len(term) > 3 and term.endswith("s") and not term.endswith("ss"):
        return term[:-1]
    return term


def search_document(
    name: str, description: str, parameters: Any, namespace: str = ""
) -> SearchDocument:
    """The description, the schema's descriptions and property names; the namespace apart."""
    parts = [description]
    _schema_text(parameters, parts, 0)
    return SearchDocument(name, " ".join(part for part in parts if part.strip()), namespace)


def _schema_text(schema: Any, parts: list[str], depth: int) -> None:
    if not isinstance(schema, Mapping) or depth > 20:
        return
    if isinstance(schema.get("description"), str):
        parts.append(schema["description"])
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, subschema in properties.items():
            parts.append(str(name))
            _schema_text(subschema, parts, depth + 1)
    _schema_text(schema.get("items"), parts, depth + 1)
    for key in ("anyOf", "oneOf", "allOf"):
        variants = schema.get(key)
        if isinstance(variants, list):
            for variant in variants:
                _schema_text(variant, parts, depth + 1)


def rank(query: str, documents: list[SearchDocument], limit: int) -> list[str]:
    """pi's ``Bm25Ranker.rank``: the names of the best ``limit`` matches, best first (an exact
    name first, then the most query terms covered, then the score; ties in document order)."""
    terms = list(dict.fromkeys(tokenize(query)))
    if not terms or not documents or limit <= 0:
        return []
    indexed = [_index(document) for document in documents]
    average = sum(document["length"] for document in indexed) / len(indexed) or 1
    idf = {}
    for term in terms:
        frequency = sum(
            1
            for document in indexed
            if term in document["name"] or term in document["counts"] or term in document["space"]
        )
        idf[term] = math.log(1 + (len(indexed) - frequency + 0.5) / (frequency + 0.5))
    bonus = sum(idf.values())
    exact_query = _normalize_name(query)
    matches = []
    for position, document in enumerate(indexed):
        norm = 1.2 * (1 - 0.75 + 0.75 * document["length"] / average)
        score, covered = 0.0, 0
        for term in terms:
            count = document["counts"].get(term, 0)
            weight = (
                (NAME_WEIGHT if term in document["name"] else 0)
                + (NAMESPACE_WEIGHT if term in document["space"] else 0)
                + count * 2.2 / (count + norm)
            )
            covered += weight > 0
            score += idf[term] * weight
        if score == 0:
            continue
        local = document["local"]
        if local and all(term in terms for term in local):
            score += bonus
        normalized = _normalize_name(document["id"])
        exact = normalized == exact_query or normalized.endswith(f"__{exact_query}")
        matches.append((not exact, -covered, -score, position, document["id"]))
    return [match[-1] for match in sorted(matches)[:limit]]


def _index(document: SearchDocument) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for term in tokenize(document.text):
        counts[term] = counts.get(term, 0) + 1
    return {
        "id": document.name,
        "name": set(tokenize(document.name)),
        "local": list(dict.fromkeys(tokenize(document.name.split("__")[-1]))),
        "counts": counts,
        "length": sum(counts.values()),
        "space": set(tokenize(document.namespace_text)),
    }


def _normalize_name(name: str) -> str:
    return re.sub(r"[^a-z0-9_$]", "_", name.strip().lower())


def loaded_tool_names(entries: Iterable[Mapping[str, Any]]) -> list[str]:
    """The tools ``tool_search`` (pi-lsp's or pi's) loaded on a branch, oldest first."""
    loaded: dict[str, None] = {}
    for entry in entries:
        if entry.get("type") != "message":
            continue
        head = getattr(entry, "message_head", None)
        role = getattr(head, "role", None) if head is not None else None
        if role not in (None, "toolResult", "system"):
            continue
        message = entry.get("message")
        if not isinstance(message, Mapping):
            continue
        if message.get("role") == "toolResult" and message.get("toolName") == TOOL_SEARCH:
            details = message.get("details")
            names = details.get("loaded") if isinstance(details, Mapping) else None
            loaded.update(dict.fromkeys(name for name in names or [] if isinstance(name, str)))
        elif message.get("role") == "system":
            for tool in message.get("toolsRemoved") or []:
                if isinstance(tool, Mapping):
                    loaded.pop(str(tool.get("name")), None)
            for tool in message.get("toolsAdded") or []:
                name = tool.get("name") if isinstance(tool, Mapping) else None
                if isinstance(name, str) and name.startswith("mcp__"):
                    loaded[name] = None
    return list(loaded)


Candidates = Callable[[], "list[tuple[Tool, str]]"]
"""The searchable tools with their namespace text (name, description, instructions)."""


class ToolSearchTool(Tool):
    """One turn's ``tool_search``: ``declared`` is what the model has already; a load adds to it."""

    name: ClassVar[str] = TOOL_SEARCH
    description: ClassVar[str] = DESCRIPTION
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Search query for deferred tools."},
            "limit": {
                "type": "number",
                "description": "Maximum number of tools to return. Defaults to 8.",
            },
        },
        "required": ["query"],
    }
    read_only_hint: ClassVar[bool] = True

    def __init__(
        self,
        candidates: Candidates,
        declared: set[str],
        wait: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.candidates = candidates
        self.declared = declared
        self.wait = wait
        """Waits for the servers still connecting (as pi, the search waits for all of them)."""

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        query = str(arguments.get("query", ""))
        if not query.strip():
            raise ToolError("query must not be empty")
        limit = arguments.get("limit", DEFAULT_LIMIT)
        if not isinstance(limit, int) or limit <= 0:
            raise ToolError("limit must be a positive integer")
        if self.wait is not None:
            await self.wait()
        candidates = [
            (tool, namespace)
            for tool, namespace in self.candidates()
            if tool.name not in self.declared
        ]
        documents = [
            search_document(tool.name, tool.description, tool.parameters, namespace)
            for tool, namespace in candidates
        ]
        names = rank(query, documents, limit)
        self.declared.update(names)
        if not names:
            return text_result("No matching tools found.", {"loaded": []})
        descriptions = {tool.name: tool.description for tool, _ in candidates}
        lines = [
            f"- {name}: {(descriptions[name].strip().splitlines() or [''])[0]}" for name in names
        ]
        plural = "" if len(names) == 1 else "s"
        header = f"Loaded {len(names)} tool{plural}. They are available from your next call:"
        return text_result("\n".join([header, *lines]), {"loaded": names})
