"""An ACP prompt's content blocks as pi's prompt: the text and the images.

Text blocks are joined; embedded resources (the files an ACP client attaches with ``@``) are put
into the text as ``<file>`` blocks, resource links as their URI; images become pi's image parts.
Audio is not offered (``promptCapabilities.audio`` is false) and is refused.
"""

from __future__ import annotations

from typing import Any

from acp.schema import (
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from pi_lsp.errors import InvalidParamsError


def prompt_content(blocks: list[Any]) -> tuple[str, list[dict[str, str]]]:
    texts: list[str] = []
    images: list[dict[str, str]] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            texts.append(block.text)
        elif isinstance(block, ImageContentBlock):
            images.append({"data": block.data, "mimeType": block.mime_type})
        elif isinstance(block, ResourceContentBlock):
            texts.append(f"@{_path(block.uri)}")
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                texts.append(f'<file path="{_path(resource.uri)}">\n{resource.text}\n</file>')
            else:
                texts.append(f"@{_path(resource.uri)}")
        else:
            kind = getattr(block, "type", type(block).__name__)
            raise InvalidParamsError(f"prompt: {kind} content is not supported")
    return "\n".join(texts), images


def _path(uri: str) -> str:
    return uri.removeprefix("file://")
