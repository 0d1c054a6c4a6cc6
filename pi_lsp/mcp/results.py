"""MCP tool results as the model sees them, as pi 1.6's ``tools.js`` converts them.

Text and images pass through; embedded text resources are text, embedded image resources are
images, other binary resources are saved to a temporary file whose path the model gets; resource
links name ``read_mcp_resource``; audio and unknown block types become a short placeholder. A
result with no blocks but ``structuredContent`` is its JSON. ``isError`` is an error result, with
a message of its own when the server sent none. Text over 20 KB is cut in the middle
(``output.py``). Results arrive here as plain JSON (the SDK's models dumped by alias).
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any
from urllib.parse import urlsplit

from pi_lsp.mcp.output import SaveOutput, limit_content, save_to_temp_file
from pi_lsp.tools.base import ToolResult
from pi_lsp.tools.truncate import format_size

READ_MCP_RESOURCE_TOOL = "read_mcp_resource"
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}$")


def convert_result(
    server: str,
    tool: str,
    result: dict[str, Any],
    *,
    readable_resources: bool = False,
    save: SaveOutput = save_to_temp_file,
) -> ToolResult:
    blocks = result.get("content") or []
    content = [
        converted
        for block in blocks
        for converted in _block_content(server, block, readable_resources, save)
    ]
    if not blocks and result.get("structuredContent") is not None:
        content.append({"type": "text", "text": json.dumps(result["structuredContent"], indent=2)})
    is_error = bool(result.get("isError"))
    if is_error and not any(block.get("text") for block in content):
        content.append({"type": "text", "text": f"MCP tool {server}/{tool} returned an error"})
    content, full_path = limit_content(content, save)
    details: dict[str, Any] = {"server": server, "tool": tool}
    if full_path:
        details["fullOutputPath"] = full_path
    return ToolResult(content=content, details=details, is_error=is_error)


def _block_content(
    server: str, block: Any, readable_resources: bool, save: SaveOutput
) -> list[dict[str, Any]]:
    if not isinstance(block, dict):
        return [{"type": "text", "text": "[unsupported MCP content]"}]
    kind = block.get("type")
    if kind == "text":
        return [{"type": "text", "text": str(block.get("text", ""))}]
    if kind == "image":
        return [{"type": "image", "data": block.get("data", ""), "mimeType": block.get("mimeType")}]
    if kind == "audio":
        return [{"type": "text", "text": f"[audio {block.get('mimeType')} omitted]"}]
    if kind == "resource_link":
        return [{"type": "text", "text": _resource_link(server, block, readable_resources)}]
    if kind == "resource" and isinstance(block.get("resource"), dict):
        return _embedded_resource(block["resource"], save)
    return [{"type": "text", "text": f"[unsupported MCP content {kind}]"}]


def _resource_link(server: str, block: dict[str, Any], readable: bool) -> str:
    facts = [str(block["mimeType"])] if block.get("mimeType") else []
    if block.get("size") is not None:
        facts.append(format_size(int(block["size"])))
    shown = f" ({', '.join(facts)})" if facts else ""
    description = f": {block['description']}" if block.get("description") else ""
    read = f'. Read it with {READ_MCP_RESOURCE_TOOL} (server "{server}")' if readable else ""
    title = block.get("title") or block.get("name")
    return f'[Resource {block.get("uri")} "{title}"{shown}{description}{read}]'


def _embedded_resource(resource: dict[str, Any], save: SaveOutput) -> list[dict[str, Any]]:
    if "text" in resource:
        return [{"type": "text", "text": str(resource["text"])}]
    mime_type = resource.get("mimeType")
    if isinstance(mime_type, str) and mime_type.startswith("image/"):
        return [{"type": "image", "data": resource.get("blob", ""), "mimeType": mime_type}]
    return [{"type": "text", "text": saved_blob_text(resource, save)}]


def saved_blob_text(resource: dict[str, Any], save: SaveOutput) -> str:
    """A binary resource as text: decoded when it is text, else saved and its path named."""
    uri, mime_type = resource.get("uri"), resource.get("mimeType")
    try:
        data = base64.b64decode(str(resource.get("blob", "")), validate=False)
    except ValueError:
        data = b""
    if is_text_mime_type(mime_type):
        return data.decode("utf-8", errors="replace")
    kind = f"{mime_type or 'unknown type'}, {format_size(len(data))}"
    try:
        path = save(data, extension_of(str(uri)))
    except OSError as problem:
        return f"[Binary resource {uri} ({kind}) could not be saved: {problem}]"
    return f"[Binary resource {uri} ({kind}) saved to {path}]"


def is_text_mime_type(mime_type: Any) -> bool:
    if not isinstance(mime_type, str) or not mime_type:
        return False
    kind = mime_type.split(";", 1)[0].strip().lower()
    return (
        kind.startswith("text/") or kind == "application/json" or kind.endswith(("+json", "+xml"))
    )


def extension_of(uri: str) -> str:
    path = urlsplit(uri).path or uri
    match = _EXTENSION.search(path)
    return match[0] if match else ".bin"
