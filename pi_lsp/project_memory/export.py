"""A session file as something to read or share: Markdown, one self-contained HTML page, or JSONL.

- JSONL is the file itself, byte for byte.
- Markdown is the active path (root to the last entry) as readable text: messages, tool calls
  with their arguments, tool results, summaries with their file lists.
- HTML is one file in the spirit of pi's ``/export``: the session's entries travel inside the
  page as JSON, and a small script (``assets/export.js``, inlined with ``assets/export.css``) draws
  the tree with every branch and the conversation along the chosen one; clicking an entry of the
  tree switches to its branch. Nothing is fetched: the page works offline, and every text is set
  as text, never parsed as HTML.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pi_lsp.session.messages import content_text
from pi_lsp.session.paths import session_path
from pi_lsp.session.store import is_session_header, parse_session_bytes

Format = Literal["html", "markdown", "jsonl"]
EXTENSIONS: dict[str, str] = {"html": ".html", "markdown": ".md", "jsonl": ".jsonl"}


def export_session(source: Path, format: Format) -> bytes:
    """The bytes of ``source`` exported as ``format``."""
    data = source.read_bytes()
    if format == "jsonl":
        return data
    loaded = parse_session_bytes(data, source)
    header = dict(loaded.lines[0].body) if loaded.lines else {}
    bodies = [dict(entry.body) for entry in loaded.lines[1:] if not is_session_header(entry)]
    name = _session_name(bodies)
    if format == "markdown":
        return markdown(header, bodies, name).encode("utf-8", "surrogatepass")
    return html_page(header, bodies, name).encode("utf-8", "surrogatepass")


def _session_name(bodies: list[dict]) -> str | None:
    name = None
    for body in bodies:
        if body.get("type") == "session_info":
            value = body.get("name")
            name = value.strip() or None if isinstance(value, str) else None
    return name


# ----------------------------------------------------------------------------------- Markdown


def markdown(header: Mapping[str, Any], bodies: list[dict], name: str | None) -> str:
    title = name or f"Session {header.get('id', '')}"
    started = (
        f"Session `{header.get('id', '')}` in `{header.get('cwd', '')}`, "
        f"started {header.get('timestamp', '')}."
    )
    parts = [f"# {title}", started]
    for body in session_path(bodies) if bodies else []:
        section = _markdown_entry(body)
        if section:
            parts.append(section)
    return "\n\n".join(parts) + "\n"


def _markdown_entry(body: Mapping[str, Any]) -> str | None:
    kind = body.get("type")
    if kind == "message" and isinstance(body.get("message"), Mapping):
        return _markdown_message(body["message"])
    if kind in ("compaction", "branch_summary"):
        title = "Compaction summary" if kind == "compaction" else "Branch summary"
        return f"## {title}\n\n{_text(body.get('summary'))}{_file_lists(body.get('details'))}"
    if kind == "custom_message" and body.get("display", True):
        return (
            f"## {body.get('customType', 'Custom message')}\n\n{content_text(body.get('content'))}"
        )
    return None


def _markdown_message(message: Mapping[str, Any]) -> str:
    role = message.get("role")
    if role == "bashExecution":
        return (
            f"## Shell\n\n```\n$ {_text(message.get('command'))}\n"
            f"{_text(message.get('output'))}\n```"
        )
    if role == "toolResult":
        output = content_text(message.get("content"))
        return f"### Result of `{message.get('toolName', 'tool')}`\n\n```\n{output}\n```"
    parts = [f"## {str(role).capitalize()}"]
    content = message.get("content")
    if isinstance(content, str):
        parts.append(content)
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "text":
            parts.append(_text(block.get("text")))
        elif block.get("type") == "toolCall":
            arguments = json.dumps(block.get("arguments"), indent=2, ensure_ascii=False)
            parts.append(f"Tool call `{block.get('name')}`:\n\n```json\n{arguments}\n```")
    return "\n\n".join(parts)


def _file_lists(details: Any) -> str:
    if not isinstance(details, Mapping):
        return ""
    lists = []
    for key, title in (("readFiles", "Read files"), ("modifiedFiles", "Modified files")):
        files = details.get(key)
        if isinstance(files, list) and files:
            lists.append(f"{title}:\n" + "\n".join(f"- `{file}`" for file in files))
    return "\n\n" + "\n\n".join(lists) if lists else ""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


# ----------------------------------------------------------------------------------- HTML


def html_page(header: Mapping[str, Any], bodies: list[dict], name: str | None) -> str:
    title = name or f"Session {header.get('id', '')}"
    data = {"header": header, "entries": bodies, "name": name}
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<title>{html.escape(title)}</title><style>{_asset('export.css')}</style></head>\n"
        f'<body><header><h1>{html.escape(title)}</h1><p id="meta"></p></header>\n'
        '<div id="layout"><nav id="tree" aria-label="Session tree"></nav>'
        '<main id="conversation"></main></div>\n'
        f'<script type="application/json" id="session-data">{_script_json(data)}</script>\n'
        f"<script>{_asset('export.js')}</script>\n</body></html>\n"
    )


def _script_json(data: Any) -> str:
    """JSON that cannot end the ``<script>`` element it sits in."""
    text = json.dumps(data, ensure_ascii=False)
    for character, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(character, escape)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _asset(name: str) -> str:
    return (resources.files("pi_lsp.project_memory") / "assets" / name).read_text("utf-8")
